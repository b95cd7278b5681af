#!/bin/bash
# UD and GSI traffic between shca0 (netns shca-a, veth-a) and shca1
# (netns shca-b, veth-b): ibv_ud_pingpong over IPv4 and IPv6 GIDs, a QP
# talking to its own device, malformed packets, RDMA CM over UD.
# Runs inside the VM (scripts/vm-run topology).
set -u
E2E_SUITE=ud
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

A="ip netns exec shca-a"
B="ip netns exec shca-b"
# TCG is slow: be generous, never assert on time.
T=300
# Round trips a pingpong makes: 20 (tier full, SHCA_TIER=full: 100).  Two
# busy-polling processes share the boot's one vCPU, so a round trip costs
# most of a second on the debug kernel; 20 of 1 KiB already pass every
# step of the path (the receive ring holds 500, so 100 wrap nothing more).
UD_N=20
[ "${SHCA_TIER:-check}" = full ] && UD_N=100



# pingpong NAME GIDPAT_B GIDPAT_A [client args...]: server on shca1, client on shca0.
pingpong() {
	local name=$1 gb ga out
	gb=$(rdma_gid shca1 "$2") && ga=$(rdma_gid shca0 "$3") || {
		not_ok "$name" "no RoCE v2 GID matching $2/$3"
		return
	}
	$B timeout $T ibv_ud_pingpong -d shca1 -g "$gb" -c -n "$UD_N" -s 1024 >"$TMPDIR/ud-srv.log" 2>&1 &
	local srv=$!
	wait_tcp_listen "$B" 18515
	out=$($A timeout $T ibv_ud_pingpong -d shca0 -g "$ga" -c -n "$UD_N" -s 1024 "$4" 2>&1)
	local rc=$?
	if wait $srv && [ $rc -eq 0 ]; then
		ok "$name"
	else
		not_ok "$name" "client rc=$rc: $(echo "$out" | tail -n 2 | tr '\n' ' ') server: $(tail -n 2 "$TMPDIR/ud-srv.log" | tr '\n' ' ')"
	fi
}

modprobe shca
$A rdma link add shca0 type shca netdev veth-a
$B rdma link add shca1 type shca netdev veth-b
for d in shca0 shca1; do
	wait_for 60 port_active $d
done
wait_for 60 rdma_gid shca1 ffff:0a4d:0002
wait_for 60 rdma_gid shca1 fd77:0000:0000:0000:0000:0000:0000:0002
wait_for 60 rdma_gid shca0 fd77:0000:0000:0000:0000:0000:0000:0001

pingpong "ibv_ud_pingpong IPv4 across namespaces" "ffff:0a4d:0002" "ffff:0a4d:0001" 10.77.0.2
pingpong "ibv_ud_pingpong IPv6 across namespaces" \
	"fd77:0000:0000:0000:0000:0000:0000:0002" "fd77:0000:0000:0000:0000:0000:0000:0001" 10.77.0.2

# Both ends on shca1: the packets go to the device's own address.
gb=$(rdma_gid shca1 "ffff:0a4d:0002")
$B timeout $T ibv_ud_pingpong -d shca1 -g "$gb" -c -n 20 -s 512 >"$TMPDIR/ud-self.log" 2>&1 &
srv=$!
wait_tcp_listen "$B" 18515
check "ibv_ud_pingpong to the device's own address" \
	$B timeout $T ibv_ud_pingpong -d shca1 -g "$gb" -c -n 20 -s 512 127.0.0.1
wait $srv || not_ok "own-address server" "$(tail -n 2 "$TMPDIR/ud-self.log" | tr '\n' ' ')"

# The counters from sysfs (lib.sh's hw_stat_read: no process, where
# dev_stat's `rdma statistic | tr | awk` took three a read under TCG).
# hw_above DEV NAME MIN: counter NAME of DEV is above MIN.
hw_above() {
	local v
	hw_stat_read v "$1" "$2"
	[ "${v:-0}" -gt "$3" ]
}
expect_eq "tx_packets counted" "$(hw_above shca0 tx_packets 0 && echo yes)" yes
expect_eq "rx_packets counted" "$(hw_above shca1 rx_packets 0 && echo yes)" yes

# Malformed packets from a plain UDP socket: dropped and counted.
icrc0='' mal0=''
hw_stat_read icrc0 shca1 rx_bad_icrc
hw_stat_read mal0 shca1 rx_malformed
$A python3 - <<'PY'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
# UD SEND_ONLY BTH + DETH + 4 payload bytes + a wrong ICRC
bth = bytes([0x64, 0, 0xff, 0xff, 0, 0, 0, 1, 0, 0, 0, 0])
deth = bytes([0x80, 1, 0, 0, 0, 0, 0, 1])
s.sendto(bth + deth + b"abcd" + b"\0\0\0\0", ("10.77.0.2", 4791))
# a truncated BTH
s.sendto(b"\x64\0\xff\xff\0\0\0\1", ("10.77.0.2", 4791))
PY
wait_for 90 hw_above shca1 rx_bad_icrc "$icrc0"
expect_eq "bad ICRC dropped and counted" "$(dev_stat shca1 rx_bad_icrc)" $((icrc0 + 1))
wait_for 90 hw_above shca1 rx_malformed "$mal0"
expect_eq "truncated BTH dropped and counted" "$(dev_stat shca1 rx_malformed)" $((mal0 + 1))

# RDMA CM over UD (GSI QP1, ib_cm, rdma_cm in the kernel).
if command -v udaddy >/dev/null; then
	$B timeout $T udaddy -b 10.77.0.2 -C 4 >"$TMPDIR/udaddy-srv.log" 2>&1 &
	srv=$!
	wait_cm_listen
	check "udaddy (RDMA CM over UD) across namespaces" \
		$A timeout $T udaddy -s 10.77.0.2 -b 10.77.0.1 -C 4
	wait $srv || not_ok "udaddy server" "$(tail -n 3 "$TMPDIR/udaddy-srv.log" | tr '\n' ' ')"
fi

$A rdma link delete shca0
$B rdma link delete shca1
check "module unloads" modprobe -r shca
e2e_finish
