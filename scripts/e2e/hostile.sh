#!/bin/bash
# A process scribbles on the rings it shares with the kernel
# (progs/vm_hostile.c) on shca9, alone on a veth: spoiled
# SRQ, RQ and SQ WQEs must complete with their verbs statuses, impossible
# producer and consumer indices must raise SRQ_ERR, QP_FATAL and CQ_ERR,
# an RC receive WQE with num_sge 0xffffffff in an RQ, SRQ or TM SRQ must
# complete with LOC_QP_OP_ERR and put its QP in error, and random entries and indices on UD and RC QPs must leave the device
# moving data.  Then hostile packets (progs/qp_path_cases.py): from a
# namespace of its own (shca-f, hst0's peer, 10.97.0.9 and fd97::9) an
# unprivileged user with a plain UDP socket (progs/forge4791.py) forges
# UC SENDs, RC NAKs, an XRC SEND naming a live XRC SRQ and tag matching
# eager and rendezvous SENDs for a posted tag, with valid ICRCs, at live
# QPs of shca9, and a QP of
# shca9 on its second address (10.97.0.5) sends a UC SEND to one of them:
# none may land or kill its QP, each counts in rx_bad_path.
# The VM harness fails the run on any kernel report.
# Runs inside the VM; build the programs first (make -C scripts/e2e/progs).
#   SHCA_FUZZ_SEED, SHCA_FUZZ_ROUNDS: the fuzz's seed and length (48
#   rounds, make check-full 1000; the fuzz prints the completion statuses
#   it reached and the round of each one's first: with the default seed
#   every status of 320 rounds came by round 35).
#   E2E_ONLY (ad hoc runs): an extended regex of the parts to run (srq,
#   rings, rc-sge, fuzz, path).
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
	e2e_selected "$1" || return 0
	timeout 1200 "$bin" shca9 "$gid" "$@" >"$out" 2>&1
	rc=$?
	tap_relay "$out"
	[ $rc = 0 ] || not_ok "vm_hostile $1 exit status" "$rc"
}
hostile srq
hostile rings
hostile rc-sge
echo "# hostile fuzz: seed ${SHCA_FUZZ_SEED:-0x5eed1}, ${SHCA_FUZZ_ROUNDS:-48} rounds"
hostile fuzz "${SHCA_FUZZ_SEED:-0x5eed1}" "${SHCA_FUZZ_ROUNDS:-48}"

# path_setup: shca-f, with hst0p moved there (10.97.0.9, fd97::9), and
# shca9's GIDs of 10.97.0.5 and fd97::1 (hst0's addresses, added).
path_setup() {
	ip netns add shca-f &&
	ip link set hst0p netns shca-f &&
	ip -n shca-f -b - <<-EOT &&
		addr add 10.97.0.9/24 dev hst0p
		addr add fd97::9/64 dev hst0p nodad
		link set hst0p up
		link set lo up
	EOT
	ip addr add 10.97.0.5/24 dev hst0 &&
	ip -6 addr add fd97::1/64 dev hst0 nodad &&
	wait_for 90 rdma_gid shca9 ffff:0a61:0005 &&
	wait_for 90 rdma_gid shca9 fd97:0000:0000:0000:0000:0000:0000:0001
}

# path_cases: QPs of shca9 talking to QPs of shca9 (10.97.0.1, fd97::1),
# forged at from shca-f and from 10.97.0.5
path_cases() {
	local g4 g6 gx out=$TMPDIR/hostile-path.out rc t0=$SECONDS
	e2e_selected path || return 0
	if ! path_setup; then
		not_ok "path: setup of shca-f and shca9's addresses" "an address or GID missing"
		return
	fi
	g4=$(rdma_gid shca9 ffff:0a61:0001)
	g6=$(rdma_gid shca9 fd97:0000:0000:0000:0000:0000:0000:0001)
	gx=$(rdma_gid shca9 ffff:0a61:0005)
	timeout 600 /usr/bin/python3 "$here/progs/qp_path_cases.py" shca9 "$g4" "$g6" "$gx" \
		10.97.0.9 fd97::9 ip netns exec shca-f \
		setpriv --reuid=65534 --regid=65534 --clear-groups \
		env PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 "$here/progs/forge4791.py" \
		>"$out" 2>&1
	rc=$?
	tap_relay "$out"
	echo "# hostile: path: $((SECONDS - t0)) s"
	[ $rc = 0 ] || not_ok "qp_path_cases.py exit status" "$rc"
}
path_cases
rdma statistic show link shca9/1 | tr ' ' '\n' |
	grep -A1 -E '^(qp_fatal|cq_overflow|rx_dropped|rx_bad_path|tx_err)' | paste - - | tr '\n' ' '
echo
path_check auto "shca9's messages (hostile's traffic)" shca9
check "rdma link delete" rdma link delete shca9
ip link del hst0
ip netns del shca-f 2>/dev/null
check "unload shca (nothing left behind)" modprobe -r shca
e2e_finish
