#!/bin/bash
# rtt-trace: where the time of a 2-byte RC round trip goes, on each of two
# hosts (issue 38).  A diagnostic, not a test and not part of make bench.
#
#   RTT_OUT=DIR [RTT_N=300] [RTT_COLS="shca rxe"] [RTT_MODES="poll event"] \
#       scripts/rtt-trace.sh
#
# Two 6.12 VMs (scripts/vm-pair, one vCPU each, the UDP socket link, as
# make bench's two-host column) run ibv_rc_pingpong -s 2 -n RTT_N (server
# on b, client on a), polled and with -e, for each device of RTT_COLS
# (shca, rdma_rxe) on link0: first untraced (the figure of this boot),
# then while ftrace records, on both sides, events that do not depend on
# the driver:
#   irq:irq_handler_entry/exit, irq:softirq_entry/exit  interrupts, softirqs
#   net:napi_gro_receive_entry, net:net_dev_start_xmit, net:net_dev_xmit
#                   the NIC's edges (net_dev_xmit: the driver's xmit returned)
#   rtt:rx, rtt:tx  kprobes on napi_gro_receive and dev_hard_start_xmit
#                   that read the RoCE v2 datagram's BTH opcode and PSN
#                   (UDP port 4791 only): which packet is which
#   rtt:cqe         a kprobe on the driver's completion writer
#                   (shca_cq_post, rxe_cq_post): when the CQE is there
#   sched:sched_waking/wakeup/switch, timer:hrtimer_expire_entry
#   workqueue:workqueue_queue_work/execute_start/execute_end
#   raw_syscalls:sys_enter/exit  of ibv_rc_pingpong only
# and, with shca, events/shca (shca_pkt, shca_cqe, ...).  The ring buffer
# is read after the run (trace-cmd start/stop/extract), so no recorder
# runs beside the ping-pong on the one vCPU; tracing still slows every
# event down (the traced figures are printed next to the untraced ones).
# Each side's trace: DIR/{a,b}/COL-MODE.dat.  Then, on this host,
# scripts/rtt-trace.py DIR decomposes the round trip per side (it can be
# run again on the same DIR) into DIR/report.txt.
#
# RTT_COLS, RTT_MODES: what to run (default both of each; a driver named
# again runs again, its files COL2-MODE, ...: "shca rxe shca rxe"
# alternates them, as the host's load moves the guests' speed between
# columns); RTT_N: round trips per run (300: a few MB of trace per side
# under TCG).  DIR/host-load.txt: the host's load average every 10 s.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)

if [ "${1:-}" != --in-vm ]; then
	out=${RTT_OUT:?RTT_OUT=DIR: where the traces and the report go}
	mkdir -p "$out"
	export SHCA_RTT_N=${RTT_N:-300} SHCA_RTT_COLS=${RTT_COLS:-shca rxe} \
		SHCA_RTT_MODES=${RTT_MODES:-poll event}
	# the host's load through the run: the guests' speed depends on it
	(while :; do echo "$(date +%T) $(cut -d' ' -f1-3 /proc/loadavg)"; sleep 10; done) \
		>"$out/host-load.txt" 2>&1 &
	loadpid=$!
	SHCA_VM_SMP=1 "$top/scripts/vm-pair" --a 6.12 --b 6.12 --timeout 3600 --out "$out" \
		-- scripts/rtt-trace.sh --in-vm >"$out/pair.log" 2>&1
	rc=$?
	kill "$loadpid" 2>/dev/null
	grep -a '^[ab]| \(# rtt-trace\|not ok\)' "$out/pair.log"
	python3 "$top/scripts/rtt-trace.py" "$out" >"$out/report.txt" 2>&1 ||
		echo "rtt-trace: the report failed (see $out/report.txt)" >&2
	cat "$out/report.txt"
	echo "# rtt-trace: logs in $out (pair.log: both sides' lines)"
	exit $rc
fi

E2E_SUITE=rtt-trace
. "$top/scripts/e2e/lib.sh"
. "$top/scripts/e2e/benchlib.sh"
ROLE=${SHCA_PAIR_ROLE:?} ND=${SHCA_LINK_NETDEV:?} ME4=${SHCA_LINK_IP4:?} ME6=${SHCA_LINK_IP6:?}
PEER4=${SHCA_PAIR_PEER4:?} PEER6=${SHCA_PAIR_PEER6:?}
DEV=rt0
E2E_T=600
. "$top/scripts/e2e/pairlib.sh"
pair_mailbox
TR=/sys/kernel/tracing
mountpoint -q $TR || mount -t tracefs nodev $TR 2>/dev/null

say() { echo "# rtt-trace: $ROLE: $*"; }

# The offset of skb->data in this kernel (BTF), for the kprobes.
skb_data_off() {
	local o
	o=$(pahole -C sk_buff /sys/kernel/btf/vmlinux 2>/dev/null |
		awk '$NF == "*/" && $0 ~ /[*] *data;/ { print $(NF - 2); exit }')
	echo "${o:-208}"
}
DOFF=$(skb_data_off)
say "skb->data at offset $DOFF"

# kprobes (COL: the column's driver): rtt/rx at napi_gro_receive (data at the IP header: eth_type_trans
# pulled the Ethernet header), rtt/tx at dev_hard_start_xmit (data at the
# Ethernet header).  IPv4 without options: UDP dport at IP+22, the BTH at
# IP+28 (opcode), its PSN word at IP+36 (big-endian: AckReq, PSN).
# rtt/cqe: the driver's function that writes a completion (shca_cq_post,
# rxe_cq_post), the one driver-specific probe: when the CQE is there.
kprobes_on() {
	local e
	for e in rx tx cqe; do echo "-:rtt/$e" >>$TR/kprobe_events 2>/dev/null; done
	echo "p:rtt/rx napi_gro_receive dport=+22(+$DOFF(%si)):x16 op=+28(+$DOFF(%si)):x8 psn=+36(+$DOFF(%si)):x32" \
		>>$TR/kprobe_events &&
	echo "p:rtt/tx dev_hard_start_xmit dport=+36(+$DOFF(%di)):x16 op=+42(+$DOFF(%di)):x8 psn=+50(+$DOFF(%di)):x32" \
		>>$TR/kprobe_events &&
	echo 'dport == 0xb712' >$TR/events/rtt/rx/filter &&
	echo 'dport == 0xb712' >$TR/events/rtt/tx/filter || return 1
	case "$1" in
	shca) echo 'p:rtt/cqe shca:shca_cq_post' >>$TR/kprobe_events ;;
	rxe) echo 'p:rtt/cqe rdma_rxe:rxe_cq_post' >>$TR/kprobe_events ;;
	esac
}

EVENTS=(-e irq:irq_handler_entry -e irq:irq_handler_exit -e irq:softirq_entry -e irq:softirq_exit
	-e net:napi_gro_receive_entry -e net:net_dev_start_xmit -e net:net_dev_xmit
	-e sched:sched_waking -e sched:sched_wakeup -e sched:sched_switch -e timer:hrtimer_expire_entry
	-e workqueue:workqueue_queue_work -e workqueue:workqueue_execute_start
	-e workqueue:workqueue_execute_end -e rtt)
# trace_on COL: start recording into the ring buffer (16 MiB).
trace_on() {
	local ev=("${EVENTS[@]}")
	trace-cmd reset >/dev/null 2>&1
	kprobes_on "$1" || say "kprobes failed: $(tail -n 3 $TR/error_log 2>/dev/null | tr '\n' ' ')"
	[ "$1" = shca ] && ev+=(-e shca)
	if ! trace-cmd start -b 16384 -C local "${ev[@]}" \
		-e raw_syscalls -f 'comm == "ibv_rc_pingpong"' >"$E2E_LOGS/trace-start.log" 2>&1; then
		say "trace-cmd start with the comm filter failed, without: $(tail -n 2 "$E2E_LOGS/trace-start.log" | tr '\n' ' ')"
		trace-cmd start -b 16384 -C local "${ev[@]}" >"$E2E_LOGS/trace-start.log" 2>&1 ||
			say "trace-cmd start failed: $(tail -n 2 "$E2E_LOGS/trace-start.log" | tr '\n' ' ')"
	fi
}
# trace_off NAME: stop, save the buffer as SHCA_OUT/NAME.dat.
trace_off() {
	trace-cmd stop >/dev/null 2>&1
	trace-cmd extract -o "$SHCA_OUT/$1.dat" >"$E2E_LOGS/trace-extract.log" 2>&1 ||
		say "extract failed: $(tail -n 2 "$E2E_LOGS/trace-extract.log" | tr '\n' ' ')"
	grep -h 'overrun\|lost' "$E2E_LOGS/trace-extract.log" | head -n 3 | sed "s/^/# rtt-trace: $ROLE: $1: /"
	trace-cmd reset >/dev/null 2>&1
}

# stats NAME: this side's device counters, into SHCA_OUT/NAME.stats.
stats() {
	rdma statistic show link "$DEV/1" >"$SHCA_OUT/$1.stats" 2>&1
}

# pp COL MODE N NAME: one ping-pong, server b, client a; on a, VAL := its
# usec/iter.
pp() {
	local opt=
	[ "$2" = event ] && opt=-e
	two_run "$1 $4 $2" b tcp:18515 "ibv_rc_pingpong -d $DEV -g $GI4 -s 2 -n $3 $opt" \
		"ibv_rc_pingpong -d $DEV -g $GI4 -s 2 -n $3 $opt $PEER4"
	VAL=
	[ "$ROLE" = a ] && VAL=$(rtt_val "$CASE_LOG")
	cp "$CASE_LOG" "$SHCA_OUT/$1-$2-$4.log" 2>/dev/null
}

barrier hello 900 || { say "the other side never answered"; exit 1; }
declare -A NRUN
for drv in $SHCA_RTT_COLS; do
	# a driver named again gets its own files: rxe, then rxe2, ...
	NRUN[$drv]=$((${NRUN[$drv]:-0} + 1))
	col=$drv
	[ "${NRUN[$drv]}" = 1 ] || col=$drv${NRUN[$drv]}
	PH=$col
	if dev_up "$drv"; then
		say "$col on $ND up (GID $GI4)"
	else
		say "$col on $ND failed: $(rdma link show 2>&1 | tr '\n' ' ')"
	fi
	barrier "$col" || exit 1
	pp "$col" poll 100 warmup
	for m in $SHCA_RTT_MODES; do
		pp "$col" "$m" "$SHCA_RTT_N" plain
		[ "$ROLE" = a ] && say "$col $m untraced: ${VAL:--} usec/iter"
		trace_on "$drv"
		stats "$col-$m-before"
		barrier "$col-$m-traced" || exit 1
		pp "$col" "$m" "$SHCA_RTT_N" traced
		stats "$col-$m-after"
		trace_off "$col-$m"
		[ "$ROLE" = a ] && say "$col $m traced: ${VAL:--} usec/iter"
		barrier "$col-$m-done" || exit 1
	done
	barrier "$col-end"
	dev_down
done
barrier bye 120
cat /proc/interrupts >"$SHCA_OUT/interrupts.txt"
say "done"
exit 0
