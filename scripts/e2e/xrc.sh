#!/bin/bash
# XRC (IBTA Annex A14) and SRQ resize.  Runs inside the VM.
#
# Between shca0 in shca-a and shca1 in shca-b:
#   - ibv_xsrq_pingpong: a server with -c 2 and two clients at once (IPv4;
#     the clients share one XRCD through /tmp/xrc_domain, so each gets
#     messages for its SRQ through the other's target QP), and one client
#     over IPv6 with multi-packet messages;
#   - rdma_xserver / rdma_xclient -c x (librdmacm's XRC endpoints; IPv4:
#     rdma_xserver binds the first passive address, 0.0.0.0);
#   - ibv_xsrq_pingpong under netem (loss, reordering, duplicates): XRC
#     requests are retransmitted and recovered as RC's are;
#   - progs/xrcshare: the target side two processes sharing one XRCD
#     through a file and one target QP through ibv_open_qp(), every XRC
#     operation checked byte for byte, the creator killed with SIGKILL
#     while the other process keeps using its QP, requests naming an SRQ
#     of another XRCD, a basic SRQ or a dead process's SRQ refused
#     (rx_xrc_bad_srq counts them), teardown in the wrong order;
#   - holders: an XRCD and a target QP held by two processes, each killed
#     with SIGKILL: the QP outlives the first and is gone after the last.
# Then progs/xrc_cases.py on shca9 alone (XRC SRQ and resize statements of
# the man pages, SRQ resize with traffic, the R_Key checked against the
# named SRQ's PD).
#
# Argument "lifecycle" (the debug kernel): xrcshare and the holders only.
# The hostile XRC packets are in rc-resp-fuzz.sh, the XRC udata in udata.sh.
set -u
E2E_SUITE=xrc
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

PROG=$(prog xrcshare) || exit 1
mode=${1:-all}
case "$mode" in all | lifecycle) ;; *) not_ok "arguments" "unknown mode $mode"; exit 1 ;; esac

if ! pair_setup shca; then
	not_ok "setup shca pair" "devices or RoCE v2 GIDs missing"
	exit 1
fi
ok "setup shca pair"
declare -A GA=([4]=$GA4 [6]=$GA6) GB=([4]=$GB4 [6]=$GB6)
PIDS=()

# xsrq_case NAME V CLIENTS ARGS: an ibv_xsrq_pingpong server in shca-b
# (-c CLIENTS) and CLIENTS clients in shca-a at once over the IPv<V> GIDs;
# every process exits 0 after printing "success".
xsrq_case() {
	local name=$1 v=$2 n=$3 args=$4 srv i why='' t0=$SECONDS
	local slug=xrc-xsrq$v pids=()
	e2e_selected "$name" || return 0
	# shellcheck disable=SC2086
	$NB timeout "$E2E_T" ibv_xsrq_pingpong -d "$DB" -g "${GB[$v]}" -c "$n" $args \
		>"$E2E_LOGS/$slug.srv" 2>&1 &
	srv=$!
	wait_for 120 tcp_listening "$srv" 18515
	for i in $(seq 1 "$n"); do
		# shellcheck disable=SC2086
		$NA timeout "$E2E_T" ibv_xsrq_pingpong -d "$DA" -g "${GA[$v]}" $args "$AB" \
			>"$E2E_LOGS/$slug.cli$i" 2>&1 &
		pids+=($!)
	done
	for i in $(seq 1 "$n"); do
		server_reap "${pids[$((i - 1))]}" && grep -q '^success' "$E2E_LOGS/$slug.cli$i" ||
			why+="client $i rc=$SERVER_RC: $(gist "$E2E_LOGS/$slug.cli$i") "
	done
	server_reap "$srv" && grep -q '^success' "$E2E_LOGS/$slug.srv" ||
		why+="server rc=$SERVER_RC: $(gist "$E2E_LOGS/$slug.srv")"
	echo "# $E2E_SUITE: $name: $((SECONDS - t0)) s"
	if [ -n "$why" ]; then not_ok "$name" "$why"; else ok "$name"; fi
}

# xcm_ok SRVLOG CLILOG: both rdma_x* programs reached their end with 0
# (the server only after its receive completed).
xcm_ok() {
	grep -q 'rdma_xserver: end 0' "$1" && grep -q 'rdma_xclient: end 0' "$2" && return 0
	echo "no clean end: server '$(tail1 "$1" 2)' client '$(tail1 "$2" 2)'"
	return 1
}

if [ "$mode" = all ]; then
	xsrq_case "ibv_xsrq_pingpong IPv4, a server and 2 clients sharing an XRCD" 4 2 "-n 20 -s 1024"
	xsrq_case "ibv_xsrq_pingpong IPv6, 4 KiB messages" 6 1 "-n 20 -s 4096"
	pair_case "rdma_xserver/rdma_xclient -c x IPv4" cm \
		"$NB" "rdma_xserver -c x" "$NA" "rdma_xclient -c x -s $AB" xcm_ok
fi

# --- XRC recovers from loss like RC: netem on both veths ------------------
# xrc_netem_case: ibv_xsrq_pingpong with multi-packet messages while netem
# drops, reorders and duplicates; the pingpong checks its completions, and
# the initiator's device must have retransmitted.
XRC_NETEM="delay 1ms loss 5% reorder 10% duplicate 1%"
xrc_netem_case() {
	local name="ibv_xsrq_pingpong under netem: XRC retransmits and recovers"
	local r0 r1
	e2e_selected "$name" || return 0
	# shellcheck disable=SC2086
	if ! $NA tc qdisc add dev veth-a root netem $XRC_NETEM ||
		! $NB tc qdisc add dev veth-b root netem $XRC_NETEM; then
		not_ok "$name" "tc qdisc add netem $XRC_NETEM failed"
		$NA tc qdisc del dev veth-a root 2>/dev/null
		return 0
	fi
	r0=$(( $(dev_stat "$DA" rc_retransmits) + $(dev_stat "$DB" rc_retransmits) ))
	xsrq_case "$name" 4 1 "-n 200 -s 4096"
	r1=$(( $(dev_stat "$DA" rc_retransmits) + $(dev_stat "$DB" rc_retransmits) ))
	$NA tc -s qdisc show dev veth-a | sed 's/^/# veth-a: /'
	$NA tc qdisc del dev veth-a root
	$NB tc qdisc del dev veth-b root
	if [ "$r1" -gt "$r0" ]; then
		ok "XRC under netem: go-back-N retransmissions (+$((r1 - r0)))"
	else
		not_ok "XRC under netem: go-back-N retransmissions" "rc_retransmits grew by $((r1 - r0))"
	fi
}
[ "$mode" = all ] && xrc_netem_case

# --- xrcshare: two target processes, one XRCD, one target QP --------------
if e2e_selected "xrcshare"; then
	t0=$SECONDS
	bad0=$(dev_stat "$DB" rx_xrc_bad_srq)
	f=$TMPDIR/xrcshare.xrcd
	rm -f "$f" "$f.none"
	tlog=$E2E_LOGS/xrc-xrcshare.tgt ilog=$E2E_LOGS/xrc-xrcshare.ini
	$NB timeout "$E2E_T" "$PROG" -t -d "$DB" -g "${GB[4]}" -f "$f" -p 18600 >"$tlog" 2>&1 &
	tpid=$!
	wait_for 120 tcp_listening "$tpid" 18600
	$NA timeout "$E2E_T" "$PROG" -i -d "$DA" -g "${GA[4]}" -a "$AB" -p 18600 >"$ilog" 2>&1
	irc=$?
	server_reap "$tpid"
	trc=rc=$SERVER_RC
	tap_relay "$tlog"
	tap_relay "$ilog"
	[ "$trc" = rc=0 ] || grep -q '^not ok' "$tlog" ||
		not_ok "xrcshare target side exit status" "$trc: $(tail1 "$tlog")"
	[ "$irc" = 0 ] || grep -q '^not ok' "$ilog" ||
		not_ok "xrcshare initiator exit status" "rc=$irc: $(tail1 "$ilog")"
	bad1=$(dev_stat "$DB" rx_xrc_bad_srq)
	if [ -z "$bad0" ] || [ -z "$bad1" ]; then
		not_ok "rx_xrc_bad_srq counts the refused requests" "no such counter on $DB"
	elif [ $((bad1 - bad0)) -ge 3 ]; then
		ok "rx_xrc_bad_srq counts the refused requests (grew by $((bad1 - bad0)))"
	else
		not_ok "rx_xrc_bad_srq counts the refused requests" "grew by $((bad1 - bad0)), want >= 3"
	fi
	rm -f "$f"
	echo "# $E2E_SUITE: xrcshare: $((SECONDS - t0)) s"
fi

# --- lifetimes: a target QP held by two processes, both killed -----------
# xrc_tgts: shca1's XRC target QPs (rdma restrack lists the real QP once).
xrc_tgts() { $NB rdma resource show qp link "$DB/1" | grep -c ' type XRC_TGT '; }
xrc_tgts_are() { [ "$(xrc_tgts)" = "$1" ]; }
if e2e_selected "holders"; then
	f=$TMPDIR/xrc-hold.xrcd
	rm -f "$f"
	clog=$E2E_LOGS/xrc-creator.log olog=$E2E_LOGS/xrc-opener.log
	$NB "$PROG" -C -d "$DB" -f "$f" >"$clog" 2>&1 &
	creator=$!
	PIDS+=("$creator")
	if wait_for 120 grep -q 'qpn [0-9]' "$clog"; then
		qpn=$(sed -n 's/.*qpn \([0-9]*\).*/\1/p' "$clog")
		$NB "$PROG" -O -d "$DB" -f "$f" -q "$qpn" >"$olog" 2>&1 &
		opener=$!
		PIDS+=("$opener")
		check "a second process opens the target QP $qpn through the XRCD's file" \
			wait_for 120 grep -q "opener: qpn $qpn " "$olog"
		check "the target QP is listed once" xrc_tgts_are 1
		kill -9 "$creator"
		wait "$creator" 2>/dev/null
		check "kill -9 of its creator: the QP lives on (the opener holds it)" xrc_tgts_are 1
		check "the opener is still alive" kill -0 "$opener"
		kill -9 "$opener"
		wait "$opener" 2>/dev/null
		check "kill -9 of the last holder: no XRC target QP left" wait_for 120 xrc_tgts_are 0
	else
		not_ok "XRC holder set up" "$(tail1 "$clog")"
	fi
	rm -f "$f"
fi
for p in "${PIDS[@]}"; do
	kill -9 "$p" 2>/dev/null
done
# user_qps_gone: no QP but QP1 (GSI) left on either device.
user_qps_gone() {
	! { $NA rdma resource show qp link "$DA/1"; $NB rdma resource show qp link "$DB/1"; } |
		grep -q -E ' type (RC|UC|UD|XRC_INI|XRC_TGT) '
}
check "no QP left on either device" wait_for 120 user_qps_gone
pair_teardown

if [ "$mode" = all ] && e2e_selected "xrc_cases"; then
	solo_cases shca9 xrc0 10.95.0.1 ffff:0a5f:0001 xrc_cases.py
fi
check "unload shca (no XRC object left behind)" modprobe -r shca
e2e_finish
