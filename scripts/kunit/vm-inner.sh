#!/bin/bash
# Runs inside the VM (scripts/vm-run, test kernel) for scripts/run-kunit.sh:
# load the module under test -- its KUnit suites run while it loads and print
# KTAP to the kernel log -- then unload it again (exercises the exit path, so
# kmemleak/KASAN see the teardown too).  Loads nothing else explicitly
# (modprobe pulls in the module's own dependencies, e.g. ib_core).
#   vm-inner.sh MODULE [--no-unload]
set -u
mod=${1:?usage: vm-inner.sh MODULE [--no-unload]}
unload=1
[ "${2:-}" = --no-unload ] && unload=0
grep -q '^kunit ' /proc/modules 2>/dev/null || [ -d /sys/module/kunit ] ||
	{ echo "kunit-inner: this kernel has no KUnit (CONFIG_KUNIT)"; exit 1; }
if [ "$(cat /sys/module/kunit/parameters/enable 2>/dev/null)" = N ]; then
	echo "kunit-inner: KUnit is disabled (kunit.enable=0 / CONFIG_KUNIT_DEFAULT_ENABLED=n)"
	exit 1
fi
echo "kunit-inner: modprobe $mod"
t0=$(date +%s.%N)
modprobe "$mod" || { echo "kunit-inner: modprobe $mod failed"; exit 1; }
t1=$(date +%s.%N)
echo "kunit-inner: loaded $mod in $(echo "$t1 - $t0" | bc 2>/dev/null || echo '?')s"
if [ "$unload" = 1 ]; then
	modprobe -r "$mod" || { echo "kunit-inner: modprobe -r $mod failed"; exit 1; }
	echo "kunit-inner: unloaded $mod"
fi
exit 0
