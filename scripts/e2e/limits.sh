#!/bin/bash
# Who may create what, and how much memory a user's verbs make the kernel
# hold (Documentation/security.rst), on shca6, alone on a veth in init_net
# (progs/vm_limits.c):
#  - a RAW_PACKET QP, an RSS QP and a flow rule need CAP_NET_RAW over the
#    netdev's network namespace: root makes all three, an unprivileged
#    user gets EPERM for each, and so does root of a user namespace made
#    with `unshare -Urn` (the device stays visible there: rdma system
#    netns mode shared);
#  - the rings of an unprivileged user's deep QPs (16384 WRs) are charged
#    to its RLIMIT_MEMLOCK (ulimit -l 65536): some are made, then ENOMEM
#    with the charge (VmPin) within the limit; destroying them undoes it;
#    root (CAP_IPC_LOCK) is exempt;
#  - the device ceiling (module parameter ring_mem_max_mb) refuses rings
#    past it with ENOMEM, root or not;
#  - inside a 256 MiB memory cgroup the QPs' kernel state is charged to
#    it: creation ends with ENOMEM (no OOM kill), memory.peak shows the
#    charges, and outside the cgroup root still creates QPs.
# The kernels without user namespaces or memory cgroups (the debug test
# kernel) report those cases as skipped; there, under KASAN, the limits
# are smaller (24 MiB, 12 MiB: two QPs and one instead of seven and three).
set -u
E2E_SUITE=limits
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

src=$(prog vm_limits) || exit 1
dev=shca6
if solo_setup $dev lim0 10.94.0.1 ffff:0a5e:0001; then
	ok "setup $dev on lim0"
else
	not_ok "setup $dev on lim0" "device or GID missing"
	exit 1
fi
# a copy any user may run; the device node open to all, as udev makes it
bin=$TMPDIR/vm_limits
install -m 0755 "$src" "$bin"
modes=$(stat -c 'chmod %a %n;' /dev/infiniband/uverbs*)
chmod 0666 /dev/infiniband/uverbs*
# RLIMIT_MEMLOCK and ring_mem_max_mb of the cases below, in MiB; each deep
# QP holds 8 MiB of rings and a bit
memlock=64 ceiling=32
if [ "${SHCA_KFLAVOUR:-}" = test ]; then memlock=24 ceiling=12; fi
param=/sys/module/shca/parameters/ring_mem_max_mb

# limits TAG NAME CMD...: run CMD (a vm_limits run, maybe as another
# user) from /, its lines relayed as TAP, each named after TAG; one more
# case, NAME, for its status.
limits() {
	local name=$2 out=$TMPDIR/limits.out rc t=$SECONDS
	export LIMITS_TAG=$1
	shift 2
	(cd / && timeout 600 "$@") >"$out" 2>&1
	rc=$?
	tap_relay "$out"
	echo "# $LIMITS_TAG took $((SECONDS - t)) s"
	if [ $rc = 0 ]; then ok "$name"; else not_ok "$name" "exit status $rc"; fi
}

# "${unpriv[@]}" CMD...: CMD as nobody, with no capabilities at all.
unpriv=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --)

# --- who may create what ----------------------------------------------------
limits root "root creates a raw QP, an RSS QP and a flow rule" "$bin" $dev caps ok
limits nobody "an unprivileged user gets EPERM for each" "${unpriv[@]}" "$bin" $dev caps eperm
[ -w /proc/sys/kernel/unprivileged_userns_clone ] &&
	echo 1 >/proc/sys/kernel/unprivileged_userns_clone
if [ ! -e /proc/self/ns/user ]; then
	ok "root of an unshare -Urn user namespace gets EPERM for each # SKIP no user namespaces in this kernel"
elif "${unpriv[@]}" unshare -Urn true; then
	limits userns "root of an unshare -Urn user namespace gets EPERM for each" \
		"${unpriv[@]}" unshare -Urn "$bin" $dev caps eperm
else
	not_ok "unshare -Urn as an unprivileged user" "refused"
fi

# --- memory a user makes the kernel hold ------------------------------------
kib=$((memlock << 10))
limits memlock "RLIMIT_MEMLOCK $memlock MiB: deep QPs until ENOMEM, charge undone" \
	sh -c "ulimit -l $kib && exec ${unpriv[*]} $bin $dev fill $kib 32"
# more than fit in the limit
n=$((memlock / 8 + 2))
limits ipc_lock "CAP_IPC_LOCK is exempt: root makes $n deep QPs at ulimit -l $kib" \
	sh -c "ulimit -l $kib && exec $bin $dev make $n"

old=$(cat $param)
if echo $ceiling >$param; then
	limits ceiling "ring_mem_max_mb=$ceiling: root's deep QPs until ENOMEM within $ceiling MiB" \
		"$bin" $dev fill $((ceiling << 10)) 16
	echo "$old" >$param
	expect_eq "ring_mem_max_mb restored" "$(cat $param)" "$old"
else
	not_ok "ring_mem_max_mb is writable" "$param"
fi

cg=/sys/fs/cgroup
grep -q "^cgroup2 $cg " /proc/mounts || mount -t cgroup2 none $cg 2>/dev/null
if ! grep -qw memory $cg/cgroup.controllers 2>/dev/null; then
	ok "a 256 MiB memory cgroup ends creation with ENOMEM # SKIP no memory controller in this kernel"
else
	echo +memory >$cg/cgroup.subtree_control
	mkdir -p $cg/shca-limits
	echo 256M >$cg/shca-limits/memory.max
	limits memcg "a 256 MiB memory cgroup: deep QPs until ENOMEM, charged to it" \
		env MEMCG_FILE=$cg/shca-limits/memory.current \
		sh -c "echo \$\$ >$cg/shca-limits/cgroup.procs && exec $bin $dev fill 0 100"
	peak=$(cat $cg/shca-limits/memory.peak 2>/dev/null || echo 0)
	kills=$(awk '$1 == "oom_kill" { print $2 }' $cg/shca-limits/memory.events)
	echo "# memory cgroup: memory.peak $peak, oom_kill $kills"
	if [ "$peak" -gt $((192 << 20)) ]; then
		ok "memory.peak shows the charges (above 192 MiB)"
	else
		not_ok "memory.peak shows the charges (above 192 MiB)" "$peak"
	fi
	expect_eq "no OOM kill in the cgroup" "$kills" 0
	rmdir $cg/shca-limits
	limits host "outside it root still creates deep QPs" "$bin" $dev make 4
fi

eval "$modes"
t=$SECONDS
check "rdma link delete" rdma link delete $dev
ip link del lim0
check "unload shca (nothing left behind)" modprobe -r shca
echo "# teardown took $((SECONDS - t)) s"
e2e_finish
