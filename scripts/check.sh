#!/bin/bash
# make check: build, static checks, KUnit in the test-kernel VM, and the
# end-to-end suite in the stock Debian 6.1 and 6.12 VMs.
#
# Every stage and every in-VM test case counts as one test; the last line is
# "N passed, N failed".  Logs go to build/check/.
#
# Environment: SHCA_CHECK_ONLY="stage ..." runs a subset (e.g. "e2e-6.1").
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
LOGS=$top/build/check
mkdir -p "$LOGS"
PASS=0
FAIL=0
SKIP=0
FAILED_NAMES=()

pass() { PASS=$((PASS + 1)); echo "ok - $1"; }
fail() { FAIL=$((FAIL + 1)); FAILED_NAMES+=("$1"); echo "not ok - $1"; }

want() {
	[ -z "${SHCA_CHECK_ONLY:-}" ] && return 0
	case " $SHCA_CHECK_ONLY " in *" $1 "*) return 0 ;; esac
	return 1
}

# stage NAME CMD...: one pass/fail, output in $LOGS/NAME.log
stage() {
	local name=$1 start rc
	shift
	want "$name" || return 0
	start=$SECONDS
	echo "# stage $name: $*"
	"$@" > "$LOGS/$name.log" 2>&1
	rc=$?
	echo "# stage $name: exit $rc after $((SECONDS - start)) s"
	if [ $rc -eq 0 ]; then
		pass "check: $name"
	else
		tail -n 60 "$LOGS/$name.log" | sed 's/^/#   /'
		fail "check: $name"
	fi
	return $rc
}

# count_cases LOG PREFIX: add the case lines of LOG: "ok - NAME" /
# "not ok - NAME" (e2e suites) and "ok NAME" / "not ok NAME" / "skip NAME"
# (run-kunit.sh).  Kernel console lines carry a timestamp and never match.
count_cases() {
	local line name
	while IFS= read -r line; do
		case "$line" in
		"ok - "*" # SKIP"*) SKIP=$((SKIP + 1)); echo "skip - ${line#ok - }" ;;
		"ok - "*) pass "${line#ok - }" ;;
		"not ok - "*) fail "${line#not ok - }" ;;
		"ok "*) pass "$2${line#ok }" ;;
		"not ok "*) fail "$2${line#not ok }" ;;
		"skip "*) SKIP=$((SKIP + 1)); echo "skip - $2${line#skip }" ;;
		esac
	done < <(tr -d '\r' < "$1")
}

# vm_stage NAME LOG CMD...: run a VM stage; count its cases, and the VM's
# own verdict (kernel log clean, command status) as one more test.
vm_stage() {
	local name=$1 log=$2 rc
	shift 2
	want "$name" || return 0
	echo "# stage $name: $*"
	"$@" > "$log" 2>&1
	rc=$?
	count_cases "$log" "$name: "
	if [ $rc -eq 0 ]; then
		pass "check: $name"
	else
		grep -v -E '^(ok|not ok) - ' "$log" | tail -n 150 | sed 's/^/#   /'
		# Repeat the verdict last, where a truncated log still shows it.
		grep -a -E '^not ok - |^vm-run: FAILED|^# e2e: failed suites' "$log" |
			tail -n 20 | sed 's/^/# why: /'
		fail "check: $name (exit $rc)"
	fi
}

kdir() { (eval "$(scripts/kernel-info.sh "$1")" && echo "$KDIR"); }

run_all() {
	stage deps scripts/deps.sh
	stage build-6.1 make module KDIR="$(kdir 6.1)" BUILD=build/6.1
	stage build-6.12 make module KDIR="$(kdir 6.12)" BUILD=build/6.12
	stage provider make -C providers/shca
	stage provider-udata make -C providers/shca udata_strict
	stage provider-tests make -C providers/shca check
	stage provider-events make -C providers/shca vm_events
	stage dkms scripts/dkms-check.sh 6.1
	stage sparse make sparse
	stage checkpatch make checkpatch
	stage vm-selftest scripts/vm-run --selftest --kernel 6.1
	stage demo scripts/vm-run --kernel 6.1 --timeout 900 -- scripts/demo.sh
	if stage testkernel scripts/testkernel.sh build || ! want testkernel; then
		vm_stage kunit "$LOGS/kunit.log" scripts/run-kunit.sh
		# The datapath on the debug kernel (KASAN, lockdep, kmemleak,
		# UBSAN, DEBUG_ATOMIC_SLEEP), with the module run-kunit.sh built.
		vm_stage e2e-debug "$LOGS/e2e-debug.log" \
			env SHCA_E2E_SUITES="lifecycle ud rc srq hostile mw rc-resp-fuzz" \
			scripts/vm-run --kernel test --timeout 2400 \
			--out "$LOGS/vm-e2e-debug" -- scripts/e2e/run.sh
	fi
	for k in 6.1 6.12; do
		vm_stage "e2e-$k" "$LOGS/e2e-$k.log" \
			scripts/vm-run --kernel "$k" --timeout 3600 --out "$LOGS/vm-e2e-$k" \
			-- scripts/e2e/run.sh
	done
}

run_all
grep -h '^# pyverbs(' "$LOGS"/e2e-*.log 2>/dev/null | sed 's/^# /# counts: /'
if [ $FAIL -gt 0 ]; then
	echo "# failed:"
	printf '#   %s\n' "${FAILED_NAMES[@]}"
fi
echo "$PASS passed, $FAIL failed, $SKIP skipped"
[ $FAIL -eq 0 ]
