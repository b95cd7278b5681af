#!/bin/bash
# make demo, inside the VM: one shca device on each end of the veth pair
# that joins the namespaces shca-a and shca-b, rdma link + ibv_devinfo,
# then rping crossing the namespaces over RC with its data verified.
set -eu
show() { echo; echo "\$ $*"; "$@"; }
E2E_SUITE=demo
. "$(dirname "$0")/e2e/lib.sh"	# wait_for, wait_cm_listen
modprobe shca
show ip netns exec shca-a rdma link add shca0 type shca netdev veth-a
show ip netns exec shca-b rdma link add shca1 type shca netdev veth-b
wait_for 60 port_active shca0
wait_for 60 port_active shca1
show rdma link show
show ibv_devices
show ibv_devinfo -d shca0
show ibv_devinfo -v -d shca1

# rping: server on shca1 (namespace shca-b, 10.77.0.2), client on shca0
# (namespace shca-a).  -V verifies every ping's payload on both sides.
echo
echo "\$ ip netns exec shca-b rping -s -a 10.77.0.2 -C 10 -V -v &"
ip netns exec shca-b timeout 300 rping -s -a 10.77.0.2 -C 10 -V -v \
	> /tmp/rping-server.log 2>&1 &
srv=$!
wait_cm_listen
echo
echo "\$ ip netns exec shca-a rping -c -a 10.77.0.2 -C 10 -V -v"
ip netns exec shca-a timeout 300 rping -c -a 10.77.0.2 -C 10 -V -v \
	> /tmp/rping-client.log 2>&1 || { cat /tmp/rping-client.log; exit 1; }
cat /tmp/rping-client.log
wait "$srv"
echo
echo "# rping server (shca1, namespace shca-b):"
cat /tmp/rping-server.log
# -V compares every payload; also demand all ten pings and no complaint.
pings=$(grep -c '^ping data: rdma-ping-' /tmp/rping-client.log || true)
if [ "$pings" -ne 10 ] || grep -qi 'mismatch\|error' /tmp/rping-*.log; then
	echo "demo: rping did not complete 10 verified pings ($pings)" >&2
	exit 1
fi
show rdma statistic show link shca0/1
show ip netns exec shca-b rdma link delete shca1
show ip netns exec shca-a rdma link delete shca0
echo
echo "ok - demo: rping -V crossed the namespaces over shca"
