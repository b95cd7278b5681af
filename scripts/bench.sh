#!/bin/bash
# make bench: boot one 6.12 VM and measure, in that one boot, three columns:
#
#   shca   shca0 in shca-a <-> shca1 in shca-b, the same-host direct path
#          (module parameter direct=1, the default)
#   wire   the same pair with the direct path forced off
#          (echo 0 > /sys/module/shca/parameters/direct): every packet
#          crosses the IP stack and the veth
#   rxe    rdma_rxe: rxe has no netns support in 6.1/6.12, so its side is
#          one rxe0 in init_net talking to its own address, looped back
#          inside rxe (see pair_setup in scripts/e2e/lib.sh)
#
# and prints a table of the values with the ratios shca/rxe and wire/rxe
# (bandwidth and IOPS: >1 is better for shca; round trip: <1 is better):
#
#   - ib_write_bw, ib_send_bw, ib_read_bw at 4 KiB and 64 KiB, 1 and 16 QPs
#     (MB/s, perftest's average);
#   - the 2-byte RC round trip of ibv_rc_pingpong, polled and with -e
#     (sleeping on completion events), in usec/iter (perftest's latency
#     tools print inf under TCG);
#   - system calls per WR: the SQ doorbells that reached the kernel
#     (counter sq_doorbells of the requester's device) per WR posted in the
#     ib_write_bw 4 KiB 1-QP run (shca only), and the system calls of that
#     run's client under strace -f -c, less those of a 5-WR run (setup and
#     teardown), per WR (every column; the growth of each call is printed;
#     strace slows the poster down, so this is an upper bound;
#     BENCH_STRACE=0 skips it);
#   - ACKs per data packet: rc_acks_sent / rx_packets growth of the
#     responder's device in the ib_write_bw 64 KiB 1-QP run;
#   - what a lossless path keeps at 0, grown through each column's
#     perftest, pingpong and strace runs on both devices: rx_dropped,
#     rc_timeouts, rc_retransmits (shca), completer_retry_err and
#     duplicate_request (rxe);
#   - fio 4 KiB random-read IOPS over NVMe-oF (nvme-rdma to nvmet-rdma on a
#     RAM disk, one device talking to its own address, as in
#     scripts/e2e/nvmeof.sh), for every column.
#
# and, with the column "scale" (its own table, shca against rxe, each
# device alone in init_net; shca in the netns shca-a too), the control
# path at scale, measured by scripts/e2e/progs/qp_scale.c: creating
# BENCH_SCALE_N RC QPs 256 deep on one shared CQ, their kernel memory per
# QP (MemFree's fall less the process's RssAnon growth: see qp_scale.c),
# moving them to RTR (max_dest_rd_atomic 16) and the memory that took,
# registering BENCH_SCALE_MR 4 KiB MRs, destroying the QPs; then the
# memory per QP of BENCH_SCALE_N QPs 16 deep (it must grow with the depth
# asked, not the maximum).  Each the median of BENCH_REPEAT runs (a TCG
# guest's timings move by 2x and more when the host is busy).
#
# and, with the column "trace" (its own table, shca only), what the
# tracepoints (events/shca, none enabled) cost: the module as built
# against the same sources built with NOTRACE (every trace_shca_*() an
# empty inline: the module without tracepoints), built by the host side
# into build/6.12-notrace and loaded in turn, BENCH_REPEAT interleaved
# rounds of each (so that the host's drift hits both alike): ib_write_bw
# and ib_read_bw 4 KiB and ib_write_bw 64 KiB on 1 QP and both round
# trips, on the direct path and on the wire (direct=0); with the modules'
# .text sizes and the count of tracepoint sites (static branches: the
# __jump_table entries the NOTRACE build lacks).
#
# and, with the column "odp" (its own table, shca only: rxe has on-demand
# paging from 6.15 only), the cost of on-demand paging, measured by
# scripts/e2e/progs/odp_bench.c on shca0 alone (RC loopback): for an MR
# of BENCH_ODP_MB MiB that is pinned, on-demand (ODP), or on-demand and
# prefetched (ibv_advise_mr PREFETCH_WRITE, synchronous), the time to
# register it, to prefetch it, an RDMA WRITE stream into it (64 KiB WRs,
# 16 in flight: for ODP the first touch of every page), the same stream
# again (every page in), an RDMA READ stream out of a fresh one (its first
# touch), and the deregistration.  The buffers are written by the CPU
# before registration, so page allocation is in no figure.  A process's
# first ODP MR (one page, timed apart) also subscribes its mm to MMU
# notifiers.  Medians of BENCH_REPEAT runs.
#
# Timings are never asserted: TCG numbers only compare the drivers on the
# same emulated machine.  A perftest run that gives up with "Can't produce
# a report" (its r^2 check of the TSC under TCG) runs again, at most 3
# tries, and never counts as a value.  Iterations (environment):
#   BENCH_N_4K=5000     ib_*_bw 4 KiB, 1 QP
#   BENCH_N_64K=2000    ib_*_bw 64 KiB, 1 QP
#   BENCH_N_Q16_4K=5000 ib_*_bw 4 KiB with 16 QPs, per QP (a run of 1000
#                       lasted half a second, inside perftest's noise)
#   BENCH_N_Q16=1000    ib_*_bw 64 KiB with 16 QPs, per QP
#   BENCH_PP_ITERS=5000 ibv_rc_pingpong round trips (each mode)
#   BENCH_FIO_S=20      seconds of fio per column
#   BENCH_STRACE=1      the strace row (0: skip)
#   BENCH_REPEAT=3      runs of each perftest and pingpong figure; the
#                       median is printed (one run moves by 20% or more
#                       under TCG on 2 cores), every run in a comment
#   BENCH_SCALE_N=2000  QPs of the scale runs
#   BENCH_SCALE_MR=2000 MRs of the scale run
#   BENCH_ODP_MB=16     MiB of each MR of the odp runs
#   BENCH_TRACE_N=20000 WRs and round trips of each run of the column trace
#                       (what it compares is a few percent at most: longer
#                       runs than the other columns')
#   BENCH_COLS="shca wire rxe scale trace odp twohost"   the columns to measure
#                       (twohost: two VMs, scripts/bench-twohost.sh)
#   BENCH_OUT (default build/bench)
# The defaults take some 15 to 30 minutes under TCG (the slower the paths,
# the longer).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)

if [ "${1:-}" != --in-vm ]; then
	out=${BENCH_OUT:-$top/build/bench}
	mkdir -p "$out"
	cols=${BENCH_COLS:-shca wire rxe scale trace odp twohost}
	one=$(echo " $cols " | sed 's/ twohost / /g; s/^ *//; s/ *$//')
	rc=0
	if [ -n "$one" ] && [[ " $cols " == *" trace "* ]]; then
		# the same sources without tracepoints, for the column trace
		kd=$(eval "$("$top/scripts/kernel-info.sh" 6.12)" && echo "$KDIR")
		if KCFLAGS=-DNOTRACE make -C "$top" module KDIR="$kd" BUILD=build/6.12-notrace \
			>"$out/notrace-build.log" 2>&1; then
			export SHCA_BENCH_NOTRACE_KO=$top/build/6.12-notrace/shca.ko
		else
			echo "# bench: the module without tracepoints did not build: $out/notrace-build.log"
		fi
	fi
	if [ -n "$one" ]; then
		export SHCA_BENCH_N_4K=${BENCH_N_4K:-5000} SHCA_BENCH_N_64K=${BENCH_N_64K:-2000} \
			SHCA_BENCH_N_Q16=${BENCH_N_Q16:-1000} SHCA_BENCH_N_Q16_4K=${BENCH_N_Q16_4K:-5000} \
			SHCA_BENCH_PP_ITERS=${BENCH_PP_ITERS:-5000} \
			SHCA_BENCH_FIO_S=${BENCH_FIO_S:-20} SHCA_BENCH_STRACE=${BENCH_STRACE:-1} \
			SHCA_BENCH_COLS=$one SHCA_BENCH_REPEAT=${BENCH_REPEAT:-3} \
			SHCA_BENCH_SCALE_N=${BENCH_SCALE_N:-2000} SHCA_BENCH_SCALE_MR=${BENCH_SCALE_MR:-2000} \
			SHCA_BENCH_ODP_MB=${BENCH_ODP_MB:-16} SHCA_BENCH_TRACE_N=${BENCH_TRACE_N:-20000}
		"$top/scripts/vm-run" --kernel 6.12 --timeout 3600 --out "$out" -- scripts/bench.sh --in-vm
		rc=$?
		echo "# bench: logs in $out"
	fi
	if [[ " $cols " == *" twohost "* ]]; then
		echo "# bench: the two-host column (scripts/bench-twohost.sh)"
		BENCH_OUT=$out "$top/scripts/bench-twohost.sh" || rc=$?
	fi
	exit $rc
fi

E2E_SUITE=bench
. "$top/scripts/e2e/lib.sh"
. "$top/scripts/e2e/benchlib.sh"
. "$top/scripts/e2e/nvmetlib.sh"
N4K=${SHCA_BENCH_N_4K:-5000}
N64K=${SHCA_BENCH_N_64K:-2000}
NQ16=${SHCA_BENCH_N_Q16:-1000}
NQ16_4K=${SHCA_BENCH_N_Q16_4K:-5000}
PPN=${SHCA_BENCH_PP_ITERS:-5000}
FIO_S=${SHCA_BENCH_FIO_S:-20}
STRACE=${SHCA_BENCH_STRACE:-1}
COLS=${SHCA_BENCH_COLS:-shca wire rxe scale trace odp}
SCALE_N=${SHCA_BENCH_SCALE_N:-2000}
SCALE_MR=${SHCA_BENCH_SCALE_MR:-2000}
ODP_MB=${SHCA_BENCH_ODP_MB:-16}
REPEAT=${SHCA_BENCH_REPEAT:-3}
PARAM=/sys/module/shca/parameters/direct
E2E_T=1800
declare -A V


# run NAME SRVCMD CLICMD: one client/server run across the pair (server in
# B, client in A) with pair_run's perftest retries; true when both ended
# well.  One comment line says how it went.
run() {
	local t0=$SECONDS
	pair_run "$1" tcp:18515 "$NB" "$2" "$NA" "$3"
	if [ "$PAIR_NOREPORT" = 1 ]; then
		echo "# bench: $1: no report in 3 tries (perftest's r^2 check under TCG)"
		return 1
	fi
	if [ "$PAIR_CRC" != 0 ] || [ "$PAIR_SRC" != 0 ]; then
		echo "# bench: $1: failed: client rc=$PAIR_CRC: $(gist "$E2E_CLI_LOG" 4) | server rc=$PAIR_SRC: $(gist "$E2E_SRV_LOG" 4)"
		return 1
	fi
	echo "# bench: $1: $((SECONDS - t0)) s, $PAIR_TRIES tries"
}

# stat_of VAR DEV NAME: counter NAME of DEV (empty if it has none)
stat_of() {
	hw_stat_read "$1" "$2" "$3"
}

# per VAR A B: VAR := A / B with three decimals, "-" if A or B is empty or
# B is 0.
per() {
	printf -v "$1" '%s' "$(awk -v a="$2" -v b="$3" \
		'BEGIN { if (a != "" && b + 0 > 0) printf "%.3f", a / b; else print "-" }')"
}



# run_val NAME SRVCMD CLICMD EXTRACT: run() until EXTRACT (a function of
# the client log) gives a figure, up to 3 times; RUN_VAL := that figure,
# RUN_TRIES := the runs it took.  False if no run gave one.
run_val() {
	local try
	RUN_VAL=
	for try in 1 2 3; do
		RUN_TRIES=$try
		run "$1" "$2" "$3" || return 1
		RUN_VAL=$("$4" "$E2E_CLI_LOG")
		[ -n "$RUN_VAL" ] && return 0
		echo "# bench: $1: try $try printed no figure (perftest's 0.00 under TCG)"
	done
	return 1
}

# more_runs FROM NAME SRVCMD CLICMD EXTRACT: runs FROM..REPEAT of a figure
# (run_val()), appending each figure to VALS.
more_runs() {
	local r
	for r in $(seq "$1" "$REPEAT"); do
		run_val "$2 (run $r/$REPEAT)" "$3" "$4" "$5" && VALS+=("$RUN_VAL")
	done
}

# take VAR NAME: VAR := the median of VALS (empty if none); the values go
# to a comment line when there were several.
take() {
	printf -v "$1" '%s' "$(median "${VALS[@]}")"
	[ ${#VALS[@]} -gt 1 ] && echo "# bench: $2: ${VALS[*]} -> median ${!1}"
	return 0
}


# bench_bw COL: the perftest bandwidth runs of column COL on the current
# pair; the counters come from the first of the REPEAT runs.
bench_bw() {
	local col=$1 t s q n name db0 db1 ack0 ack1 rx0 rx1
	for s in 4096 65536; do
		for q in 1 16; do
			case "$q/$s" in
			16/4096) n=$NQ16_4K ;;
			16/*) n=$NQ16 ;;
			*/4096) n=$N4K ;;
			*) n=$N64K ;;
			esac
			for t in write send read; do
				name="$col ib_${t}_bw $((s / 1024))KiB -q $q -n $n"
				stat_of db0 "$DA" sq_doorbells
				stat_of ack0 "$DB" rc_acks_sent
				stat_of rx0 "$DB" rx_packets
				run_val "$name" "ib_${t}_bw -d $DB -x $GB4 -F -s $s -n $n -q $q" \
					"ib_${t}_bw -d $DA -x $GA4 -F -s $s -n $n -q $q $AB" bw_val ||
					continue
				stat_of db1 "$DA" sq_doorbells
				stat_of ack1 "$DB" rc_acks_sent
				stat_of rx1 "$DB" rx_packets
				VALS=("$RUN_VAL")
				more_runs 2 "$name" "ib_${t}_bw -d $DB -x $GB4 -F -s $s -n $n -q $q" \
					"ib_${t}_bw -d $DA -x $GA4 -F -s $s -n $n -q $q $AB" bw_val
				take "V[$col,${t}_$((s / 1024))k_q$q]" "$name"
				[ "$col" = rxe ] && continue
				if [ "$t$s$q" = write40961 ] && [ -n "$db0" ] && [ -n "$db1" ]; then
					per "V[$col,db_per_wr]" $((db1 - db0)) $((n * q * RUN_TRIES))
					echo "# bench: $name: sq_doorbells +$((db1 - db0)) for $((n * q * RUN_TRIES)) WRs"
				fi
				if [ "$t$s$q" = write655361 ] && [ -n "$ack0" ] && [ -n "$ack1" ]; then
					per "V[$col,acks_per_pkt]" $((ack1 - ack0)) $((rx1 - rx0))
					echo "# bench: $name: responder rc_acks_sent +$((ack1 - ack0)), rx_packets +$((rx1 - rx0))"
				fi
			done
		done
	done
}

# bench_strace COL: system calls per WR of the client of an ib_write_bw
# 4 KiB 1-QP run under strace -f -c: per system call, the calls of a
# -n N4K run less those of a -n 5 run (setup, teardown); the growths summed
# (a call made fewer times is setup noise), per WR in between.
bench_strace() {
	local col=$1 n f files=() d
	[ "$STRACE" = 1 ] && command -v strace >/dev/null || return 0
	for n in 5 "$N4K"; do
		f=$E2E_LOGS/bench-$col-strace-$n.txt
		files+=("$f")
		run "$col strace ib_write_bw 4KiB -q 1 -n $n" \
			"ib_write_bw -d $DB -x $GB4 -F -s 4096 -n $n" \
			"strace -f -c -o $f ib_write_bw -d $DA -x $GA4 -F -s 4096 -n $n $AB" || return 0
	done
	# strace -c's table: calls in column 4, the syscall's name last
	d=$(awk 'FNR == 1 { f++ } $4 ~ /^[0-9]+$/ && $NF != "total" { c[$NF] += (f == 1 ? -$4 : $4) }
		END { for (k in c) if (c[k] > 0) { s += c[k]; l = l " " k " +" c[k] } print s + 0 l }' \
		"${files[@]}")
	echo "# bench: $col: strace, calls grown from -n 5 to -n $N4K: ${d#* } (${d%% *} in all)"
	per "V[$col,strace_per_wr]" "${d%% *}" $((N4K - 5))
}

# warm_up: a short pingpong whose figures are not kept (the first runs
# after a pair comes up are slower).
warm_up() {
	run "warm-up ibv_rc_pingpong -n 100" "ibv_rc_pingpong -d $DB -g $GB4 -s 2 -n 100" \
		"ibv_rc_pingpong -d $DA -g $GA4 -s 2 -n 100 $AB"
}

# loss_sum VAR NAMES: VAR := counters NAMES summed over the devices of
# the pair (DA, DB: one for rxe); empty when none has any of them.
loss_sum() {
	local _d _n _v _sum=
	for _d in $(printf '%s\n' "$DA" "$DB" | sort -u); do
		for _n in $2; do
			hw_stat_read _v "$_d" "$_n"
			[ -n "$_v" ] && _sum=$((${_sum:-0} + _v))
		done
	done
	printf -v "$1" '%s' "$_sum"
}

# loss_mark / loss_take COL: the growth, on both devices, from loss_mark
# to loss_take of the counters a lossless path keeps at 0: rx_dropped,
# rc_timeouts and rc_retransmits for shca; for rxe its retransmissions
# (completer_retry_err: every resend after a timeout or a sequence NAK)
# and the requests it saw twice (duplicate_request), rxe having no drop
# counter of its own.  Shown as the table's last rows, never asserted
# here: scripts/e2e/direct.sh asserts them, all at 0 on both paths (and
# no sequence NAK on the wire: a request reordered on this host is held
# until its gap fills).
declare -A LOSS0
LOSS_SHCA="rx_dropped rc_timeouts rc_retransmits"
LOSS_RXE="completer_retry_err duplicate_request"
loss_mark() {
	local n
	for n in $LOSS_SHCA $LOSS_RXE; do
		loss_sum "LOSS0[$n]" "$n"
	done
}
loss_take() {
	local col=$1 n got
	for n in $LOSS_SHCA $LOSS_RXE; do
		loss_sum got "$n"
		[ -n "$got" ] && [ -n "${LOSS0[$n]:-}" ] &&
			V[$col,loss_$n]=$((got - LOSS0[$n]))
	done
	echo "# bench: $col: through its runs: $(for n in $LOSS_SHCA $LOSS_RXE; do
		[ -n "${V[$col,loss_$n]:-}" ] && printf ' %s +%s' "$n" "${V[$col,loss_$n]}"; done)"
}

# bench_pp COL: the 2-byte RC round trip, polled and event-driven.
bench_pp() {
	local col=$1 m opt
	for m in poll event; do
		[ "$m" = event ] && opt=-e || opt=
		VALS=()
		more_runs 1 "$col ibv_rc_pingpong 2B $m -n $PPN" \
			"ibv_rc_pingpong -d $DB -g $GB4 -s 2 -n $PPN $opt" \
			"ibv_rc_pingpong -d $DA -g $GA4 -s 2 -n $PPN $opt $AB" rtt_val
		take "V[$col,rtt_$m]" "$col ibv_rc_pingpong 2B $m"
	done
}

# --- fio over NVMe-oF ------------------------------------------------------

NQN=nqn.2026-11.org.shca:bench
NV_ADDR=10.96.0.1

# bench_fio COL: fio 4 KiB randread IOPS over NVMe-oF on the device the
# caller put on nv0 (NV_ADDR); the target and host come and go here.
bench_fio() {
	local col=$1 dev f=$E2E_LOGS/bench-$1-fio.txt
	if ! command -v fio >/dev/null; then
		echo "# bench: fio missing (scripts/deps.sh installs it)"
		return 0
	fi
	NVME_CTRL=
	if nvmet_export "$NQN" "$NV_ADDR" 64 && nvme_connect "$NQN" "$NV_ADDR" &&
		wait_for 120 nvme_ns; then
		dev=/dev/$(nvme_ns)
		wait_for 60 test -b "$dev"
		if timeout 600 fio --name=randread --filename="$dev" --rw=randread --bs=4k \
			--direct=1 --ioengine=libaio --iodepth=16 --numjobs=1 \
			--runtime="$FIO_S" --time_based --minimal >"$f" 2>&1; then
			# terse format: field 8 is the read IOPS
			V[$col,fio_iops]=$(awk -F';' 'NF > 8 { print $8; exit }' "$f")
			echo "# bench: $col fio randread 4KiB iodepth 16 on $dev: ${V[$col,fio_iops]} IOPS"
		else
			echo "# bench: $col fio failed: $(tail1 "$f")"
		fi
	else
		echo "# bench: $col: NVMe-oF setup failed: $(dmesg | tail -n 3 | tr '\n' ' ')"
	fi
	nvme_disconnect
	nvmet_unexport "$NQN"
	modprobe -r nvme-rdma nvmet-rdma nvmet 2>/dev/null
}

# fio_shca COL DIRECT: shca0 alone on nv0 in init_net, direct=DIRECT.
fio_shca() {
	[ -w "$PARAM" ] && echo "$2" >"$PARAM"
	if solo_setup shca0 nv0 "$NV_ADDR" ffff:0a60:0001; then
		bench_fio "$1"
	else
		echo "# bench: $1: cannot set up shca0 on nv0"
	fi
	rdma link delete shca0 2>/dev/null
	ip link del nv0 2>/dev/null
}

# fio_rxe: rxe0 alone on nv0 in init_net.
fio_rxe() {
	modprobe rdma_rxe && ip link add nv0 type veth peer name nv0p &&
		ip link set nv0 up && ip link set nv0p up &&
		ip addr add "$NV_ADDR/24" dev nv0 &&
		rdma link add rxe0 type rxe netdev nv0 &&
		wait_for 90 port_active rxe0 && wait_for 90 rdma_gid rxe0 ffff:0a60:0001 &&
		bench_fio rxe || echo "# bench: rxe: cannot set up rxe0 on nv0"
	rdma link delete rxe0 2>/dev/null
	ip link del nv0 2>/dev/null
}

has_col() { [[ " $COLS " == *" $1 "* ]]; }

# --- the control path at scale ---------------------------------------------

# scale_up COL: the device of scale column COL, DA in NA with the RoCE v2
# GID index GA4: "shca" shca0 alone in init_net on a fresh veth sc0 (as
# rxe0 is, which has no netns support); "shca-ns" the pair's shca0 in
# shca-a; "rxe" the rxe pair's rxe0.  scale_down COL undoes it.
scale_up() {
	case "$1" in
	shca)
		NA="" DA=shca0
		solo_setup shca0 sc0 10.78.0.1 ffff:0a4e:0001 &&
			GA4=$(rdma_gid shca0 ffff:0a4e:0001)
		;;
	shca-ns) pair_setup shca ;;
	rxe) pair_setup rxe ;;
	esac
}
scale_down() {
	case "$1" in
	shca)
		rdma link delete shca0 2>/dev/null
		ip link del sc0 2>/dev/null
		;;
	*) pair_teardown ;;
	esac
}

# scale_run COL: qp_scale on the device of scale column COL (scale_up),
# once to warm up, then REPEAT times; the median of each "qp_scale: KEY VALUE" line into
# V[COL,scale_KEY] (the 16-deep runs' as scale_d16_KEY); every line it
# printed goes to the log as a comment.
scale_run() {
	local col=$1 bin r f k v
	local -A vals=()
	bin=$(prog qp_scale) || return 0
	if ! scale_up "$col"; then
		echo "# bench: scale: cannot set up $col"
		scale_down "$col"
		return 0
	fi
	# a warm-up run, not kept: a column's first run grows the slabs and
	# page tables the others reuse, and came out slow for every driver
	f=$E2E_LOGS/bench-scale-$col-warm.txt
	# shellcheck disable=SC2086
	timeout 1200 $NA "$bin" "$DA" -n "$SCALE_N" -q 256 -m "$SCALE_MR" -r 16 -g "$GA4" >"$f" 2>&1 ||
		echo "# bench: scale: $col: warm-up qp_scale failed: $(gist "$f" 4)"
	sed "s/^/# bench: scale: $col (warm-up, not kept): /" "$f"
	for r in $(seq 1 "$REPEAT"); do
		f=$E2E_LOGS/bench-scale-$col-$r.txt
		# shellcheck disable=SC2086  # $NA: a command prefix, or nothing
		timeout 1200 $NA "$bin" "$DA" -n "$SCALE_N" -q 256 -m "$SCALE_MR" -r 16 \
			-g "$GA4" >"$f" 2>&1 ||
			echo "# bench: scale: $col: qp_scale failed: $(gist "$f" 4)"
		sed "s/^/# bench: scale: $col (run $r): /" "$f"
		while read -r _ k v _; do
			vals[scale_$k]+=" $v"
		done < <(grep '^qp_scale: [a-z_]* [0-9.-]*$' "$f")
		f=$E2E_LOGS/bench-scale-$col-d16-$r.txt
		# shellcheck disable=SC2086
		timeout 1200 $NA "$bin" "$DA" -n "$SCALE_N" -q 16 >"$f" 2>&1 ||
			echo "# bench: scale: $col -q 16: qp_scale failed: $(gist "$f" 4)"
		sed "s/^/# bench: scale: $col -q 16 (run $r): /" "$f"
		while read -r _ k v _; do
			vals[scale_d16_$k]+=" $v"
		done < <(grep '^qp_scale: [a-z_]* [0-9.-]*$' "$f")
	done
	for k in "${!vals[@]}"; do
		# shellcheck disable=SC2086  # the values, one word each
		V[$col,$k]=$(median ${vals[$k]})
	done
	scale_down "$col"
}

# --- the tracepoints' cost when disabled ------------------------------------

NOTRACE_KO=${SHCA_BENCH_NOTRACE_KO:-}
TRACE_N=${SHCA_BENCH_TRACE_N:-20000}
# the rows of the trace table: KEY (P = d for the direct path, w for the
# wire) TOOL SIZE
TRACE_BW="d_write_4k:write:4096 d_read_4k:read:4096 d_write_64k:write:65536 w_write_4k:write:4096 w_read_4k:read:4096"

# trace_load COL: shca loaded as COL: "traced" the module as built (vm-run
# installed it), "notrace" $NOTRACE_KO (its dependencies are the same).
trace_load() {
	rmmod shca 2>/dev/null
	modprobe shca || return 1
	[ "$1" = traced ] && return 0
	rmmod shca && insmod "$NOTRACE_KO"
}

# trace_round COL: one round of the trace rows with shca loaded as COL;
# each figure is appended to TV[COL,KEY].
trace_round() {
	local col=$1 e k t s path direct m opt
	if ! trace_load "$col" || ! pair_setup shca; then
		echo "# bench: trace: cannot set up the $col pair"
		pair_teardown
		return 0
	fi
	warm_up
	for path in d:1 w:0; do
		IFS=: read -r path direct <<<"$path"
		[ -w "$PARAM" ] && echo "$direct" >"$PARAM"
		for e in $TRACE_BW; do
			IFS=: read -r k t s <<<"$e"
			[ "${k%%_*}" = "$path" ] || continue
			run_val "trace $col $k" "ib_${t}_bw -d $DB -x $GB4 -F -s $s -n $TRACE_N" \
				"ib_${t}_bw -d $DA -x $GA4 -F -s $s -n $TRACE_N $AB" bw_val &&
				TV[$col,$k]+=" $RUN_VAL"
		done
		for m in poll event; do
			k=${path}_rtt_$m
			[ $m = event ] && opt=-e || opt=
			run_val "trace $col $k" "ibv_rc_pingpong -d $DB -g $GB4 -s 2 -n $TRACE_N $opt" \
				"ibv_rc_pingpong -d $DA -g $GA4 -s 2 -n $TRACE_N $opt $AB" rtt_val &&
				TV[$col,$k]+=" $RUN_VAL"
		done
	done
	[ -w "$PARAM" ] && echo 1 >"$PARAM"
	pair_teardown
}

# trace_ab: REPEAT rounds of traced then notrace; the medians into
# V[traced|notrace,KEY]; the modules' .text and jump table sizes.
trace_ab() {
	local r col k ko
	local -A TV=()
	if [ -z "$NOTRACE_KO" ] || [ ! -r "$NOTRACE_KO" ]; then
		echo "# bench: trace: no module without tracepoints (SHCA_BENCH_NOTRACE_KO)"
		return 0
	fi
	for r in $(seq 1 "$REPEAT"); do
		for col in traced notrace; do
			trace_round $col
		done
	done
	for k in "${!TV[@]}"; do
		echo "# bench: trace: $k:${TV[$k]}"
		# shellcheck disable=SC2086  # the values, one word each
		V[$k]=$(median ${TV[$k]})
	done
	rmmod shca 2>/dev/null
	modprobe shca
	ko=$(modinfo -n shca)
	for col in traced notrace; do
		[ $col = notrace ] && ko=$NOTRACE_KO
		read -r "V[$col,text]" "V[$col,jump]" < <(size -A "$ko" |
			awk '$1 == ".text" { t = $2 } $1 == "__jump_table" { j = $2 } END { print t, j }')
	done
	modprobe -r shca
}

# --- the cost of on-demand paging -----------------------------------------

# odp_run: odp_bench on shca0 alone in init_net on a fresh veth od0,
# REPEAT times; the median of each "odp_bench: KEY VALUE" line into
# V[odp,KEY]; every line it printed goes to the log as a comment.
odp_run() {
	local bin r f k v gidx
	local -A vals=()
	bin=$(prog odp_bench) || return 0
	if ! solo_setup shca0 od0 10.79.0.1 ffff:0a4f:0001; then
		echo "# bench: odp: cannot set up shca0"
	else
		gidx=$(rdma_gid shca0 ffff:0a4f:0001)
		for r in $(seq 1 "$REPEAT"); do
			f=$E2E_LOGS/bench-odp-$r.txt
			timeout 1200 "$bin" shca0 -g "$gidx" -s "$ODP_MB" >"$f" 2>&1 ||
				echo "# bench: odp: odp_bench failed: $(gist "$f" 4)"
			sed "s/^/# bench: odp (run $r): /" "$f"
			while read -r _ k v _; do
				vals[$k]+=" $v"
			done < <(grep '^odp_bench: [a-z0-9_]* [0-9.-]*$' "$f")
		done
		for k in "${!vals[@]}"; do
			# shellcheck disable=SC2086  # the values, one word each
			V[odp,$k]=$(median ${vals[$k]})
		done
	fi
	rdma link delete shca0 2>/dev/null
	ip link del od0 2>/dev/null
}

# --- the runs --------------------------------------------------------------

echo "# bench on $(uname -r): columns $COLS; 4 KiB x$N4K, 64 KiB x$N64K, 16 QPs x$NQ16_4K (4 KiB) / x$NQ16 (64 KiB) each, pingpong x$PPN, fio ${FIO_S} s"
modprobe shca
if [ -w "$PARAM" ]; then
	echo "# bench: module parameter direct: $(<"$PARAM")"
else
	echo "# bench: no $PARAM: the shca column is the wire path too"
fi
if has_col shca || has_col wire; then
	if pair_setup shca; then
		$NA ping -c 1 -W 5 "$AB" >/dev/null 2>&1
		for col in shca wire; do
			has_col $col || continue
			if [ -w "$PARAM" ]; then
				if [ $col = shca ]; then echo 1 >"$PARAM"; else echo 0 >"$PARAM"; fi
			fi
			warm_up
			loss_mark
			bench_bw $col
			bench_pp $col
			bench_strace $col
			loss_take $col
		done
		[ -w "$PARAM" ] && echo 1 >"$PARAM"
	else
		echo "# bench: cannot set up the shca pair"
	fi
	pair_teardown
	has_col shca && fio_shca shca 1
	has_col wire && fio_shca wire 0
	[ -w "$PARAM" ] && echo 1 >"$PARAM"
	modprobe -r shca
fi
if has_col rxe; then
	if pair_setup rxe; then
		warm_up
		loss_mark
		bench_bw rxe
		bench_pp rxe
		bench_strace rxe
		loss_take rxe
	else
		echo "# bench: cannot set up the rxe pair"
	fi
	pair_teardown
	fio_rxe
	modprobe -r rdma_rxe 2>/dev/null
fi

if has_col scale; then
	scale_run shca
	scale_run shca-ns
	modprobe -r shca 2>/dev/null
	scale_run rxe
	modprobe -r rdma_rxe 2>/dev/null
fi
if has_col trace; then
	trace_ab
fi
if has_col odp; then
	odp_run
	modprobe -r shca 2>/dev/null
fi

# --- the table ------------------------------------------------------------

if has_col shca || has_col wire || has_col rxe; then
	echo
	echo "# bench on $(uname -r), QEMU TCG: compare the columns, not the absolute values"
	echo "# shca: same-host direct path (default); wire: direct=0; ratios: bandwidth"
	echo "# and IOPS >1 better for shca, round trip <1 better"
	printf '%-38s %10s %10s %10s %9s %9s\n' metric shca wire rxe shca/rxe wire/rxe
	row() {	# LABEL KEY [noratio]
		local s=${V[shca,$2]:-} w=${V[wire,$2]:-} r=${V[rxe,$2]:-} rs=- rw=-
		if [ -z "${3:-}" ]; then rs=$(ratio "$s" "$r"); rw=$(ratio "$w" "$r"); fi
		printf '%-38s %10s %10s %10s %9s %9s\n' "$1" "${s:--}" "${w:--}" "${r:--}" "$rs" "$rw"
	}
	for s in 4 64; do
		for q in 1 16; do
			for t in write send read; do
				row "ib_${t}_bw ${s} KiB, $q QP$([ $q = 1 ] || echo s) (MB/s)" "${t}_${s}k_q$q"
			done
		done
	done
	row "RC round trip 2 B, polled (usec)" rtt_poll
	row "RC round trip 2 B, events -e (usec)" rtt_event
	row "doorbells per WR, sq_doorbells (4 KiB)" db_per_wr noratio
	row "syscalls per WR, strace (write 4 KiB)" strace_per_wr
	row "ACKs per data packet (write 64 KiB)" acks_per_pkt noratio
	row "fio 4 KiB randread NVMe-oF (IOPS)" fio_iops
	for n in $LOSS_SHCA $LOSS_RXE; do
		row "$n, through the runs" "loss_$n" noratio
	done
fi
if has_col scale; then
	echo
	echo "# scale: $SCALE_N RC QPs 256 deep on one CQ, $SCALE_MR MRs of 4 KiB, medians of $REPEAT runs; shca/rxe <1 better"
	echo "# kernel memory: MemFree's fall less the process's RssAnon growth (qp_scale.c)"
	echo "# shca: in init_net as rxe; shca-ns: in the netns shca-a (the pair's)"
	printf '%-38s %10s %10s %10s %9s\n' metric shca shca-ns rxe shca/rxe
	srow() {	# LABEL KEY
		local s=${V[shca,$2]:-} n=${V[shca-ns,$2]:-} r=${V[rxe,$2]:-}
		printf '%-38s %10s %10s %10s %9s\n' "$1" "${s:--}" "${n:--}" "${r:--}" \
			"$(ratio "$s" "$r")"
	}
	srow "create $SCALE_N QPs (s)" scale_create_s
	srow "kernel memory per QP (KiB)" scale_kmem_kib_per_qp
	srow "  of which slab (KiB)" scale_slab_kib_per_qp
	srow "  of which vmalloc (KiB)" scale_vmalloc_kib_per_qp
	srow "to RTR, max_dest_rd_atomic 16 (s)" scale_rtr_s
	srow "  kernel memory per QP (KiB)" scale_rtr_kmem_kib_per_qp
	srow "register $SCALE_MR MRs (s)" scale_mr_reg_s
	srow "  kernel memory per MR (KiB)" scale_mr_kmem_kib_per_mr
	srow "deregister $SCALE_MR MRs (s)" scale_mr_dereg_s
	srow "destroy $SCALE_N QPs (s)" scale_destroy_s
	srow "kernel memory left after (KiB)" scale_kmem_kib_left
	srow "create $SCALE_N QPs 16 deep (s)" scale_d16_create_s
	srow "  kernel memory per QP (KiB)" scale_d16_kmem_kib_per_qp
fi
if has_col trace; then
	echo
	echo "# trace: shca's tracepoints (events/shca) compiled in, none enabled (traced), against"
	echo "# the same sources built with NOTRACE (notrace); medians of $REPEAT interleaved rounds of $TRACE_N;"
	echo "# direct: the same-host direct path, wire: direct=0; traced/notrace: 1.00 is no cost"
	printf '%-38s %10s %10s %14s\n' metric traced notrace traced/notrace
	trow() {	# LABEL KEY
		local a=${V[traced,$2]:-} b=${V[notrace,$2]:-}
		printf '%-38s %10s %10s %14s\n' "$1" "${a:--}" "${b:--}" "$(ratio "$a" "$b")"
	}
	trow "direct: ib_write_bw 4 KiB, 1 QP (MB/s)" d_write_4k
	trow "direct: ib_read_bw 4 KiB, 1 QP (MB/s)" d_read_4k
	trow "direct: ib_write_bw 64 KiB, 1 QP (MB/s)" d_write_64k
	trow "direct: RC round trip polled (usec)" d_rtt_poll
	trow "direct: RC round trip events (usec)" d_rtt_event
	trow "wire: ib_write_bw 4 KiB, 1 QP (MB/s)" w_write_4k
	trow "wire: ib_read_bw 4 KiB, 1 QP (MB/s)" w_read_4k
	trow "wire: RC round trip polled (usec)" w_rtt_poll
	trow "wire: RC round trip events (usec)" w_rtt_event
	trow "module .text (bytes)" text
	trow "module __jump_table (bytes)" jump
	if [ -n "${V[traced,jump]:-}" ] && [ -n "${V[notrace,jump]:-}" ]; then
		echo "# trace: $(((V[traced,jump] - V[notrace,jump]) / 16)) tracepoint sites (16-byte jump entries), each a NOP while disabled"
	fi
fi
if has_col odp; then
	echo
	echo "# odp: shca0 alone, RC loopback, an MR of $ODP_MB MiB, 64 KiB WRs 16 in flight, medians of $REPEAT runs"
	echo "# pinned: no ODP; odp: each page faulted in on first touch; prefetched: ODP and"
	echo "# ibv_advise_mr(PREFETCH_WRITE, FLUSH) after registering (the prefetch row)"
	printf '%-38s %10s %10s %10s %9s\n' metric pinned odp prefetched odp/pinned
	orow() {	# LABEL KEY
		local p=${V[odp,pinned_$2]:-} o=${V[odp,odp_$2]:-} f=${V[odp,odppf_$2]:-}
		printf '%-38s %10s %10s %10s %9s\n' "$1" "${p:--}" "${o:--}" "${f:--}" \
			"$(ratio "$o" "$p")"
	}
	orow "register (usec)" reg_us
	orow "  a process's first ODP MR, 1 page" first_reg_us
	orow "prefetch, ibv_advise_mr (usec)" advise_us
	orow "RDMA WRITE in, first touch (MB/s)" write_mbs
	orow "RDMA WRITE in, pages in (MB/s)" write2_mbs
	orow "RDMA READ out, first touch (MB/s)" read_mbs
	orow "deregister (usec)" dereg_us
fi
exit 0
