#!/bin/bash
# RC/UC responder vs rdma_rxe: rxe0 (init_net) is the requester, shca0
# (netns shca-a) the responder; scripts/e2e/progs/rc_resp_rxe.py verifies every
# operation byte for byte.  Runs inside the VM (scripts/vm-run topology).
# It moves veth-b into init_net (rxe on 6.1 works only there): run it last.
set -u
E2E_SUITE=rc-resp-rxe
. "$(dirname "$0")/lib.sh"
A="ip netns exec shca-a"
modprobe shca
$A rdma link add shca0 type shca netdev veth-a
veth_b_to_init_net
modprobe rdma_rxe; rdma link add rxe0 type rxe netdev veth-b
wait_for 60 port_active shca0
wait_for 60 rdma_gid shca0 ffff:0a4d:0001
wait_for 60 rdma_gid rxe0 ffff:0a4d:0002
for v in "ffff:0a4d:0001 ffff:0a4d:0002" \
	"fd77:0000:0000:0000:0000:0000:0000:0001 fd77:0000:0000:0000:0000:0000:0000:0002"; do
	set -- $v
	wait_for 60 rdma_gid rxe0 "$2"
	ga=$(rdma_gid shca0 "$1") && gb=$(rdma_gid rxe0 "$2") || { not_ok "GIDs $v" "missing"; continue; }
	echo "# GIDs $1 $2"
	exits_ok "rc_resp_rxe.py exits 0 ($1)" \
		timeout 600 /usr/bin/python3 scripts/e2e/progs/rc_resp_rxe.py rxe0 shca0 "$gb" "$ga"
done
rdma statistic show link shca0/1
rdma link delete rxe0 || true
modprobe -r rdma_rxe	# it holds UDP port 4791 of init_net until then
check "veth-b back in shca-b" veth_b_to_netns
check "rdma link delete shca0" $A rdma link delete shca0
check "module unloads" modprobe -r shca
e2e_finish
