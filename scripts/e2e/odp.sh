#!/bin/bash
# On-demand paging MRs while the mm takes their pages away
# (scripts/e2e/progs/odp_cases.py) on shca0, RC loopback on a veth:
# explicit, implicit and huge page ODP MRs; faults on first touch, no
# stale page after MADV_DONTNEED (READ, WRITE, atomics), ibv_advise_mr,
# and WRITE/READ rounds racing page drops; the ODP counters.  rdma-core's
# own test_odp runs in pyverbs.sh.  Needs a kernel with
# CONFIG_INFINIBAND_ON_DEMAND_PAGING (Debian's 6.1 and 6.12); elsewhere
# shca advertises no ODP and one case says so.  Runs inside the VM.
set -u
E2E_SUITE=odp
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

check "setup shca0 on odp0" solo_setup shca0 odp0 10.94.0.1 ffff:0a5e:0001
gidx=$(rdma_gid shca0 ffff:0a5e:0001)
# ib_uverbs (loaded with shca) has ib_umem_odp_get only when built with ODP
if grep -qw ib_umem_odp_get /proc/kallsyms; then
	# four 2 MiB pages for the huge page cases (none: they do not run)
	nr=/proc/sys/vm/nr_hugepages
	read -r huge_was <"$nr" 2>/dev/null || huge_was=
	[ -n "$huge_was" ] && echo $((huge_was + 4)) >"$nr" 2>/dev/null
	exits_ok "odp_cases.py exits 0" /usr/bin/python3 "$here/progs/odp_cases.py" shca0 "$gidx"
	[ -n "$huge_was" ] && echo "$huge_was" >"$nr" 2>/dev/null
else
	ok "no ODP in $(uname -r) (CONFIG_INFINIBAND_ON_DEMAND_PAGING off): nothing to run"
fi
check "rdma link delete" rdma link delete shca0
check "unload shca (no ODP MR left behind)" modprobe -r shca
ip link del odp0
e2e_finish
