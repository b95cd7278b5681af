#!/bin/bash
# Completion vectors, CQ moderation and multicast (vm_events) on shca0 in
# netns shca-a.  Runs inside the VM (scripts/vm-run topology), started by
# scripts/e2e/events.sh; build first with `make -C scripts/e2e/progs`.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
. "$repo/scripts/e2e/lib.sh"
E2E_SUITE=events
A="ip netns exec shca-a"
bin=$(prog vm_events) || exit 1


modprobe shca
$A rdma link add shca0 type shca netdev veth-a
wait_for 60 port_active shca0
wait_for 60 rdma_gid shca0 "$GID4_A"
wait_for 60 rdma_gid shca0 "$GID6_A"
g=$(rdma_gid shca0 "ffff:0a4d:0001")

# The CQ that gets events uses the last completion vector: its handler
# must run on that CPU (seen through the workqueue tracepoint).
tr=/sys/kernel/tracing
ev=$tr/events/workqueue/workqueue_execute_start/enable
[ -e "$ev" ] || mount -t tracefs nodev $tr 2>/dev/null
traced=0
if [ -w "$ev" ]; then
	echo >$tr/trace
	echo 1 >"$ev" && traced=1
fi
exits_ok "vm_events exits 0" \
	$A timeout 600 "$bin" shca0 "$g" "$@"
rc=$?
if [ $traced = 1 ]; then
	echo 0 >"$ev"
	cpus=$(grep shca_cq_comp_work $tr/trace |
	       awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\[[0-9]+\]$/) {
			s = $i; gsub(/[][]/, "", s); print s + 0; break } }' |
	       sort -u | tr '\n' ' ')
	want="$(($(nproc) - 1)) "
	if [ "$cpus" = "$want" ]; then
		echo "ok - completion handlers ran on CPU $want(the CQ's vector)"
	else
		echo "not ok - completion handlers ran on CPUs '$cpus', want '$want'"
		rc=1
	fi
else
	echo "ok - completion vector CPU # SKIP no tracefs"
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
