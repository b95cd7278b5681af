#!/bin/bash
# Hostile RC/UC packets at live shca QPs (raw IPv4 socket in netns shca-b
# -> shca0 in shca-a): progs/rc_resp_fuzz.py checks on shca0's counters
# that each was dropped, refused or answered as it must be, then that an
# ordinary RC connection still moves data byte for byte; the VM harness
# fails the run on any kernel report.  SHCA_FUZZ_N packets (default in
# rc_resp_fuzz.py, sized so every opcode reaches its handler),
# SHCA_FUZZ_SEED (default in rc_resp_fuzz.py; both printed).
set -u
E2E_SUITE=rc-resp-fuzz
A="ip netns exec shca-a"; B="ip netns exec shca-b"
. scripts/e2e/lib.sh
modprobe shca
$A rdma link add shca0 type shca netdev veth-a
wait_for 60 port_active shca0
wait_for 60 rdma_gid shca0 ffff:0a4d:0001
# (lib.sh's rdma_gid reads sysfs without a process; a grep for each of the
# table's 128 entries took minutes of the debug kernel's time)
ga=$(rdma_gid shca0 ffff:0a4d:0001)
# about 0.05 s a packet on the stock kernels under TCG, more under KASAN
exits_ok "rc_resp_fuzz.py exits 0" $B timeout $((600 + ${SHCA_FUZZ_N:-820} / 4)) /usr/bin/python3 scripts/e2e/progs/rc_resp_fuzz.py shca0 "$ga"
rdma statistic show link shca0/1 | tr ' ' '\n' | grep -A1 -E "^(rc_|rx_|tx_|qp_fatal|uc_)" | paste - - | grep -v "	0$" | tr '\n' ' '; echo
path_check auto "shca0's messages (the RC connection after the fuzz)" shca0
$A rdma link delete shca0
check "module unloads" modprobe -r shca
e2e_finish
