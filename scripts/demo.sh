#!/bin/bash
# make demo, inside the VM: one shca device on each end of the veth pair
# that joins the namespaces shca-a and shca-b, then rdma link + ibv_devinfo.
set -eu
show() { echo; echo "\$ $*"; "$@"; }
modprobe shca
show ip netns exec shca-a rdma link add shca0 type shca netdev veth-a
show ip netns exec shca-b rdma link add shca1 type shca netdev veth-b
for i in $(seq 1 50); do
	grep -q ACTIVE /sys/class/infiniband/shca1/ports/1/state 2>/dev/null && break
	sleep 0.2
done
show rdma link show
show ibv_devices
show ibv_devinfo -d shca0
show ibv_devinfo -v -d shca1
