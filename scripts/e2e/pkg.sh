#!/bin/bash
# shca's Debian packages in use: runs inside a VM booted from a Debian root
# into which scripts/pkg-install-test.sh installed shca-dkms and libshca1
# (vm-run --kernel deb12|deb13 --root COPY, with vm-run's own module and
# provider injection off).  Proves that `modprobe shca` loads the module
# DKMS built into /lib/modules/KVER/updates/dkms (same build ID as that
# file), that the provider and its .driver file are the package's, untouched
# (dpkg --verify), and that they work: rdma link add on veth-a/veth-b,
# PORT_ACTIVE in ibv_devinfo, ibv_rc_pingpong -c across the two namespaces
# with the package's provider loaded.  It also runs the README's host
# commands verbatim (scripts/readme-check.sh demands that make check runs
# each of them): its two apt-get lines, which must find everything installed
# and change nothing, and rdma link add (autoloading shca), ibv_devinfo and
# rdma link delete on an eth0 (a veth pair in init_net: the VM has no NIC).
# Environment (from pkg-install-test.sh): SHCA_PKG_VERSION (dkms.conf's
# version), SHCA_PKG_RDMACORE (the rdma-core release of the root),
# SHCA_DEB_OUT (the .debs; default build/debs in the repo, the cwd).
set -u
E2E_SUITE=pkg
. "$(dirname "$0")/lib.sh"

kver=$(uname -r)
ver=${SHCA_PKG_VERSION:?SHCA_PKG_VERSION not set (run by scripts/pkg-install-test.sh)}
rc_up=${SHCA_PKG_RDMACORE:?SHCA_PKG_RDMACORE not set}
provider=/usr/lib/x86_64-linux-gnu/libibverbs/libshca-rdmav34.so

# --- the packages ----------------------------------------------------------------
expect_eq "shca-dkms installed" \
	"$(dpkg-query -W -f='${Status} ${Version}' shca-dkms 2>&1)" "install ok installed $ver"
expect_eq "libshca1 for rdma-core $rc_up installed" \
	"$(dpkg-query -W -f='${Status} ${Version}' libshca1 2>&1)" "install ok installed $ver+rdmacore$rc_up"
# dpkg --verify: every file as packaged, except /usr/share/doc and
# /usr/share/man ones, which the VM roots' dpkg excludes (path-exclude,
# debian-root.sh; dpkg calls them "missing").
verify_pkgs() {
	local out
	out=$(dpkg --verify shca-dkms libshca1 2>&1) || { echo "$out"; return 1; }
	out=$(grep -v '^missing  *[^ ]* */usr/share/\(doc\|man\)/' <<<"$out")
	[ -z "$out" ] || { echo "$out"; return 1; }
}
check "dpkg --verify: the packages' files untouched" verify_pkgs
check "no shca.ko injected by vm-run (extra/)" sh -c "! ls /lib/modules/$kver/extra/shca.ko* 2>/dev/null | grep -q ."

# The README's install commands, as a user types them (no -y: with stdin
# /dev/null apt would abort if it wanted to change anything).  The README
# names Debian 12's files; a new version fails here until the README has it.
# (check runs it in a subshell, so the cd stays there)
readme_debs() {
	cd "${SHCA_DEB_OUT:-build/debs}" || return 1
	case "$rc_up" in
	44.0) apt-get install ./shca-dkms_0.1_all.deb ./libshca1_0.1+rdmacore44.0_amd64.deb ;;
	*) apt-get install "./shca-dkms_${ver}_all.deb" "./libshca1_${ver}+rdmacore${rc_up}_amd64.deb" ;;
	esac
}
check "README: apt-get install linux-headers-amd64 rdma-core ibverbs-utils: nothing to do" \
	apt-get install linux-headers-amd64 rdma-core ibverbs-utils
check "README: apt-get install ./shca-dkms_${ver}_all.deb ./libshca1_${ver}+rdmacore${rc_up}_amd64.deb: nothing to do" \
	readme_debs

# shca(7), from Documentation/shca.7, as shca-dkms ships it (this root,
# like Debian's container images, leaves /usr/share/man out: dpkg's
# path-exclude, debian-root.sh)
man7_ok() {
	local t
	t=$(dpkg-deb --fsys-tarfile "${SHCA_DEB_OUT:-build/debs}/shca-dkms_${ver}_all.deb" |
		tar -xO ./usr/share/man/man7/shca.7.gz | zcat) &&
		grep -q '^\.SH COUNTERS' <<<"$t" && grep -q '^\.SH TRACEPOINTS' <<<"$t"
}
check "shca(7) in shca-dkms: /usr/share/man/man7/shca.7.gz, its COUNTERS and TRACEPOINTS" man7_ok

# --- the module DKMS installed ---------------------------------------------------------
ko=$(modinfo -n shca 2>&1)
case "$ko" in
/lib/modules/"$kver"/updates/dkms/shca.ko*) ok "modinfo -n shca: $ko" ;;
*) not_ok "modinfo -n shca is DKMS's" "got '$ko', want /lib/modules/$kver/updates/dkms/shca.ko*" ;;
esac

# build_id KO: the GNU build ID of a (possibly compressed) module file.
build_id() {
	local f=$1 plain=$TMPDIR/shca-plain.ko
	case "$f" in
	*.xz) python3 -c 'import lzma, sys; sys.stdout.buffer.write(lzma.open(sys.argv[1]).read())' "$f" >"$plain" ;;
	*.gz) gzip -dc "$f" >"$plain" ;;
	*.zst) zstd -qdc "$f" >"$plain" ;;
	*) cp "$f" "$plain" ;;
	esac || return 1
	readelf -n "$plain" | awk '/Build ID:/ { print $3; exit }'
}
check "modprobe shca" modprobe shca
want=$(build_id "$ko")
got=$(od -An -tx1 -v /sys/module/shca/notes/.note.gnu.build-id 2>/dev/null | tr -d ' \n')
if [ -n "$want" ] && [[ $got == *"$want" ]]; then
	ok "the loaded shca is $ko (build ID $want)"
else
	not_ok "the loaded shca is $ko" "build ID of the file '$want', of the loaded module '$got'"
fi

# --- devices on vm-run's veth pair ---------------------------------------------------
if ! pair_setup shca; then
	not_ok "rdma link add shca0 (veth-a) and shca1 (veth-b)" "devices not ACTIVE or RoCE v2 GIDs missing"
	exit 1
fi
ok "rdma link add shca0 type shca netdev veth-a, shca1 on veth-b"
out=$TMPDIR/pkg-devinfo.out err=$TMPDIR/pkg-devinfo.err
IBV_SHOW_WARNINGS=1 $NA ibv_devinfo -d shca0 >"$out" 2>"$err"
check "ibv_devinfo -d shca0: PORT_ACTIVE" grep -q 'state:.*PORT_ACTIVE' "$out"
check "provider loaded without warnings" test ! -s "$err"
check "ibv_devinfo loads $provider, owned by libshca1" sh -c \
	"$NA env LD_DEBUG=files ibv_devinfo -d shca0 2>&1 >/dev/null | grep -q 'file=$provider ' &&
	 dpkg -S $provider | grep -q '^libshca1'"

# --- traffic -----------------------------------------------------------------------
# pp_pkg SRVLOG CLILOG: both summaries, and both sides loaded the package's
# provider (LD_DEBUG=files).
pp_pkg() {
	pp_ok "$1" "$2" || return 1
	grep -q "file=$provider " "$1" && grep -q "file=$provider " "$2" && return 0
	echo "$provider not loaded: $(grep -h 'file=.*libshca' "$1" "$2" | head -n 2 | tr '\n' ' ')"
	return 1
}
pair_case "ibv_rc_pingpong -c IPv4" tcp:18515 \
	"$NB" "env LD_DEBUG=files ibv_rc_pingpong -d $DB -g $GB4 -c -n 200 -s 4096" \
	"$NA" "env LD_DEBUG=files ibv_rc_pingpong -d $DA -g $GA4 -c -n 200 -s 4096 $AB" pp_pkg

pair_teardown
check "module unloads" modprobe -r shca

# --- the README's host commands, verbatim ---------------------------------------------
# A user's eth0: a veth in init_net, its peer up so that it has carrier.
check "eth0 (a veth pair in init_net)" ip link add eth0 type veth peer name eth0-peer
ip link set eth0-peer up
ip link set eth0 up
check "README: rdma link add shca0 type shca netdev eth0 (autoloads shca)" \
	rdma link add shca0 type shca netdev eth0
check "shca0 registered on eth0" sh -c 'rdma link show shca0/1 | grep -q "netdev eth0"'
check "README: ibv_devinfo -d shca0" ibv_devinfo -d shca0
check "README: rdma link delete shca0" rdma link delete shca0
check "shca0 gone" test ! -e /sys/class/infiniband/shca0
ip link del eth0
check "module unloads after the README's commands" modprobe -r shca
e2e_finish
