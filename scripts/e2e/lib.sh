# shellcheck shell=bash
# Tiny TAP-like helpers for the in-VM end-to-end suites.
# Every case prints exactly one line "ok - <suite>: <name>" or
# "not ok - <suite>: <name>: <why>"; scripts/check.sh counts those lines.

E2E_SUITE=${E2E_SUITE:-e2e}
E2E_FAILED=0

ok() { echo "ok - $E2E_SUITE: $1"; }
not_ok() { echo "not ok - $E2E_SUITE: $1: $2"; E2E_FAILED=$((E2E_FAILED + 1)); }

# check NAME CMD...: the case passes when CMD exits 0.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		ok "$name"
	else
		not_ok "$name" "'$*' failed: $(echo "$out" | tail -n 3 | tr '\n' ' ')"
	fi
}

# check_fails NAME CMD...: the case passes when CMD exits non-zero.
check_fails() {
	local name=$1
	shift
	if "$@" >/dev/null 2>&1; then
		not_ok "$name" "'$*' succeeded but must fail"
	else
		ok "$name"
	fi
}

# wait_for SECS CMD...: poll until CMD succeeds; TCG is slow, so be generous.
wait_for() {
	local secs=$1 i
	shift
	for ((i = 0; i < secs * 5; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

# wait_tcp_listen NETNS_CMD PORT: until a TCP listener on PORT exists, e.g.
# the out-of-band exchange socket of ibv_*_pingpong (18515).
wait_tcp_listen() {
	wait_for 120 sh -c "$1 ss -ltnH | grep -q ':$2 '"
}

# wait_cm_listen: until an RDMA CM id is listening (rdma restrack).
wait_cm_listen() {
	wait_for 120 sh -c 'rdma resource show cm_id | grep -q LISTEN'
}

# expect_eq NAME GOT WANT
expect_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got '$2', want '$3'"; fi
}

e2e_finish() {
	[ "$E2E_FAILED" -eq 0 ]
}
