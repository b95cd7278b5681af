#!/bin/bash
# Memory window error cases (scripts/e2e/mw_cases.py) on shca0, RC
# loopback on a veth; rdma-core's own MWTest runs in pyverbs.sh.  Runs
# inside the VM.
set -u
E2E_SUITE=mw
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

ip link add mw0 type veth peer name mw1
ip link set mw0 up; ip link set mw1 up
ip addr add 10.95.0.1/24 dev mw0
modprobe shca
rdma link add shca0 type shca netdev mw0
wait_for 90 grep -q ACTIVE /sys/class/infiniband/shca0/ports/1/state
wait_for 90 sh -c 'grep -q ffff:0a5f:0001 /sys/class/infiniband/shca0/ports/1/gids/*'

/usr/bin/python3 "$here/mw_cases.py" --dev shca0 || E2E_FAILED=$((E2E_FAILED + 1))
binds=$(rdma statistic show link shca0/1 | tr -s ' ' '\n' |
	awk 'prev == "mw_binds" { print; exit } { prev = $0 }')
if [ "${binds:-0}" -gt 0 ]; then ok "mw_binds counted ($binds)"; else not_ok "mw_binds counted" "'$binds'"; fi
check "rdma link delete" rdma link delete shca0
check "unload shca (no window or MR left behind)" modprobe -r shca
ip link del mw0
e2e_finish
