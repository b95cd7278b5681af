#!/bin/bash
# Completion vectors, CQ moderation and multicast (vm_events), arming
# through the mapped CQ page (vm_arm), and event-driven pingpongs, on
# shca0 in netns shca-a and shca1 in shca-b.  Runs inside the VM
# (scripts/vm-run topology), started by scripts/e2e/events.sh; build first
# with `make -C scripts/e2e/progs`.
#   SHCA_ARM_N   iterations of vm_arm's loops and of the strace count (400)
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
. "$repo/scripts/e2e/lib.sh"
E2E_SUITE=events
A="ip netns exec shca-a"
bin=$(prog vm_events) || exit 1
arm=$(prog vm_arm) || exit 1
N=${SHCA_ARM_N:-400}


modprobe shca
$A rdma link add shca0 type shca netdev veth-a
wait_for 60 port_active shca0
wait_for 60 rdma_gid shca0 "$GID4_A"
wait_for 60 rdma_gid shca0 "$GID6_A"
g=$(rdma_gid shca0 "ffff:0a4d:0001")

# A user CQ's comp_handler (uverbs': it queues the event and wakes the
# process) runs inline where the CQE is written or the moderation timer
# fires, never through shca's comp_work hop: shca0's cq_events_queued
# (events delivered by that work item) must not grow while vm_events and
# vm_arm raise events.  (A counter rather than a workqueue tracepoint:
# switching a tracepoint on or off patches kernel text, which TCG has been
# seen to trip over with an int3 oops in __schedule.)
hw_stat_read q0 shca0 cq_events_queued
exits_ok "vm_events exits 0" \
	$A timeout 600 "$bin" shca0 "$g" "$@"
rc=$?
exits_ok "vm_arm exits 0" \
	$A timeout 1200 "$arm" shca0 "$g" "$N" || rc=1
hw_stat_read q1 shca0 cq_events_queued
if [ -z "$q0" ] || [ -z "$q1" ]; then
	echo "not ok - user CQ events delivered inline: no cq_events_queued counter on shca0"
	rc=1
elif [ "$q1" = "$q0" ]; then
	echo "ok - user CQ events delivered inline (cq_events_queued +0)"
else
	echo "not ok - user CQ events went through comp_work $((q1 - q0)) times"
	rc=1
fi

# ibv_req_notify_cq costs no system call.  vm_arm's loop (arm 10 times,
# send one datagram, wait for its event) runs N times under strace, which
# records the opening of the uverbs device and every write(2) and ioctl(2)
# with the first 4 bytes of its buffer.  A uverbs write command starts
# with its number (REQ_NOTIFY_CQ 23, POST_SEND 28); rdma-core may also
# pass either through ioctl(2), which strace cannot tell apart.  So:
# no REQ_NOTIFY_CQ write at all, and on the uverbs fd fewer calls than
# N sends (each may ring a doorbell) plus N/10 for the setup (context, PD,
# MR, CQs, QPs); arms that cost a call would add 10 N.
# _uverbs_calls LOG: "NOTIFY DOORBELLS OTHER" on the uverbs fds of LOG.
_uverbs_calls() {
	awk '
	/openat\(.*"\/dev\/infiniband\/uverbs/ { u[$NF] = 1; next }
	$2 ~ /^(write|ioctl)\(/ {
		call = $2; sub(/\(.*/, "", call)
		f = $2; sub(/^[a-z]+\(/, "", f); sub(/,.*/, "", f)
		if (!(f in u))
			next
		if (call == "write" && $3 ~ /^"\\x17\\x00\\x00\\x00"/)
			n++
		else if (call == "write" && $3 ~ /^"\\x1c\\x00\\x00\\x00"/)
			d++
		else
			o++
	}
	END { print n + 0, d + 0, o + 0 }' "$1"
}
arm_syscalls() {
	local log=$E2E_LOGS/events-arm-strace.txt out=$E2E_LOGS/events-arm-strace.out
	local notify doorbells other calls
	mkdir -p "$E2E_LOGS"
	if ! $A timeout 1200 strace -f -qq --seccomp-bpf \
		-e trace=openat,write,ioctl -e signal=none -x -s 4 -o "$log" \
		"$arm" shca0 "$g" loop "$N" >"$out" 2>&1; then
		echo "not ok - vm_arm loop $N under strace: $(gist "$out")"
		return 1
	fi
	read -r notify doorbells other < <(_uverbs_calls "$log")
	calls=$((notify + doorbells + other))
	echo "# $((10 * N)) arms, $N sends: $calls uverbs calls ($notify REQ_NOTIFY_CQ and $doorbells POST_SEND writes)"
	if [ "$calls" -eq 0 ]; then
		echo "not ok - ibv_req_notify_cq without a system call: strace saw no uverbs call"
		return 1
	fi
	if [ "$notify" -ne 0 ] || [ "$calls" -ge $((N + N / 10)) ]; then
		echo "not ok - ibv_req_notify_cq without a system call: $calls uverbs calls ($notify REQ_NOTIFY_CQ) for $((10 * N)) arms and $N sends"
		return 1
	fi
	echo "ok - ibv_req_notify_cq without a system call ($((10 * N)) arms, $N sends: $calls uverbs calls)"
}
if command -v strace >/dev/null; then
	arm_syscalls || rc=1
else
	echo "ok - ibv_req_notify_cq without a system call # SKIP no strace"
fi

# _log_says LOG TEXT PID: LOG holds TEXT, or process PID is gone (no
# process started per check).
_log_says() {
	local l
	read -r -d '' l <"$1"
	[[ $l == *"$2"* ]] || ! kill -0 "$3" 2>/dev/null
}

# mckey: $1 = group, $2/$3 = receiver/sender bind addresses.  Two QPs of
# the receiver join, so each datagram is fanned out to both.
mckey_run() {
	local log=$TMPDIR/mckey-rx.log out
	: >"$log"
	$B timeout 600 stdbuf -oL mckey -m "$1" -b "$2" -c 2 -C 10 -S 512 >"$log" 2>&1 &
	local rx=$!
	wait_for 300 _log_says "$log" "receiving data transfers" "$rx"
	out=$($A timeout 600 mckey -m "$1" -b "$3" -s -C 10 -S 512 2>&1)
	local src=$?
	if wait $rx && [ $src -eq 0 ] && [[ "$(<"$log")" == *"data transfers complete"* ]]; then
		echo "ok - mckey $1"
	else
		echo "not ok - mckey $1: sender rc=$src: $(echo "$out" | tail -n 3 | tr '\n' ' ') receiver: $(tail -n 5 "$log" | tr '\n' ' ')"
		rc=1
	fi
}
B="ip netns exec shca-b"
$B rdma link add shca1 type shca netdev veth-b
wait_for 60 port_active shca1
wait_for 60 rdma_gid shca1 "$GID4_B"
wait_for 60 rdma_gid shca1 "$GID6_B"
mckey_run 239.1.2.3 10.77.0.2 10.77.0.1

# Event-driven pingpongs (-e: every completion waited for through an
# armed CQ and its channel), buffers validated (-c), across the namespaces.
gb=$(rdma_gid shca1 "$GID4_B")
pair_case "ibv_rc_pingpong -e -c" tcp:18515 \
	"$B" "ibv_rc_pingpong -d shca1 -g $gb -e -c -n $N -s 4096" \
	"$A" "ibv_rc_pingpong -d shca0 -g $g -e -c -n $N -s 4096 10.77.0.2" pp_ok
pair_case "ibv_ud_pingpong -e -c" tcp:18515 \
	"$B" "ibv_ud_pingpong -d shca1 -g $gb -e -c -n $N -s 1024" \
	"$A" "ibv_ud_pingpong -d shca0 -g $g -e -c -n $N -s 1024 10.77.0.2" pp_ok
[ "$E2E_FAILED" = 0 ] || rc=1

# mcast_data GROUP GID_B GID_A: 8 datagrams from shca0 to two QPs of
# shca1, verified byte for byte.  (RDMA CM has no IPv6 multicast on
# RoCE v2, so IPv6 is covered here and not by mckey.)
mcast_data() {
	local log=$TMPDIR/mc-rx.log mrx
	: >"$log"
	$B timeout 600 "$bin" shca1 "$2" mcast-recv "$1" 8 >"$log" 2>&1 &
	mrx=$!
	wait_for 300 _log_says "$log" "ready" "$mrx"
	exits_ok "mcast-send $1 exits 0" \
		$A timeout 600 "$bin" shca0 "$3" mcast-send "$1" 8 || rc=1
	if ! wait $mrx; then
		not_ok "mcast-recv $1 exits 0" "see its output below"
		rc=1
	fi
	cat "$log"
}
mcast_data 239.1.2.6 "$(rdma_gid shca1 "ffff:0a4d:0002")" "$g"
mcast_data ff0e::6 "$(rdma_gid shca1 "fd77:0000:0000:0000:0000:0000:0000:0002")" \
	"$(rdma_gid shca0 "fd77:0000:0000:0000:0000:0000:0000:0001")"
$B rdma link delete shca1
$A rdma link delete shca0
modprobe -r shca
exit $rc
