#!/bin/bash
# scripts/vm-run --selftest [--kernel 6.1|6.12|test]
# Proves vm-run's plumbing and failure detection:
#   1. a clean command's exit status is passed through (exit 3 -> 3), the
#      topology/module dir/SHCA_OUT plumbing works;
#   2. a module that WARNs at load makes the run fail (1) although the
#      command exits 0;
#   3. --timeout kills a hung run (124);
#   4. a kernel that dies before its init ran is booted once more (its
#      console kept in serial-boot1.log), and a second death fails the
#      run (1).
# The WARN module (scripts/vm/selftest/warn) is built in a temp dir against
# the flavour's KDIR.  Exit 0 when all pass.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
VMRUN=$(cd "$here/../.." && pwd -P)/vm-run
flavour=6.1
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) flavour=$2; shift 2 ;;
	--kernel=*) flavour=${1#*=}; shift ;;
	*) echo "selftest: unknown argument $1" >&2; exit 2 ;;
	esac
done
kinfo=$("$here/../../kernel-info.sh" "$flavour") || { echo "selftest: kernel $flavour not available" >&2; exit 2; }
eval "$kinfo"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm-run-selftest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { # name expected actual
	if [ "$2" = "$3" ]; then
		echo "selftest: PASS: $1 (exit $3)"
	else
		echo "selftest: FAIL: $1: expected exit $2, got $3"
		fails=$((fails + 1))
	fi
}

echo "selftest: [1/4] clean run, status passthrough"
mkdir -p "$tmp/empty"
SHCA_KO_DIR=$tmp/empty "$VMRUN" --kernel "$flavour" --timeout 600 --out "$tmp/o1" -- \
	sh -c 'echo hello >"$SHCA_OUT/hello.txt"; ip netns exec shca-a ping -c1 -W5 10.77.0.2 >/dev/null || exit 9; exit 3' >"$tmp/o1.log" 2>&1
rc=$?
check "clean run returns the command's status" 3 $rc
if [ "$(cat "$tmp/o1/hello.txt" 2>/dev/null)" = hello ] && [ "$(cat "$tmp/o1/status" 2>/dev/null)" = 3 ]; then
	echo "selftest: PASS: SHCA_OUT and status land in --out"
else
	echo "selftest: FAIL: SHCA_OUT/status not in --out"; fails=$((fails + 1))
fi
[ $rc = 3 ] || tail -n 40 "$tmp/o1.log"

echo "selftest: [2/4] a WARN_ON at module load must fail the run"
cp -r "$here/warn" "$tmp/warn"
# Debian's headers Makefile includes the -common tree by an absolute /usr/src
# path; for headers unpacked elsewhere use the sibling -common Makefile.
kmf=()
inc=$(sed -n 's/^include //p' "$KDIR/Makefile" 2>/dev/null)
if [ -n "$inc" ] && [ ! -e "$inc" ]; then
	kmf=(-f "$KDIR/../$(basename "$(dirname "$inc")")/Makefile")
fi
if make -s -C "$KDIR" "${kmf[@]}" M="$tmp/warn" modules >"$tmp/build.log" 2>&1; then
	SHCA_KO_DIR=$tmp/warn "$VMRUN" --kernel "$flavour" --timeout 600 --out "$tmp/o2" -- \
		sh -c 'modprobe vmrun_selftest_warn && echo loaded' >"$tmp/o2.log" 2>&1
	rc=$?
	check "WARN with a successful command fails the run" 1 $rc
	grep -q '^loaded$' "$tmp/o2/console.log" 2>/dev/null ||
		{ echo "selftest: FAIL: the WARN module did not load"; fails=$((fails + 1)); }
	[ $rc = 1 ] || tail -n 60 "$tmp/o2.log"
else
	echo "selftest: FAIL: cannot build the WARN module against $KDIR"
	cat "$tmp/build.log"; fails=$((fails + 1))
fi

echo "selftest: [3/4] --timeout kills a hung run"
SHCA_KO_DIR=$tmp/empty "$VMRUN" --kernel "$flavour" --timeout 45 --no-topology --out "$tmp/o3" -- \
	sleep 100000 >"$tmp/o3.log" 2>&1
check "hung command times out" 124 $?

echo "selftest: [4/4] a kernel that dies before its init boots once more, then fails"
# no initramfs init: the kernel panics before the init prints anything
SHCA_VM_APPEND=rdinit=/vm-run-selftest-none SHCA_KO_DIR=$tmp/empty "$VMRUN" --kernel "$flavour" \
	--timeout 300 --no-topology --out "$tmp/o4" -- true >"$tmp/o4.log" 2>&1
rc=$?
check "a kernel dead before its init fails the run" 1 $rc
if grep -q 'booting once more' "$tmp/o4.log" && grep -aq 'Kernel panic' "$tmp/o4/serial-boot1.log" 2>/dev/null &&
	grep -aq 'Kernel panic' "$tmp/o4/serial.log" 2>/dev/null; then
	echo "selftest: PASS: it was booted twice, the first console kept in serial-boot1.log"
else
	echo "selftest: FAIL: no second boot after a death before the init"; fails=$((fails + 1))
	tail -n 20 "$tmp/o4.log"
fi

if [ $fails = 0 ]; then
	echo "selftest: all passed ($flavour)"
else
	echo "selftest: $fails check(s) FAILED ($flavour)"
fi
[ $fails = 0 ]
