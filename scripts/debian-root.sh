#!/bin/bash
# Build (once, cached) a small Debian root for scripts/vm-run --kernel deb12|
# deb13: debootstrap --variant=minbase of RELEASE plus that release's kernel
# and headers, DKMS and its compiler, rdma-core's userspace and tests, and
# what vm-run's guest side (scripts/vm/guest.sh) runs.  No recommends.
#
# Usage: scripts/debian-root.sh RELEASE          build if needed, print the dir
#        scripts/debian-root.sh --dir RELEASE    print the dir only
#        scripts/debian-root.sh --kver RELEASE   print the root's kernel version
# RELEASE: bookworm (deb12) or trixie (deb13).
# Result: ${SHCA_CACHE:-~/.cache/shca}/roots/RELEASE, with roots/RELEASE.stamp
# holding the hash of the package list and RECIPE: a new list, or a RECIPE
# bumped because the steps changed, rebuilds.  The downloaded .debs stay in
# roots/debs-RELEASE, so a rebuild fetches only what changed.
# Environment: SHCA_DEBIAN_MIRROR (default http://deb.debian.org/debian).
# Must run as root.  Never touches the host's apt configuration: debootstrap
# brings its own keyring check (debian-archive-keyring) and the root's apt
# runs chrooted.  Network steps are retried.
set -euo pipefail
. "$(cd "$(dirname "$0")" && pwd)/root-lib.sh"

CACHE=${SHCA_CACHE:-$HOME/.cache/shca}
MIRROR=${SHCA_DEBIAN_MIRROR:-http://deb.debian.org/debian}

mode=build
case "${1:-}" in --dir|--kver) mode=${1#--}; shift ;; esac
release=${1:?usage: debian-root.sh [--dir|--kver] bookworm|trixie}
case "$release" in bookworm|trixie) ;; *) echo "debian-root: unknown release $release" >&2; exit 2 ;; esac
dir=$CACHE/roots/$release
stamp=$CACHE/roots/$release.stamp

# Everything beyond minbase, installed with the root's own apt.
PKGS="linux-image-amd64 linux-headers-amd64 dkms build-essential kmod
iproute2 iputils-ping ethtool procps rdma-core ibverbs-utils rdmacm-utils
ibverbs-providers python3-pyverbs perftest"

# Bump when the build steps below change what ends up in the root.
RECIPE=1

key=$(echo "$release $RECIPE" $PKGS | sha256sum | cut -c1-16)
fresh() { [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ] && [ -d "$dir/boot" ]; }

case "$mode" in
dir) echo "$dir"; exit 0 ;;
kver)
	fresh || { echo "debian-root: $release root not built (scripts/debian-root.sh $release)" >&2; exit 1; }
	root_kver "$dir"; exit ;;
esac

if fresh; then
	echo "$dir"
	exit 0
fi

[ "$(id -u)" = 0 ] || { echo "debian-root: must run as root" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "debian-root: debootstrap missing (scripts/deps.sh)" >&2; exit 1; }

debs=$CACHE/roots/debs-$release
mkdir -p "$CACHE/roots" "$debs"
# One builder per release at a time (check.sh lanes, helpers).
exec 9>"$CACHE/roots/$release.lock"
flock 9
if fresh; then echo "$dir"; exit 0; fi

t0=$(date +%s)
tmp=$dir.tmp
mounted=()
cleanup() {
	local m i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		m=${mounted[i]}
		umount -l "$m" 2>/dev/null || true
	done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

retry() {
	local n
	for n in 1 2 3 4; do
		"$@" && return 0
		[ $n = 4 ] && break
		echo "debian-root: '$1' failed (attempt $n), retrying in $((n * 10)) s" >&2
		sleep $((n * 10))
	done
	return 1
}

# --- stage 1: debootstrap minbase (retried from scratch) ---------------------
bootstrap() {
	cleanup; mounted=()
	rm -rf "$tmp"
	debootstrap --variant=minbase --merged-usr --cache-dir="$debs" \
		"$release" "$tmp" "$MIRROR" >"$CACHE/roots/$release.debootstrap.log" 2>&1 || {
		tail -n 20 "$CACHE/roots/$release.debootstrap.log" >&2
		return 1
	}
}
echo "debian-root: debootstrap $release (minbase) into $tmp" >&2
retry bootstrap

# --- stage 2: packages with the root's apt, chrooted --------------------------
bind() {
	mount --bind "$1" "$tmp$1"
	mounted+=("$tmp$1")
}
mount -t proc proc "$tmp/proc"; mounted+=("$tmp/proc")
mount -t sysfs sysfs "$tmp/sys"; mounted+=("$tmp/sys")
bind /dev
mount --bind "$debs" "$tmp/var/cache/apt/archives"; mounted+=("$tmp/var/cache/apt/archives")
mount -t devpts -o newinstance devpts "$tmp/dev/pts" 2>/dev/null && mounted+=("$tmp/dev/pts") || true

# Keep the root lean and quiet: no recommends/suggests, no documentation
# except rdma-core's tests (pyverbs-run.py reads /usr/share/doc/rdma-core/
# tests), no daemons started, no initrd (vm-run brings its own initramfs).
cat >"$tmp/etc/apt/apt.conf.d/90shca" <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Retries "5";
Dpkg::Options { "--force-confdef"; "--force-confold"; };
EOF
cat >"$tmp/etc/dpkg/dpkg.cfg.d/90shca" <<'EOF'
path-exclude=/usr/share/man/*
path-exclude=/usr/share/locale/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/rdma-core/*
path-include=/usr/share/doc/*/copyright
EOF
printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
chmod 755 "$tmp/usr/sbin/policy-rc.d"
chroot "$tmp" dpkg-divert --local --rename --add /usr/sbin/update-initramfs >/dev/null
printf '#!/bin/sh\necho "update-initramfs: skipped in the shca VM root"\n' >"$tmp/usr/sbin/update-initramfs"
chmod 755 "$tmp/usr/sbin/update-initramfs"
echo "shca-vm" >"$tmp/etc/hostname"

inchroot() {
	chroot "$tmp" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 HOME=/root "$@"
}
echo "debian-root: installing $(echo $PKGS)" >&2
retry inchroot apt-get update -q >/dev/null
# shellcheck disable=SC2086
retry inchroot apt-get install -y -q $PKGS >"$CACHE/roots/$release.apt.log" 2>&1 || {
	tail -n 30 "$CACHE/roots/$release.apt.log" >&2
	exit 1
}
umount "$tmp/var/cache/apt/archives"
rm -rf "$tmp"/var/lib/apt/lists/* "$tmp"/var/cache/apt/*.bin

kver=$(root_kver "$tmp") || { echo "debian-root: no kernel in the root" >&2; exit 1; }
[ -f "$tmp/lib/modules/$kver/modules.dep" ] || inchroot depmod "$kver"
[ -d "$tmp/usr/src/linux-headers-$kver" ] || { echo "debian-root: headers for $kver missing" >&2; exit 1; }
[ -d "$tmp/usr/share/doc/rdma-core/tests" ] || { echo "debian-root: rdma-core tests missing" >&2; exit 1; }
for b in bash ip rdma modprobe depmod ibv_devinfo rping ibv_rc_pingpong ib_write_bw python3 pgrep sysctl setsid dkms gcc make; do
	inchroot sh -c "command -v $b" >/dev/null || { echo "debian-root: $b missing in the root" >&2; exit 1; }
done

cleanup; mounted=()
trap - EXIT
rm -rf "$dir"
mv -T "$tmp" "$dir"
echo "$key" >"$stamp"
echo "debian-root: $release ready: kernel $kver, rdma-core $(chroot "$dir" dpkg-query -W -f='${Version}' rdma-core)," \
	"$(du -sh "$dir" | cut -f1), $(( $(date +%s) - t0 )) s" >&2
echo "$dir"
