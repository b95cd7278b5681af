#!/bin/bash
# RC/UC responder vs rdma_rxe: rxe0 (init_net) is the requester, shca0
# (netns shca-a) the responder; scripts/e2e/rc_resp_rxe.py verifies every
# operation byte for byte.  Runs inside the VM (scripts/vm-run topology).
# It moves veth-b into init_net (rxe on 6.1 works only there): run it last.
set -u
A="ip netns exec shca-a"
gid_index() {
	local dev=$1 pat=$2 f i
	for f in /sys/class/infiniband/"$dev"/ports/1/gids/*; do
		i=${f##*/}
		grep -q "$pat" "$f" 2>/dev/null || continue
		grep -q "RoCE v2" /sys/class/infiniband/"$dev"/ports/1/gid_attrs/types/"$i" 2>/dev/null || continue
		echo "$i"; return 0
	done
	return 1
}
wait_for() { local s=$1 i; shift; for ((i=0;i<s*5;i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done; return 1; }
modprobe shca
$A rdma link add shca0 type shca netdev veth-a
ip netns exec shca-b ip link set veth-b netns 1
ip addr add 10.77.0.2/24 dev veth-b; ip -6 addr add fd77::2/64 dev veth-b nodad
ip link set veth-b up; modprobe rdma_rxe; rdma link add rxe0 type rxe netdev veth-b
wait_for 60 grep -q ACTIVE /sys/class/infiniband/shca0/ports/1/state
wait_for 60 sh -c 'grep -q "ffff:0a4d:0001" /sys/class/infiniband/shca0/ports/1/gids/*'
wait_for 60 sh -c 'grep -q "ffff:0a4d:0002" /sys/class/infiniband/rxe0/ports/1/gids/*'
res=0
for v in "ffff:0a4d:0001 ffff:0a4d:0002" \
	"fd77:0000:0000:0000:0000:0000:0000:0001 fd77:0000:0000:0000:0000:0000:0000:0002"; do
	set -- $v
	wait_for 60 sh -c "grep -q '$2' /sys/class/infiniband/rxe0/ports/1/gids/*"
	ga=$(gid_index shca0 "$1") && gb=$(gid_index rxe0 "$2") || { echo "not ok - rc-resp: no GID $v"; res=1; continue; }
	echo "# GIDs $1 $2"
	timeout 600 /usr/bin/python3 scripts/e2e/rc_resp_rxe.py rxe0 shca0 "$gb" "$ga" || res=1
done
rdma statistic show link shca0/1
rdma link delete rxe0 || true
$A rdma link delete shca0
modprobe -r shca || res=1
exit $res
