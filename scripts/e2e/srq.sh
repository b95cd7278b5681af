#!/bin/bash
# Shared receive queues: ibv_srq_pingpong -c (several RC QPs on one SRQ)
# and progs/srqcm.c (rdma_create_srq, EBUSY destroy, every byte checked)
# between shca0 in shca-a and shca1 in shca-b, then the verbs cases of
# srq_cases.py (caps, UD GRH, limit event, RNR, LAST_WQE_REACHED, post
# errors) on one device.  Runs inside the VM.  (The hostile mapped SRQ
# ring is in hostile.sh.)
#
#   srq.sh [PART]   PART: traffic (the pingpongs and srqcm: a stock
#                   kernel), lifecycle (the SRQ shared by 16 QPs torn down
#                   from outside, and srq_cases.py: the debug kernel);
#                   default: both
set -u
E2E_SUITE=srq
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

PROG=$(prog srqcm) || exit 1
part=${1:-all}
case "$part" in
all | traffic | lifecycle) ;;
*) not_ok "arguments" "unknown part $part"; exit 1 ;;
esac
# want PART: PART runs in this invocation.
want() { [ "$part" = all ] || [ "$part" = "$1" ]; }

if ! pair_setup shca; then
	not_ok "setup shca pair" "devices or RoCE v2 GIDs missing"
	exit 1
fi
ok "setup shca pair"
declare -A GA=([4]=$GA4 [6]=$GA6) GB=([4]=$GB4 [6]=$GB6)

if want traffic; then
	pair_case "ibv_srq_pingpong -c IPv4, 4 QPs" tcp:18515 \
		"$NB" "ibv_srq_pingpong -d $DB -g ${GB[4]} -c -q 4 -n 100 -s 1024 -r 64" \
		"$NA" "ibv_srq_pingpong -d $DA -g ${GA[4]} -c -q 4 -n 100 -s 1024 -r 64 $AB" pp_ok
	pair_case "ibv_srq_pingpong -c -e IPv6, 16 QPs" tcp:18515 \
		"$NB" "ibv_srq_pingpong -d $DB -g ${GB[6]} -c -e -q 16 -n 20 -s 4096 -r 32" \
		"$NA" "ibv_srq_pingpong -d $DA -g ${GA[6]} -c -e -q 16 -n 20 -s 4096 -r 32 $AB" pp_ok

	# srqcm_ok SRVLOG CLILOG: the server verified every message.
	srqcm_ok() {
		grep -q 'srqcm server: 256 messages verified' "$1" && return 0
		echo "server did not verify: $(tail1 "$1" 3)"
		return 1
	}
	pair_case "rdma_create_srq over RDMA CM, 256 messages" cm \
		"$NB" "$PROG -s -a $AB -n 256" \
		"$NA" "$PROG -c -a $AB -n 256" srqcm_ok
fi

# --- lifetimes: an SRQ shared by 16 QPs, torn down from outside ----------
# rc_qps_are N: shca1 has N RC QPs (rdma restrack).
rc_qps() { $NB rdma resource show qp link "$DB/1" | grep -c ' type RC '; }
rc_qps_are() { [ "$(rc_qps)" = "$1" ]; }
# srq_holder: an ibv_srq_pingpong server, which sets up its SRQ and 16 QPs
# before it waits for its client; its pid in HOLDER.
srq_holder() {
	$NB ibv_srq_pingpong -d "$DB" -g "${GB[4]}" -q 16 >/dev/null 2>&1 &
	HOLDER=$!
	wait_tcp_listen "$NB" 18515 && wait_for 120 rc_qps_are 16
}
if want lifecycle; then
	if srq_holder; then
		kill -9 "$HOLDER"; wait "$HOLDER" 2>/dev/null
		check "kill -9 of a process with an SRQ shared by 16 QPs cleans up" \
			wait_for 120 rc_qps_are 0
	else
		not_ok "SRQ holder set up" "16 RC QPs not seen: $(rc_qps)"
	fi
	if srq_holder; then
		# shellcheck disable=SC2086
		check "rdma link delete while an SRQ and its QPs are in use" \
			timeout 120 $NB rdma link delete "$DB"
		kill -9 "$HOLDER"; wait "$HOLDER" 2>/dev/null
		check "device re-added after the delete" rdma_dev_add "$NB" shca "$DB" veth-b
	else
		not_ok "SRQ holder set up again" "16 RC QPs not seen: $(rc_qps)"
	fi
fi
pair_teardown

if want lifecycle; then
	solo_cases shca9 srq0 10.96.0.1 ffff:0a60:0001 srq_cases.py
fi
check "unload shca (no SRQ left behind)" modprobe -r shca
e2e_finish
