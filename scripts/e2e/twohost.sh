#!/bin/bash
# Two hosts: this VM and another one, each with its own kernel, joined by a
# wire (vm-run --link: link0, a virtio NIC on QEMU's UDP socket netdev,
# which drops frames under load as Ethernet without flow control does).
# Nothing of the same-host machinery applies: no veth, no direct path; runs
# of packets leave as GSO datagrams the NIC's stack cuts apart in software.
# Both VMs run this suite at the same time with the same list of cases,
# one as side a and one as side b (SHCA_PAIR_ROLE); they meet through a
# mailbox on the link (a TCP port each side listens on, a line a
# message), so every case starts its server on one side, tells the
# other, and the client runs there.  Each side prints its own half of each
# case ("... (client, shca)"), so both boots count their cases.
#
# Phases, by the device on link0 of a and b:
#   shca-shca  shca <-> shca
#   shca-rxe   shca (a) <-> rdma_rxe (b)
#   rxe-shca   rdma_rxe (a) <-> shca (b)
# Cases, with verifiers: ibv_rc/ud/srq_pingpong -c, ibv_xsrq_pingpong
# (shca-shca: rxe has no XRC on these kernels), rping -V over RDMA CM on
# IPv4 and IPv6, dxfer (progs/dxfer.c: RDMA WRITE, READ and SEND, every
# byte checked) at 4 KiB and 1 MiB with the server on either side, and,
# shca-shca, an all-to-all connect (progs/a2a_cm.c: 3 processes on each
# side, every pair an RC QP through RDMA CM, a SEND each way verified), a
# stream through 3% loss on a's egress (netem: recovery, the resends
# counted) and a stream while a's link goes down for 2 s and comes back
# (adaptive retransmission's early resends, rc_probes, must go out).
# After each phase the side's counters are printed; asserted on a
# shca device: no fatal QP error, no packet with a bad ICRC or a malformed
# header (the other host's bytes are IBTA RoCE v2, and so are ours),
# every recovery counted (timeouts and sequence NAKs received come with
# resends), GSO datagrams sent in shca-shca and none past netem.
#
# Environment (scripts/check.sh sets it; without a peer the suite skips):
#   SHCA_PAIR_ROLE=a|b  SHCA_PAIR_PEER4, SHCA_PAIR_PEER6 (the other side's
#   link addresses); vm-run --link gives SHCA_LINK_NETDEV, SHCA_LINK_IP4,
#   SHCA_LINK_IP6.  SHCA_PAIR_WAIT (default 1200): how long to wait for
#   the other host to come up.
set -u
E2E_SUITE=twohost
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

ROLE=${SHCA_PAIR_ROLE:-}
ND=${SHCA_LINK_NETDEV:-}
ME4=${SHCA_LINK_IP4:-}
ME6=${SHCA_LINK_IP6:-}
PEER4=${SHCA_PAIR_PEER4:-}
PEER6=${SHCA_PAIR_PEER6:-}
if [ -z "$ROLE" ]; then
	ok "two hosts # SKIP no second host (scripts/check.sh pairs the 6.1 and 6.12 boots)"
	exit 0
fi
if [ -z "$ND" ] || [ -z "$ME4" ] || [ -z "$PEER4" ] || [ -z "$ME6" ] || [ -z "$PEER6" ]; then
	not_ok "the link to the other host" \
		"netdev '$ND', addresses '$ME4' '$ME6', peer '$PEER4' '$PEER6' (vm-run --link, SHCA_PAIR_*)"
	exit 1
fi
case "$ROLE" in a | b) ;; *) not_ok "role" "SHCA_PAIR_ROLE=$ROLE (a or b)"; exit 1 ;; esac
DEV=th0
DXFER=$(prog dxfer) || exit 1
A2A=$(prog a2a_cm) || exit 1
. "$here/pairlib.sh"
. "$here/nvmetlib.sh"
pair_mailbox

# Checks of one side's log: side_has LOG REGEX WHAT passes when a line
# of LOG matches REGEX, and otherwise says WHAT is missing.
side_has() {
	grep -q "$2" "$1" && return 0
	echo "$3: $(tail1 "$1" 3)"
	return 1
}
pp_side() { side_has "$1" 'bytes in .* seconds' "no pingpong summary"; }
xsrq_side() { side_has "$1" '^success' "no success line"; }
dx_side() { side_has "$1" 'dxfer [a-z]*: all data verified' "not verified"; }
rping_side() {
	! grep -qi 'data mismatch\|error' "$1" && return 0
	echo "rping reported: $(grep -hi 'mismatch\|error' "$1" | head -n 2 | tr '\n' ' ')"
	return 1
}

pingpongs() {
	local p srv
	for p in rc ud srq; do
		srv=b
		[ "$p" = srq ] && srv=a
		local args="-d $DEV -g $GI4 -c -n 20"
		case "$p" in
		rc) args+=" -s 4096" ;;
		ud) args+=" -s 512" ;;
		srq) args+=" -s 4096 -q 4" ;;
		esac
		two_case "ibv_${p}_pingpong -c (server $srv)" $srv tcp:18515 \
			"ibv_${p}_pingpong $args" "ibv_${p}_pingpong $args $(peer_of $srv)" pp_side
	done
}

rping_case() {
	local v=$1 srv=$2 addr
	[ "$v" = 4 ] && addr=$(peer_of "$srv") || addr=$(peer6_of "$srv")
	two_case "rping -V over RDMA CM, IPv$v (server $srv)" "$srv" cm \
		"rping -s -a $addr -V -C 20 -S 1024" "rping -c -a $addr -V -C 20 -S 1024" rping_side
}

DXPORT=7480
# dx_case NAME SERVER V CLIENT-ARGS: a verified dxfer run across the link.
dx_case() {
	local name=$1 srv=$2 v=$3 args=$4 addr
	DXPORT=$((DXPORT + 1))
	[ "$v" = 4 ] && addr=$(peer_of "$srv") || addr=$(peer6_of "$srv")
	two_case "$name (server $srv)" "$srv" "text:dxfer server: listening" \
		"$DXFER -s -a $addr -p $DXPORT -W 60" "$DXFER -c -a $addr -p $DXPORT -W 60 $args" dx_side
}

# a2a_case SERVER: an all-to-all connect across the link, A2A_N processes
# on each side and every pair an RC QP through RDMA CM; each pair's SEND
# each way checked (status, length, every byte); the times of a2a_cm's
# summary as a comment.
A2A_N=3
a2a_side() {
	if grep -q 'FAILED' "$1"; then
		grep -h -m 3 'FAILED' "$1" | tr '\n' ' '
		return 1
	fi
	side_has "$1" "a2a_cm [a-z]*: summary: n=$A2A_N connections=$((A2A_N * A2A_N)) .* result=ok" \
		"no summary of $((A2A_N * A2A_N)) connections verified"
}
a2a_case() {
	local srv=$1 addr args="-p 7500 -n $A2A_N -d $DEV -W 120"
	addr=$(peer_of "$srv")
	two_case "all-to-all connect ${A2A_N}x$A2A_N, RC through RDMA CM, a SEND each way verified (server $srv)" \
		"$srv" "text:a2a_cm server: listening" "$A2A -s -a $addr $args" "$A2A -c -a $addr $args" \
		a2a_side
	echo "# $PH: $(grep -h 'summary:' "$CASE_LOG" 2>/dev/null)"
}

# --- NVMe-oF: the target on b, the initiator on a -------------------------------
NQN=nqn.2026-11.org.shca:twohost
nv_target_up() {
	nvmet_export "$NQN" "$ME4" 8
}
nv_target_down() {
	local rc=0
	nvmet_unexport "$NQN" || rc=1
	modprobe -r nvmet-rdma nvmet brd 2>/dev/null
	return $rc
}
# nv_initiator FIOLOG: connect to b's target, fio writes 4 MiB of 4 KiB
# random blocks with a CRC32C in each and reads every one back
# (--verify), disconnect.
nv_initiator() {
	local rc ns
	nvme_connect "$NQN" "$PEER4" || return 1
	wait_for 120 nvme_ns || { echo "no namespace"; return 1; }
	ns=$(nvme_ns)
	wait_for 60 test -b "/dev/$ns"
	fio --name=twohost --filename="/dev/$ns" --rw=randwrite --bs=4k --size=4M \
		--direct=1 --ioengine=libaio --iodepth=8 --verify=crc32c --do_verify=1 \
		--verify_fatal=1 --output-format=terse --terse-version=3 >"$1" 2>&1
	rc=$?
	echo "fio exit $rc: $(cut -d';' -f1-7 "$1" | tail -n 1)"
	nvme_disconnect
	modprobe -r nvme-rdma
	return $rc
}
# nvme_case: b exports an 8 MiB RAM disk over NVMe-oF (nvmet-rdma) on its
# device, a connects (nvme-rdma) and fio verifies what it wrote.
nvme_case() {
	local name="NVMe-oF: a RAM disk on b, fio --verify=crc32c from a" n log
	CASE_N=$((CASE_N + 1))
	n=$CASE_N
	log=$E2E_LOGS/pair-$n.log
	if [ "$ROLE" = b ]; then
		local up down
		nv_target_up >"$log" 2>&1
		up=$?
		send_msg "ready:$n;"
		wait_msg "done:$n:" $((T + 120))
		nv_target_down >>"$log" 2>&1
		down=$?
		if [ $up = 0 ] && [ $down = 0 ]; then ok "$PH: $name (target, $DRV)"; else
			not_ok "$PH: $name (target, $DRV)" "setup $up, teardown $down: $(tail1 "$log")"; fi
		echo "# $PH: nvme: initiator ${MSG:-lost}"
	else
		local rc=lost
		if wait_msg "ready:$n;" $((T + 120)); then
			nv_initiator "$log.fio" >"$log" 2>&1
			rc=$?
		fi
		send_msg "done:$n:$rc"
		echo "# $(tail -n 1 "$log" 2>/dev/null)"
		if [ "$rc" = 0 ]; then ok "$PH: $name (initiator, $DRV)"; else
			not_ok "$PH: $name (initiator, $DRV)" "rc=$rc: $(tail1 "$log" 4)"; fi
	fi
}

# Counters of this side's shca device, remembered by snap and compared by
# delta NAME.
declare -A SNAP
snap() {
	local n v k=
	SNAP=()
	[ "$DRV" = shca ] || return 0
	# one rdma process: "name value name value ..."
	for v in $(rdma statistic show link "$DEV/1" 2>/dev/null); do
		if [ -z "$k" ]; then k=$v; else SNAP[$k]=$v; k=; fi
	done
	n=${#SNAP[@]}
	[ "$n" -gt 0 ]
}
# delta NAME: counter NAME's growth from the snapshot before the last
# snap (in before[], a local of counter_report) to SNAP.
delta() {
	echo $(( ${SNAP[$1]:-0} - ${before[$1]:-0} ))
}
# gso_report SENDS PACKETS: a phase's UDP GSO datagrams through the NIC.
# shca-shca sends multi-packet messages both ways (dxfer 1 MiB: WRITE and
# SEND one way, READ responses the other), so runs of them leave each side
# as GSO datagrams, which the device cuts apart in software (net.c,
# shca_tx_gso_way()), and their bytes are checked at the other end; in the
# lossy phase netem on a's egress must see every packet: no GSO on a.
gso_report() {
	case "$PH:$ROLE" in
	shca-shca:*)
		if [ "$1" -gt 0 ] && [ "$2" -gt "$1" ]; then
			ok "$PH: runs of packets left as GSO datagrams ($1 datagrams, $2 packets)"
		else
			not_ok "$PH: runs of packets left as GSO datagrams" "tx_gso_sends +$1 tx_gso_packets +$2"
		fi ;;
	lossy:a)
		if [ "$1" = 0 ]; then
			ok "$PH: no GSO datagram past netem: it saw every packet"
		else
			not_ok "$PH: no GSO datagram past netem" "tx_gso_sends +$1 tx_gso_packets +$2"
		fi ;;
	esac
}
counter_report() {
	local k out='' fatal icrc mal lost
	local -A before=()
	[ "$DRV" = shca ] || return 0
	for k in "${!SNAP[@]}"; do before[$k]=${SNAP[$k]}; done
	snap
	for k in tx_packets rx_packets rc_retransmits rc_timeouts rc_probes rc_seq_naks_rcvd rc_seq_naks_sent \
		rc_dup_requests rc_dup_acks rc_rnr_naks_rcvd rx_dropped rx_no_qp rx_bad_path; do
		out+=" $k +$(delta "$k")"
	done
	echo "# $PH: counters of $ROLE's $DEV:$out"
	DELTA_RETX=$(delta rc_retransmits)
	DELTA_PROBES=$(delta rc_probes)
	fatal=$(delta qp_fatal) icrc=$(delta rx_bad_icrc) mal=$(delta rx_malformed)
	lost=$(( $(delta rc_timeouts) + $(delta rc_seq_naks_rcvd) ))
	if [ "$fatal" = 0 ] && [ "$icrc" = 0 ] && [ "$mal" = 0 ]; then
		ok "$PH: no fatal QP error, no bad ICRC, no malformed packet ($DRV)"
	else
		not_ok "$PH: no fatal QP error, no bad ICRC, no malformed packet ($DRV)" \
			"qp_fatal +$fatal rx_bad_icrc +$icrc rx_malformed +$mal"
	fi
	gso_report "$(delta tx_gso_sends)" "$(delta tx_gso_packets)"
	if [ "$lost" = 0 ] || [ "$DELTA_RETX" -gt 0 ]; then
		ok "$PH: every loss it saw was resent ($lost timeouts and sequence NAKs, $DELTA_RETX resends)"
	else
		not_ok "$PH: every loss it saw was resent" "$lost timeouts and sequence NAKs, no resend"
	fi
}

# phase NAME DRIVER-A DRIVER-B: both sides bring their device up, then the
# cases of the phase, then the counters.
phase_begin() {
	PH=$1
	local mine=$2
	[ "$ROLE" = b ] && mine=$3
	if [ "$PEER_LOST" = 1 ]; then
		not_ok "$PH: $mine on $ND" "the other host stopped answering earlier"
		return 1
	fi
	if dev_up "$mine"; then
		ok "$PH: $mine on $ND, ACTIVE, GIDs $GI4 (IPv4) $GI6 (IPv6)"
	else
		not_ok "$PH: $mine on $ND" "$(rdma link show 2>&1 | tr '\n' ' ')"
	fi
	snap
	barrier "$PH" || not_ok "$PH: the other host came" "no answer from $PEER4"
}
phase_end() {
	counter_report
	barrier "$PH-end"
	dev_down
}

# --- the run ---------------------------------------------------------------------
echo "# twohost: side $ROLE on $ND ($ME4, $ME6), the other side at $PEER4, $PEER6"
if barrier hello "${SHCA_PAIR_WAIT:-1200}"; then
	ok "the other host answers over the link ($PEER4)"
else
	not_ok "the other host answers over the link" "no message from $PEER4 in ${SHCA_PAIR_WAIT:-1200} s"
	exit 1
fi

phase_begin shca-shca shca shca
pingpongs
two_case "ibv_xsrq_pingpong (server b)" b tcp:18515 \
	"ibv_xsrq_pingpong -d $DEV -g $GI4 -c 1 -n 20" \
	"ibv_xsrq_pingpong -d $DEV -g $GI4 -n 20 $(peer_of b)" xsrq_side
rping_case 4 b
rping_case 6 a
dx_case "dxfer WRITE+READ+SEND 4 KiB x16, verified" b 4 "-o wrs -S 4K -n 16 -w 4"
dx_case "dxfer WRITE+READ+SEND 1 MiB x2, verified" a 4 "-o wrs -S 1M -n 2 -w 2"
dx_case "dxfer over IPv6, 64 KiB x4, verified" b 6 "-o wrs -S 64K -n 4"
a2a_case a
nvme_case
phase_end

# Recovery: 3% of a's frames dropped on the way out.
phase_begin lossy shca shca
if [ "$ROLE" = a ]; then
	check "netem loss 3% on $ND" tc qdisc add dev "$ND" root netem loss 3%
fi
dx_case "dxfer WRITE+SEND 256 KiB x8 through 3% loss, verified" b 4 "-o ws -S 256K -n 8 -w 2"
if [ "$ROLE" = a ]; then
	tc qdisc del dev "$ND" root 2>/dev/null
fi
phase_end
if [ "$ROLE" = a ]; then
	if [ "${DELTA_RETX:-0}" -gt 0 ]; then
		ok "lossy: the requester resent what the link dropped ($DELTA_RETX)"
	else
		not_ok "lossy: the requester resent what the link dropped" "rc_retransmits +${DELTA_RETX:-0}"
	fi
fi

# The link goes down for 2 s and comes back while a stream runs: a
# local ACK timeout of ~1 s (-t 18), backing off, and 7 retries outlast it.
# rdma_cm on these kernels (cma_netevent_callback) ends a connection with
# RDMA_CM_EVENT_UNREACHABLE as soon as its peer's neighbour entry is
# updated to another link-layer address, an unresolved one included: an
# ARP resolution that fails after the link comes back (the UDP link drops
# frames under load) would end the stream whatever the driver does.  So
# both sides pin the peer's entry for this phase, and a pins it again as
# soon as its link is up (going down flushed it).
peer_mac() {
	ip -4 neigh show "$PEER4" dev "$ND" | awk '$2 == "lladdr" { print $3; f = 1; exit } END { exit !f }'
}
pin_peer() {
	[ -n "$PEER_MAC" ] && ip neigh replace "$PEER4" lladdr "$PEER_MAC" dev "$ND" nud permanent
}
phase_begin flap shca shca
PEER_MAC=$(peer_mac) || { ping -c 1 -W 5 "$PEER4" >/dev/null 2>&1; PEER_MAC=$(peer_mac); }
check "the peer's neighbour entry pinned ($PEER4 at ${PEER_MAC:-no address})" pin_peer
if [ "$ROLE" = a ]; then
	(
		wait_for 200 has_text "$E2E_LOGS/pair-$((CASE_N + 1)).log" "dxfer client: connected" &&
			nap 3 && ip link set "$ND" down && nap 2 && ip link set "$ND" up && pin_peer &&
			echo "# flap: $ND down for 2 s and up again"
	) &
	flapper=$!
fi
dx_case "dxfer WRITE+READ+SEND 64 KiB for 12 s, link down 2 s and up, verified" b 4 \
	"-o wrs -S 64K -n 4 -T 12 -t 18 -w 2"
if [ "$ROLE" = a ]; then
	wait "$flapper"
	ip link set "$ND" up
fi
ip neigh del "$PEER4" dev "$ND" 2>/dev/null
phase_end
# a's requesters had packets in flight when its link went down, and a
# round-trip estimate from the stream before: adaptive retransmission
# resent early (rc_probes), well before the ~1 s timeout.
if [ "$ROLE" = a ]; then
	if [ "${DELTA_PROBES:-0}" -gt 0 ]; then
		ok "flap: early resends while the link was down (rc_probes +$DELTA_PROBES)"
	else
		not_ok "flap: early resends while the link was down" "rc_probes +${DELTA_PROBES:-0}"
	fi
fi

phase_begin shca-rxe shca rxe
pingpongs
rping_case 4 b
dx_case "dxfer WRITE+READ+SEND 4 KiB x16, verified" b 4 "-o wrs -S 4K -n 16 -w 4"
dx_case "dxfer WRITE+READ+SEND 1 MiB x2, verified" a 4 "-o wrs -S 1M -n 2 -w 2"
dx_case "dxfer over IPv6, 64 KiB x4, verified" b 6 "-o wrs -S 64K -n 4"
phase_end

phase_begin rxe-shca rxe shca
pingpongs
rping_case 6 a
dx_case "dxfer WRITE+READ+SEND 4 KiB x16, verified" b 4 "-o wrs -S 4K -n 16 -w 4"
dx_case "dxfer WRITE+READ+SEND 1 MiB x2, verified" a 4 "-o wrs -S 1M -n 2 -w 2"
phase_end

barrier bye 120
# the rest of this boot is one host again
ip link set "$ND" down
e2e_finish
