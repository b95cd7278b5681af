#!/bin/bash
# Teardown under traffic, every object type live and busy (issue #37):
# progs/busy_all.c makes one of each kind of object shca has on a device
# (PD, MR, type 1 and 2 MWs, CQ and extended CQ on an armed completion
# channel, RC/UC/UD QPs, AH, XRCD with XRC SRQ, INI and TGT QPs, basic
# SRQ, TM SRQ with tags posted, WQ + indirection table + RSS QP, raw QPs
# with flow rules), every ring mapped, and keeps traffic flowing on all of
# them (each message checked) while the device is torn down from outside,
# each case on a fresh device on its own veth:
#   kill     kill -9 of the process: restrack back to what the device had
#            before (no QP/CQ/MR/PD/SRQ/context left), and the device
#            still moves data (busy_all again, to ready, then SIGTERM:
#            everything destroyed in order, exit 0);
#   netdev   `ip link del` of the netdev under the device: the device
#            goes away, busy_all sees it (DEVICE_FATAL), cleans up and
#            exits 0;
#   rmmod    `modprobe -r shca` with busy_all live: uverbs disassociates
#            the context, rmmod returns, busy_all sees DEVICE_FATAL and
#            exits 0; shca loads again and a device on the same veth
#            moves data.
# Runs inside the VM as root; made for the debug kernel (KASAN, lockdep,
# kmemleak: the harness fails the boot on any report).  Waits are
# event-driven with generous bounds, no wall-clock assertions.
set -u
E2E_SUITE=teardown
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

BUSY=$(prog busy_all) || exit 1
SYS=/sys/class/infiniband

dev_gone() { [ ! -e "$SYS/$1" ]; }
# res_line DEV: DEV's restrack summary (object counts), without its index.
res_line() { rdma resource show 2>/dev/null | sed -n "s/^[0-9]*: $1: //p"; }
res_is() { [ "$(res_line "$1")" = "$2" ]; }
res_none() { [ -z "$(res_line "$1")" ]; }
# dev_add DEV NETDEV GIDPAT: DEV on NETDEV again, ACTIVE with its GID.
dev_add() {
	modprobe shca && rdma link add "$1" type shca netdev "$2" &&
	wait_for 90 port_active "$1" && wait_for 90 rdma_gid "$1" "$3"
}

# busy_start DEV GIDPAT: busy_all on DEV in the background (BPID, its log
# BLOG); true once it printed "ready" (every object type live and busy).
BRUN=0
busy_start() {
	local gidx
	gidx=$(rdma_gid "$1" "$2") || return 1
	BRUN=$((BRUN + 1))
	BLOG=$E2E_LOGS/teardown-busy_all-$BRUN.log
	"$BUSY" "$1" "$gidx" >"$BLOG" 2>&1 &
	BPID=$!
	wait_for 120 _ready_or_gone
	grep -q '^busy_all: ready' "$BLOG"
}
_ready_or_gone() { grep -q '^busy_all: ready' "$BLOG" || _gone "$BPID"; }

# busy_reap: wait up to 120 s for busy_all to exit (killed if it does
# not); BRC is its exit status, or "hung".
busy_reap() {
	server_reap "$BPID"
	BRC=$SERVER_RC
}

# busy_shows: the last lines of its log, for a "not ok" line.
busy_shows() { tail -n 4 "$BLOG" | tr '\n' ' '; }

# ready_case NAME: the case of busy_all reaching ready (it is left running).
ready_case() {
	if busy_start "$@"; then
		ok "$NAME: busy_all: $(sed -n 's/^busy_all: ready //p' "$BLOG") object types live and busy"
		sed -n 's/^busy_all: live: /# live: /p' "$BLOG"
		return 0
	fi
	not_ok "$NAME: busy_all ready" "$(busy_shows)"
	kill -9 "$BPID" 2>/dev/null
	wait "$BPID" 2>/dev/null
	return 1
}

# gone_case: busy_all exits 0 having seen its device go away.
gone_case() {
	busy_reap
	if [ "$BRC" = 0 ] && grep -q '^busy_all: device gone, cleaned up' "$BLOG"; then
		ok "$NAME: busy_all saw the device gone, cleaned up, exit 0"
	else
		not_ok "$NAME: busy_all saw the device gone" "exit $BRC: $(busy_shows)"
	fi
}

# term_case DEV GIDPAT: busy_all to ready again, then SIGTERM: a clean
# teardown of everything, exit 0.
term_case() {
	if ! busy_start "$@"; then
		not_ok "$NAME: the device moves data again (busy_all ready)" "$(busy_shows)"
		kill -9 "$BPID" 2>/dev/null
		wait "$BPID" 2>/dev/null
		return 1
	fi
	kill -TERM "$BPID"
	busy_reap
	if [ "$BRC" = 0 ]; then
		ok "$NAME: busy_all again to ready, SIGTERM tears all down, exit 0"
	else
		not_ok "$NAME: busy_all again, SIGTERM" "exit $BRC: $(busy_shows)"
	fi
}

# moves_data DEV GIDPAT: three UD datagrams from DEV to itself arrive whole.
moves_data() {
	local gidx
	gidx=$(rdma_gid "$1" "$2") && "$BUSY" "$1" "$gidx" moves-data
}

# --- kill -9 --------------------------------------------------------------
NAME='kill'
if check "setup shtd1 on td1" solo_setup shtd1 td1 10.98.1.1 ffff:0a62:0101; then
	base=$(res_line shtd1)
	echo "# shtd1 before: $base"
	if ready_case shtd1 ffff:0a62:0101; then
		kill -9 "$BPID"
		wait "$BPID" 2>/dev/null
		check "kill: restrack back to before (no QP/CQ/MR/PD/SRQ left)" \
			wait_for 120 res_is shtd1 "$base"
		echo "# shtd1 after: $(res_line shtd1)"
		term_case shtd1 ffff:0a62:0101
		check "kill: restrack back to before after SIGTERM" \
			wait_for 120 res_is shtd1 "$base"
	fi
	check "kill: rdma link delete" rdma link delete shtd1
	ip link del td1
fi

# --- ip link del of the netdev --------------------------------------------
NAME=netdev
if check "setup shtd2 on td2" solo_setup shtd2 td2 10.98.2.1 ffff:0a62:0201; then
	if ready_case shtd2 ffff:0a62:0201; then
		check "netdev: ip link del td2 under busy traffic" ip link del td2
		check "netdev: shtd2 unregistered" wait_for 120 dev_gone shtd2
		gone_case
		check "netdev: nothing of shtd2 left in restrack" res_none shtd2
	else
		ip link del td2
	fi
fi

# --- rmmod ----------------------------------------------------------------
NAME=rmmod
if check "setup shtd3 on td3" solo_setup shtd3 td3 10.98.3.1 ffff:0a62:0301; then
	if ready_case shtd3 ffff:0a62:0301; then
		check "rmmod: modprobe -r shca with busy_all live" timeout 120 modprobe -r shca
		gone_case
		check "rmmod: shca unloaded" sh -c '! grep -q "^shca " /proc/modules'
		check "rmmod: shca loads again, a device on td3" dev_add shtd3 td3 ffff:0a62:0301
		check "rmmod: the new device moves data" moves_data shtd3 ffff:0a62:0301
		check "rmmod: rdma link delete" rdma link delete shtd3
	fi
	ip link del td3
fi

check "unload shca (nothing left behind)" modprobe -r shca
e2e_finish
