#!/bin/bash
# Wire interoperability with rdma_rxe: shca0 on veth-a (netns shca-a) and
# rxe0 on veth-b, which moves to init_net because rxe on 6.1 only works
# there.  Both directions (shca server / rxe client and the reverse): rping
# -V, ibv_rc_pingpong -c, ib_write_bw, FLUSH (below);
# shca0's runs of packets reach rxe0 as UDP GSO datagrams cut up by the IP
# stack (tx_gso_packets grew).
# The ICRC's CRC-32 is the accelerated one where the CPU allows
# (check.sh's e2e-6.12-pclmul boot), else shca's own sparse-multiple one.
# Runs inside the VM.
set -u
E2E_SUITE=interop
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

A="ip netns exec shca-a"
I=""	# init_net

if ! veth_b_to_init_net; then
	not_ok "move veth-b to init_net" "ip link failed"
	exit 1
fi
if rdma_dev_add "$A" shca shca0 veth-a && rdma_dev_add "$I" rxe rxe0 veth-b; then
	ok "setup shca0 (shca-a) and rxe0 (init_net)"
else
	not_ok "setup shca0 (shca-a) and rxe0 (init_net)" "device or GIDs missing"
	exit 1
fi
gs=$(rdma_gid shca0 "$GID4_A")
gr=$(rdma_gid rxe0 "$GID4_B")

# The ICRC's CRC-32: the crypto API's crc32-pclmul where the CPU has
# PCLMULQDQ (and the kernel the module), else shca_crc32_sparse
# (QEMU's default CPU).  Every exchange below then checks it against rxe.
want=shca_crc32_sparse
grep -qw pclmulqdq /proc/cpuinfo && modprobe -n -q crc32_pclmul 2>/dev/null &&
	want=crc32-pclmul
drv=$(cat /sys/module/shca/parameters/icrc_driver 2>/dev/null)
if [ "$drv" = "$want" ]; then
	ok "shca's ICRC uses $drv"
else
	not_ok "shca's ICRC uses $want" "icrc_driver is '${drv:-?}'"
fi

# dir SRVNS SRVDEV SRVGID CLINS CLIDEV CLIGID SRVADDR LABEL
dir() {
	local sns=$1 sd=$2 sg=$3 cns=$4 cd=$5 cg=$6 sa=$7 l=$8
	pair_case "rping -V -C 200 ($l)" cm \
		"$sns" "rping -s -a $sa -V -C 200 -S 1000" \
		"$cns" "rping -c -a $sa -V -C 200 -S 1000" rping_ok
	pair_case "ibv_rc_pingpong -c ($l)" tcp:18515 \
		"$sns" "ibv_rc_pingpong -d $sd -g $sg -c -n 200 -s 4096" \
		"$cns" "ibv_rc_pingpong -d $cd -g $cg -c -n 200 -s 4096 $sa" pp_ok
	pair_case "ib_write_bw ($l)" tcp:18515 \
		"$sns" "ib_write_bw -d $sd -x $sg -F -s 65536 -n 100" \
		"$cns" "ib_write_bw -d $cd -x $cg -F -s 65536 -n 100 $sa" bw_ok
}
hw_stat_read g0 shca0 tx_gso_packets
dir "$I" rxe0 "$gr" "$A" shca0 "$gs" 10.77.0.2 "shca client, rxe server"
# over the veth, shca0's runs of packets leave as UDP GSO datagrams, which
# the IP stack cuts into single packets before rxe0's socket gets them
hw_stat_read g1 shca0 tx_gso_packets
if [ -n "$g0" ] && [ -n "$g1" ] && [ "$g1" -gt "$g0" ]; then
	ok "shca0 sent UDP GSO datagrams to rxe0 (tx_gso_packets +$((g1 - g0)))"
else
	not_ok "shca0 sent UDP GSO datagrams to rxe0" "tx_gso_packets ${g0:-?} -> ${g1:-?}"
fi
dir "$A" shca0 "$gs" "$I" rxe0 "$gr" 10.77.0.1 "rxe client, shca server"

# FLUSH (IBTA 1.5) with rxe, both ways (progs/flush_cases.py, every
# outcome asserted; where the kernel or pyverbs has no FLUSH, 6.1 and
# rdma-core 44, the capability checks only).  rxe (6.2 on) computes a
# FLUSH packet's ICRC over its headers twice (its opcode table gives FLUSH
# no payload offset, so BTH, FETH and RETH go into the CRC again as its
# "payload"): shca0 accepts that variant of an RC FLUSH and counts it
# (rx_flush_icrc_rxe), and sends it only while the module parameter
# rxe_flush_icrc is set; rxe0 drops the IBTA's.
flush_with_rxe() {
	local name=$1 ran=/tmp/interop-flush-ran
	shift
	rm -f "$ran"
	exits_ok "flush_cases.py $name" env SHCA_FLUSH_RAN="$ran" $A \
		/usr/bin/python3 "$here/progs/flush_cases.py" "$@"
	[ -e "$ran" ]
}
hw_stat_read f0 shca0 rx_flush_icrc_rxe
if flush_with_rxe "rxe0 -> shca0" rxe0 "$gr" shca0 "$gs"; then
	hw_stat_read f1 shca0 rx_flush_icrc_rxe
	if [ -n "$f0" ] && [ -n "$f1" ] && [ "$f1" -gt "$f0" ]; then
		ok "shca0 took rxe0's FLUSH ICRC variant (rx_flush_icrc_rxe +$((f1 - f0)))"
	else
		not_ok "shca0 took rxe0's FLUSH ICRC variant" "rx_flush_icrc_rxe ${f0:-?} -> ${f1:-?}"
	fi
	p=/sys/module/shca/parameters/rxe_flush_icrc
	if echo 1 >"$p"; then
		flush_with_rxe "shca0 -> rxe0 (rxe_flush_icrc=1)" shca0 "$gs" rxe0 "$gr"
		echo 0 >"$p"
	else
		not_ok "set $p" "write failed"
	fi
fi

# rxe0 is no shca device: shca0 can never take the direct path to it
path_check wire "shca0's messages to and from rxe0" shca0
rdma_dev_del "$I" rxe0
rdma_dev_del "$A" shca0
modprobe -r rdma_rxe
veth_b_to_netns || not_ok "move veth-b back to shca-b" "ip link failed"
check "shca unloads" modprobe -r shca
e2e_finish
