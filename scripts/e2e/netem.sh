#!/bin/bash
# Reliability: an RDMA WRITE stream interleaved with SEND messages over one
# RC connection (progs/rcstream.c, RDMA CM) arrives intact while netem
# drops, reorders and duplicates packets on both veths.  The receiver
# checks every byte against the expected pattern, and both ends compare
# checksums of the target buffer and of the SEND payloads.  On shca the
# device counters must then show that every recovery path ran during the
# stream: retransmissions, retransmit timeouts, sequence NAKs (sent and
# received) and duplicate requests.  Runs inside the VM.
#   NETEM_DRV=shca|rxe   shca (default) or rxe (one device, see pair_setup)
#   NETEM_MIB=8          size of the stream under netem (SHCA_NETEM_MIB too;
#                        make check-full: 1024)
#
# 8 MiB is some 8000 packets of 1 KiB (RDMA CM's path MTU on the veths),
# so about 400 are lost: every counter above is hit many times over.  A
# lost sequence NAK (5%) leaves the requester to its retransmit timer, as
# the responder NAKs each gap once, and netem's 1% duplicates alone make
# duplicate requests.
set -u
E2E_SUITE=netem
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

DRV=${NETEM_DRV:-shca}
MIB=${NETEM_MIB:-${SHCA_NETEM_MIB:-8}}
[ "$DRV" = shca ] || E2E_SUITE=netem-$DRV
# netem refuses "reorder" without a delay: the 10% reordered packets go
# out at once, the others 1 ms later.
NETEM="delay 1ms loss 5% reorder 10% duplicate 1%"
PROG=$(prog rcstream) || exit 1

if pair_setup "$DRV"; then
	ok "setup $DRV pair"
else
	not_ok "setup $DRV pair" "device or GIDs missing"
	exit 1
fi
# rxe's pair loops back inside the driver: netem never sees its packets.
[ "$DRV" = rxe ] && echo "# rxe: packets to its own address bypass netem"

# stream_ok SRVLOG CLILOG: both ends verified everything.
stream_ok() {
	grep -q 'receiver: all data verified' "$1" && grep -q 'sender: all data verified' "$2" &&
		return 0
	echo "not verified: $(tail1 "$1" 3) | $(tail1 "$2" 3)"
	return 1
}

# stream NAME MIB: one rcstream run, receiver in shca-b, sender in shca-a.
stream() {
	pair_case "$1" cm \
		"$NB" "$PROG -s -a $AB" \
		"$NA" "$PROG -c -a $AB -m $2 -e 64" stream_ok
	grep -h '^rcstream sender: [0-9]' "$E2E_CLI_LOG" | sed 's/^/# /'
}

# The recovery counters of both devices, summed: recovery_stats TAG sets
# STAT_<TAG>_<counter> for each.
RECOVERY="rc_retransmits rc_timeouts rc_seq_naks_sent rc_seq_naks_rcvd rc_dup_requests"
recovery_stats() {
	local n d v sum
	for n in $RECOVERY; do
		sum=0
		for d in "$DA" "$DB"; do
			v=$(dev_stat "$d" "$n")
			sum=$((sum + ${v:-0}))
		done
		printf -v "STAT_$1_$n" %s "$sum"
	done
}
# recovery_cases: one case per recovery path, on the counters' growth
# during the netem stream.
recovery_cases() {
	local n b a
	declare -A grew
	for n in $RECOVERY; do
		b=STAT_before_$n a=STAT_after_$n
		grew[$n]=$((${!a} - ${!b}))
	done
	echo "# recovery during the netem stream (both devices):$(for n in $RECOVERY; do printf ' %s +%s' "$n" "${grew[$n]}"; done)"
	recovery_case "go-back-N retransmissions (rc_retransmits)" "${grew[rc_retransmits]}"
	recovery_case "retransmit timeouts (rc_timeouts)" "${grew[rc_timeouts]}"
	recovery_case "sequence NAKs sent (rc_seq_naks_sent)" "${grew[rc_seq_naks_sent]}"
	recovery_case "sequence NAKs received (rc_seq_naks_rcvd)" "${grew[rc_seq_naks_rcvd]}"
	recovery_case "duplicate requests answered (rc_dup_requests)" "${grew[rc_dup_requests]}"
}
recovery_case() {
	if [ "$2" -gt 0 ]; then
		ok "netem stream: $1 > 0 ($2)"
	else
		not_ok "netem stream: $1 > 0" "it grew by '$2'"
	fi
}

# Warm the neighbour caches before packets start to get lost.
$NA ping -c 2 -W 5 "$AB" >/dev/null 2>&1
$NA ping -c 2 -W 5 "$B6" >/dev/null 2>&1

start=$SECONDS
E2E_T=600 stream "16 MiB WRITE+SEND stream, no loss" 16
echo "# clean 16 MiB run took $((SECONDS - start)) s"

A="ip netns exec shca-a"
B=$NB	# veth-b is in init_net in the rxe mode
# shellcheck disable=SC2086
if $A tc qdisc add dev veth-a root netem $NETEM &&
	$B tc qdisc add dev veth-b root netem $NETEM; then
	[ "$DRV" = shca ] && recovery_stats before && path_mark "$DA" "$DB"
	start=$SECONDS
	E2E_T=${NETEM_TIMEOUT:-$((600 + MIB * 4))} stream "$MIB MiB WRITE+SEND stream under netem $NETEM" "$MIB"
	echo "# $MIB MiB netem run took $((SECONDS - start)) s"
	[ "$DRV" = shca ] && recovery_stats after && recovery_cases
	[ "$DRV" = shca ] && path_check wire "netem stream: the qdiscs kept it on the wire" "$DA" "$DB"
	# The impairment really happened (shca's packets cross the veths).
	if [ "$DRV" = shca ]; then
		drops=$($A tc -s qdisc show dev veth-a | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -n 1)
		expect_eq "netem dropped packets on veth-a" "$([ "${drops:-0}" -gt 0 ] && echo yes)" yes
	fi
else
	not_ok "$MIB MiB WRITE+SEND stream under netem" "tc qdisc add netem $NETEM failed"
fi
$A tc -s qdisc show dev veth-a | sed 's/^/# veth-a: /'
# How the loss was recovered: go-back-N retransmits, timeouts and NAKs.
if [ "$DRV" = shca ]; then
	for d in "$DA" "$DB"; do
		s=
		for n in rc_retransmits rc_timeouts rc_seq_naks_rcvd rc_seq_naks_sent rc_dup_requests; do
			s="$s $n $(dev_stat "$d" "$n")"
		done
		echo "# $d:$s"
	done
fi
$B tc -s qdisc show dev veth-b | sed 's/^/# veth-b: /'
$A tc qdisc del dev veth-a root
$B tc qdisc del dev veth-b root

pair_teardown
[ "$DRV" = shca ] && check "module unloads" modprobe -r shca
e2e_finish
