#!/bin/bash
# Run the module's KUnit suites on the test kernel (KASAN, lockdep, kmemleak,
# UBSAN) under QEMU and report one line per test case.
#
#   scripts/run-kunit.sh [--module NAME] [--ko-dir DIR] [--no-build]
#                        [--no-unload] [--out DIR] [--timeout SECS]
#
# Steps: scripts/testkernel.sh build (no-op when cached); make module
# KDIR=<test kernel build tree> BUILD=build/test; scripts/vm-run --kernel test
# --no-topology -- scripts/kunit/vm-inner.sh shca (modprobe runs the suites,
# modprobe -r unloads again); then the KTAP in $OUT/dmesg.txt is parsed by
# scripts/kunit/ktap.py (strict; authoritative) and, as a cross-check, by the
# kernel's tools/testing/kunit/kunit.py parse on the normalised KTAP.
# Output: "ok|not ok|skip suite.case" lines, then "kunit: N passed, N failed".
# Exit: 0 only if vm-run succeeded (no KASAN/lockdep/kmemleak/WARN/...),
# at least one case ran, no case failed and the log is well formed.
#
# Options:
#   --module NAME   module to load (default shca)
#   --ko-dir DIR    where the .ko files are (default build/test); vm-run
#                   installs every *.ko found there
#   --no-build      don't run `make module` (use the .ko already in --ko-dir)
#   --no-unload     keep the module loaded (skip modprobe -r)
#   --out DIR       vm-run output dir (default <ko-dir>/kunit)
#   --timeout SECS  vm-run timeout (default 900)
#   --parse DIR     no build and no VM: parse DIR/kunit-dmesg.txt, the log
#                   that scripts/e2e/run.sh's "kunit" step saved in the test
#                   kernel's e2e boot (scripts/check.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$here/.." && pwd -P)

module=shca ko_dir=$REPO/build/test build=1 unload=1 out="" timeout=900 parse=""
while [ $# -gt 0 ]; do
	case "$1" in
	--module) module=${2:?}; shift 2 ;;
	--ko-dir) ko_dir=${2:?}; shift 2 ;;
	--no-build) build=0; shift ;;
	--no-unload) unload=0; shift ;;
	--out) out=${2:?}; shift 2 ;;
	--timeout) timeout=${2:?}; shift 2 ;;
	--parse) parse=${2:?}; shift 2 ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "run-kunit: unknown option $1" >&2; exit 2 ;;
	esac
done
say() { echo "run-kunit: $*" >&2; }

# boot_and_load: steps 1 to 3 (test kernel, module, VM); sets out and vmrc.
boot_and_load() {
	mkdir -p "$ko_dir"
	ko_dir=$(cd "$ko_dir" && pwd -P)
	out=${out:-$ko_dir/kunit}

	# 1. test kernel (cached after the first build)
	"$here/testkernel.sh" build
	eval "$("$here/kernel-info.sh" test)"
	say "test kernel $KVER, KDIR=$KDIR"
	grep -q '^CONFIG_KUNIT=y' "$KDIR/.config" || { say "test kernel lacks CONFIG_KUNIT=y"; exit 1; }

	# 2. module
	if [ "$build" = 1 ]; then
		rel=${ko_dir#"$REPO"/}
		say "make module KDIR=$KDIR BUILD=$rel"
		make -C "$REPO" module KDIR="$KDIR" BUILD="$rel"
	fi
	[ -f "$ko_dir/$module.ko" ] || { say "$ko_dir/$module.ko not found"; exit 1; }
	if ! grep -qa 'kunit' "$ko_dir/$module.ko"; then
		say "warning: $module.ko references no kunit symbols (built without CONFIG_KUNIT?)"
	fi

	# 3. VM
	inner=("$here/kunit/vm-inner.sh" "$module")
	[ "$unload" = 1 ] || inner+=(--no-unload)
	mkdir -p "$out"
	rm -f "$out/ktap.txt" "$out/kunit-results.txt" "$out/kunit-py.txt"
	set +e
	SHCA_KO_DIR=$ko_dir "$here/vm-run" --kernel test --no-topology --timeout "$timeout" \
		--out "$out" -- "${inner[@]}"
	vmrc=$?
	set -e
}

if [ -n "$parse" ]; then
	out=$(cd "$parse" && pwd -P)
	eval "$("$here/kernel-info.sh" test)"
	vmrc=0
	log=$out/kunit-dmesg.txt
	[ -s "$log" ] || { say "$log missing"; exit 1; }
else
	boot_and_load
	log=
fi

# 4. parse
if [ -n "$log" ]; then
	say "parsing $log"
elif [ -s "$out/dmesg.txt" ]; then
	log=$out/dmesg.txt
else
	# no dmesg (VM crashed before collecting): fall back to the serial log
	log=$out/serial.log
	say "no dmesg.txt, parsing $log"
fi
echo "---- KUnit results ($log) ----"
set +e
python3 "$here/kunit/ktap.py" --ktap "$out/ktap.txt" "$log" | tee "$out/kunit-results.txt"
prc=${PIPESTATUS[0]}
set -e

# 5. cross-check with the kernel's own KTAP parser
xrc=0
src=$(readlink -f "$KDIR/source" 2>/dev/null || true)   # O= trees link their source
kunitpy=$src/tools/testing/kunit/kunit.py
if [ -s "$out/ktap.txt" ] && [ -f "$kunitpy" ]; then
	kprc=0
	python3 "$kunitpy" parse <"$out/ktap.txt" >"$out/kunit-py.txt" 2>&1 || kprc=$?
	kpsum=$(grep -a 'Testing complete' "$out/kunit-py.txt" | sed 's/^\[[0-9:]*\] //' || true)
	if { [ "$kprc" = 0 ] && [ "$prc" != 0 ]; } || { [ "$kprc" != 0 ] && [ "$prc" = 0 ]; }; then
		say "kunit.py parse disagrees (exit $kprc: ${kpsum:-no summary}); see $out/kunit-py.txt"
		xrc=1
	else
		say "kunit.py parse agrees (${kpsum:-no summary})"
	fi
else
	say "kunit.py cross-check skipped (no KTAP or no $kunitpy)"
fi

if [ "$vmrc" != 0 ]; then
	say "FAILED: vm-run exited $vmrc (kernel problem, module load failure or timeout; see $out)"
	exit 1
fi
[ "$prc" = 0 ] && [ "$xrc" = 0 ] || { say "FAILED (see $out)"; exit 1; }
say "all KUnit cases passed"
