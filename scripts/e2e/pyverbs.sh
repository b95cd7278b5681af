#!/bin/bash
# rdma-core's pyverbs tests on shca0 (bound to a veth with IPv4 and IPv6
# addresses, so RoCE v2 GIDs exist).  Runs inside the VM.
set -u
E2E_SUITE=pyverbs
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

ip link add pv0 type veth peer name pv1
ip link set pv0 up; ip link set pv1 up
ip addr add 10.97.0.1/24 dev pv0
ip addr add fd97::1/64 dev pv0 nodad
modprobe shca
rdma link add shca0 type shca netdev pv0
wait_for 90 grep -q ACTIVE /sys/class/infiniband/shca0/ports/1/state
wait_for 90 sh -c 'grep -q ffff:0a61:0001 /sys/class/infiniband/shca0/ports/1/gids/*'

rc=0
/usr/bin/python3 "$here/pyverbs-run.py" --dev shca0 --needs "$here/pyverbs-needs.txt" \
	test_device test_pd test_mr test_cq || rc=1
rdma link delete shca0
modprobe -r shca

# The same modules on rdma_rxe (Soft-RoCE) on the same netdev, for the
# comparison counts only: rxe's results never fail this suite.
if modprobe rdma_rxe && rdma link add rxe0 type rxe netdev pv0; then
	wait_for 90 grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state
	/usr/bin/python3 "$here/pyverbs-run.py" --dev rxe0 --baseline \
		test_device test_pd test_mr test_cq
	rdma link delete rxe0
	modprobe -r rdma_rxe
else
	echo "# rxe baseline unavailable"
fi
ip link del pv0
exit $rc
