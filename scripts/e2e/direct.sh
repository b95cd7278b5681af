#!/bin/bash
# The same-host direct path (module parameter `direct`) and its fall back
# to the wire, with every transfer verified: progs/dxfer.c checks each
# WRITE, READ and SEND byte for byte and every completion's status; the
# perftest runs check completion status.  Each case also asserts from
# `rdma statistic` which path the messages took (tx_direct_msgs /
# tx_wire_msgs deltas) and, on the direct path, that nothing was lost
# (rx_dropped, rc_timeouts, rc_retransmits deltas 0); on the wire the
# counters are printed (loss_info says why).  Runs inside the
# VM, on the boot's pair: shca0 in shca-a (veth-a) <-> shca1 in shca-b.
#
#   direct.sh [PART...]   PART: clean, qdisc, kill, netdev, mix, tap,
#                         filter; robust = qdisc kill netdev mix tap
#                         filter; default: all
#
# clean   2 MiB x5 ib_read_bw, ib_write_bw, ib_send_bw (perftest) and a dxfer
#         WRITE+READ+SEND run, across the namespaces (direct), on one
#         device (a QP pair on shca0 to itself, same GID; direct; make
#         check-full only) and across the namespaces with direct=0
#         (wire), and ib_read_bw
#         and ib_write_bw on 16 QPs (4 KiB x60, and 64 KiB x20 at perftest's
#         67 ms timeout) both ways: zero loss on the direct path; on the
#         wire no drop, sequence NAK, timeout or resend (a request
#         reordered on the way is held until its gap fills), at most one ACK per 4 data
#         packets, and the wire packets sent as UDP GSO datagrams with
#         every ICRC intact; with wire_gso=0 (IPv4) they go one by one,
#         and over IPv6 as GSO datagrams again, verified.  Then, on the direct path: a conversing consumer
#         (ibv_rc_pingpong -c, ibv_ud_pingpong, a dxfer run of 2 KiB
#         SEND/WRITE messages each answered by the server) has its
#         requests executed in the sender's thread (rx_inline_packets grew
#         on both devices), data verified, nothing lost; the same on the
#         wire (direct=0: each request comes back up the IP stack in its
#         sender's thread, which executes it); and an
#         ib_send_bw stream into a 4-deep receive queue (RNR NAKs) resends
#         only after the RNR waits: no sequence NAK, no retransmission.
# qdisc   a netem qdisc (delay 1ms) added to veth-a and removed while a
#         verified stream runs: while it is there no message starts direct
#         (nor goes as a GSO datagram), once it went messages start direct
#         again; nothing lost.
# kill    kill -9 of the responder's and of the requester's process
#         mid-transfer: the survivor ends with an error completion, a
#         disconnect or its watchdog, never wrong data; no kernel report;
#         then a verified transfer works.
# netdev  the peer's device (rdma link delete shca1), then the veth pair,
#         deleted mid-transfer: the processes end, no kernel report; after
#         recreating them a verified transfer works.
# mix     two streams between the pair while `direct` goes 0 and back to 1
#         and a packet tap opens and closes on veth-b: QPs on both paths at
#         once, all data verified.
# tap     a packet tap (progs/tap4791.py, an AF_PACKET socket as tcpdump
#         opens) on veth-a sees the RoCE v2 packets (UDP 4791) of a transfer
#         started while it is open: tapped traffic takes the wire, one
#         packet at a time (no GSO datagram).
# filter  an nftables chain dropping UDP 4791 on input in A (the
#         requester's namespace), on output in B (the responder's), and
#         on output in A at -225 (the security modules' labelling hooks'
#         priority): ib_read_bw and ib_send_bw fail with the completion
#         status direct=0 gives (IBV_WC_RETRY_EXC_ERR), no message starts
#         direct; once each chain is deleted, a verified transfer goes
#         direct again.  Skipped on a kernel without nftables (the test
#         kernel has them since 2026-11-29); nft itself must be there.
#
#   DIRECT_BIG=2M DIRECT_BIG_N=5   the clean part's message size and count
#                                  (perftest takes 5 at least; make
#                                  check-full: 6M x5)
#   DIRECT_Q16_N=60                the 16-QP cases' 4 KiB messages per QP;
#                                  their 64 KiB cases send a third as many
#                                  (make check-full: 300)
#   DIRECT_WD=30                   dxfer's watchdog (s) in the robust parts
#   (or SHCA_DIRECT_*, which scripts/vm-run passes into the VM)
set -u
E2E_SUITE=direct
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

parts=" ${*:-clean robust} "
parts=${parts/ robust / qdisc kill netdev mix tap filter }
# want PART: PART is to run; it prints how long the previous part took.
PART=setup PART_T0=$SECONDS
want() {
	[[ $parts == *" $1 "* ]] || return 1
	echo "# $E2E_SUITE: $PART took $((SECONDS - PART_T0)) s"
	PART=$1 PART_T0=$SECONDS
}

BIG=${DIRECT_BIG:-${SHCA_DIRECT_BIG:-2M}}
BIGN=${DIRECT_BIG_N:-${SHCA_DIRECT_BIG_N:-5}}
Q16N=${DIRECT_Q16_N:-${SHCA_DIRECT_Q16_N:-60}}
WD=${DIRECT_WD:-${SHCA_DIRECT_WD:-30}}
PARAM=/sys/module/shca/parameters/direct
TAP=$here/progs/tap4791.py
DXFER=$(prog dxfer) || exit 1
E2E_T=${E2E_T:-300}

big_bytes() {
	case $BIG in
	*M) echo $((${BIG%M} << 20)) ;;
	*K) echo $((${BIG%K} << 10)) ;;
	*) echo "$BIG" ;;
	esac
}
BIGB=$(big_bytes)

# next_port: a fresh RDMA CM port for each dxfer run (no port of a
# listener is used again within a run).
PORT=7480
next_port() {
	PORT=$((PORT + 1))
}

# --- the module parameter ----------------------------------------------------

HAVE_PARAM=0
# set_direct 0|1
set_direct() {
	[ "$HAVE_PARAM" = 1 ] || return 0
	echo "$1" >"$PARAM"
}

# --- counters ------------------------------------------------------------------

STATS="tx_direct_msgs tx_wire_msgs rx_dropped rc_timeouts rc_retransmits rc_seq_naks_rcvd rc_seq_naks_sent rc_held_requests rc_held_responses rc_held_expired rc_timeouts_held rc_rnr_naks_rcvd rc_dup_acks rc_bad_resp rc_acks_sent rc_acks_delayed rx_packets rx_inline_packets tx_gso_packets tx_gso_sends rx_bad_icrc rx_malformed"
declare -A SNAP

# snap TAG DEV...: SNAP[TAG,DEV,counter] for every counter of $STATS.
snap() {
	local tag=$1 d n
	shift
	for d in "$@"; do
		for n in $STATS; do
			hw_stat_read "SNAP[$tag,$d,$n]" "$d" "$n"
		done
	done
}

# delta FROM TO DEV NAME: print the growth of counter NAME of DEV between
# the snapshots FROM and TO ("?" if the counter is missing).
delta() {
	local a=${SNAP[$1,$3,$4]:-} b=${SNAP[$2,$3,$4]:-}
	if [ -z "$a" ] || [ -z "$b" ]; then echo "?"; else echo $((b - a)); fi
}

# sum_delta VAR FROM TO NAME DEV...: VAR := the growth summed over DEVs
# (each DEV once), or "?" if a counter is missing.
sum_delta() {
	local var=$1 from=$2 to=$3 n=$4 d s=0 v seen=" "
	shift 4
	for d in "$@"; do
		[[ $seen == *" $d "* ]] && continue
		seen="$seen$d "
		v=$(delta "$from" "$to" "$d" "$n")
		if [ "$v" = "?" ]; then
			printf -v "$var" '?'
			return
		fi
		s=$((s + v))
	done
	printf -v "$var" '%s' "$s"
}

# path_case NAME FROM TO WANT DEV...: the messages between the snapshots took
# the path WANT: direct (tx_direct_msgs grew, tx_wire_msgs did not), wire
# (the reverse), both (both grew) or back-to-direct (tx_direct_msgs grew:
# messages may stay on the wire until what is there was acknowledged).
path_case() {
	local name=$1 from=$2 to=$3 want=$4 dd dw good
	shift 4
	sum_delta dd "$from" "$to" tx_direct_msgs "$@"
	sum_delta dw "$from" "$to" tx_wire_msgs "$@"
	if [ "$dd" = "?" ] || [ "$dw" = "?" ]; then
		not_ok "$name: path $want" "no tx_direct_msgs/tx_wire_msgs counter on $*"
		return
	fi
	case $want in
	direct) [ "$dd" -gt 0 ] && [ "$dw" -eq 0 ] ;;
	wire) [ "$dw" -gt 0 ] && [ "$dd" -eq 0 ] ;;
	both) [ "$dw" -gt 0 ] && [ "$dd" -gt 0 ] ;;
	back-to-direct) [ "$dd" -gt 0 ] ;;
	esac
	good=$?
	if [ $good = 0 ]; then
		ok "$name: path $want (tx_direct_msgs +$dd, tx_wire_msgs +$dw)"
	else
		not_ok "$name: path $want" "tx_direct_msgs +$dd, tx_wire_msgs +$dw on $*$(why_wire)"
	fi
}

# The reasons direct.c gives (ibdev_dbg) for taking the wire, while the
# clean part's direct runs go: why_wire prints the last one.
DYNDBG=/sys/kernel/debug/dynamic_debug/control
dyndbg() {
	[ -w "$DYNDBG" ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	echo "file direct.c $1" >"$DYNDBG" 2>/dev/null
}
why_wire() {
	local w
	w=$(dmesg | grep -a 'wire path to' | tail -n 1)
	[ -z "$w" ] || echo " (last reason logged: ${w#*] })"
}

# grown FROM TO "COUNTER..." DEV...: " DEV:COUNTER+N" for each counter
# that grew between the snapshots, each DEV once.
grown() {
	local from=$1 to=$2 names=$3 d n v out="" seen=" "
	shift 3
	for d in "$@"; do
		[[ $seen == *" $d "* ]] && continue
		seen="$seen$d "
		for n in $names; do
			v=$(delta "$from" "$to" "$d" "$n")
			[ "$v" = 0 ] || out="$out $d:$n+$v"
		done
	done
	echo "$out"
}

LOSS="rx_dropped rc_timeouts rc_retransmits"
WHY="rc_seq_naks_rcvd rc_rnr_naks_rcvd rc_dup_acks rc_bad_resp rc_held_requests rc_held_responses rc_held_expired"

# loss_info NAME FROM TO DEV...: print the loss counters' deltas.  On the
# wire a QP's packets can still be reordered (an inline ACK or short
# packet and tx_work's packets reach the peer through two CPUs' backlogs;
# the responder holds a request after such a gap, rc_held_requests), and
# a qdisc deleted mid-stream drops what it holds: sequence NAKs and
# resends there are recovery, shown but not asserted.
loss_info() {
	local name=$1 out
	out=$(grown "$2" "$3" "$LOSS $WHY" "${@:4}")
	echo "# $name: loss counters:${out:- none}"
}

# late_acks FROM TO DEV...: true when every retransmit timeout on each DEV
# was a late ACK, not a loss: rx_dropped and the sequence NAKs did not
# grow, and the requester later received as many duplicate ACKs as it had
# timeouts (the ACK it waited for did come, after the timer: a TCG guest
# the host left unscheduled past the 67 ms timeout fires the timer and
# runs the pending ACK together).  A lost ACK or request leaves no
# duplicate ACK behind: its retransmission is acknowledged as new.
late_acks() {
	local from=$1 to=$2 d t
	shift 2
	for d in "$@"; do
		t=$(delta "$from" "$to" "$d" rc_timeouts)
		[ "$(delta "$from" "$to" "$d" rx_dropped)" = 0 ] &&
			[ "$(delta "$from" "$to" "$d" rc_seq_naks_rcvd)" = 0 ] &&
			[ "$(delta "$from" "$to" "$d" rc_dup_acks)" -ge "$t" ] || return 1
	done
}

# clean_case NAME FROM TO DEV...: nothing was lost between the snapshots:
# rx_dropped, rc_timeouts and rc_retransmits did not grow on any DEV (else
# the counters that say why are shown too), or every timeout was a late
# ACK (late_acks: shown, not a loss).
clean_case() {
	local name=$1 bad
	bad=$(grown "$2" "$3" "$LOSS" "${@:4}")
	if [ -z "$bad" ]; then
		ok "$name: no loss (rx_dropped, rc_timeouts, rc_retransmits +0)"
	elif late_acks "$2" "$3" "${@:4}"; then
		ok "$name: no loss (late ACKs only:$bad$(grown "$2" "$3" "$WHY" "${@:4}"))"
	else
		not_ok "$name: no loss" "$bad ($(grown "$2" "$3" "$WHY" "${@:4}"))"
	fi
}

# --- kernel reports ---------------------------------------------------------------

REPORTS='BUG:|WARNING:|KASAN|UBSAN|Oops|general protection|refcount_t:|list_(add|del) corruption|circular locking|recursive locking|blocked for more than'
reports() {
	dmesg | grep -c -E "$REPORTS"
}
# no_report_case NAME BEFORE: no kernel report since the count BEFORE.
no_report_case() {
	local now
	now=$(reports)
	if [ "$now" = "$2" ]; then
		ok "$1: no kernel report"
	else
		not_ok "$1: no kernel report" "$(dmesg | grep -E "$REPORTS" | tail -n 2 | tr '\n' ' ')"
	fi
}

# --- runs -------------------------------------------------------------------------

# dx_ok SRVLOG CLILOG: both ends of dxfer verified everything.
dx_ok() {
	has_text "$1" "dxfer server: all data verified" &&
		has_text "$2" "dxfer client: all data verified" && return 0
	echo "not verified: $(tail1 "$1" 2) | $(tail1 "$2" 2)"
	return 1
}

# verified NAME [DXFER CLIENT ARGS]: a short dxfer run across the namespaces
# (all three operations), verified; to the server address $DX_ADDR (by
# default B's IPv4 address).
verified() {
	local name=$1 addr=${DX_ADDR:-$AB}
	shift
	next_port
	pair_case "$name" cm "$NB" "$DXFER -s -a $addr -p $PORT -W $WD" \
		"$NA" "$DXFER -c -a $addr -p $PORT -W $WD ${*:--o wrs -S 256K -n 4}" dx_ok
}

# Streams in the background: st_start TAG SRVNS CLINS ADDR PORT ARGS starts a
# dxfer server, then its client (a timed run, ended by st_stop), and sets
# ST_SPID/ST_CPID[TAG] (the pids of their `timeout`), ST_SLOG/ST_CLOG[TAG].
declare -A ST_SPID ST_CPID ST_SLOG ST_CLOG ST_PROG
st_start() {
	local tag=$1 sns=$2 cns=$3 addr=$4 port=$5 args=$6 up
	read -r up _ </proc/uptime
	echo "# $tag: [$up] starting"
	ST_SLOG[$tag]=$E2E_LOGS/direct-st-$tag.srv
	ST_CLOG[$tag]=$E2E_LOGS/direct-st-$tag.cli
	ST_PROG[$tag]=$E2E_LOGS/direct-st-$tag.progress
	# empty before the start: the background job opens its log later
	rm -f "${ST_PROG[$tag]}"
	: >"${ST_SLOG[$tag]}"
	: >"${ST_CLOG[$tag]}"
	# shellcheck disable=SC2086
	$sns timeout "$E2E_T" "$DXFER" -s -a "$addr" -p "$port" -W "$WD" >"${ST_SLOG[$tag]}" 2>&1 &
	ST_SPID[$tag]=$!
	wait_for 120 has_text "${ST_SLOG[$tag]}" "dxfer server: listening" || return 1
	# shellcheck disable=SC2086
	$cns timeout "$E2E_T" "$DXFER" -c -a "$addr" -p "$port" -W "$WD" -P "${ST_PROG[$tag]}" \
		$args >"${ST_CLOG[$tag]}" 2>&1 &
	ST_CPID[$tag]=$!
	wait_for 120 _st_connected "$tag"
	read -r up _ </proc/uptime
	echo "# $tag: [$up] $(grep -h -m 1 'dxfer client: connected' "${ST_CLOG[$tag]}")"
	has_text "${ST_CLOG[$tag]}" "dxfer client: connected" && return 0
	st_where "$tag"
	return 1
}
# st_where TAG: where the processes of TAG are (for a stream that did not
# start): each one's state, wchan and kernel stack top.
st_where() {
	local p c
	for p in "${ST_SPID[$1]:-}" "${ST_CPID[$1]:-}"; do
		[ -n "$p" ] || continue
		for c in "$p" $(pgrep -P "$p"); do
			[ -e "/proc/$c" ] || continue
			echo "# $1: pid $c ($(cat "/proc/$c/comm")): $(awk '/^State/ { print $2 }' "/proc/$c/status") wchan $(cat "/proc/$c/wchan"): $(head -n 4 "/proc/$c/stack" 2>/dev/null | tr '\n' ' ')"
		done
	done
}

# _st_connected TAG: the client of TAG connected, or it is gone.
_st_connected() {
	has_text "${ST_CLOG[$1]}" "dxfer client: connected" || ! kill -0 "${ST_CPID[$1]}" 2>/dev/null
}


# progress TAG: messages the stream TAG completed so far.
progress() {
	local n=0
	read -r n <"${ST_PROG[$1]}" 2>/dev/null
	echo "${n:-0}"
}
_progress_at_least() {
	local n=0
	read -r n <"${ST_PROG[$1]}" 2>/dev/null
	[ "${n:-0}" -ge "$2" ]
}
# advance TAG N: wait (at most 120 s) until stream TAG completed N more
# messages; false if it did not.
advance() {
	local from
	from=$(progress "$1")
	wait_for 120 _progress_at_least "$1" $((from + $2))
}

# dx_pid LOG: the pid dxfer printed first in LOG.
dx_pid() {
	[[ $(<"$1") =~ pid\ ([0-9]+) ]] && echo "${BASH_REMATCH[1]}"
}

# st_stop TAG: ask the client to finish (SIGUSR1: it completes what is
# under way, then FIN), reap both; ST_CRC/ST_SRC their exit status.
st_stop() {
	local pid
	pid=$(dx_pid "${ST_CLOG[$1]}") && kill -USR1 "$pid" 2>/dev/null
	st_reap "$1"
}
# st_reap TAG: wait for both ends of TAG (at most 120 s each, then kill).
st_reap() {
	server_reap "${ST_CPID[$1]}"
	ST_CRC=$SERVER_RC
	server_reap "${ST_SPID[$1]}"
	ST_SRC=$SERVER_RC
}

# st_verdict NAME TAG: the case NAME passes when both ends of TAG exited 0
# and verified everything.
st_verdict() {
	local why
	echo "# $(grep -h 'messages of' "${ST_CLOG[$2]}" | tail -n 1)"
	if [ "$ST_CRC" != 0 ] || [ "$ST_SRC" != 0 ]; then
		not_ok "$1" "client rc=$ST_CRC: $(gist "${ST_CLOG[$2]}" 4) | server rc=$ST_SRC: $(gist "${ST_SLOG[$2]}" 4)"
	elif ! why=$(dx_ok "${ST_SLOG[$2]}" "${ST_CLOG[$2]}"); then
		not_ok "$1" "$why"
	else
		ok "$1"
	fi
}

# survivor_case NAME RC LOG: a survivor of a broken connection ended on its
# own with status 3 (error completion, disconnect, device removal) or 4
# (its watchdog): never wrong data (1), never killed by timeout (124).
survivor_case() {
	case $2 in
	3 | 4) ok "$1 (exit $2: $(grep -h -m 1 -E 'connection lost|error completion|no completion|no CM event|channel' "$3" | cut -c1-100))" ;;
	*) not_ok "$1" "exit status $2: $(gist "$3" 4)" ;;
	esac
}

# --- setup --------------------------------------------------------------------------

modprobe shca
if [ -w "$PARAM" ]; then
	HAVE_PARAM=1
	read -r orig_direct <"$PARAM"
	ok "module parameter direct (now $orig_direct)"
else
	orig_direct=
	not_ok "module parameter direct" "$PARAM missing or not writable"
fi
set_direct 1

if pair_setup shca; then
	ok "setup shca pair"
else
	not_ok "setup shca pair" "devices or RoCE v2 GIDs missing"
	exit 1
fi
$NA ping -c 1 -W 5 "$AB" >/dev/null 2>&1

# --- clean: zero loss, 6 MiB, both paths ---------------------------------------------

# bw_case NAME PATH OP OPTS SRVNS SDEV SGID CLINS CDEV CGID ADDR: one
# ib_OP_bw run with OPTS on both ends, on PATH (path_case), loss asserted
# as the path allows (clean_or_info).
bw_case() {
	local name=$1 path=$2 op=$3 opts=$4 sns=$5 sdev=$6 sgid=$7 cns=$8
	local cdev=$9 cgid=${10} addr=${11}
	e2e_selected "$name" || return 0
	snap a "$sdev" "$cdev"
	pair_case "$name" tcp:18515 \
		"$sns" "ib_${op}_bw -d $sdev -x $sgid -F $opts" \
		"$cns" "ib_${op}_bw -d $cdev -x $cgid -F $opts $addr" bw_ok
	snap b "$sdev" "$cdev"
	path_case "$name" a b "$path" "$sdev" "$cdev"
	clean_or_info "$path" "$name" a b "$sdev" "$cdev"
}

# clean_mode MODE SRVNS SDEV SGID CLINS CDEV CGID ADDR PATH
clean_mode() {
	local mode=$1 sns=$2 sdev=$3 sgid=$4 cns=$5 cdev=$6 cgid=$7 addr=$8 path=$9 op name
	for op in read write send; do
		bw_case "$mode: ib_${op}_bw $BIG x$BIGN" "$path" "$op" \
			"-s $BIGB -n $BIGN" "$sns" "$sdev" "$sgid" \
			"$cns" "$cdev" "$cgid" "$addr"
	done
	name="$mode: dxfer WRITE+READ+SEND $BIG x$BIGN each, verified"
	e2e_selected "$name" || return 0
	snap a "$sdev" "$cdev"
	next_port
	pair_case "$name" cm "$sns" "$DXFER -s -a $addr -p $PORT -W 120" \
		"$cns" "$DXFER -c -a $addr -p $PORT -W 120 -o rws -S $BIG -n $BIGN -w 2" dx_ok
	snap b "$sdev" "$cdev"
	path_case "$name" a b "$path" "$sdev" "$cdev"
	clean_or_info "$path" "$name" a b "$sdev" "$cdev"
}

# qp16_mode MODE PATH: ib_read_bw and ib_write_bw, 4 KiB x$Q16N on each of
# 16 QPs across the namespaces, on PATH: many QPs' packets built on both
# CPUs and interleaved on one device (the wire's GSO runs must keep each
# QP's order); the same assertions as clean_mode.  A QP's READs wait
# behind the other QPs' responses: the retransmit timeout is 1 s (-u 18)
# rather than perftest's 67 ms, so that only a loss times out, not a
# slow (KASAN) kernel.  Then 64 KiB x50 on 16 QPs at perftest's own
# timeout (14: 67 ms), as make bench runs them: some 32 engines runnable
# on 2 CPUs, each waiting its turn for longer than that under TCG; an
# expiry while the packets wait on this host is held (rc_timeouts_held):
# on the direct path nothing times out or is resent; on the wire a
# timeout is shown, not asserted (wire_loss_case, RTO_SHORT).
#
# Each run's completion moderation (perftest -Q) divides its iteration
# count (cq_mod_for): perftest signals every cq_mod-th WR and a QP's last,
# but counts every completion as cq_mod WRs and stops polling once the
# count reaches iterations x QPs.  With -n 150 and its default of 100 the
# last WR's completion counts 50 too many, so twelve QPs that finished
# first end the polling, and a QP that still waits for its 100th WR's
# completion (at tx_depth 128, it may post nothing more) spins for ever:
# the run hung, rarely, wherever one QP fell that far behind (a loaded
# TCG host), with every driver counter saying all was delivered.
qp16_mode() {
	local mode=$1 path=$2 op n4=$Q16N n64=$((Q16N / 3))
	for op in read write; do
		bw_case "$mode: ib_${op}_bw 4 KiB x$n4, 16 QPs" "$path" "$op" \
			"-s 4096 -n $n4 -Q $(cq_mod_for "$n4") -q 16 -u 18" \
			"$NB" "$DB" "$GB4" "$NA" "$DA" "$GA4" "$AB"
	done
	for op in read write; do
		RTO_SHORT=1 bw_case "$mode: ib_${op}_bw 64 KiB x$n64, 16 QPs, timeout 14" \
			"$path" "$op" "-s 65536 -n $n64 -Q $(cq_mod_for "$n64") -q 16" \
			"$NB" "$DB" "$GB4" "$NA" "$DA" "$GA4" "$AB"
	done
}

# clean_or_info PATH NAME FROM TO DEV...: the direct path loses nothing
# (asserted); the wire's counters are shown (loss_info) and wire_case
# asserts what holds there.
clean_or_info() {
	local path=$1
	shift
	if [ "$path" = direct ]; then
		clean_case "$@"
	else
		loss_info "$@"
		wire_case "$@"
		gso_case "$1" "$2" "$3" yes "${@:4}"
	fi
}

# wire_loss_case NAME FROM TO DEV...: on a clean wire (direct=0, no
# qdisc) nothing is lost: rx_dropped, rc_seq_naks_rcvd, rc_timeouts and
# rc_retransmits +0 on every DEV.  veth may reorder a QP's packets sent
# from two CPUs (loss_info): the responder holds a request after a gap,
# the requester a response, until the packet that fills it comes out of
# its CPU's backlog (rc_held_requests, rc_held_responses, shown), so no
# NAK and no resend follow.
#
# A hold lasts SHCA_REORDER_HOLD_NS (50 ms) at most.  Under TCG on a
# loaded host a virtual CPU may not run for longer than that with the
# gap's packet in its backlog; the hold then runs out (rc_held_expired)
# and the gap gets its sequence NAK and resend, as it would on a network
# that reorders.  That is the host's timing, not a loss: a sequence NAK
# is accepted when no more of them were received than holds ran out, and
# then so are the resends; it is shown ("hold ran out").  A drop, a NAK
# no expiry explains and a timeout are asserted all the same.
#
# With RTO_SHORT=1 (a run at perftest's own 67 ms retransmit timeout) a
# timeout and its resend are shown, not asserted: whether a response that
# waits for a virtual CPU its host does not run comes back within 67 ms is
# the host's timing (the holds wait for what they can see queued on this
# host, rc_timeouts_held, not for a packet a stalled CPU has taken off
# its backlog); drops and sequence NAKs are asserted all the same.
wire_loss_case() {
	local name=$1 from=$2 to=$3 bad held late= ran_out= naks expired
	local what="no drop, NAK, timeout or resend" lost="rx_dropped rc_seq_naks_rcvd rc_timeouts rc_retransmits"
	sum_delta naks "$from" "$to" rc_seq_naks_rcvd "${@:4}"
	sum_delta expired "$from" "$to" rc_held_expired "${@:4}"
	if [ "$naks" != "?" ] && [ "$expired" != "?" ] && [ "$expired" -gt 0 ] &&
		[ "$naks" -le "$expired" ]; then
		lost="rx_dropped rc_timeouts"
		ran_out=$(grown "$from" "$to" "rc_held_expired rc_seq_naks_rcvd rc_retransmits" "${@:4}")
	fi
	if [ "${RTO_SHORT:-0}" = 1 ]; then
		what="no drop or NAK" lost="rx_dropped rc_seq_naks_rcvd"
		[ -z "$ran_out" ] || lost=rx_dropped
		late=$(grown "$from" "$to" "rc_timeouts rc_retransmits" "${@:4}")
	fi
	bad=$(grown "$from" "$to" "$lost" "${@:4}")
	held=$(grown "$from" "$to" "rc_held_requests rc_held_responses" "${@:4}")
	if [ -z "$bad" ]; then
		ok "$name: $what${held:+ (held after reordering:$held)}${ran_out:+ (hold ran out, NAKed and resent:$ran_out)}${late:+ (timed out at 67 ms:$late)}"
	else
		not_ok "$name: $what" "$bad ($(grown "$from" "$to" "$WHY" "${@:4}"))"
	fi
}

# wire_case NAME FROM TO SDEV DEV...: wire_loss_case, and the responder
# SDEV acknowledges at most one data packet in 4 when asked (rc_acks_sent
# less rc_acks_delayed, over rx_packets): shca's requester asks for an ACK
# (AckReq) at most every 4 packets (half its smallest window of 8) and at
# the end of each message, and the responder's ACKs for those are one per
# receive batch; an ACK per batch whatever was asked (as before the
# delayed ACK) was some 0.8 per packet.  The delayed ACKs, for packets
# left unacknowledged when the requester paused for longer than the delay
# (100 us, a matter of scheduling under TCG), are shown and not counted.
wire_case() {
	local name=$1 from=$2 to=$3 sdev=$4 acks late pkts
	wire_loss_case "$@"
	acks=$(delta "$from" "$to" "$sdev" rc_acks_sent)
	late=$(delta "$from" "$to" "$sdev" rc_acks_delayed)
	pkts=$(delta "$from" "$to" "$sdev" rx_packets)
	if [ "$acks" = "?" ] || [ "$late" = "?" ] || [ "$pkts" = "?" ]; then
		not_ok "$name: ACKs per data packet" "no rc_acks_sent/rc_acks_delayed/rx_packets counter on $sdev"
	elif [ $(((acks - late) * 4)) -le "$pkts" ]; then
		ok "$name: at most one ACK per 4 data packets when asked ($sdev: rc_acks_sent +$acks, of them delayed +$late, rx_packets +$pkts)"
	else
		not_ok "$name: at most one ACK per 4 data packets when asked" "$sdev: rc_acks_sent +$acks, of them delayed +$late, rx_packets +$pkts"
	fi
}

# gso_case NAME FROM TO WANT DEV...: the DEVs' wire packets went out as
# UDP GSO datagrams, cut into single packets by the IP stack on the way
# (WANT yes: tx_gso_packets grew), or one by one (no: +0, what a qdisc or
# a packet tap on the way gets); either way every ICRC arrived intact
# (rx_bad_icrc, rx_malformed +0 on every DEV).
gso_case() {
	local name=$1 from=$2 to=$3 want=$4 gpk gds bad
	shift 4
	sum_delta gpk "$from" "$to" tx_gso_packets "$@"
	sum_delta gds "$from" "$to" tx_gso_sends "$@"
	bad=$(grown "$from" "$to" "rx_bad_icrc rx_malformed" "$@")
	if [ "$gpk" = "?" ]; then
		not_ok "$name: GSO $want" "no tx_gso_packets counter on $*"
	elif [ -n "$bad" ]; then
		not_ok "$name: GSO $want, every ICRC intact" "$bad"
	elif { [ "$want" = yes ] && [ "$gpk" -gt 0 ]; } ||
		{ [ "$want" = no ] && [ "$gpk" = 0 ]; }; then
		ok "$name: GSO $want (tx_gso_packets +$gpk in $gds datagrams), every ICRC intact"
	else
		not_ok "$name: GSO $want" "tx_gso_packets +$gpk in $gds datagrams on $*"
	fi
}

# set_gso 0|1: the module parameter wire_gso.
set_gso() {
	[ -w /sys/module/shca/parameters/wire_gso ] &&
		echo "$1" >/sys/module/shca/parameters/wire_gso
}

# gso_run NAME WANT: a verified dxfer run (256 KiB x8 each way) on the
# wire, its GSO datagrams as WANT (gso_case), nothing dropped or timed
# out (wire_loss_case).
gso_run() {
	local name=$1
	e2e_selected "$name" || return 0
	snap a "$DA" "$DB"
	verified "$name" -o wrs -S 256K -n 8
	snap b "$DA" "$DB"
	path_case "$name" a b wire "$DA" "$DB"
	loss_info "$name" a b "$DA" "$DB"
	wire_loss_case "$name" a b "$DA" "$DB"
	gso_case "$name" a b "$2" "$DA" "$DB"
}

# gso_cases: with direct=0, over IPv4 with wire_gso off (single packets)
# and over IPv6 with it on.
gso_cases() {
	set_gso 0
	gso_run "direct=0, wire_gso=0: dxfer WRITE+READ+SEND 256 KiB x8, verified" no
	set_gso 1
	DX_ADDR=$B6 gso_run "direct=0, IPv6: dxfer WRITE+READ+SEND 256 KiB x8, verified" yes
}

# inline_case NAME FROM TO DEV...: every DEV executed requests of its
# peer in the peer's thread (rx_inline_packets grew on each).
inline_case() {
	local name=$1 from=$2 to=$3 d v bad=""
	shift 3
	for d in "$@"; do
		v=$(delta "$from" "$to" "$d" rx_inline_packets)
		[ "$v" != "?" ] && [ "$v" -gt 0 ] || bad="$bad $d:rx_inline_packets+$v"
	done
	if [ -z "$bad" ]; then
		ok "$name: requests executed in the sender's thread"
	else
		not_ok "$name: requests executed in the sender's thread" "$bad"
	fi
}

# converse_case NAME CHECK SRVCMD CLICMD: a conversing consumer across the
# namespaces on the path $CONVERSE_PATH (direct or wire): verified, on
# that path, nothing lost (clean_case; wire_loss_case on the wire),
# executed inline both ways.
converse_case() {
	local name="$1, $CONVERSE_PATH" chk=$2 wait=tcp:18515
	e2e_selected "$name" || return 0
	[ "$chk" = dx_ok ] && wait=cm
	snap a "$DA" "$DB"
	pair_case "$name" $wait "$NB" "$3" "$NA" "$4" "$chk"
	snap b "$DA" "$DB"
	path_case "$name" a b "$CONVERSE_PATH" "$DA" "$DB"
	if [ "$CONVERSE_PATH" = wire ]; then
		wire_loss_case "$name" a b "$DA" "$DB"
	else
		clean_case "$name" a b "$DA" "$DB"
	fi
	inline_case "$name" a b "$DA" "$DB"
}

# converse_cases: the conversing consumers, on the path $CONVERSE_PATH.
# PPN (SHCA_DIRECT_PP_N; make check 200, make check-full 500) round trips
# a pingpong and messages of each kind of the dxfer run: on a one-vCPU
# boot the two polling processes take turns on the CPU, some 25 ms a
# round trip under make check's load.  Every round trip is the same
# request executed in its sender's thread and answered (the pingpongs
# post their 500 receives once, so no count below that adds a path).
PPN=${SHCA_DIRECT_PP_N:-200}
[ "${SHCA_TIER:-check}" = full ] && PPN=${SHCA_DIRECT_PP_N:-500}
converse_cases() {
	converse_case "ibv_rc_pingpong -c 2 KiB x$PPN" pp_ok \
		"ibv_rc_pingpong -d $DB -g $GB4 -c -s 2048 -n $PPN" \
		"ibv_rc_pingpong -d $DA -g $GA4 -c -s 2048 -n $PPN $AB"
	converse_case "ibv_ud_pingpong -c 1 KiB x$PPN" pp_ok \
		"ibv_ud_pingpong -d $DB -g $GB4 -c -s 1024 -n $PPN" \
		"ibv_ud_pingpong -d $DA -g $GA4 -c -s 1024 -n $PPN $AB"
	next_port
	converse_case "dxfer 2 KiB SEND+WRITE x$PPN each, verified" dx_ok \
		"$DXFER -s -a $AB -p $PORT -W 120" \
		"$DXFER -c -a $AB -p $PORT -W 120 -o sw -S 2K -n $PPN -w 1"
}

# The RNR NAK of a full receive queue stands for the packets behind it:
# the requester resends once its RNR timer expires, with no sequence NAK
# and nothing counted as a retransmission.  RNRN SENDs (make check 500,
# make check-full 2000): the sender's 64 outstanding SENDs meet the
# 4-deep queue from the first window on, every window after the same.
RNRN=500
[ "${SHCA_TIER:-check}" = full ] && RNRN=2000
rnr_case() {
	local name="ib_send_bw 4 KiB x$RNRN into a 4-deep receive queue" seq
	e2e_selected "$name" || return 0
	snap a "$DA" "$DB"
	pair_case "$name" tcp:18515 \
		"$NB" "ib_send_bw -d $DB -x $GB4 -F -s 4096 -n $RNRN -r 4" \
		"$NA" "ib_send_bw -d $DA -x $GA4 -F -s 4096 -n $RNRN -t 64 $AB" bw_ok
	snap b "$DA" "$DB"
	path_case "$name" a b direct "$DA" "$DB"
	clean_case "$name" a b "$DA" "$DB"
	sum_delta seq a b rc_seq_naks_rcvd "$DA" "$DB"
	if [ "$seq" = 0 ]; then
		ok "$name: no sequence NAK ($(grown a b rc_rnr_naks_rcvd "$DA" "$DB" | sed 's/^ *//;s/^$/no RNR NAK/'))"
	else
		not_ok "$name: no sequence NAK" "rc_seq_naks_rcvd +$seq ($(grown a b "$WHY" "$DA" "$DB"))"
	fi
}

if want clean; then
	set_direct 1
	dyndbg +p
	clean_mode "across the namespaces" "$NB" "$DB" "$GB4" "$NA" "$DA" "$GA4" "$AB" direct
	# one device (loopback through the direct path): make check-full
	[ "${SHCA_TIER:-check}" != full ] ||
		clean_mode "one device" "$NA" "$DA" "$GA4" "$NA" "$DA" "$GA4" "$AA" direct
	qp16_mode "across the namespaces" direct
	CONVERSE_PATH=direct converse_cases
	rnr_case
	dyndbg -p
	if [ "$HAVE_PARAM" = 1 ]; then
		set_direct 0
		clean_mode "direct=0, across the namespaces" "$NB" "$DB" "$GB4" "$NA" "$DA" "$GA4" "$AB" wire
		qp16_mode "direct=0, across the namespaces" wire
		gso_cases
		CONVERSE_PATH=wire converse_cases
		set_direct 1
	fi
fi

# --- qdisc: added and removed mid-stream -------------------------------------------------

if want qdisc && e2e_selected qdisc; then
	set_direct 1
	n="qdisc added and removed mid-stream"
	next_port
	if st_start q "$NB" "$NA" "$AB" $PORT "-o wrs -S 256K -w 2 -T 600"; then
		advance q 10
		snap q0 "$DA" "$DB"
		if $NA tc qdisc add dev veth-a root netem delay 1ms; then
			ok "$n: netem qdisc added on veth-a"
		else
			not_ok "$n: netem qdisc added on veth-a" "tc failed"
		fi
		snap q1 "$DA" "$DB"
		advance q 30 || not_ok "$n: stream advances under the qdisc" "stuck at $(progress q)"
		snap q2 "$DA" "$DB"
		$NA tc qdisc del dev veth-a root
		snap q3 "$DA" "$DB"
		advance q 30 || not_ok "$n: stream advances after the qdisc went" "stuck at $(progress q)"
		snap q4 "$DA" "$DB"
		st_stop q
		st_verdict "$n: WRITE+READ+SEND stream verified" q
		path_case "$n: while the qdisc is there" q1 q2 wire "$DA" "$DB"
		gso_case "$n: while the qdisc is there" q1 q2 no "$DA" "$DB"
		path_case "$n: once it went" q3 q4 back-to-direct "$DA" "$DB"
		path_case "$n: the whole stream" q0 q4 both "$DA" "$DB"
		loss_info "$n" q0 q4 "$DA" "$DB"
	else
		not_ok "$n" "stream did not start: $(tail1 "${ST_SLOG[q]}") | $(tail1 "${ST_CLOG[q]}")"
		st_reap q
	fi
	$NA tc qdisc del dev veth-a root 2>/dev/null
fi

# --- kill: the peer process killed mid-transfer ---------------------------------------------

# The stream that kill, netdev and veth cut mid-transfer: WRITEs, READs
# and SENDs of 256 KiB (256 packets each at MTU 1024), four under way,
# cut after 4 (make check-full: 1 MiB, after 6).  Every message is many
# packets, so the cut falls inside one whatever the size.
MIDSTREAM="-o wrs -S 256K -w 4 -T 600" MIDADV=4
[ "${SHCA_TIER:-check}" = full ] && MIDSTREAM="-o wrs -S 1M -w 4 -T 600" MIDADV=6

# kill_case NAME WHO DIRECT [verify]: kill -9 the dxfer server (WHO=server)
# or client mid-stream with direct=DIRECT; the other side must end
# cleanly.  With "verify" a verified transfer follows; without it the next
# case's stream is the proof that the pair still works (it starts, and
# dxfer checks every byte of what it completes before its own kill).
kill_case() {
	local n=$1 who=$2 before pid log
	e2e_selected "$n" || return 0
	set_direct "$3"
	before=$(reports)
	next_port
	if ! st_start k "$NB" "$NA" "$AB" $PORT "$MIDSTREAM"; then
		not_ok "$n" "stream did not start: $(tail1 "${ST_SLOG[k]}") | $(tail1 "${ST_CLOG[k]}")"
		st_reap k
		set_direct 1
		return
	fi
	advance k $MIDADV
	if [ "$who" = server ]; then log=${ST_SLOG[k]}; else log=${ST_CLOG[k]}; fi
	pid=$(dx_pid "$log")
	kill -9 "$pid"
	echo "# $n: killed the $who (pid $pid) after $(progress k) messages"
	st_reap k
	if [ "$who" = server ]; then
		survivor_case "$n: the requester ends cleanly" "$ST_CRC" "${ST_CLOG[k]}"
	else
		survivor_case "$n: the responder ends cleanly" "$ST_SRC" "${ST_SLOG[k]}"
	fi
	no_report_case "$n" "$before"
	set_direct 1
	[ "${4:-}" != verify ] || verified "$n: then a verified transfer works"
}

if want kill; then
	last=verify
	[ "$HAVE_PARAM" = 1 ] && last=
	kill_case "responder process killed mid-transfer (direct)" server 1
	kill_case "requester process killed mid-transfer (direct)" client 1 $last
	[ "$HAVE_PARAM" = 1 ] &&
		kill_case "responder process killed mid-transfer (direct=0)" server 0 verify
fi

# --- netdev: the peer's device and netdev deleted mid-transfer ------------------------------

if want netdev && e2e_selected netdev; then
	set_direct 1
	n="the peer's device deleted mid-transfer (rdma link delete $DB)"
	before=$(reports)
	next_port
	if st_start d "$NB" "$NA" "$AB" $PORT "$MIDSTREAM"; then
		advance d $MIDADV
		# shellcheck disable=SC2086
		check "$n: rdma link delete returns" timeout 120 $NB rdma link delete "$DB"
		st_reap d
		survivor_case "$n: the requester ends cleanly" "$ST_CRC" "${ST_CLOG[d]}"
		survivor_case "$n: the responder ends cleanly" "$ST_SRC" "${ST_SLOG[d]}"
	else
		not_ok "$n" "stream did not start: $(tail1 "${ST_SLOG[d]}") | $(tail1 "${ST_CLOG[d]}")"
		st_reap d
	fi
	no_report_case "$n" "$before"
	[ -e "/sys/class/infiniband/$DB" ] && rdma link delete "$DB" 2>/dev/null
	if rdma_dev_add "$NB" shca "$DB" veth-b && GB4=$(rdma_gid "$DB" "$GID4_B"); then
		ok "$n: $DB added again"
		verified "$n: then a verified transfer works"
	else
		not_ok "$n: $DB added again" "device or GID missing"
	fi

	n="the veth pair deleted mid-transfer"
	before=$(reports)
	next_port
	if st_start v "$NB" "$NA" "$AB" $PORT "$MIDSTREAM"; then
		advance v $MIDADV
		# shellcheck disable=SC2086
		check "$n: ip link del veth-b returns" timeout 120 $NB ip link del veth-b
		st_reap v
		survivor_case "$n: the requester ends cleanly" "$ST_CRC" "${ST_CLOG[v]}"
		survivor_case "$n: the responder ends cleanly" "$ST_SRC" "${ST_SLOG[v]}"
	else
		not_ok "$n" "stream did not start: $(tail1 "${ST_SLOG[v]}") | $(tail1 "${ST_CLOG[v]}")"
		st_reap v
		$NB ip link del veth-b 2>/dev/null
	fi
	dev_gone() { [ ! -e "/sys/class/infiniband/$1" ]; }
	check "$n: both devices unregistered" wait_for 120 eval "dev_gone $DA && dev_gone $DB"
	no_report_case "$n" "$before"
	if veth_pair_add && pair_setup shca; then
		ok "$n: veth pair and devices created again"
		verified "$n: then a verified transfer works"
	else
		not_ok "$n: veth pair and devices created again" "setup failed"
		exit 1
	fi
fi

# --- mix: direct and wire QPs between the same pair ------------------------------------------

if want mix && e2e_selected mix; then
	set_direct 1
	n="direct and wire QPs between one pair"
	tlog=$E2E_LOGS/direct-mix-tap.log
	next_port
	if st_start m1 "$NB" "$NA" "$AB" $PORT "-o ws -S 256K -w 2 -T 600" &&
		next_port && st_start m2 "$NA" "$NB" "$AA" $PORT "-o r -S 256K -w 2 -T 600"; then
		advance m1 5
		advance m2 5
		snap m0 "$DA" "$DB"
		if [ "$HAVE_PARAM" = 1 ]; then
			set_direct 0
			advance m1 10
			advance m2 10
			set_direct 1
			advance m1 10
			advance m2 10
		fi
		: >"$tlog"
		$NB timeout 300 /usr/bin/python3 "$TAP" veth-b >"$tlog" 2>&1 &
		tpid=$!
		wait_for 60 has_text "$tlog" "ready on"
		advance m1 10
		advance m2 10
		kill -TERM "$tpid" 2>/dev/null
		wait "$tpid"
		echo "# $(tail1 "$tlog" 1)"
		advance m1 10
		advance m2 10
		snap m1 "$DA" "$DB"
		st_stop m1
		st_verdict "$n: WRITE+SEND stream A->B verified" m1
		st_stop m2
		st_verdict "$n: READ stream B->A verified" m2
		path_case "$n" m0 m1 both "$DA" "$DB"
		loss_info "$n" m0 m1 "$DA" "$DB"
	else
		not_ok "$n" "streams did not start: $(tail1 "${ST_CLOG[m1]}") | $(tail1 "${ST_CLOG[m2]:-/dev/null}")"
		st_reap m1
		[ -n "${ST_CPID[m2]:-}" ] && st_reap m2
	fi
	set_direct 1
fi

# --- tap: tapped traffic takes the wire -------------------------------------------------------

if want tap && e2e_selected tap; then
	set_direct 1
	n="a packet tap on veth-a"
	tlog=$E2E_LOGS/direct-tap.log
	: >"$tlog"
	$NA timeout 300 /usr/bin/python3 "$TAP" veth-a >"$tlog" 2>&1 &
	tpid=$!
	if wait_for 60 has_text "$tlog" "ready on"; then
		snap t0 "$DA" "$DB"
		verified "$n: verified transfer while tapped"
		snap t1 "$DA" "$DB"
		kill -TERM "$tpid" 2>/dev/null
		wait "$tpid"
		echo "# $(tail1 "$tlog" 1)"
		if [[ $(<"$tlog") =~ ([0-9]+)\ RoCE\ v2\ packets ]] && [ "${BASH_REMATCH[1]}" -gt 0 ]; then
			ok "$n sees RoCE v2 packets (UDP 4791): ${BASH_REMATCH[1]}"
		else
			not_ok "$n sees RoCE v2 packets (UDP 4791)" "$(tail1 "$tlog" 2)"
		fi
		path_case "$n" t0 t1 wire "$DA" "$DB"
		gso_case "$n" t0 t1 no "$DA" "$DB"
		loss_info "$n" t0 t1 "$DA" "$DB"
	else
		not_ok "$n" "tap4791.py did not start: $(tail1 "$tlog")"
		kill "$tpid" 2>/dev/null
		wait "$tpid"
	fi
fi

# --- filter: netfilter on either way, both ways honoured ---------------------------------------

# nft_chain NS HOOK PRIO: a table inet shca_e2e in namespace NS (its
# `ip netns exec` prefix) whose chain on HOOK at priority PRIO drops UDP
# 4791, every RoCE v2 packet; nft_unchain NS deletes it.
nft_chain() {
	# shellcheck disable=SC2086
	$1 nft -f - <<-EOT
		table inet shca_e2e {
			chain c {
				type filter hook $2 priority $3; policy accept;
				udp dport 4791 drop
			}
		}
	EOT
}
nft_unchain() {
	# shellcheck disable=SC2086
	$1 nft delete table inet shca_e2e 2>/dev/null
}

# FAIL_STATUS[OP]: the completion status ib_OP_bw's requester got with
# direct=0 under the first chain (perftest: "Failed status N").
declare -A FAIL_STATUS

# blocked_case NAME OP: ib_OP_bw (read or send), 4 KiB x5 at a 17 ms
# retransmit timeout (-u 12; 7 retries), from A to B while a chain drops
# the RoCE v2 packets one way: the requester must end with the error
# completion the wire gives (FAIL_STATUS[OP], or IBV_WC_RETRY_EXC_ERR, 12),
# and no message may start on the direct path (tx_direct_msgs +0 on both
# devices).  With BLOCKED_REF=1 (under direct=0) it records FAIL_STATUS.
# The server is stopped once the client ended: an ib_send_bw server whose
# client failed waits for the receives that never come.
blocked_case() {
	local name=$1 op=$2 want st srv crc t0=$SECONDS slug
	e2e_selected "$name" || return 0
	want=${FAIL_STATUS[$op]:-12}
	slug=$E2E_LOGS/$(echo "$E2E_SUITE-$name" | tr -c 'A-Za-z0-9.\n-' '_')
	snap f0 "$DA" "$DB"
	# shellcheck disable=SC2086
	$NB timeout 120 ib_${op}_bw -d "$DB" -x "$GB4" -F -s 4096 -n 5 -u 12 >"$slug.srv" 2>&1 &
	srv=$!
	wait_for 120 tcp_listening "$srv" 18515
	# shellcheck disable=SC2086
	$NA timeout 120 ib_${op}_bw -d "$DA" -x "$GA4" -F -s 4096 -n 5 -u 12 "$AB" >"$slug.cli" 2>&1
	crc=$?
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	snap f1 "$DA" "$DB"
	echo "# $E2E_SUITE: $name: $((SECONDS - t0)) s"
	st=$(sed -n 's/.*Failed status \([0-9]*\).*/\1/p' "$slug.cli" | head -n 1)
	if [ "${BLOCKED_REF:-0}" = 1 ] && [ -n "$st" ]; then
		FAIL_STATUS[$op]=$st
		want=$st
	fi
	if [ "$crc" != 0 ] && [ "$st" = "$want" ]; then
		ok "$name: the requester fails as on the wire (completion status $st)"
	else
		not_ok "$name: the requester fails as on the wire (completion status $want)" \
			"client rc=$crc, status ${st:-none}: $(gist "$slug.cli" 4)"
	fi
	path_case "$name" f0 f1 wire "$DA" "$DB"
}

# unblocked_case NAME: the chain is gone: a verified dxfer READ+SEND run
# (4 KiB x2) goes direct again.
unblocked_case() {
	local name=$1
	e2e_selected "$name" || return 0
	snap f0 "$DA" "$DB"
	verified "$name: verified" -o rs -S 4K -n 2
	snap f1 "$DA" "$DB"
	path_case "$name" f0 f1 direct "$DA" "$DB"
}

if want filter && e2e_selected filter; then
	modprobe nf_tables 2>/dev/null
	if ! command -v nft >/dev/null; then
		not_ok "filter" "nft missing (scripts/deps.sh installs nftables)"
	elif ! $NA nft list tables >/dev/null 2>&1; then
		echo "# $E2E_SUITE: filter: skipped, this kernel has no nftables (CONFIG_NF_TABLES)"
	else
		set_direct 1
		dyndbg +p
		n="A drops RoCE v2 on input"
		if nft_chain "$NA" input 0; then
			if [ "$HAVE_PARAM" = 1 ]; then
				set_direct 0
				BLOCKED_REF=1 blocked_case "$n, direct=0: RDMA READ" read
				BLOCKED_REF=1 blocked_case "$n, direct=0: SEND" send
				set_direct 1
			fi
			blocked_case "$n: RDMA READ" read
			blocked_case "$n: SEND" send
			nft_unchain "$NA"
			unblocked_case "$n, then the chain deleted"
		else
			not_ok "$n" "nft failed"
		fi
		n="B drops RoCE v2 on output"
		if nft_chain "$NB" output 0; then
			blocked_case "$n: RDMA READ" read
			blocked_case "$n: SEND" send
			nft_unchain "$NB"
			unblocked_case "$n, then the chain deleted"
		else
			not_ok "$n" "nft failed"
		fi
		# -225: NF_IP_PRI_SELINUX_FIRST, the labelling hooks' priority
		n="A drops RoCE v2 on output at the security modules' priority"
		if nft_chain "$NA" output -225; then
			blocked_case "$n: RDMA READ" read
			nft_unchain "$NA"
			unblocked_case "$n, then the chain deleted"
		else
			not_ok "$n" "nft failed"
		fi
		dyndbg -p
	fi
	nft_unchain "$NA"
	nft_unchain "$NB"
fi

echo "# $E2E_SUITE: $PART took $((SECONDS - PART_T0)) s"
[ -n "$orig_direct" ] && set_direct "$( [ "$orig_direct" = N ] && echo 0 || echo 1)"
pair_teardown
check "module unloads" modprobe -r shca
e2e_finish
