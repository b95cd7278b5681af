#!/bin/bash
# Memory window error cases (scripts/e2e/progs/mw_cases.py) on shca0, RC
# loopback on a veth; rdma-core's own MWTest runs in pyverbs.sh.  Runs
# inside the VM.
set -u
E2E_SUITE=mw
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

check "setup shca0 on mw0" solo_setup shca0 mw0 10.95.0.1 ffff:0a5f:0001

exits_ok "mw_cases.py exits 0" /usr/bin/python3 "$here/progs/mw_cases.py" --dev shca0
binds=$(rdma statistic show link shca0/1 | tr -s ' ' '\n' |
	awk 'prev == "mw_binds" { print; exit } { prev = $0 }')
if [ "${binds:-0}" -gt 0 ]; then ok "mw_binds counted ($binds)"; else not_ok "mw_binds counted" "'$binds'"; fi
check "rdma link delete" rdma link delete shca0
check "unload shca (no window or MR left behind)" modprobe -r shca
ip link del mw0
e2e_finish
