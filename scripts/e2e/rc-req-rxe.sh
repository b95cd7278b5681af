#!/bin/bash
# RC/UC requester interop: shca0 (requester, netns shca-a) against rxe0
# (responder, veth-b moved to init_net).  Runs inside scripts/vm-run:
#   SHCA_TESTS="verify verify6 verifyloss write read atomic send writeloss readloss" \
#   scripts/vm-run --kernel 6.1 -- scripts/e2e/rc-req-rxe.sh [CASE...]
# (the cases as arguments or in SHCA_TESTS; the matrix passes arguments)
# verify/verifyloss check data byte for byte (progs/rc_req_verify.py); the
# perftest cases check that runs complete.  SHCA_TMO: QP timeout for the
# lossy perftest runs (default 14).
set -u
. "$(dirname "$0")/lib.sh"
E2E_SUITE=rcreq
A="ip netns exec shca-a"
T=300
veth_b_to_init_net
modprobe rdma_rxe; rdma link add rxe0 type rxe netdev veth-b
modprobe shca
$A rdma link add shca0 type shca netdev veth-a
wait_for 60 port_active shca0
wait_for 60 rdma_gid rxe0 ffff:0a4d:0002
wait_for 60 rdma_gid shca0 ffff:0a4d:0001
wait_for 60 rdma_gid shca0 fd77:0000:0000:0000:0000:0000:0000:0001
wait_for 60 rdma_gid rxe0 fd77:0000:0000:0000:0000:0000:0000:0002
ga=$(rdma_gid shca0 ffff:0a4d:0001); gb=$(rdma_gid rxe0 ffff:0a4d:0002)
echo "gids $ga $gb"
perf() {
	local name=$1; shift
	timeout $T "$@" -d rxe0 -x $gb >$TMPDIR/srv.log 2>&1 &
	local srv=$!
	wait_tcp_listen "" 18515
	if out=$($A timeout $T "$@" -d shca0 -x $ga 10.77.0.2 2>&1) && wait $srv; then
		ok "$name"; echo "$out" | tail -n 3
	else
		not_ok "$name" "see below"; echo "$out" | grep -v "^ *GID\|^---\|address" | tail -n 12; tail -n 4 $TMPDIR/srv.log
		wait $srv
	fi
}
# The cases: the arguments, else $SHCA_TESTS, else the perftest ones.
for t in ${*:-${SHCA_TESTS:-write read atomic send}}; do
case $t in
write) perf "ib_write_bw shca->rxe" ib_write_bw -n 50 -s 65536 ;;
read) perf "ib_read_bw shca->rxe" ib_read_bw -n 50 -s 65536 -o 16 ;;
atomic) perf "ib_atomic_bw shca->rxe" ib_atomic_bw -n 100 -o 16 ;;
send) perf "ib_send_bw shca->rxe" ib_send_bw -n 50 -s 65536 ;;
writeloss) $A tc qdisc add dev veth-a root netem loss 5% reorder 10% duplicate 1% delay 1ms
	perf "ib_write_bw shca->rxe with loss" ib_write_bw -n 30 -s 65536 -u ${SHCA_TMO:-14}
	$A tc qdisc del dev veth-a root ;;
readloss) $A tc qdisc add dev veth-a root netem loss 5% reorder 10% duplicate 1% delay 1ms
	tc qdisc add dev veth-b root netem loss 5% reorder 10% delay 1ms
	perf "ib_read_bw shca->rxe with loss" ib_read_bw -n 30 -s 65536 -o 16 -u ${SHCA_TMO:-14}
	perf "ib_atomic_bw shca->rxe with loss" ib_atomic_bw -n 100 -o 16 -u ${SHCA_TMO:-14}
	tc qdisc del dev veth-b root
	$A tc qdisc del dev veth-a root ;;
verify) if $A /usr/bin/python3 scripts/e2e/progs/rc_req_verify.py shca0 $ga rxe0 $gb; then ok "rc_req_verify.py"; else not_ok "rc_req_verify.py" "see above"; fi ;;
verify6) ga6=$(rdma_gid shca0 fd77:0000:0000:0000:0000:0000:0000:0001)
	gb6=$(rdma_gid rxe0 fd77:0000:0000:0000:0000:0000:0000:0002)
	if SHCA_VERIFY=rc $A /usr/bin/python3 scripts/e2e/progs/rc_req_verify.py shca0 $ga6 rxe0 $gb6; then ok "rc_req_verify.py IPv6"; else not_ok "rc_req_verify.py IPv6" "see above"; fi ;;
verifyloss) $A tc qdisc add dev veth-a root netem loss 5% reorder 10% duplicate 1% delay 1ms
	tc qdisc add dev veth-b root netem loss 5% reorder 10% delay 1ms
	if SHCA_VERIFY=rc SHCA_VERIFY_LOSSY=1 SHCA_VERIFY_TIMEOUT=16 $A /usr/bin/python3 scripts/e2e/progs/rc_req_verify.py shca0 $ga rxe0 $gb; then ok "rc_req_verify.py with loss"; else not_ok "rc_req_verify.py with loss" "see above"; fi
	tc qdisc del dev veth-b root
	$A tc qdisc del dev veth-a root ;;
esac
done
rdma statistic show link shca0/1
$A rdma link del shca0
rdma link delete rxe0
# rdma_rxe holds UDP port 4791 of init_net until it is unloaded: a later
# suite's shca device there would find it taken
modprobe -r rdma_rxe
veth_b_to_netns
check "module unloads" modprobe -r shca
dmesg | grep -i "shca\|rxe" | grep -v "loading" | tail -n 60
e2e_finish
