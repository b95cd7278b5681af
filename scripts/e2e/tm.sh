#!/bin/bash
# Tag matching SRQs (IBV_SRQT_TM).  Runs inside the VM.
#
#   - progs/tm_stress between shca0 in shca-a (the sender: a plain RC QP)
#     and shca1 in shca-b (the receiver: an RC QP on a TM SRQ, acting as a
#     minimal MPI runtime): random ADDs and DELs against a stream of
#     eager and rendezvous messages of 0..64 KiB, every byte, completion,
#     phase and FIN checked (see the program); then shca1's tm_* counters
#     must have moved exactly as the receiver's tally says, shca0's not
#     at all;
#   - progs/tm_cases.py on shca9 alone: the statements of
#     ibv_create_srq_ex(3) and ibv_post_srq_ops(3) for TM SRQs and hostile
#     headers, each with its counter deltas;
#   - rdma-core's own tests/test_tag_matching.py (TMTest) through
#     pyverbs-run.py on shca9: its four tests must run and pass (they skip
#     on a device without IBV_TM_CAP_RC).
#
# Arguments: none (make check's size: 400 messages in windows of 16, -C
# asserting that every path of the plan was taken: at seed 1, 300 took
# the rarest (ADDs out of phase, chains of ops, incomplete rendezvous)
# 6-8 times, 1000 took them 28-45 times; then 200 of at most 16 KiB in
# windows of 4; make check-full, SHCA_TIER=full, 1000 and 400), "full"
# (make check-full's soak size on the stock kernels), "lifecycle"
# (the debug kernel: a short stress and tm_cases.py's hostile cases).
# SHCA_TM_SEED sets the stress's seed (default 1).
set -u
E2E_SUITE=tm
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

PROG=$(prog tm_stress) || exit 1
mode=${1:-all}
seed=${SHCA_TM_SEED:-1}
case "$mode" in
all) stress=("-n 400 -w 16 -C" "-n 200 -w 4 -m 16384") tmo=1200
	# make check-full's boots that run plain tm (the debug kernel's)
	[ "${SHCA_TIER:-check}" = full ] &&
		stress=("-n 1000 -w 16 -C" "-n 400 -w 4 -m 16384") ;;
full) stress=("-n 100000 -w 32 -C" "-n 20000 -w 4 -m 16384 -C") tmo=14400 ;;
lifecycle) stress=("-n 100 -w 8") tmo=1200 ;;
*) not_ok "arguments" "unknown mode $mode"; exit 1 ;;
esac
TM_COUNTERS="tm_matched tm_unexpected tm_no_tag tm_malformed tm_rndv_reads tm_rndv_errs tm_rndv_incomplete tm_op_errs"

# tm_counts DEV ARRAY FILE: DEV's tm_* counters into the associative
# array ARRAY and as "name value" lines into FILE, read from sysfs without
# starting a process (TCG makes each slow: the former rdma|tr|awk per
# counter, awk per delta and sed per tally value were ~150 processes a
# stress case, two minutes of the debug kernel's run).
tm_counts() {
	local -n _tc=$2
	local c v
	_tc=()
	for c in $TM_COUNTERS; do
		hw_stat_read v "$1" "$c"
		_tc["$c"]=$v
		echo "$c $v"
	done >"$3"
}

# tally LOG: the receiver's "tm_stress: tally name=value..." line into
# the associative array TALLY.
declare -A TALLY
tally() {
	local l kv
	TALLY=()
	while read -r l; do
		[[ $l == "tm_stress: tally "* ]] || continue
		for kv in ${l#tm_stress: tally }; do
			TALLY[${kv%%=*}]=${kv#*=}
		done
	done <"$1"
}

# _up_or_gone PID PORT: PID listens on PORT, or has exited.
_up_or_gone() { tcp_listening "$1" "$2" || _gone "$1"; }

# stress_case NAME ARGS: tm_stress with ARGS, receiver in shca-b.
stress_case() {
	local name=$1 args=$2 rlog slog rpid crc rrc t0=$SECONDS
	local slug c d want why='' lo
	local -A r0 r1 s0 s1
	e2e_selected "$name" || return 0
	slug=$(echo "tm-$name" | tr -c 'A-Za-z0-9.\n-' '_')
	rlog=$E2E_LOGS/$slug.rcv slog=$E2E_LOGS/$slug.snd
	tm_counts "$DB" r0 "$rlog.c0"
	tm_counts "$DA" s0 "$slog.c0"
	# shellcheck disable=SC2086
	$NB timeout "$tmo" "$PROG" -r -d "$DB" -g "$GB4" -p 18700 -s "$seed" $args \
		>"$rlog" 2>&1 &
	rpid=$!
	wait_for 120 _up_or_gone "$rpid" 18700
	if _gone "$rpid"; then
		crc=not-started
		: >"$slog"
	else
		# shellcheck disable=SC2086
		$NA timeout "$tmo" "$PROG" -c -d "$DA" -g "$GA4" -a "$AB" -p 18700 -s "$seed" $args \
			>"$slog" 2>&1
		crc=$?
	fi
	server_reap "$rpid"
	rrc=$SERVER_RC
	tm_counts "$DB" r1 "$rlog.c1"
	tm_counts "$DA" s1 "$slog.c1"
	tap_relay "$rlog"
	tap_relay "$slog"
	echo "# $E2E_SUITE: $name: $((SECONDS - t0)) s"
	if [ "$rrc" != 0 ] || [ "$crc" != 0 ]; then
		grep -q '^not ok' "$rlog" "$slog" ||
			not_ok "$name" "receiver rc=$rrc: $(gist "$rlog") | sender rc=$crc: $(gist "$slog")"
		return
	fi
	ok "$name: both sides exit 0"
	# the receiver's device counted what the receiver saw
	tally "$rlog"
	for c in unexpected no_tag rndv_reads rndv_incomplete op_errs; do
		want=${TALLY[$c]:-}
		d=$(( ${r1[tm_$c]:-0} - ${r0[tm_$c]:-0} ))
		[ -n "$want" ] && [ "$d" = "$want" ] || why+="tm_$c grew by $d, want $want; "
	done
	# a matched rendezvous too big for its buffer may count as a match
	want=${TALLY[matched]:-}
	lo=$(( ${want:-0} - ${TALLY[rndv_incomplete]:-0} ))
	d=$(( ${r1[tm_matched]:-0} - ${r0[tm_matched]:-0} ))
	[ -n "$want" ] && [ "$d" -ge "$lo" ] && [ "$d" -le "$want" ] ||
		why+="tm_matched grew by $d, want $lo..$want; "
	for c in tm_malformed tm_rndv_errs; do
		d=$(( ${r1[$c]:-0} - ${r0[$c]:-0} ))
		[ "$d" = 0 ] || why+="$c grew by $d, want 0; "
	done
	if [ -n "$why" ]; then
		not_ok "$name: $DB's tm_* counters match the receiver's tally" "$why"
	else
		ok "$name: $DB's tm_* counters match the receiver's tally"
	fi
	why=''
	for c in $TM_COUNTERS; do
		d=$(( ${s1[$c]:-0} - ${s0[$c]:-0} ))
		[ "$d" = 0 ] || why+="$c grew by $d; "
	done
	expect_eq "$name: the sender's device (no TM SRQ) counted no tag matching" "${why:-none}" none
}

if ! pair_setup shca; then
	not_ok "setup shca pair" "devices or RoCE v2 GIDs missing"
	exit 1
fi
ok "setup shca pair"
for k in "${!stress[@]}"; do
	stress_case "tm_stress seed $seed ${stress[$k]}" "${stress[$k]}"
done
# user_qps_gone: no QP but QP1 (GSI) left on either device.
user_qps_gone() {
	! { $NA rdma resource show qp link "$DA/1"; $NB rdma resource show qp link "$DB/1"; } |
		grep -q -E ' type (RC|UC|UD) '
}
check "no QP left on either device" wait_for 120 user_qps_gone
pair_teardown

if e2e_selected "tm_cases"; then
	check "setup shca9 on tm0" solo_setup shca9 tm0 10.94.0.1 ffff:0a5e:0001
	only=()
	[ "$mode" = lifecycle ] && only=(--hostile)
	exits_ok "tm_cases.py exits 0" /usr/bin/python3 "$here/progs/tm_cases.py" \
		--dev shca9 "${only[@]}"
	if [ "$mode" != lifecycle ]; then
		exits_ok "rdma-core's test_tag_matching: every TMTest case ran and passed" \
			/usr/bin/python3 "$here/progs/pyverbs-run.py" --dev shca9 \
			--must-run tests.test_tag_matching.TMTest test_tag_matching
	fi
	check "rdma link delete" rdma link delete shca9
	ip link del tm0
fi
check "unload shca (no TM object left behind)" modprobe -r shca
e2e_finish
