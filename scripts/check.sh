#!/bin/bash
# make check (tier "check", what CI runs) and make check-full (tier "full",
# SHCA_TIER=full: the full matrix of scripts/e2e/matrix at soak sizes).
#
# Host stages first, side by side: the two stock-kernel module builds
# (W=1, sparse on every source: C=2), the provider and its host tests and
# the in-VM test programs (checkpatch beside them and the boots, at a low
# priority: nothing waits for it).  Then one VM boot per kernel runs the
# steps scripts/e2e/matrix lists for it, the boots at once: 6.1 (the
# demo among them) and 6.12, joined by a wire for their first step,
# twohost (the two kernels as two hosts; vm-run's self-test, which runs
# only when its inputs changed, beside them; tier full then boots 6.12 once more on a CPU
# model with PCLMULQDQ, 6.12-pclmul, where the ICRC takes the crypto
# API's accelerated CRC-32), and three boots of the KUnit/KASAN
# test kernel side by side (debug: KUnit first, debug2 and debug3, each
# with a share of the suites that pay off under KASAN, lockdep, kmemleak
# and UBSAN),
# whose lane starts with the host stages and first builds that kernel if
# it is not cached.  A fourth lane,
# also started with the host stages, boots Debian 13's own root (deb13:
# trixie's kernel and rdma-core, shca.ko from DKMS there; the root and the
# DKMS build are cached; on the PCLMULQDQ CPU model, so that its interop
# is the accelerated ICRC's) once the provider is built; a fifth, when their
# keys changed, runs the DKMS check and tests the Debian packages on
# Debian 12 and 13 (dkms_key, pkg_key: the packaging and the set of
# source files, not an edit inside one).
#
# Every stage and every in-VM case counts as one test; case names carry
# their stage ("e2e-6.12: srq: ...").  A planned suite that never ran
# (the VM died, hung or the deadline came) counts as failed.  Each stage's
# and suite's wall time is printed, then the total and the closing line
# "N passed, N failed, N skipped".  Logs go to build/check/ (build/check-full/).
#
# Environment:
#   SHCA_CHECK_ONLY="stage ..."  run a subset (e.g. "e2e-6.1"; VM stages
#                                need their module build stage too)
#   SHCA_CHECK_DEADLINE=SECS     overall deadline (default 4800, below CI's
#                                5400; 0 = none, the default for check-full)
#   SHCA_E2E_SUITES="..."        override the matrix's suites (ad hoc runs)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
TIER=${SHCA_TIER:-check}
case "$TIER" in
check) LOGS=$top/build/check; deadline=${SHCA_CHECK_DEADLINE:-4800} vm_tmo=4200 ;;
full) LOGS=$top/build/check-full; deadline=${SHCA_CHECK_DEADLINE:-0} vm_tmo=14400 ;;
*) echo "check.sh: SHCA_TIER must be check or full" >&2; exit 2 ;;
esac
CACHE=${SHCA_CACHE:-$HOME/.cache/shca}
rm -rf "$LOGS"
mkdir -p "$LOGS" "$CACHE/stamps"
T0=$SECONDS
PASS=0
FAIL=0
SKIP=0
FAILED_NAMES=()
TIMES=()

pass() { PASS=$((PASS + 1)); echo "ok - $1"; }
fail() { FAIL=$((FAIL + 1)); FAILED_NAMES+=("$1"); echo "not ok - $1"; }
# took NAME SECS: a stage's wall time, and its CPU time where it has one.
took() {
	local c
	c=$(cpu_secs "$1")
	TIMES+=("$(printf '%6d s %10s  %s' "$2" "${c:+$c CPU s}" "$1")")
	echo "# time: $1 $2 s${c:+, $c CPU s}"
}

# cpu_mark NAME: the CPU time (user and system) of the finished children
# of this (sub)shell, bash's `times`, into $LOGS/NAME.cpu.  The subshell
# that ran a stage calls it last: a VM boot's is its QEMU's, a build's its
# compilers'.  Redirected, not piped: a pipe would run `times` in a fork
# that has no children.
cpu_mark() { times >"$LOGS/$1.cpu"; }
# cpu_secs NAME: those seconds, rounded (nothing if NAME has no mark).
cpu_secs() {
	[ -s "$LOGS/$1.cpu" ] || return 0
	tail -n 1 "$LOGS/$1.cpu" | awk '{ t = 0
		for (i = 1; i <= 2; i++) { split($i, a, "m"); t += a[1] * 60 + a[2] }
		printf "%d", t + 0.5 }'
}

want() {
	[ -z "${SHCA_CHECK_ONLY:-}" ] && return 0
	case " $SHCA_CHECK_ONLY " in *" $1 "*) return 0 ;; esac
	return 1
}

# planned STAGE KERNEL: want STAGE, and the tier's matrix has a row for
# KERNEL (a kernel without one is not booted).
planned() {
	want "$1" && [ -n "$(plan_of "$2")" ]
}

# The test kernel's boots: the matrix's rows debug, debug2 and debug3, each
# with its share of the debug suites (KUnit first, in debug).
DEBUG_BOOTS="debug debug2 debug3"

# want_debug: a boot of the test kernel (any share of its suites) is to run.
want_debug() {
	local k
	for k in $DEBUG_BOOTS; do
		want "e2e-$k" && return 0
	done
	return 1
}

# left: seconds before the deadline (a large number when there is none).
left() {
	[ "$deadline" -gt 0 ] || { echo 999999; return; }
	echo $((deadline - (SECONDS - T0)))
}

# report NAME RC SECS: one pass/fail line for a host stage and its log tail.
report() {
	local name=$1 rc=$2
	took "$name" "$3"
	if [ "$rc" = 0 ]; then
		pass "check: $name"
	else
		tail -n 60 "$LOGS/$name.log" | sed 's/^/#   /'
		fail "check: $name (exit $rc)"
	fi
}

# stage NAME CMD...: run a host stage now; output in $LOGS/NAME.log.
stage() {
	local name=$1 start rc
	shift
	want "$name" || return 0
	if [ "$(left)" -lt 60 ]; then
		fail "check: $name (not run: past the deadline)"
		return 1
	fi
	start=$SECONDS
	echo "# stage $name: $*"
	( "$@"; rc=$?; cpu_mark "$name"; exit $rc ) >"$LOGS/$name.log" 2>&1
	rc=$?
	report "$name" $rc $((SECONDS - start))
	return $rc
}

# bg NAME CMD...: start a host stage in the background (lane_run);
# `collect` waits for those started and reports them.
BG=()
bg() {
	want "$1" || return 0
	echo "# stage $1 (background): ${*:2}"
	lane_run "$@" &
	BG+=("$1")
}
collect() {
	local name
	for name in "${BG[@]}"; do
		wait_rc_file "$name"
		report_rc "$name"
	done
	BG=()
}
wait_rc_file() {
	while [ ! -s "$LOGS/$1.rc" ]; do
		wait -n 2>/dev/null || sleep 1
	done
}

# A stamped stage runs only when KEY, a hash of its inputs, changed since
# it last passed.  due NAME KEY: true when it must run now (else it passes
# at once); stamp_report NAME: report it from a lane's result and stamp it.
declare -A STAMP_KEY
due() {
	want "$1" || return 1
	if [ "$TIER" = check ] && [ -f "$CACHE/stamps/$1-$2" ]; then
		pass "check: $1 (inputs unchanged since it passed, key $2)"
		return 1
	fi
	STAMP_KEY[$1]=$2
}
stamp_report() {
	[ -n "${STAMP_KEY[$1]:-}" ] || return 0
	report_rc "$1"
	[ "$(cut -d' ' -f1 "$LOGS/$1.rc" 2>/dev/null)" = 0 ] &&
		touch "$CACHE/stamps/$1-${STAMP_KEY[$1]}"
}

# files_of PATH...: the files in trees, NUL-separated, in a fixed order.
files_of() {
	find "$@" -type f ! -path '*/build/*' -print0 2>/dev/null | LC_ALL=C sort -z
}

# names_of PATH...: one short hash over the names of the files in trees
# (a file added, removed or renamed changes it; an edit does not).
names_of() {
	files_of "$@" | sha256sum | cut -c1-16
}

# hash_of PATH...: one short hash over the contents of files and trees.
hash_of() {
	files_of "$@" | xargs -0 sha256sum | sha256sum | cut -c1-16
}

# count_cases LOG PREFIX: add the case lines of LOG: "ok - NAME" /
# "not ok - NAME" / "ok - NAME # SKIP" (e2e suites) and "ok NAME" /
# "not ok NAME" / "skip NAME" (run-kunit.sh), each named PREFIX NAME.
# Kernel console lines carry a timestamp and never match.
count_cases() {
	local line
	while IFS= read -r line; do
		case "$line" in
		"ok - "*" # SKIP"*) SKIP=$((SKIP + 1)); echo "skip - $2${line#ok - }" ;;
		"ok - "*) pass "$2${line#ok - }" ;;
		"not ok - "*) fail "$2${line#not ok - }" ;;
		"ok "*) pass "$2${line#ok }" ;;
		"not ok "*) fail "$2${line#not ok }" ;;
		"skip "*) SKIP=$((SKIP + 1)); echo "skip - $2${line#skip }" ;;
		esac
	done < <(tr -d '\r' <"$1")
}

# plan_of KERNEL: the matrix's steps for KERNEL in this tier.
plan_of() {
	if [ -n "${SHCA_E2E_SUITES:-}" ]; then
		echo "$SHCA_E2E_SUITES"
		return
	fi
	awk -v t="$TIER" -v k="$1" '$1 == t && $2 == k { $1 = $2 = ""; print; exit }' \
		scripts/e2e/matrix
}

# why LOG [OUT]: the lines that say why a VM stage failed, repeated last
# where a truncated log still shows them: the kernel's report (first
# lines, with the step that was running), the first report's call trace
# (from OUT, the boot's vm-run results: vm-run's own tail of the log may
# have long passed it), the failing cases and vm-run's verdict.
why() {
	{
		sed -n '/^---- kernel problem lines/,/^----/p' "$1" | grep -v '^----' | head -n 12
		[ -z "${2:-}" ] || first_report "$1" "$2"
		sed -n '/^---- kmemleak.txt/,/^----/p' "$1" | grep -v '^----' | head -n 12
		grep -a -E '^not ok - |^vm-run: FAILED|^# e2e: failed suites' "$1" | tail -n 20
	} | sed 's/^/# why: /'
}

# first_report LOG OUT: the boot's first kernel report whole, from the
# first of vm-run's kernel problem lines in LOG (vm-run decides what is a
# problem) found in its kernel log (OUT/dmesg.txt, else its serial
# console), and the line before, to its end marker: at most 37 lines.
first_report() {
	local f=$2/dmesg.txt first
	first=$(sed -n '/^---- kernel problem lines/{n;p;q}' "$1" | sed 's/^\[during [^]]*\] //')
	[ -n "$first" ] || return 0
	[ -s "$f" ] || f=$2/serial.log
	[ -s "$f" ] || return 0
	tr -d '\r' <"$f" | awk -v first="$first" '
		!on && index($0, first) { on = 1; if (prev != "") print prev }	# DEBUG_LOCKS_WARN_ON(...) and the like
		on { print; if (++n >= 36 || /---\[ end trace|^[^ ]*\[ *[0-9.]+\] =+$/ && n > 3) exit }
		{ prev = $0 }'
}

# vm_boot NAME KERNEL TIMEOUT: one VM boot running KERNEL's steps of the
# matrix; output in $LOGS/NAME.log, "RC SECS" in $LOGS/NAME.rc (RC "late"
# when the deadline left no time to start it).  vm_report reads both.
vm_boot() {
	local name=$1 kernel=$2 tmo=$3 flavour=$2 cpu= start rc append= smp=1
	case "$kernel" in debug | debug2 | debug3) flavour='test' ;; esac
	# One vCPU a boot, but for 6.1's and debug2's: the boots share two
	# host cores, a third of a core each, and a guest's second vCPU only
	# cost more there (IPIs and spinning on a lock whose holder's vCPU
	# the host was not running: a suite took 22-25% more host CPU time
	# with two).  Two vCPUs where they are needed: debug2's teardown,
	# kill and netdev races run truly in parallel under KASAN and
	# lockdep; 6.1's events gets a second completion vector and its wire
	# cases packets from two CPUs (reordered on the way, held and
	# released by the responder).  make check-full's soak boots keep two.
	case "$TIER-$kernel" in full-* | *-6.1 | *-debug2) smp=2 ;; esac
	# No tsc=reliable: a guest's TSC is the host's, but its frequency is
	# calibrated at boot, against an emulated timer, on a loaded host;
	# with the clocksource watchdog off, a bad calibration is never
	# caught.  CI's 6.12 boot of 2026-11-30 with it read a boot time of
	# 39000 s half an hour in: its clock ran 20 times fast, every
	# timeout in it expired early, and that run failed 53 cases (6.1's
	# two-host cases with it, whose peer it was).  The
	# watchdog falls back to the HPET instead (slower reads, right time).
	# vm_report compares each guest's clock with the host's.
	# The test kernel runs a module's KUnit suites at every load of it
	# (14 s of a quiet debug boot, more beside the others); a boot
	# without the kunit step turns that off (kunit.enable, read at boot).
	[ "$flavour" != test ] || [[ " $(plan_of "$kernel") " == *" kunit "* ]] ||
		append+=" kunit.enable=0"
	# kmemleak hunts in one boot of the check tier, debug2, whose steps
	# are where objects are born and die in bulk: the device's lifecycle,
	# every object type torn down under traffic (a process killed, its
	# netdev deleted, rmmod), the verbs fuzzer with every allocation of
	# every create path failed in turn; the other two boot with
	# kmemleak=off.  Its bookkeeping of every allocation (a stack
	# trace each) and its two closing scans were half of a debug boot's
	# CPU time: the mw step's boot took 172 CPU seconds with it and 88
	# without (2026-11-30; lockdep's proving, by contrast, 3).  KASAN,
	# lockdep and UBSAN stay on in all three; tier full's one debug boot
	# keeps kmemleak for every suite.
	local kml=()
	if [ "$flavour" = test ] && [ "$TIER" = check ] && [ "$kernel" != debug2 ]; then
		append+=" kmemleak=off"
		kml=(SHCA_VM_KMEMLEAK_SCANS=0)
	fi
	# The test kernel's boots get 2 GiB, not vm-run's 4: kmemleak's scans
	# (two after the steps) walk every page frame, and took 83 s at 4 GiB
	# against 46 s at 2 GiB (2026-11-30); run.sh prints the memory left
	# after each step.
	local mem=()
	[ "$flavour" != test ] || mem=(--mem 2048)
	# KERNEL-pclmul: KERNEL on a CPU model with PCLMULQDQ (the ICRC's
	# accelerated CRC-32; QEMU's default qemu64 has none).  Debian 13's
	# boot has it too: its interop is the check tier's accelerated one,
	# without a boot of its own.
	case "$kernel" in
	*-pclmul) flavour=${kernel%-pclmul} cpu=Westmere ;;
	deb13) cpu=Westmere ;;
	esac
	# a Debian root's boot sees host dirs only as shares: the rxe baselines
	local share=()
	case "$kernel" in deb12 | deb13) mkdir -p "$CACHE/pyverbs"; share=(--share "$CACHE/pyverbs") ;; esac
	if [ "$(left)" -lt 120 ]; then
		echo "late 0" >"$LOGS/$name.rc"
		return
	fi
	[ "$tmo" -lt "$(($(left) - 60))" ] || tmo=$(($(left) - 60))
	echo "# stage $name: kernel $flavour, timeout $tmo s, steps: $(plan_of "$kernel")"
	# the other host of the two-host step, if this boot has one
	local link=() pair=()
	if [ -n "${PAIR_LINK[$kernel]:-}" ]; then
		link=(--link "${PAIR_LINK[$kernel]}")
		read -r -a pair <<<"${PAIR_ENV[$kernel]}"
	fi
	start=$SECONDS
	( env SHCA_E2E_SUITES="$(plan_of "$kernel")" SHCA_PYVERBS_CACHE="$CACHE/pyverbs" "${pair[@]}" "${kml[@]}" \
		SHCA_VM_CPU="$cpu" SHCA_VM_APPEND="$append" SHCA_VM_SMP="$smp" scripts/vm-run --kernel "$flavour" \
		"${share[@]}" "${link[@]}" "${mem[@]}" --timeout "$tmo" --out "$LOGS/vm-$name" \
		-- scripts/e2e/run.sh
	  rc=$?; cpu_mark "$name"; exit $rc ) >"$LOGS/$name.log" 2>&1
	rc=$?
	echo "$rc $((SECONDS - start))" >"$LOGS/$name.rc"
}

# clock_report NAME DMESG SECS: the guest's clock against the host's: the
# last kernel message of a boot that lasted SECS seconds on the host
# cannot be stamped much later than SECS (a guest whose TSC was
# calibrated wrong runs fast, and its timeouts expire early). A few
# percent is calibration noise under TCG (a Debian 13 boot in CI stamped
# 1064 s in 998, 6.6% fast) and shortens no timeout that matters; the
# failure this guards against ran 20 times fast. On a new machine (AMD
# EPYC) a debug boot stamped 1427 s in 994 (43% fast) with every one of
# its cases passing. So up to twice the boot's length plus a minute is
# allowed: what made timeouts expire early was an order of magnitude.
clock_report() {
	local g
	g=$(sed -n 's/^\[ *\([0-9]*\)\.[0-9]*\].*/\1/p' "$2" 2>/dev/null | tail -n 1)
	[ -n "$g" ] || return 0
	if [ "$g" -le $((2 * $3 + 60)) ]; then
		pass "check: $1: the guest's clock kept the host's time (${g} s of ${3} s)"
	else
		fail "check: $1: the guest's clock ran fast: its last message at ${g} s, the boot took ${3} s"
	fi
}

# vm_report NAME KERNEL: count a VM stage's cases, each planned step that
# never finished as a failure, and the VM's own verdict (kernel log clean,
# command status) as one more case.
vm_report() {
	local name=$1 kernel=$2 log=$LOGS/$1.log out=$LOGS/vm-$1 rc secs s
	planned "$name" "$kernel" || return 0
	read -r rc secs 2>/dev/null <"$LOGS/$name.rc" || rc=none secs=0
	if [ "$rc" = late ] || [ "$rc" = none ]; then
		for s in $(plan_of "$kernel"); do
			fail "$name: $s: did not run (${rc/late/past the deadline})"
		done
		fail "check: $name (not run: ${rc/late/past the deadline})"
		return
	fi
	# The command's own output (console.log) has no kernel console lines
	# in the middle of its own; the serial log is the fallback.
	local cases=$log
	[ -s "$out/console.log" ] && cases=$out/console.log
	count_cases "$cases" "$name: "
	for s in $(plan_of "$kernel"); do
		grep -q "^# suite $s took " "$cases" ||
			fail "$name: $s: did not run (the VM died or hung before it finished; see $log)"
	done
	grep -a '^# suite .* took ' "$cases" | sed "s/^# suite /# time: $name: /"
	took "$name" "$secs"
	clock_report "$name" "$out/dmesg.txt" "$secs"
	# The rxe baselines of the pyverbs suite, for the next run.
	if [ -d "$out/pyverbs-baseline" ]; then
		mkdir -p "$CACHE/pyverbs"
		cp "$out"/pyverbs-baseline/* "$CACHE/pyverbs/" 2>/dev/null
	fi
	if [ "$rc" = 0 ]; then
		pass "check: $name"
	else
		grep -v -E '^(ok|not ok) - ' "$log" | tail -n 150 | sed 's/^/#   /'
		why "$log" "$out"
		fail "check: $name (exit $rc)"
	fi
}

# pair_boots KA KB: when the boots of kernels KA and KB both run and both
# plan the twohost step, join them with a wire (vm-run --link: QEMU's UDP
# socket netdev on two free ports of 127.0.0.1), KA as side a
# (10.78.0.1, fd78::1) and KB as side b (10.78.0.2, fd78::2):
# PAIR_LINK[K] and PAIR_ENV[K] for vm_boot.
declare -A PAIR_LINK PAIR_ENV
pair_boots() {
	local ka=$1 kb=$2 pa pb
	planned "e2e-$ka" "$ka" && planned "e2e-$kb" "$kb" || return 0
	[[ " $(plan_of "$ka") " == *" twohost "* ]] && [[ " $(plan_of "$kb") " == *" twohost "* ]] ||
		return 0
	read -r pa pb < <(python3 -c '
import socket
s = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2)]
for x in s:
    x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))') || return 0
	PAIR_LINK[$ka]="udp=127.0.0.1:$pb,localaddr=127.0.0.1:$pa,ip4=10.78.0.1/24,ip6=fd78::1/64,mac=52:54:00:78:00:01"
	PAIR_LINK[$kb]="udp=127.0.0.1:$pa,localaddr=127.0.0.1:$pb,ip4=10.78.0.2/24,ip6=fd78::2/64,mac=52:54:00:78:00:02"
	PAIR_ENV[$ka]="SHCA_PAIR_ROLE=a SHCA_PAIR_PEER4=10.78.0.2 SHCA_PAIR_PEER6=fd78::2"
	PAIR_ENV[$kb]="SHCA_PAIR_ROLE=b SHCA_PAIR_PEER4=10.78.0.1 SHCA_PAIR_PEER6=fd78::1"
	echo "# two hosts: $ka (a, udp port $pa) <-> $kb (b, udp port $pb)"
}

kdir() { (eval "$(scripts/kernel-info.sh "$1")" && echo "$KDIR"); }

# build_module FLAVOUR: shca.ko for a stock kernel with W=1 and sparse on
# every source (C=2); any compiler or sparse finding on a source file
# ("file.c:LINE:COL: warning: ...") fails the stage.
build_module() {
	make -j"$(nproc)" module KDIR="$(kdir "$1")" BUILD="build/$1" C=2 2>&1 |
		tee "$LOGS/build-$1.out"
	[ "${PIPESTATUS[0]}" = 0 ] || return 1
	! grep -E '\.[ch]:[0-9]+(:[0-9]+)?: (warning|error):' "$LOGS/build-$1.out"
}

# The provider built in rdma-core's tree for each supported release, then
# each build's host tests (test_dlopen also checks that each build refuses
# the other release's libibverbs).
provider() {
	local v
	for v in $(scripts/rdma-core.sh versions); do
		scripts/rdma-core.sh build "$v" || return
	done
	for v in $(scripts/rdma-core.sh versions); do
		scripts/rdma-core.sh test "$v" || return
	done
	scripts/rdma-core.sh compare 44.0 || return
	make provider
}

# The DKMS check and the package tests prove the packaging: that DKMS
# builds whatever the tree ships (dkms.conf, Kbuild, the Makefile), that
# the packages install, build, load and serve, and come off again.  They
# rerun when the packaging or the set of source files changes, not for an
# edit inside a source file: every run compiles the sources for both stock
# kernels and the test kernel (warnings as errors), builds the provider
# against both rdma-core releases, and boots them, Debian 13's module
# built by DKMS there (dkms-deb13, keyed on the module's contents); an
# edit reaches nothing of the packaging that those miss.  make check-full
# runs them whatever their keys.
dkms_key() {
	echo "$(names_of drivers kunit include)$(hash_of dkms.conf Kbuild Makefile scripts/dkms-check.sh)-$(kdir 6.1 | md5sum | cut -c1-8)"
}
selftest_key() {
	hash_of scripts/vm-run scripts/vm scripts/kernel-info.sh scripts/root-lib.sh
}

# The VM boots run at once, each in its own lane: a TCG guest keeps less
# than one core busy on average (it mostly waits on timers, the network
# and its own processes), so they share the machine's two cores.  The
# test kernel's lane first builds that kernel if it is not cached, then
# its module, then boots it three times at once, each boot with a share of the
# debug suites (the matrix's debug, debug2 and debug3 rows; KUnit first in
# debug): the test kernel's suites are the longest, and on a cold machine
# they start last, once the stock boots are nearly done.  The build is
# the cold run's critical path: it runs ahead of the stock boots (nice
# -5; at a lower priority than theirs it got almost no CPU beside them).
lane_debug() {
	if want testkernel || want_debug; then
		# bounded, so a slow build cannot carry the run past the deadline
		local tmo=$(($(left) - 600))
		[ "$tmo" -gt 60 ] || tmo=60
		lane_run testkernel timeout "$tmo" nice -n -5 scripts/testkernel.sh build ||
			return 0
	fi
	want_debug || return 0
	# the module too runs ahead of the host stages beside it: the debug
	# boots it starts are the longest lanes
	lane_run build-test nice -n -5 make -j"$(nproc)" module KDIR="$(kdir test)" BUILD=build/test ||
		return 0
	# the boots run the test programs and the provider
	local k
	for k in progs provider; do
		want "$k" && wait_rc_file "$k"
	done
	for k in $DEBUG_BOOTS; do
		# a row the tier does not have is no boot (tier full: debug only)
		planned "e2e-$k" "$k" && vm_boot "e2e-$k" "$k" "$vm_tmo" &
	done
	wait
}

# The Debian 13 lane, started with the host stages: trixie's own root
# (scripts/debian-root.sh: built once, then cached until that script
# changes), shca.ko built in it by DKMS with trixie's gcc (skipped while
# the module sources are unchanged), then, once the provider stage is
# done, one boot of that root with its own kernel (6.12) and rdma-core.
lane_deb13() {
	if want e2e-deb13 && lane_run deb13-root scripts/debian-root.sh trixie &&
		lane_run dkms-deb13 scripts/dkms-root.sh trixie; then
		want provider && wait_rc_file provider
		vm_boot e2e-deb13 deb13 "$vm_tmo"
	fi
}

# The packaging lane, started with the host stages too: the checks that
# are due (their keys), the DKMS check first, then the Debian packages
# (scripts/deb-build.sh, once the provider stage has built both rdma-core
# trees), installed with apt into a throwaway copy of each release's root
# and used in a boot of that copy (scripts/pkg-install-test.sh; the
# trixie root is the Debian 13 lane's, scripts/debian-root.sh waits for
# the lane that builds it).  On a warm machine nothing is due and the
# lane is empty; on a cold one it runs beside the Debian 13 lane rather
# than after it (the two end to end took an hour there).
lane_pkg() {
	local r
	[ "$DKMS_DUE" = 0 ] || lane_run dkms scripts/dkms-check.sh 6.1
	[ -n "$PKG_RELEASES" ] || return 0
	want provider && wait_rc_file provider
	lane_run debs scripts/deb-build.sh || return 0
	# One vCPU (vm-run's default is two): pkg.sh needs no second, and a
	# guest kernel's live code patching (text_poke_bp: int3, then the
	# new bytes) can race another vCPU's execution under TCG: the cold
	# run of 2026-12-01 lost its Debian 13 package boot to "Oops: int3"
	# in inet_ehashfn, as net_get_random_once() flipped its static key
	# beside an ibv_rc_pingpong's TCP exchange.
	for r in $PKG_RELEASES; do
		SHCA_VM_SMP=1 lane_run "pkg-$r" scripts/pkg-install-test.sh "$r"
	done
}
pkg_key() {
	echo "$(names_of drivers include kunit providers)$(hash_of packaging dkms.conf \
		Kbuild Makefile providers/shca/CMakeLists.txt providers/shca/Makefile \
		providers/shca/shca.driver scripts/deb-build.sh \
		scripts/pkg-install-test.sh scripts/e2e/pkg.sh scripts/e2e/lib.sh \
		scripts/rdma-core.sh scripts/debian-root.sh scripts/vm-run scripts/vm \
		scripts/kernel-info.sh scripts/root-lib.sh)"
}

# lane_run NAME CMD...: run a stage inside a lane: output in $LOGS/NAME.log,
# "RC SECS" in $LOGS/NAME.rc for report_rc.
lane_run() {
	local name=$1 start=$SECONDS
	shift
	( "$@"; rc=$?; cpu_mark "$name"; exit $rc ) >"$LOGS/$name.log" 2>&1
	echo "$? $((SECONDS - start))" >"$LOGS/$name.rc"
	[ "$(cut -d' ' -f1 "$LOGS/$name.rc")" = 0 ]
}

# report_rc NAME: report a stage that a lane ran, from $LOGS/NAME.rc.
report_rc() {
	local rc secs
	want "$1" || return 0
	if read -r rc secs 2>/dev/null <"$LOGS/$1.rc"; then
		report "$1" "$rc" "$secs"
	else
		fail "check: $1 (not run)"
	fi
}

run_all() {
	local checkpatch_pid=
	stage deps scripts/deps.sh
	stage readme-check scripts/readme-check.sh
	stage comment-check scripts/comment-check.sh
	bg build-6.1 build_module 6.1
	bg build-6.12 build_module 6.12
	bg provider provider
	bg progs make -j"$(nproc)" progs
	# checkpatch gates nothing that follows: it runs beside the boots, at
	# a low priority, and is reported at the end
	if want checkpatch; then
		lane_run checkpatch nice -n 10 make checkpatch &
		checkpatch_pid=$!
	fi
	# the test kernel may build during the host stages too
	lane_debug >"$LOGS/lane-debug.out" 2>&1 &
	local lanes=($!)
	# the package tests run only when their inputs changed (pkg_key)
	local r key
	key=$(pkg_key)
	PKG_RELEASES=
	for r in bookworm trixie; do
		due "pkg-$r" "$key" && PKG_RELEASES+=" $r"
	done
	want debs || PKG_RELEASES=
	DKMS_DUE=0
	due dkms "$(dkms_key)" && DKMS_DUE=1
	lane_deb13 >"$LOGS/lane-deb13.out" 2>&1 &
	lanes+=($!)
	lane_pkg >"$LOGS/lane-pkg.out" 2>&1 &
	lanes+=($!)
	collect
	# vm-run's self-test (three short boots) runs only when its inputs
	# changed, in a lane of its own.
	if due vm-selftest "$(selftest_key)"; then
		lane_run vm-selftest scripts/vm-run --selftest --kernel 6.1 >"$LOGS/lane-selftest.out" 2>&1 &
		lanes+=($!)
	fi
	# The two stock boots start together: their first step, twohost, is
	# one test across a wire between them.
	pair_boots 6.1 6.12
	if want e2e-6.1; then
		vm_boot e2e-6.1 6.1 "$vm_tmo" >"$LOGS/lane-6.1.out" 2>&1 &
		lanes+=($!)
	fi
	{
		want e2e-6.12 && vm_boot e2e-6.12 6.12 "$vm_tmo"
		planned e2e-6.12-pclmul 6.12-pclmul && vm_boot e2e-6.12-pclmul 6.12-pclmul "$vm_tmo"
	} >"$LOGS/lane-6.12.out" 2>&1 &
	lanes+=($!)
	echo "# waiting for the VM lanes"
	wait "${lanes[@]}"
	if [ -n "$checkpatch_pid" ]; then
		wait "$checkpatch_pid"
		report_rc checkpatch
	fi
	cat "$LOGS"/lane-*.out
	stamp_report dkms
	stamp_report vm-selftest
	vm_report e2e-6.1 6.1
	vm_report e2e-6.12 6.12
	vm_report e2e-6.12-pclmul 6.12-pclmul
	if want e2e-deb13; then
		report_rc deb13-root
		[ -f "$LOGS/deb13-root.rc" ] && [ "$(cut -d' ' -f1 "$LOGS/deb13-root.rc")" = 0 ] &&
			report_rc dkms-deb13
		vm_report e2e-deb13 deb13
	fi
	[ -n "$PKG_RELEASES" ] && report_rc debs
	for r in $PKG_RELEASES; do
		count_cases "$LOGS/pkg-$r.log" "$r: "
		stamp_report "pkg-$r"
	done
	if want testkernel || want_debug; then
		report_rc testkernel
	fi
	if want_debug; then
		report_rc build-test
	fi
	for k in debug2 debug3; do
		vm_report "e2e-$k" "$k"
	done
	if want e2e-debug; then
		vm_report e2e-debug debug
		if [ -f "$LOGS/vm-e2e-debug/kunit-dmesg.txt" ]; then
			scripts/run-kunit.sh --parse "$LOGS/vm-e2e-debug" >"$LOGS/kunit.log" 2>&1
			count_cases "$LOGS/kunit.log" "kunit: "
			grep -q '^ok ' "$LOGS/kunit.log" ||
				fail "kunit: no KUnit case ran (see $LOGS/kunit.log)"
		elif [[ " $(plan_of debug) " == *" kunit "* ]]; then
			fail "kunit: no KUnit log from the test kernel's boot"
		fi
	fi
}

run_all
grep -h -E '^# (pyverbs|fuzz)\(' "$LOGS"/e2e-*.log 2>/dev/null | sed 's/^# /# counts: /'
echo "# times (tier $TIER):"
printf '#   %s\n' "${TIMES[@]}"
cpu_mark total
printf '#   %6d s %10s  total\n' $((SECONDS - T0)) "$(cpu_secs total) CPU s"
if [ $FAIL -gt 0 ]; then
	echo "# failed:"
	printf '#   %s\n' "${FAILED_NAMES[@]}"
fi
echo "$PASS passed, $FAIL failed, $SKIP skipped"
[ $FAIL -eq 0 ]
