#!/bin/bash
# Debian 13 (trixie) as the user gets it: booted by `scripts/vm-run --kernel
# deb13` on trixie's own root (kernel 6.12, rdma-core 56), with shca.ko built
# there by DKMS (scripts/dkms-root.sh) and the provider built for rdma-core
# 56.  Checks that the module is the DKMS one for this kernel and compiler,
# that it loads, `rdma link add` in both namespaces, ibv_devinfo through the
# provider (no loader warnings), then ibv_rc/ud/srq_pingpong -c and rping -V
# between shca0 (shca-a) and shca1 (shca-b).  Runs inside the VM; also
# works on any kernel with the same tools (the module checks then say what
# they see).  rdma-core's own pyverbs suite is the separate step pyverbs.
set -u
E2E_SUITE=deb13
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

kver=$(uname -r)
echo "# $(. /etc/os-release && echo "$PRETTY_NAME"), kernel $kver," \
	"rdma-core $(dpkg-query -W -f='${Version}' rdma-core 2>/dev/null)"

# --- the module: DKMS's, for this kernel, by this release's gcc -------------
ko=$(modinfo -n shca 2>/dev/null)
vermagic=$(modinfo -F vermagic shca 2>/dev/null)
expect_eq "shca.ko's vermagic is this kernel's" "${vermagic%% *}" "$kver"
gccver=$(gcc -dumpfullversion 2>/dev/null)
built_by() {
	[ -n "$gccver" ] && [ -n "$ko" ] &&
		readelf -p .comment "$ko" | grep -q "GCC: .* $gccver\$"
}
check "shca.ko built by this release's gcc ${gccver:-?}" built_by
check "modprobe shca" modprobe shca
check "module live" grep -qx live /sys/module/shca/initstate

# --- rdma link add in both namespaces ---------------------------------------
if ! pair_setup shca; then
	not_ok "rdma link add shca0 (shca-a) and shca1 (shca-b)" "devices, ACTIVE ports or RoCE v2 GIDs missing"
	exit 1
fi
ok "rdma link add shca0 (shca-a) and shca1 (shca-b): ACTIVE, GIDs $GA4/$GA6 and $GB4/$GB6"
check "rdma link shows shca0 on veth-a" sh -c \
	"$NA rdma link show shca0/1 | grep -q 'state ACTIVE.*netdev veth-a'"
declare -A GA=([4]=$GA4 [6]=$GA6) GB=([4]=$GB4 [6]=$GB6)

# --- ibv_devinfo through rdma-core's loader and our provider ----------------
out=$E2E_LOGS/deb13-devinfo.out err=$E2E_LOGS/deb13-devinfo.err
IBV_SHOW_WARNINGS=1 $NA ibv_devinfo -v -d shca0 >"$out" 2>"$err"
expect_eq "ibv_devinfo -v -d shca0 exits 0" "$?" 0
check "provider loaded without loader warnings" test ! -s "$err"
check "ibv_devinfo: transport InfiniBand, link_layer Ethernet" sh -c \
	"grep -q 'transport:.*InfiniBand' $out && grep -q 'link_layer:.*Ethernet' $out"
check "ibv_devinfo: port PORT_ACTIVE" grep -q 'state:.*PORT_ACTIVE' "$out"
check "ibv_devinfo: shca's vendor id" grep -Eq 'vendor_id:[[:space:]]+0x0*2ca5e$' "$out"
check "ibv_devinfo: RoCE v2 GID of 10.77.0.1" grep -q 'GID\[.*::ffff:10.77.0.1, RoCE v2' "$out"

# --- traffic, every buffer checked (-c / -V) ---------------------------------
for fam in 4 6; do
	pair_case "ibv_rc_pingpong -c IPv$fam" tcp:18515 \
		"$NB" "ibv_rc_pingpong -d $DB -g ${GB[$fam]} -c -n 200 -s 4096" \
		"$NA" "ibv_rc_pingpong -d $DA -g ${GA[$fam]} -c -n 200 -s 4096 $AB" pp_ok
done
pair_case "ibv_ud_pingpong -c IPv4" tcp:18515 \
	"$NB" "ibv_ud_pingpong -d $DB -g ${GB[4]} -c -n 100 -s 1024" \
	"$NA" "ibv_ud_pingpong -d $DA -g ${GA[4]} -c -n 100 -s 1024 $AB" pp_ok
pair_case "ibv_srq_pingpong -c IPv4, 4 QPs" tcp:18515 \
	"$NB" "ibv_srq_pingpong -d $DB -g ${GB[4]} -c -q 4 -n 100 -s 1024 -r 64" \
	"$NA" "ibv_srq_pingpong -d $DA -g ${GA[4]} -c -q 4 -n 100 -s 1024 -r 64 $AB" pp_ok

# rping -V: every payload compared; all pings must have come back.
rping_all() {
	rping_ok "$@" || return 1
	local n
	n=$(grep -c '^ping data: rdma-ping-' "$2")
	[ "$n" = 100 ] && return 0
	echo "client saw $n of 100 pings"
	return 1
}
pair_case "rping -V -C 100 IPv4" cm \
	"$NB" "rping -s -a $AB -V -C 100 -S 1024" \
	"$NA" "rping -c -a $AB -V -C 100 -S 1024 -v" rping_all

# FLUSH (IBTA 1.5) shca0 -> shca1 on the wire (direct=0 for it), every
# outcome asserted by progs/flush_cases.py; rdma-core 56's pyverbs FLUSH
# tests (step pyverbs) take the same-host direct path.
dp=/sys/module/shca/parameters/direct
d0=$(cat "$dp")
echo 0 >"$dp"
exits_ok "flush_cases.py shca0 -> shca1 on the wire" $NA /usr/bin/python3 \
	"$here/progs/flush_cases.py" "$DA" "${GA[4]}" "$DB" "${GB[4]}"
echo "$d0" >"$dp"

pair_teardown
check "module unloads" modprobe -r shca
e2e_finish
