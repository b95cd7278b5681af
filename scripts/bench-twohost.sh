#!/bin/bash
# make bench's two-host column: two 6.12 VMs (scripts/vm-pair), one vCPU
# each (one host core each), joined by QEMU's UDP socket link, and in that
# one pair of boots:
#
#   link   the link's own throughput: iperf3 TCP (one stream) and UDP
#          (unlimited rate: what reaches the receiver) in 1400-byte and
#          in 1 KiB datagrams (a RoCE packet's payload), a -> b, MB/s
#   shca   shca <-> shca on the link
#   rxe    rdma_rxe <-> rdma_rxe on the same link
#
# Rows: ib_write_bw, ib_send_bw, ib_read_bw at 4 KiB and 64 KiB with 1 and
# 16 QPs (MB/s, perftest's average; client on a, server on b), the
# 2-byte RC round trip of ibv_rc_pingpong, polled and with -e (usec/iter),
# and the control path of many QPs: an all-to-all connect, N processes on
# each side and every pair an RC QP through RDMA CM (progs/a2a_cm.c,
# server on b), in seconds from the first connect to the last of the N*N
# connections established (each pair's SEND each way is then verified;
# the time to that is printed as a comment).  Printed: each row's shca
# and rxe values, shca/rxe (bandwidth: >1 is better for shca; round trip
# and connect time: <1), and each bandwidth row's share of the link's UDP
# throughput in 1 KiB datagrams (the link's cost is per frame: QEMU sends
# each as a datagram of its own).  The counters a lossless link keeps at 0
# (resends, timeouts, drops) follow per column: this link loses frames
# under load (Ethernet without flow control), so they are shown, not
# asserted.  Timings are never asserted; a perftest run that gives up
# with "Can't produce a report" (its r^2 check under TCG) runs again, at
# most 3 tries, and never counts as a value; a run that hangs (killed
# after 300 s) is not tried again.
#
# BENCH_TH_PROF=1 runs both VMs under the qprof QEMU (scripts/vm/qprof:
# instruction counts per kernel function, which the host's load does not
# move) and profiles the ib_write_bw 64 KiB 1-QP run of each column on
# each side: BENCH_OUT/twohost/prof-COL-SIDE.txt, per KiB moved (a
# repeated try is counted in, and said).
#
# Environment: BENCH_TH_N_4K (2000), BENCH_TH_N_64K (500), BENCH_TH_Q16_4K
# (200 per QP), BENCH_TH_Q16_64K (50 per QP), BENCH_TH_PP (1000 round
# trips), BENCH_TH_LINK_S (5 s of iperf3), BENCH_TH_A2A (the all-to-all
# connect's N, a row each: "4 8 16 32", 16 to 1024 QPs a side; N=32 took
# 21 s), BENCH_TH_ROWS
# (the groups of rows to run, of "link bw rtt a2a": all; the others
# print "-"), BENCH_TH_COLS (the columns, of "shca rxe": both),
# BENCH_TH_SHCA_PARAMS (writable module parameters of shca, set on
# both sides for its column: "wire_gso=0 ..."), BENCH_TH_PT_OPTS (more
# options for every perftest run: "-e", completions by event rather
# than a client spinning on its CQ),
# BENCH_OUT (build/bench; the pair's logs in BENCH_OUT/twohost).
# Each side's loss counters are printed through each perftest row and
# through each column.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)

if [ "${1:-}" != --in-vm ]; then
	out=${BENCH_OUT:-$top/build/bench}/twohost
	mkdir -p "$out"
	export SHCA_TH_N_4K=${BENCH_TH_N_4K:-2000} SHCA_TH_N_64K=${BENCH_TH_N_64K:-500} \
		SHCA_TH_Q16_4K=${BENCH_TH_Q16_4K:-200} SHCA_TH_Q16_64K=${BENCH_TH_Q16_64K:-50} \
		SHCA_TH_PP=${BENCH_TH_PP:-1000} SHCA_TH_LINK_S=${BENCH_TH_LINK_S:-5} \
		SHCA_TH_A2A=${BENCH_TH_A2A:-4 8 16 32} SHCA_TH_ROWS=${BENCH_TH_ROWS:-link bw rtt a2a} \
		SHCA_TH_PROF=${BENCH_TH_PROF:-0} SHCA_TH_COLS=${BENCH_TH_COLS:-shca rxe} \
		SHCA_TH_SHCA_PARAMS=${BENCH_TH_SHCA_PARAMS:-} SHCA_TH_PT_OPTS=${BENCH_TH_PT_OPTS:-}
	if [ "$SHCA_TH_PROF" = 1 ]; then
		export SHCA_VM_QEMU=$top/scripts/vm/qprof/qemu-qprof QPROF_DIR=1
	fi
	command -v iperf3 >/dev/null ||
		echo "# bench-twohost: no iperf3 on this host (scripts/deps.sh installs it): no link row" >&2
	SHCA_VM_SMP=1 "$top/scripts/vm-pair" --a 6.12 --b 6.12 --timeout 5400 --out "$out" \
		-- scripts/bench-twohost.sh --in-vm >"$out/pair.log" 2>&1
	rc=$?
	# the table is side a's; the counters and CPU shares both sides'
	sed -n 's/^a| \(# bench-twohost: \)/\1/p; s/^b| \(# bench-twohost: .* through \)/\1/p
		s/^a| \(TABLE \)/\1/p' "$out/pair.log" |
		sed 's/^TABLE //'
	grep -a '^[ab]| not ok' "$out/pair.log"
	if ! grep -aq '^a| TABLE ' "$out/pair.log"; then
		echo "# bench-twohost: side a ended before its table; the figures it had (row key, value):"
		sed -n 's/^a| # bench-twohost: value /#   /p' "$out/pair.log"
	fi
	if [ "$SHCA_TH_PROF" = 1 ]; then
		for side in a b; do
			"$top/scripts/vm/qprof/qprof-report" "$out/$side" snap.0 snap.1 --top 30 \
				--per $((SHCA_TH_N_64K * 64)) >"$out/prof-shca-$side.txt" 2>&1
			"$top/scripts/vm/qprof/qprof-report" "$out/$side" snap.2 snap.3 --top 30 \
				--per $((SHCA_TH_N_64K * 64)) >"$out/prof-rxe-$side.txt" 2>&1
		done
		echo "# bench-twohost: profiles per KiB of ib_write_bw 64 KiB -q 1 in $out/prof-{shca,rxe}-{a,b}.txt"
	fi
	echo "# bench-twohost: logs in $out (pair.log: both sides' lines)"
	exit $rc
fi

E2E_SUITE=bench-twohost
. "$top/scripts/e2e/lib.sh"
. "$top/scripts/e2e/benchlib.sh"
ROLE=${SHCA_PAIR_ROLE:?} ND=${SHCA_LINK_NETDEV:?} ME4=${SHCA_LINK_IP4:?} ME6=${SHCA_LINK_IP6:?}
PEER4=${SHCA_PAIR_PEER4:?} PEER6=${SHCA_PAIR_PEER6:?}
DEV=bh0
E2E_T=300
. "$top/scripts/e2e/pairlib.sh"
pair_mailbox
declare -A V
A2A=$(prog a2a_cm) || A2A=

# setv KEY: VAL is row KEY's figure; said at once too, so that the host
# side has it should this side's kernel die before the table (rdma_rxe
# has crashed it).
setv() {
	V[$1]=$VAL
	[ "$ROLE" = a ] && echo "# bench-twohost: value $1 $VAL"
	return 0
}

# rows GROUP: GROUP is one of SHCA_TH_ROWS.
rows() {
	[[ " $SHCA_TH_ROWS " == *" $1 "* ]]
}

# th_val NAME WAIT SRVCMD CLICMD EXTRACT: a run (two_run: WAIT for the
# server), client on a, server on b, up to 3 times until EXTRACT (a
# function of the client's log) gives a figure; a tells b whether to run
# again.  On a, VAL := the figure; TRIES := the runs it took.
th_val() {
	local try again
	VAL=
	for try in 1 2 3; do
		TRIES=$try
		two_run "$1" b "$2" "$3" "$4"
		if [ "$ROLE" = a ]; then
			VAL=
			[ "$CASE_RC" = 0 ] && VAL=$("$5" "$CASE_LOG")
			# again only for a run that ended without a figure
			# (perftest's r^2 check under TCG), not for a hang
			again=no
			[ -z "$VAL" ] && [ $try -lt 3 ] && [ "$CASE_RC" != 124 ] && again=yes
			[ -z "$VAL" ] && echo "# bench-twohost: $1: try $try: rc $CASE_RC, no figure: $(gist "$CASE_LOG" 3)"
			send_msg "again:$CASE_N:$again"
		else
			wait_msg "again:$CASE_N:" 600 || return 1
			again=${MSG##*:}
		fi
		[ "$again" = yes ] || break
	done
	[ "$ROLE" = b ] || [ -n "$VAL" ]
}

# qsnap: a qprof snapshot (scripts/vm/qprof/README.md): the next
# snap.N in this side's out directory.
qsnap() {
	touch "$SHCA_OUT/qprof.trig"
	wait_for 120 eval "! test -e $SHCA_OUT/qprof.trig"
}

# bw_rows COL: the perftest rows of column COL.
bw_rows() {
	local col=$1 t s q n args
	for s in 4096 65536; do
		for q in 1 16; do
			case "$q/$s" in
			16/4096) n=$SHCA_TH_Q16_4K ;;
			16/*) n=$SHCA_TH_Q16_64K ;;
			*/4096) n=$SHCA_TH_N_4K ;;
			*) n=$SHCA_TH_N_64K ;;
			esac
			for t in write send read; do
				args="-d $DEV -x $GI4 -F -s $s -n $n -q $q $SHCA_TH_PT_OPTS"
				[ "$q" = 16 ] && args+=" -Q $(cq_mod_for "$n")"
				prof=0
				[ "$SHCA_TH_PROF" = 1 ] && [ "$t/$s/$q" = write/65536/1 ] && prof=1
				[ $prof = 1 ] && qsnap
				loss_mark R0
				th_val "$col ib_${t}_bw $((s / 1024))KiB -q $q -n $n" tcp:18515 \
					"ib_${t}_bw $args" "ib_${t}_bw $args $PEER4" bw_val &&
					setv "$col,${t}_$((s / 1024))k_q$q"
				loss_take R0 "$col ib_${t}_bw $((s / 1024))KiB -q $q" "the row"
				[ $prof = 1 ] && qsnap && echo "# bench-twohost: $col: profiled run took $TRIES tries"
			done
		done
	done
}

# rtt_rows COL: the 2-byte round trips, polled and event-driven.
rtt_rows() {
	local col=$1 m opt
	for m in poll event; do
		[ "$m" = event ] && opt=-e || opt=
		th_val "$col ibv_rc_pingpong 2B $m" tcp:18515 \
			"ibv_rc_pingpong -d $DEV -g $GI4 -s 2 -n $SHCA_TH_PP $opt" \
			"ibv_rc_pingpong -d $DEV -g $GI4 -s 2 -n $SHCA_TH_PP $opt $PEER4" rtt_val &&
			setv "$col,rtt_$m"
	done
}

# a2a_val LOG: the seconds from the first connect to all connections
# established, from a2a_cm's summary of a run that verified every pair.
a2a_val() {
	sed -n 's/.*a2a_cm client: summary: .* established_s=\([0-9.]*\) .* result=ok$/\1/p' "$1" |
		tail -n 1
}

# a2a_rows COL: the all-to-all connects, one row per N of SHCA_TH_A2A.
a2a_rows() {
	local col=$1 n args
	if [ -z "$A2A" ]; then
		echo "# bench-twohost: no a2a_cm (make -C scripts/e2e/progs): no all-to-all rows"
		return 0
	fi
	for n in $SHCA_TH_A2A; do
		args="-p 7490 -n $n -d $DEV -W 120"
		th_val "$col all-to-all connect ${n}x$n" "text:a2a_cm server: listening" \
			"$A2A -s -a $ME4 $args" "$A2A -c -a $PEER4 $args" a2a_val &&
			setv "$col,a2a_$n"
		if [ "$ROLE" = a ]; then
			grep -h 'a2a_cm client: \(phases\|summary\)' "$CASE_LOG" | sed "s/^/# bench-twohost: $col: /"
		fi
	done
}

# iperf_val LOG: the receiver's rate of an iperf3 run, in MB/s.
iperf_val() {
	awk '/receiver/ { for (i = 1; i < NF; i++) if ($(i + 1) ~ /^[KMG]bits\/sec$/) {
		v = $i; u = $(i + 1) } }
	     END { if (v == "") exit; f = (u ~ /^G/) ? 1000 : (u ~ /^K/) ? 0.001 : 1
		printf "%.1f", v * f / 8 }' "$1"
}

# link_rows: iperf3 a -> b, TCP and UDP.
link_rows() {
	command -v iperf3 >/dev/null || return 0
	th_val "link TCP" tcp:5201 "iperf3 -s -1 -B $ME4" "iperf3 -c $PEER4 -t $SHCA_TH_LINK_S -f m" iperf_val &&
		setv "link,tcp"
	th_val "link UDP" tcp:5201 "iperf3 -s -1 -B $ME4" "iperf3 -c $PEER4 -u -b 0 -l 1400 -t $SHCA_TH_LINK_S -f m" \
		iperf_val && setv "link,udp"
	# datagrams of a RoCE packet's size (1 KiB of payload at the path
	# MTU 1024): the link's cost is per frame, so this is the figure a
	# RoCE stream's payload can approach
	th_val "link UDP 1 KiB" tcp:5201 "iperf3 -s -1 -B $ME4" "iperf3 -c $PEER4 -u -b 0 -l 1024 -t $SHCA_TH_LINK_S -f m" \
		iperf_val && setv "link,udp1k"
}

# loss counters of this side's device, summed with the other side's in the
# table: shca's resends, timeouts and drops; rxe's resends and duplicates
# (rc_probes: the early ones of adaptive retransmission, within
# rc_retransmits), and shca's GSO datagrams (tx_gso_sends) and the packets
# in them (tx_gso_packets), through the column and through each perftest row
LOSS="rc_retransmits rc_probes rc_timeouts rx_dropped completer_retry_err duplicate_request
	tx_gso_sends tx_gso_packets"
declare -A L0 R0
# and where this side's CPU time went (/proc/stat: user, system, softirq,
# idle; with a client polling its CQ, user is its spinning)
CPUF="user nice system idle iowait irq softirq"
# cpu_read ARRAY: the cpu line's fields into ARRAY[cpu_FIELD].
cpu_read() {
	local -n arr=$1
	local f tag v
	read -r tag v <<<"$(head -n 1 /proc/stat)"
	[ "$tag" = cpu ] || return 0
	# shellcheck disable=SC2086
	set -- $v
	for f in $CPUF; do arr["cpu_$f"]=$1; shift; done
}
# cpu_share ARRAY: the shares of CPU time since cpu_read ARRAY, in %.
cpu_share() {
	local -n b=$1
	local -A now
	local f d tot=0 out=
	cpu_read now
	for f in $CPUF; do tot=$((tot + ${now[cpu_$f]:-0} - ${b[cpu_$f]:-0})); done
	[ "$tot" -gt 0 ] || return 0
	for f in user system softirq idle; do
		d=$((${now[cpu_$f]:-0} - ${b[cpu_$f]:-0}))
		out+=" $f $((100 * d / tot))%"
	done
	echo " cpu$out"
}
# loss_mark ARRAY: the counters now, in ARRAY (L0 or R0).
loss_mark() {
	local n
	for n in $LOSS; do hw_stat_read "$1[$n]" "$DEV" "$n"; done
	cpu_read "$1"
}
# loss_take ARRAY WHAT SPAN: print the growth since loss_mark ARRAY.
loss_take() {
	local -n base=$1
	local n v out=
	for n in $LOSS; do
		hw_stat_read v "$DEV" "$n"
		[ -n "$v" ] && out+=" $n +$((v - ${base[$n]:-0}))"
	done
	echo "# bench-twohost: $2: $ROLE's $DEV through $3:$out;$(cpu_share "$1")"
}

# shca_params: SHCA_TH_SHCA_PARAMS's writable module parameters set.
shca_params() {
	local kv
	for kv in $SHCA_TH_SHCA_PARAMS; do
		echo "${kv#*=}" >"/sys/module/shca/parameters/${kv%%=*}" ||
			echo "# bench-twohost: cannot set shca's ${kv%%=*}"
		echo "# bench-twohost: shca's ${kv%%=*} is $(cat "/sys/module/shca/parameters/${kv%%=*}")"
	done
}

column() {
	PH=$1
	if dev_up "$1"; then
		echo "# bench-twohost: $1 on $ND up (GID $GI4)"
		[ "$1" = shca ] && shca_params
	else
		echo "# bench-twohost: $1 on $ND failed: $(rdma link show 2>&1 | tr '\n' ' ')"
	fi
	barrier "$1" || return 1
	# the symbols with the column's module loaded (shca stays loaded
	# through rxe's column, so the last copy has both)
	[ "$SHCA_TH_PROF" = 1 ] && cat /proc/kallsyms >"$SHCA_OUT/kallsyms"
	loss_mark L0
	# a warm-up pingpong whose figure is not kept
	two_run "$1 warm-up" b tcp:18515 "ibv_rc_pingpong -d $DEV -g $GI4 -s 2 -n 100" \
		"ibv_rc_pingpong -d $DEV -g $GI4 -s 2 -n 100 $PEER4"
	# the perftest rows last: rdma_rxe on 6.12.117 has crashed its host
	# (a double fault in rxe_receiver, building an ACK) in the READ 64 KiB
	# 16-QP row, the column's last, and no row after a crash gets a figure
	rows rtt && rtt_rows "$1"
	rows a2a && a2a_rows "$1"
	rows bw && bw_rows "$1"
	loss_take L0 "$1" "the column"
	barrier "$1-end"
	dev_down
}

barrier hello 600 || { echo "# bench-twohost: the other side never answered"; exit 1; }
rows link && link_rows
for c in $SHCA_TH_COLS; do
	column "$c"
done
barrier bye 120
[ "$ROLE" = a ] || exit 0

# the table
row() { printf 'TABLE %-30s %10s %10s %9s %9s\n' "$@"; }
row "" shca rxe shca/rxe "shca/UDP"
for s in 4 64; do
	for q in 1 16; do
		for t in write send read; do
			k=${t}_${s}k_q$q
			row "ib_${t}_bw ${s} KiB -q $q (MB/s)" "${V[shca,$k]:--}" "${V[rxe,$k]:--}" \
				"$(ratio "${V[shca,$k]:-}" "${V[rxe,$k]:-}")" \
				"$(ratio "${V[shca,$k]:-}" "${V[link,udp1k]:-}")"
		done
	done
done
for m in poll event; do
	row "RC round trip 2 B $m (usec)" "${V[shca,rtt_$m]:--}" "${V[rxe,rtt_$m]:--}" \
		"$(ratio "${V[shca,rtt_$m]:-}" "${V[rxe,rtt_$m]:-}")" ""
done
for n in $SHCA_TH_A2A; do
	row "all-to-all connect ${n}x$n RC (s)" "${V[shca,a2a_$n]:--}" "${V[rxe,a2a_$n]:--}" \
		"$(ratio "${V[shca,a2a_$n]:-}" "${V[rxe,a2a_$n]:-}")" ""
done
row "link TCP, UDP (MB/s)" "${V[link,tcp]:--}" "${V[link,udp]:--}" "" ""
row "link UDP 1 KiB datagrams (MB/s)" "${V[link,udp1k]:--}" "" "" ""
