#!/bin/bash
# make bench: boot one 6.12 VM (rdma_rxe works inside a netns there) and
# measure the shca pair (shca0 in shca-a <-> shca1 in shca-b) and rdma_rxe
# in the same run (rxe has no netns support in 6.1/6.12, so its side is one
# rxe0 in init_net talking to its own address, looped back inside rxe; see
# pair_setup in scripts/e2e/lib.sh): ib_write_bw / ib_send_bw / ib_read_bw at 64 KiB
# with 1 and 16 QPs, and the 2-byte RC round trip (ibv_rc_pingpong
# usec/iter: perftest's latency tools print inf under TCG).  Prints a table
# of values and shca/rxe ratios (bandwidth: >1 is better for shca; round
# trip: <1 is better for shca).  Never asserts on timings; TCG numbers
# only compare the two drivers on the same emulated machine.
#   BENCH_ITERS (default 100), BENCH_PP_ITERS (default 1000),
#   BENCH_OUT (default build/bench)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)

if [ "${1:-}" != --in-vm ]; then
	out=${BENCH_OUT:-$top/build/bench}
	mkdir -p "$out"
	export SHCA_BENCH_ITERS=${BENCH_ITERS:-100} SHCA_BENCH_PP_ITERS=${BENCH_PP_ITERS:-1000}
	"$top/scripts/vm-run" --kernel 6.12 --timeout 3600 --out "$out" -- scripts/bench.sh --in-vm
	rc=$?
	echo "# bench: logs in $out"
	exit $rc
fi

E2E_SUITE=bench
. "$top/scripts/e2e/lib.sh"
N=${SHCA_BENCH_ITERS:-100}
PPN=${SHCA_BENCH_PP_ITERS:-1000}
declare -A V

# bw_val CLILOG: the average bandwidth (MB/s) of perftest's result line.
bw_val() {
	awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 5 { v = $4 } END { if (v != "") print v }' "$1"
}

# bench_drv DRV: fill V[DRV,metric].
bench_drv() {
	local drv=$1 t q
	if ! pair_setup "$drv"; then
		echo "# bench: cannot set up the $drv pair"
		pair_teardown
		return
	fi
	for q in 1 16; do
		for t in write send read; do
			pair_case "$drv ib_${t}_bw 64KiB -q $q" tcp:18515 \
				"$NB" "ib_${t}_bw -d $DB -x $GB4 -F -s 65536 -n $N -q $q" \
				"$NA" "ib_${t}_bw -d $DA -x $GA4 -F -s 65536 -n $N -q $q $AB"
			V[$drv,${t}_bw_q$q]=$(bw_val "$E2E_CLI_LOG")
		done
	done
	pair_case "$drv ibv_rc_pingpong 2B" tcp:18515 \
		"$NB" "ibv_rc_pingpong -d $DB -g $GB4 -s 2 -n $PPN" \
		"$NA" "ibv_rc_pingpong -d $DA -g $GA4 -s 2 -n $PPN $AB"
	V[$drv,rtt_2B]=$(sed -n 's/.* = \([0-9.]*\) usec\/iter.*/\1/p' "$E2E_CLI_LOG" | tail -n 1)
	pair_teardown
}

E2E_T=900
bench_drv shca
modprobe -r shca
bench_drv rxe

echo
echo "# bench on $(uname -r), QEMU TCG: compare the columns, not the absolute values"
printf '%-28s %14s %14s %10s\n' metric shca rxe shca/rxe
for m in write_bw_q1 send_bw_q1 read_bw_q1 write_bw_q16 send_bw_q16 read_bw_q16 rtt_2B; do
	s=${V[shca,$m]:-} r=${V[rxe,$m]:-}
	case $m in
	rtt_2B) label="RC round trip 2 B (usec)" ;;
	*) label="${m%_q*} 64KiB ${m##*_}  (MB/s)" ;;
	esac
	ratio=$(awk -v s="$s" -v r="$r" 'BEGIN { if (s + 0 > 0 && r + 0 > 0) printf "%.2f", s / r; else print "-" }')
	printf '%-28s %14s %14s %10s\n' "$label" "${s:-fail}" "${r:-fail}" "$ratio"
done
exit 0
