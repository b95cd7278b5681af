#!/bin/bash
# RC and UC traffic between two devices across the namespaces shca-a
# (veth-a) and shca-b (veth-b): ibv_rc/uc_pingpong -c, rping -V, ucmatose,
# rdma_server/rdma_client and perftest over IPv4 and IPv6 RoCE v2 GIDs.
# Runs inside the VM (scripts/vm-run topology).
#   RC_DRV=shca|rxe   shca (default): shca0 <-> shca1; rxe: one rxe0 talking
#                     to itself (see pair_setup), to check the suite itself
# Argument "ipv4" (the test kernel's boot, where KASAN makes each run
# several times slower; the 6.1 boot runs every case): IPv4 only, rping
# with 10 pings, a 400-WR SQ wrap (3 laps), one 6 MiB READ run (across
# the namespaces), and of perftest ib_write_bw and ib_atomic_bw only.
# What it leaves out reaches no code the rest misses: the latency runs
# none the bandwidth runs miss; ucmatose and rdma_server/rdma_client none
# that rping misses in shca; ib_send_bw's multi-packet SENDs are the 4 KiB
# pingpongs' (MTU 1024), ib_read_bw's READs the 6 MiB READ's; and the READ
# on one device differs from the one across the namespaces only in the
# netdev its packets loop through.
#
# Sizes (make check; make check-full, SHCA_TIER=full, in brackets): the
# pingpongs 50 round trips of 4 KiB [200] (SHCA_RC_PP_N: each side posts
# its receives once, 500 deep, so more round trips only repeat the same
# SEND/RECV/poll cycle); rping 200 pings [1000], ipv4 30 (SHCA_RC_PINGS:
# every ping the same sequence of SENDs, an RDMA READ and an RDMA WRITE).
# Over IPv6 make check runs the pingpongs, rping and ib_write_bw [every
# perftest]: the address family only matters where a QP's path is
# resolved and its packets' headers built, the same for every opcode,
# and over IPv4 every perftest runs.
set -u
E2E_SUITE=rc
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

DRV=${RC_DRV:-shca}
FULL=0
[ "${SHCA_TIER:-check}" = full ] && FULL=1
FAMS="4 6" PINGS=200 LAT=1 PPN=50
[ "$FULL" = 1 ] && PINGS=1000 PPN=200
# The SQ wrap runs 3000 WRs (tx_depth 128: 23 laps); ipv4: 400 (3 laps).
WRAPN=3000
CMPROGS=1
SMALL=0
[ "${1:-}" = ipv4 ] && FAMS=4 PINGS=10 LAT=0 WRAPN=400 CMPROGS=0 SMALL=1
PINGS=${SHCA_RC_PINGS:-$PINGS} PPN=${SHCA_RC_PP_N:-$PPN}
[ "$DRV" = shca ] || E2E_SUITE=rc-$DRV

if ! pair_setup "$DRV"; then
	not_ok "setup $DRV pair" "devices or RoCE v2 GIDs missing"
	exit 1
fi
ok "setup $DRV pair ($DA GIDs $GA4/$GA6, $DB GIDs $GB4/$GB6)"
declare -A GA=([4]=$GA4 [6]=$GA6) GB=([4]=$GB4 [6]=$GB6)

# --- ibverbs pingpongs, buffers validated (-c) ------------------------------
for t in rc uc; do
	for fam in $FAMS; do
		pair_case "ibv_${t}_pingpong -c IPv$fam" tcp:18515 \
			"$NB" "ibv_${t}_pingpong -d $DB -g ${GB[$fam]} -c -n $PPN -s 4096" \
			"$NA" "ibv_${t}_pingpong -d $DA -g ${GA[$fam]} -c -n $PPN -s 4096 $AB" pp_ok
	done
done

# --- RDMA CM ----------------------------------------------------------------
pair_case "rping -V -C $PINGS IPv4" cm \
	"$NB" "rping -s -a $AB -V -C $PINGS -S 256" \
	"$NA" "rping -c -a $AB -V -C $PINGS -S 256" rping_ok
[ "$FAMS" = 4 ] ||
	pair_case "rping -V -C 100 IPv6" cm \
		"$NB" "rping -s -a $B6 -V -C 100 -S 4000" \
		"$NA" "rping -c -a $B6 -V -C 100 -S 4000" rping_ok
if [ "$CMPROGS" = 1 ]; then
	pair_case "ucmatose" cm \
		"$NB" "ucmatose -b $AB -c 2 -C 20" \
		"$NA" "ucmatose -s $AB -b $AA -c 2 -C 20"
	pair_case "rdma_server/rdma_client" cm \
		"$NB" "rdma_server -s $AB" \
		"$NA" "rdma_client -s $AB"
fi

# --- perftest over RC -------------------------------------------------------
perf() {
	local tool=$1 fam=$2 chk=$3
	shift 3
	pair_case "$tool IPv$fam" tcp:18515 \
		"$NB" "$tool -d $DB -x ${GB[$fam]} -F $*" \
		"$NA" "$tool -d $DA -x ${GA[$fam]} -F $* $AB" "$chk"
}
for fam in $FAMS; do
	perf ib_write_bw "$fam" bw_ok -s 65536 -n 100
	[ "$fam" = 4 ] || [ "$FULL" = 1 ] || continue
	if [ "$SMALL" = 0 ]; then
		perf ib_read_bw "$fam" bw_ok -s 65536 -n 100
		perf ib_send_bw "$fam" bw_ok -s 65536 -n 100
	fi
	perf ib_atomic_bw "$fam" bw_ok -n 200
	[ "$LAT" = 1 ] || continue
	perf ib_send_lat "$fam" lat_ok -s 2 -n 200
	perf ib_write_lat "$fam" lat_ok -s 2 -n 200
done
# Far more iterations than the SQ has slots (perftest's tx_depth is 128):
# perftest posts again as soon as it polls a completion, so an SQ slot
# still held after its completion became visible fails ibv_post_send.
pair_case "ib_write_bw 4KiB -n $WRAPN, the SQ wraps" tcp:18515 \
	"$NB" "ib_write_bw -d $DB -x ${GB[4]} -F -s 4096 -n $WRAPN" \
	"$NA" "ib_write_bw -d $DA -x ${GA[4]} -F -s 4096 -n $WRAPN $AB" bw_ok

# --- large READs on a lossless path -----------------------------------------
# A READ's responses come as a burst the requester cannot pace: shca asks
# for a window at a time, so a 6 MiB READ neither overflows the
# requester's response queue (rx_dropped) nor the responder's own
# transmit path (tx_err).  Across the namespaces and on one device (its
# packets looped back to itself).  Retransmissions are reported, not
# asserted: packets sent from two CPUs may be reordered on the way.
# overflow_sum: rx_dropped + tx_err of both devices (read from sysfs
# without starting a process: TCG makes each slow).
overflow_sum() {
	local s=0 d n v
	for d in "$DA" "$DB"; do
		for n in rx_dropped tx_err; do
			hw_stat_read v "$d" "$n"
			s=$((s + ${v:-0}))
		done
	done
	OVERFLOW=$s
}
# READN (SHCA_RC_READ_N): READs per run (perftest takes 5 at least);
# make check-full: 10.
READN=${SHCA_RC_READ_N:-5}
# big_read NAME SRVNS SRVDEV SRVGID CLINS CLIDEV CLIGID ADDR
big_read() {
	local o0 o1 r
	overflow_sum
	o0=$OVERFLOW
	pair_case "$1" tcp:18515 \
		"$2" "ib_read_bw -d $3 -x $4 -F -s 6291456 -n $READN" \
		"$5" "ib_read_bw -d $6 -x $7 -F -s 6291456 -n $READN $8" bw_ok
	overflow_sum
	o1=$OVERFLOW
	expect_eq "$1: no packet dropped (rx_dropped + tx_err grew by)" "$((o1 - o0))" 0
	hw_stat_read r "$6" rc_retransmits
	echo "# $1: $6 rc_retransmits now ${r:-?}"
}
if [ "$DRV" = shca ]; then
	big_read "ib_read_bw 6 MiB x$READN across the namespaces" \
		"$NB" "$DB" "${GB[4]}" "$NA" "$DA" "${GA[4]}" "$AB"
	[ "$SMALL" = 1 ] ||
		big_read "ib_read_bw 6 MiB x$READN on one device" \
			"$NA" "$DA" "${GA[4]}" "$NA" "$DA" "${GA[4]}" "$AA"
fi

pair_teardown
if [ "$DRV" = shca ]; then
	check "module unloads" modprobe -r shca
fi
e2e_finish
