#!/bin/bash
# Device lifecycle: add, refuse bad links, port state and MTU following the
# netdev, GIDs, netdev deletion (also racing rdma link add), rdma link delete
# and rmmod with live devices.
# Runs inside the VM as root (scripts/vm-run).
#   lifecycle.sh [objects]   objects: only what creates, holds and frees
#       objects (adds, refusals, async events, deletes, rmmod, the races),
#       not the port state, MTU, GID and counter reporting (the test
#       kernel's boot, where KASAN, lockdep and kmemleak have something to
#       find only in the former; 6.12's boot runs every case)
set -u
E2E_SUITE=lifecycle
. "$(dirname "$0")/lib.sh"

SYS=/sys/class/infiniband

dev_exists() { [ -e "$SYS/$1" ]; }
dev_gone() { [ ! -e "$SYS/$1" ]; }
port_state() { cut -d' ' -f2 < "$SYS/$1/ports/1/state"; }
port_is() { [ "$(port_state "$1")" = "$2" ]; }
active_mtu() { ibv_devinfo -d "$1" | awk '/active_mtu/ {print $2; exit}'; }
has_gid() { grep -qx "$2" "$SYS/$1"/ports/1/gids/* 2>/dev/null; }

gid_type_of() {
	local f
	for f in "$SYS/$1"/ports/1/gids/*; do
		if [ "$(cat "$f")" = "$2" ]; then
			cat "$SYS/$1/ports/1/gid_attrs/types/${f##*/}"
			return
		fi
	done
}

setup_links() {
	ip link add lc0 type veth peer name lc1
	ip link add lc2 type veth peer name lc3
	ip link set lc0 up; ip link set lc1 up
	ip link set lc2 up; ip link set lc3 up
	ip addr add 10.99.0.1/24 dev lc0
	ip addr add fd99::1/64 dev lc0 nodad
}

test_autoload_and_add() {
	modprobe -r shca 2>/dev/null
	check "module not loaded before rdma link add" sh -c '! grep -q "^shca " /proc/modules'
	check "rdma link add autoloads shca" rdma link add shca0 type shca netdev lc0
	check "shca0 registered" wait_for 90 dev_exists shca0
	check "rdma link show lists shca0 on lc0" sh -c 'rdma link show shca0/1 | grep -q "netdev lc0"'
	check "driver-owned ABI attribute" grep -qx 1 "$SYS/shca0/shca_abi_version"
	check "device/net link to the netdev" test -e "$SYS/shca0/device/net/lc0"
	expect_eq "node_type is CA" "$(cut -d: -f1 < "$SYS/shca0/node_type")" 1
	check "link_layer Ethernet" grep -qx Ethernet "$SYS/shca0/ports/1/link_layer"
}

test_refusals() {
	check_fails "second device on the same netdev is refused" \
		rdma link add shca9 type shca netdev lc0
	check "refused add leaves no device" dev_gone shca9
	check_fails "non-Ethernet netdev (lo) is refused" rdma link add shca8 type shca netdev lo
	check_fails "missing netdev is refused" rdma link add shca7 type shca netdev nosuch0
	# A name already taken fails in ib_register_device(), after the
	# netdev was held: the failed add must give it back.
	ip link add lc6 type veth peer name lc7
	check_fails "a name already in use (shca0) is refused" \
		rdma link add shca0 type shca netdev lc6
	check "the refused add's netdev can be deleted (no reference left)" \
		timeout 120 ip link del lc6
}

test_port_follows_netdev() {
	check "port ACTIVE with carrier" wait_for 90 port_is shca0 ACTIVE
	ip link set lc1 down
	check "port DOWN when the peer drops carrier" wait_for 90 port_is shca0 DOWN
	ip link set lc1 up
	check "port ACTIVE again on carrier" wait_for 90 port_is shca0 ACTIVE
	ip link set lc0 down
	check "port DOWN when the netdev goes down" wait_for 90 port_is shca0 DOWN
	ip link set lc0 up
	check "port ACTIVE when the netdev comes back" wait_for 90 port_is shca0 ACTIVE
}

test_port_events() {
	local log=$TMPDIR/async.log
	stdbuf -oL ibv_asyncwatch -d shca0 > "$log" 2>&1 &
	local pid=$!
	# asyncwatch names the device once its context is open; events raised
	# from then on are queued for it.
	check "async watcher attached" wait_for 120 grep -q shca0 "$log"
	ip link set lc1 down
	wait_for 90 port_is shca0 DOWN
	ip link set lc1 up
	wait_for 90 port_is shca0 ACTIVE
	wait_for 90 grep -q PORT_ACTIVE "$log"
	kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
	check "IBV_EVENT_PORT_ERR delivered" grep -q PORT_ERR "$log"
	check "IBV_EVENT_PORT_ACTIVE delivered" grep -q PORT_ACTIVE "$log"
}

test_mtu() {
	ip link set lc0 mtu 9000; ip link set lc1 mtu 9000
	check "active_mtu 4096 at netdev MTU 9000" wait_for 90 sh -c "ibv_devinfo -d shca0 | grep -q 'active_mtu:.*4096'"
	ip link set lc0 mtu 1500; ip link set lc1 mtu 1500
	check "active_mtu 1024 at netdev MTU 1500" wait_for 90 sh -c "ibv_devinfo -d shca0 | grep -q 'active_mtu:.*1024'"
	ip link set lc0 mtu 600
	check "active_mtu 512 at netdev MTU 600" wait_for 90 sh -c "ibv_devinfo -d shca0 | grep -q 'active_mtu:.*512'"
	ip link set lc0 mtu 1500
}

# Before any link down: IPv6 drops its addresses when the link goes down.
test_gids() {
	check "IPv4-mapped RoCE GID present" wait_for 90 has_gid shca0 "0000:0000:0000:0000:0000:ffff:0a63:0001"
	check "IPv6 RoCE GID present" wait_for 90 has_gid shca0 "fd99:0000:0000:0000:0000:0000:0000:0001"
	expect_eq "IPv4 GID type" "$(gid_type_of shca0 0000:0000:0000:0000:0000:ffff:0a63:0001)" "RoCE v2"
	ip addr del 10.99.0.1/24 dev lc0
	check "GID removed with the address" wait_for 90 sh -c "! grep -qx 0000:0000:0000:0000:0000:ffff:0a63:0001 $SYS/shca0/ports/1/gids/*"
}

test_counters() {
	check "rdma statistic shows shca0 counters" sh -c 'rdma statistic show link shca0/1 | grep -q shca0'
}

test_delete_paths() {
	local pid
	stdbuf -oL ibv_asyncwatch -d shca0 > "$TMPDIR/held.log" 2>&1 &
	pid=$!
	check "a process holds shca0 open" wait_for 90 grep -q shca0 "$TMPDIR/held.log"
	check "rdma link delete while a process holds the device" timeout 120 rdma link delete shca0
	kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
	check "shca0 gone after delete" wait_for 90 dev_gone shca0
	check "re-add after delete" rdma link add shca0 type shca netdev lc0
	rdma link add shca1 type shca netdev lc2
	check "two devices coexist" wait_for 90 dev_exists shca1
	ip link del lc2
	check "netdev delete unregisters its device" wait_for 90 dev_gone shca1
	check "other device survives" dev_exists shca0
	rdma link add shca2 type shca netdev lc0 2>/dev/null
	ip link add lc4 type veth peer name lc5
	rdma link add shca3 type shca netdev lc4
	check "rmmod with live devices" modprobe -r shca
	check "devices gone after rmmod" sh -c "! ls $SYS | grep -q shca"
	check "modprobe again after rmmod" modprobe shca
	ip link del lc4
}

# Tier full (SHCA_TIER=full) soaks with more cycles and race rounds; tier
# check's counts take every step of them (a re-add of the deleted name and
# netdev, and a race delay before, during and at the end of a registration).
full() { [ "${SHCA_TIER:-check}" = full ] && echo "$1" || echo "$2"; }

# SHCA_LC_CYCLES (default 3, tier full 10) adds and deletes of shca0 on
# lc0 in a row: each add reuses the name, the netdev and the ids the
# delete before it gave back.
test_stress_add_delete() {
	local i failed=0 n=${SHCA_LC_CYCLES:-$(full 10 3)}
	for i in $(seq 1 "$n"); do
		rdma link add shca0 type shca netdev lc0 || failed=1
		rdma link delete shca0 || failed=1
	done
	expect_eq "$n add/delete cycles" "$failed" 0
}

# NETDEV_UNREGISTER racing rdma link add: until shca_register() marks the
# device registered, the netdev notifier ignores it, so a netdev deleted
# while ib_register_device() runs is caught by shca_register() itself
# (main.c).  One add on a fresh veth lr0 is timed; then each round adds
# shca5 on a fresh lr0 in the background and deletes lr0 after a delay
# that steps from 0 to that time, so the deletions fall before, during
# and at the end of the registration.  Asserted: no device outlives its
# netdev (sysfs and rdma link show), whether the add won or not; then lr0
# can be recreated and take a device, and the module unloads.  Kernel
# reports (KASAN, lockdep, a refcount WARN) fail the boot.  A count of
# rounds, SHCA_LC_RACE_N (default 3: delays 0, half the add and the whole
# add; tier full 5), not a time (a round takes about 9 s on the debug
# kernel under TCG).
lr_link_gone() { ! rdma link show 2>/dev/null | grep -q '^link shca5/'; }
lr_veth() { ip link add lr0 type veth peer name lr1 && ip link set lr0 up; }
us_now() { echo "${EPOCHREALTIME/./}"; }

test_netdev_unregister_race() {
	local i n=${SHCA_LC_RACE_N:-$(full 5 3)} pid won=0 left=0 t0 t d
	lr_veth
	t0=$(us_now)
	check "timed add on lr0" rdma link add shca5 type shca netdev lr0
	t=$(($(us_now) - t0))
	ip link del lr0
	check "its netdev deleted, the device goes" wait_for 60 dev_gone shca5
	for i in $(seq 0 $((n - 1))); do
		lr_veth || { left=$((left + 1)); continue; }
		d=$((t * i / (n > 1 ? n - 1 : 1)))
		d=$(printf '%d.%06d' $((d / 1000000)) $((d % 1000000)))
		rdma link add shca5 type shca netdev lr0 >/dev/null 2>&1 &
		pid=$!
		[ "$i" = 0 ] || nap "$d"
		ip link del lr0
		wait "$pid" && won=$((won + 1))
		if ! wait_for 60 dev_gone shca5 || ! wait_for 10 lr_link_gone; then
			left=$((left + 1))
			echo "# round $i (delay $d s): shca5 outlived lr0"
			rdma link delete shca5 2>/dev/null
			wait_for 60 dev_gone shca5
		fi
	done
	echo "# netdev race: an add takes $((t / 1000)) ms; it succeeded in $won of $n rounds"
	expect_eq "$n rounds of add racing netdev delete: no device left behind" "$left" 0
	check "no shca device of a deleted netdev in sysfs" sh -c "! ls $SYS | grep -qx shca5"
	lr_veth
	check "the netdev's name recreated takes a new device" \
		rdma link add shca5 type shca netdev lr0
	check "the new device registered" wait_for 90 dev_exists shca5
	check "rdma link show lists it on lr0" \
		sh -c 'rdma link show shca5/1 | grep -q "netdev lr0"'
	ip link del lr0
	check "deleting the netdev again unregisters it" wait_for 90 dev_gone shca5
	check "module unloads after the race" modprobe -r shca
}

setup_links
test_autoload_and_add
test_refusals
if [ "${1:-}" != objects ]; then
	test_gids
	test_port_follows_netdev
fi
test_port_events
if [ "${1:-}" != objects ]; then
	test_mtu
	test_counters
fi
test_delete_paths
test_stress_add_delete
test_netdev_unregister_race
ip link del lc0 2>/dev/null
modprobe -r shca
e2e_finish
