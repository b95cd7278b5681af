# shellcheck shell=bash
# What make bench's two scripts share (scripts/bench.sh, one VM, and
# scripts/bench-twohost.sh, two): reading a figure from a tool's output,
# and the arithmetic of the table.  Sourced after lib.sh.

# bw_val CLILOG: the average bandwidth (MB/s) of perftest's result line;
# nothing for 0.00, which perftest prints when it finds the TSC unstable
# (TCG), for a run that did finish: not a measurement.
# shellcheck disable=SC2317  # called through run_val
bw_val() {
	awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 5 { v = $4 } END { if (v + 0 > 0) print v }' "$1"
}

# rtt_val CLILOG: the usec/iter of ibv_rc_pingpong's report.
# shellcheck disable=SC2317  # called through more_runs
rtt_val() {
	sed -n 's/.* = \([0-9.]*\) usec\/iter.*/\1/p' "$1" | tail -n 1
}

# median V...: the median of the values (the lower middle one of an even
# count), empty if there are none.
median() {
	[ $# -gt 0 ] || return 0
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# ratio A B: A/B with two decimals, "-" when either is missing or 0.
ratio() {
	awk -v a="${1:-}" -v b="${2:-}" \
		'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }'
}
