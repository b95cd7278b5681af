#!/bin/bash
# RAW_PACKET QPs, flow steering, work queues and RSS.  Runs inside the VM.
#
# On shca8 alone, on veth raw0 (10.93.0.1) whose peer raw0p stands for
# the wire (IPv6 off on both: no stray frames):
#   - progs/raw_cases.py: the statements of ibv_create_qp(3) and
#     ibv_create_flow(3) for raw QPs and rules (sends on the wire byte for
#     byte, IP_CSUM, loopback to other QPs' rules, every spec type with
#     full and partial masks, priorities, DONT_TRAP against the kernel
#     stack, drops counted) and hostile input (bad rules, hand-made
#     CREATE_FLOW commands, frames cut short), with `rdma statistic`
#     deltas;
#   - progs/wq_cases.py (WQ states and flushes, RSS hash configurations,
#     RSS traffic), progs/wq_busy.c (caps written back, EBUSY, the flush
#     of posts made in ERR) and progs/wq_hostile.c (RSS delivery without
#     a WQE, to a WQ in RESET, with a bad lkey, a short buffer, a hostile
#     producer index: each completion or counted drop);
#   - progs/rss_spread.py: 512 IPv4/UDP and 256 IPv6/TCP flows through
#     RSS QPs, each frame on the WQ an independent Toeplitz oracle names,
#     the spread within twice the fair share;
#   - rdma-core's test_flow, test_rss_traffic and the raw QP tests of
#     test_qp through pyverbs-run.py: every one must run and pass (rxe has
#     no raw QPs: they skip there, so the pyverbs suite cannot demand it);
#   - progs/flow_fuzz.py (E2E_ONLY part flow-fuzz, every mode): a seeded
#     fuzz of frames toward flow rules, malformed in every way it knows,
#     each delivered byte for byte where an oracle says or counted;
#     SHCA_FLOW_FUZZ_N frames (default 3000, full 100000, lifecycle
#     1000), SHCA_FLOW_FUZZ_SEED;
# then between shca0 in shca-a and shca1 in shca-b (pair_setup):
#   - raw_ethernet_bw and raw_ethernet_lat (perftest), the server's rule
#     on its MAC.  perftest under TCG sometimes gives up with "Correlation
#     coefficient r^2 < 0.9 ... Can't produce a report"; such a run is
#     retried (twice at most) and never counts as a pass.
#
# Arguments: none (make check), "full" (make check-full: more perftest
# iterations, 10^5 fuzzed frames), "lifecycle" (the debug kernel:
# raw_cases.py's hostile cases and the WQ/table/RSS QP lifetimes,
# wq_cases.py, 1000 fuzzed frames; no rss_spread, no rdma-core tests, no
# perftest).
set -u
E2E_SUITE=raw
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

mode=${1:-all}
case "$mode" in
all) bw_n=200 lat_n=200 fuzz_n=3000 ;;
full) bw_n=2000 lat_n=2000 fuzz_n=100000 ;;
lifecycle) fuzz_n=1000 ;;	# KASAN's pace
*) not_ok "arguments" "unknown mode $mode"; exit 1 ;;
esac
DEV=shca8 IF=raw0 PEER=raw0p

raw_setup() {
	modprobe shca &&
	ip link add "$IF" type veth peer name "$PEER" &&
	sysctl -qw "net.ipv6.conf.$IF.disable_ipv6=1" &&
	sysctl -qw "net.ipv6.conf.$PEER.disable_ipv6=1" &&
	ip link set "$IF" up && ip link set "$PEER" up &&
	ip addr add 10.93.0.1/24 dev "$IF" &&
	rdma link add "$DEV" type shca netdev "$IF" &&
	wait_for 90 port_active "$DEV"
}

if e2e_selected "solo"; then
	check "setup $DEV on $IF" raw_setup
	only=()
	[ "$mode" = lifecycle ] && only=(--hostile)
	exits_ok "raw_cases.py exits 0" /usr/bin/python3 "$here/progs/raw_cases.py" \
		--dev "$DEV" --ifname "$IF" --peer "$PEER" "${only[@]}"
	if [ -f "$here/progs/wq_cases.py" ]; then
		# all of it, on the debug kernel too: it is short
		exits_ok "wq_cases.py exits 0" /usr/bin/python3 "$here/progs/wq_cases.py" \
			--dev "$DEV"
	else
		not_ok "wq_cases.py present" "$here/progs/wq_cases.py missing"
	fi
	# what pyverbs cannot reach: ERR flushes of posts made in ERR,
	# EBUSY; RSS delivery's drops, errors and a hostile producer index
	for p in wq_busy wq_hostile; do
		exe=$(prog "$p") || continue
		timeout 600 "$exe" "$DEV" >"$E2E_LOGS/raw-$p.log" 2>&1
		rc=$?
		tap_relay "$E2E_LOGS/raw-$p.log"
		[ "$rc" = 0 ] || not_ok "$p exits 0" "exit status $rc"
	done
	if [ "$mode" != lifecycle ]; then
		t0=$SECONDS
		exits_ok "rss_spread.py exits 0" /usr/bin/python3 "$here/progs/rss_spread.py" \
			--dev "$DEV" --ifname "$IF" --peer "$PEER"
		echo "# $E2E_SUITE: rss_spread: $((SECONDS - t0)) s"
		# rdma-core's own: none may skip (MODULE:PREFIX, the same in 44
		# and 56); the test_qp ones create raw QPs with and without
		# attributes, legacy and extended, and query them
		must=(--must-run tests.test_flow.FlowTest
			--must-run tests.test_rss_traffic.RSSTrafficTest
			--must-run tests.test_qp.QPTest.test_create_raw_qp
			--must-run tests.test_qp.QPTest.test_query_raw_qp)
		exits_ok "rdma-core's test_flow, test_rss_traffic and raw QP tests ran and passed" \
			/usr/bin/python3 "$here/progs/pyverbs-run.py" --dev "$DEV" "${must[@]}" \
			test_flow test_rss_traffic \
			test_qp.QPTest.test_create_raw_qp_no_attr \
			test_qp.QPTest.test_create_raw_qp_with_attr \
			test_qp.QPTest.test_create_raw_qp_ex_no_attr \
			test_qp.QPTest.test_create_raw_qp_ex_with_attr \
			test_qp.QPTest.test_query_raw_qp
	fi
	check "rdma link delete $DEV" rdma link delete "$DEV"
	ip link del "$IF"
fi

# --- frames toward flow rules: a fuzz ---------------------------------------
# progs/flow_fuzz.py on shca8/raw0 again: SHCA_FLOW_FUZZ_N frames (by
# default 3000; raw:full, make check-full's, 100000) from the peer end,
# each delivered to the QPs an oracle names or counted.
if e2e_selected "flow-fuzz"; then
	check "setup $DEV on $IF (flow fuzz)" raw_setup
	t0=$SECONDS
	SHCA_FLOW_FUZZ_N=${SHCA_FLOW_FUZZ_N:-$fuzz_n} timeout 7200 /usr/bin/python3 "$here/progs/flow_fuzz.py" \
		--dev "$DEV" --ifname "$IF" --peer "$PEER" >"$E2E_LOGS/raw-flow-fuzz.log" 2>&1
	rc=$?
	tap_relay "$E2E_LOGS/raw-flow-fuzz.log"
	grep -E '^# fuzz\(' "$E2E_LOGS/raw-flow-fuzz.log"
	echo "# $E2E_SUITE: flow fuzz: $((SECONDS - t0)) s"
	[ "$rc" = 0 ] || not_ok "flow_fuzz.py exit status" "$rc"
	check "rdma link delete $DEV (flow fuzz)" rdma link delete "$DEV"
	ip link del "$IF"
fi

# --- perftest between the namespaces ---------------------------------------

# raw_qp_up NSCMD COMM: a QP of the process COMM is in RTR or RTS (the
# receiving side of raw_ethernet_bw stops at RTR) in that namespace.
raw_qp_up() {
	$1 rdma resource show qp 2>/dev/null | grep -E ' state (RTR|RTS) ' |
		grep -q " comm $2"
}

# raw_perf NAME TOOL CHECK ARGS: TOOL's server in shca-b (its rule on
# veth-b's MAC), then its client in shca-a once the server's QP is up.  A run that ends in perftest's "Can't produce a report" (r^2 under
# TCG) is retried, at most twice.
raw_perf() {
	local name=$1 tool=$2 chk=$3 try slog clog srv crc src t0=$SECONDS
	shift 3
	e2e_selected "$name" || return 0
	for try in 1 2 3; do
		slog=$E2E_LOGS/raw-$tool-$try.srv clog=$E2E_LOGS/raw-$tool-$try.cli
		$NB timeout 300 "$tool" -d "$DB" -B "$MB" -E "$MA" --server -F "$@" \
			>"$slog" 2>&1 &
		srv=$!
		wait_for 120 raw_qp_up "$NB" "${tool:0:15}"	# TASK_COMM_LEN
		nap 5	# its receives are posted right after
		$NA timeout 300 "$tool" -d "$DA" -B "$MA" -E "$MB" --client -F "$@" \
			>"$clog" 2>&1
		crc=$?
		server_reap "$srv"
		src=$SERVER_RC
		if grep -q "Can't produce a report" "$slog" "$clog"; then
			echo "# $E2E_SUITE: $name: try $try: perftest's r^2 check gave up, again"
			continue
		fi
		break
	done
	echo "# $E2E_SUITE: $name: $((SECONDS - t0)) s, $try tries"
	PAIR_NOREPORT=0
	grep -q "Can't produce a report" "$slog" "$clog" && PAIR_NOREPORT=1
	PAIR_CRC=$crc PAIR_SRC=$src E2E_SRV_LOG=$slog E2E_CLI_LOG=$clog
	pair_verdict "$name" "$chk"
}

if [ "$mode" != lifecycle ] && e2e_selected "perftest"; then
	if ! pair_setup shca; then
		not_ok "setup shca pair" "devices or RoCE v2 GIDs missing"
	else
		ok "setup shca pair"
		MA=$($NA cat /sys/class/net/veth-a/address)
		MB=$($NB cat /sys/class/net/veth-b/address)
		# every receive posted up front (-r): a raw QP drops what finds
		# no receive, and perftest's server then waits for it in vain
		raw_perf "raw_ethernet_bw 512 B x$bw_n" raw_ethernet_bw bw_ok -s 512 \
			-n "$bw_n" -r "$bw_n"
		raw_perf "raw_ethernet_lat 64 B x$lat_n" raw_ethernet_lat lat_ok -s 64 -n "$lat_n"
		pair_teardown
	fi
fi
check "unload shca (no raw QP, rule, WQ or table left behind)" modprobe -r shca
e2e_finish
