#!/bin/bash
# In-VM end-to-end driver: the steps of one kernel's VM boot, in order.
# Invoked by scripts/check.sh through scripts/vm-run.
#
#   SHCA_E2E_SUITES="kunit lifecycle ud ..."  the steps to run (check.sh sets
#       it from scripts/e2e/matrix); without it, the matrix's line for this
#       kernel and tier SHCA_E2E_TIER (check or full; default check).
#
# A step is a suite scripts/e2e/<name>.sh (written NAME:ARG,ARG... the
# suite gets the ARGs as its arguments, e.g. "rc:ipv4"), or "kunit" (load and unload
# shca.ko, whose KUnit suites run at load; the kernel log up to then is
# saved as $SHCA_OUT/kunit-dmesg.txt for the host to parse) or "demo"
# (scripts/demo.sh).  Before each step a marker goes to the kernel log, so
# a kernel report can be traced to the step that caused it.  Prints
# "# plan: ..." first and "# suite NAME took N s (exit RC)" after each step;
# a step that exits non-zero without a "not ok" line of its own gets one.
# Exits non-zero if any step failed.
#
# A step written NAME@wire (e.g. "pyverbs@wire", "rc:ipv4@wire") runs
# with the same-host direct path forced off: every shca load during it
# gets direct=0 (/etc/modprobe.d/shca-e2e-wire.conf, removed after the
# step; a module already loaded gets 0 in /sys/module/shca/parameters/
# direct and its old value back after), the suite sees SHCA_E2E_WIRE=1
# (lib.sh's path_check then asserts that its devices sent every message
# on the wire), and its case lines read "ok - wire: SUITE: ..." so that
# they differ from the same suite's direct run (and pyverbs' counts read
# "# pyverbs(shca0, wire): ...").  The step fails if shca was ever loaded
# with direct other than N during it, or never loaded.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
export TMPDIR=${TMPDIR:-/tmp}
. "$here/lib.sh"	# veth_b_to_netns

plan=${SHCA_E2E_SUITES:-}
if [ -z "$plan" ]; then
	k=${SHCA_KFLAVOUR:-6.1}
	[ "$k" = test ] && k=debug
	plan=$(awk -v t="${SHCA_E2E_TIER:-check}" -v k="$k" \
		'$1 == t && $2 == k { $1 = $2 = ""; print; exit }' "$here/matrix")
fi
# shellcheck disable=SC2086
set -- $plan
echo "# e2e on $(uname -r)"
echo "# plan: $*"

# step_kunit: the module's KUnit suites run while it loads.
step_kunit() {
	"$top/scripts/kunit/vm-inner.sh" shca || return 1
	dmesg >"${SHCA_OUT:-$TMPDIR}/kunit-dmesg.txt"
	echo "ok - kunit: shca.ko loaded (its KUnit suites ran) and unloaded"
}

# The wire steps' modprobe configuration: direct=0 at every load, and
# each load logs the value the module really got to $WIRE_LOG, which
# wire_end checks (an install command runs for modprobe and for the
# kernel's own request_module alike).
WIRE_CONF=/etc/modprobe.d/shca-e2e-wire.conf
WIRE_LOG=/run/shca-e2e-wire.log
WIRE_PARAM=/sys/module/shca/parameters/direct
wire_old=

# wire_begin: force the wire for the next step.
wire_begin() {
	: >"$WIRE_LOG"
	cat >"$WIRE_CONF" <<-EOT
		# written by scripts/e2e/run.sh for a @wire step; removed after it
		options shca direct=0
		install shca /sbin/modprobe --ignore-install shca \$CMDLINE_OPTS && { read -r d <$WIRE_PARAM; echo "load direct=\$d" >>$WIRE_LOG; }
	EOT
	wire_old=
	if [ -e "$WIRE_PARAM" ]; then
		read -r wire_old <"$WIRE_PARAM"
		echo 0 >"$WIRE_PARAM"
		echo "loaded before the step, set direct=$(<"$WIRE_PARAM")" >>"$WIRE_LOG"
	fi
	export SHCA_E2E_WIRE=1
}

# wire_end STEP: undo wire_begin; one case: every load of shca during
# STEP had direct=N (and there was one).
wire_end() {
	local loads bad
	unset SHCA_E2E_WIRE
	rm -f "$WIRE_CONF"
	[ -n "$wire_old" ] && [ -e "$WIRE_PARAM" ] && echo "$wire_old" >"$WIRE_PARAM"
	loads=$(grep -c 'direct=' "$WIRE_LOG" 2>/dev/null)
	bad=$(grep -v 'direct=N$' "$WIRE_LOG" 2>/dev/null | head -n 3 | tr '\n' ' ')
	if [ "${loads:-0}" -gt 0 ] && [ -z "$bad" ]; then
		echo "ok - wire: $1: shca ran with direct=N throughout ($loads load(s))"
		return 0
	fi
	echo "not ok - wire: $1: shca ran with direct=N throughout: loads ${loads:-0}${bad:+, $bad}"
	return 1
}

# run_step NAME[:ARGS]: one step.
run_step() {
	local args=()
	[[ $1 == *:* ]] && IFS=, read -r -a args <<<"${1#*:}"
	case "$1" in
	kunit) step_kunit ;;
	demo) "$top/scripts/demo.sh" ;;
	*) "$here/${1%%:*}.sh" "${args[@]}" ;;
	esac
}

# reset: after a failed step, what it may have left behind goes, so the
# next step starts from the boot's topology: every RDMA device, netem
# qdiscs on the veths, veth-b back in shca-b, the modules.
reset() {
	local d
	for d in /sys/class/infiniband/*; do
		[ -e "$d" ] && rdma link delete "${d##*/}" 2>/dev/null
	done
	ip netns exec shca-a tc qdisc del dev veth-a root 2>/dev/null
	ip netns exec shca-b tc qdisc del dev veth-b root 2>/dev/null
	if ip link show veth-b >/dev/null 2>&1; then
		tc qdisc del dev veth-b root 2>/dev/null
		veth_b_to_netns
	fi
	# direct.sh deletes the veth pair on purpose
	ip -n shca-a link show veth-a >/dev/null 2>&1 || veth_pair_add
	modprobe -r shca rdma_rxe 2>/dev/null
	echo "# reset after a failed step: $(ls /sys/class/infiniband 2>/dev/null | wc -l) RDMA devices left"
}

# Markers go to the kernel log at KERN_INFO, below the console's level, so
# they never land in the middle of a line on the serial console.
mark() {
	echo "<6>shca-e2e: step $1" >/dev/kmsg
}

# stamp: copy stdin to stdout; each case line also goes to
# $SHCA_OUT/case-times.txt after the seconds since the boot's steps began,
# so that where a boot's time goes can be read case by case.
TIMES=${SHCA_OUT:-$TMPDIR}/case-times.txt
stamp() {
	local line
	while IFS= read -r line; do
		printf '%s\n' "$line"
		case $line in
		"ok - "* | "not ok - "* | "# suite "*) echo "$SECONDS $line" >>"$TIMES" ;;
		esac
	done
}

# kmemleak (the test kernel): its thread scans the whole of memory every
# ten minutes, some 36 s of a vCPU each under TCG (2026-11-30), four or
# five times in a debug boot.  vm-run's guest scans twice after the
# command, and those scans report whatever any step leaked, so the
# periodic ones only cost time: off for the steps (tracking stays on).
KMEMLEAK=/sys/kernel/debug/kmemleak
if [ -w "$KMEMLEAK" ] && echo scan=off >"$KMEMLEAK" 2>/dev/null; then
	echo "# kmemleak: periodic scans off (vm-run scans after the steps)"
fi

# ib_core and the modules above it stay loaded for the whole boot:
# rdma_ucm holds ib_uverbs, rdma_cm, ib_cm, iw_cm and ib_core, so a
# suite's `modprobe -r shca` unloads shca alone, and the next suite's
# setup loads shca alone.  Loading the five again took most of each
# suite's setup on the test kernel (KASAN, lockdep and kmemleak at every
# relocation and allocation); and a kmemleak report names their functions
# only while they are loaded.
modprobe -a rdma_ucm 2>/dev/null || echo "# rdma_ucm not loaded: each suite loads ib_core anew"

rc=0
failed=
out=$TMPDIR/e2e-step.out
for s in "$@"; do
	start=$SECONDS
	mark "$s begins"
	case "$s" in
	*@wire)
		wire_begin
		run_step "${s%@wire}" 2>&1 |
			sed -u -E 's/^(not )?ok - /&wire: /; s/^# pyverbs\(([^)]*)\)/# pyverbs(\1, wire)/' |
			stamp | tee "$out"
		src=${PIPESTATUS[0]}
		wire_end "${s%@wire}" >"$out.wire" || { [ "$src" != 0 ] || src=1; }
		tee -a "$out" <"$out.wire"
		;;
	*)
		run_step "$s" 2>&1 | stamp | tee "$out"
		src=${PIPESTATUS[0]}
		;;
	esac
	if [ "$src" != 0 ]; then
		rc=1
		failed="$failed $s"
		grep -q '^not ok - ' "$out" ||
			echo "not ok - $s: exited with status $src (no failing case of its own)"
		reset
	fi
	mark "$s ends (exit $src)"
	echo "# suite $s took $((SECONDS - start)) s (exit $src)" | stamp
	echo "# memory after $s: $(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo) MiB available"
done
[ $rc -eq 0 ] || echo "# e2e: failed suites:${failed}"
exit $rc
