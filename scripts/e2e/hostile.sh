#!/bin/bash
# A process scribbles on the rings it shares with the kernel
# (progs/vm_hostile.c) on shca9, alone on a veth: spoiled
# SRQ, RQ and SQ WQEs must complete with their verbs statuses, impossible
# producer and consumer indices must raise SRQ_ERR, QP_FATAL and CQ_ERR,
# an RC receive WQE with num_sge 0xffffffff in an RQ, SRQ or TM SRQ must
# complete with LOC_QP_OP_ERR and put its QP in error, and random entries and indices on UD and RC QPs must leave the device
# moving data.  The VM harness fails the run on any kernel report.
# Runs inside the VM; build the programs first (make -C scripts/e2e/progs).
#   SHCA_FUZZ_SEED, SHCA_FUZZ_ROUNDS: the fuzz's seed and length.
set -u
E2E_SUITE=hostile
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

bin=$(prog vm_hostile) || exit 1
if solo_setup shca9 hst0 10.97.0.1 ffff:0a61:0001; then
	ok "setup shca9 on hst0"
else
	not_ok "setup shca9 on hst0" "device or GID missing"
	exit 1
fi
gid=$(rdma_gid shca9 ffff:0a61:0001)

# hostile MODE ARGS...: one vm_hostile run, its lines relayed as TAP.
hostile() {
	local out=$TMPDIR/hostile-$1.out rc
	timeout 1200 "$bin" shca9 "$gid" "$@" >"$out" 2>&1
	rc=$?
	tap_relay "$out"
	[ $rc = 0 ] || not_ok "vm_hostile $1 exit status" "$rc"
}
hostile srq
hostile rings
hostile rc-sge
echo "# hostile fuzz: seed ${SHCA_FUZZ_SEED:-0x5eed1}, ${SHCA_FUZZ_ROUNDS:-160} rounds"
hostile fuzz "${SHCA_FUZZ_SEED:-0x5eed1}" "${SHCA_FUZZ_ROUNDS:-160}"
rdma statistic show link shca9/1 | tr ' ' '\n' |
	grep -A1 -E '^(qp_fatal|cq_overflow|rx_dropped|tx_err)' | paste - - | tr '\n' ' '
echo
path_check auto "shca9's messages (hostile's traffic)" shca9
check "rdma link delete" rdma link delete shca9
ip link del hst0
check "unload shca (nothing left behind)" modprobe -r shca
e2e_finish
