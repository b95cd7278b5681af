#!/bin/bash
# Build shca.ko the way a Debian user would, inside a Debian root from
# scripts/debian-root.sh: the sources go to /usr/src/shca-<version>, then
# `dkms add` and `dkms build` for the root's kernel, chrooted, with that
# release's gcc and headers.  The cached root stays clean: the chroot is a
# throwaway overlay (tmpfs-like upper dir, removed afterwards) on top of it.
# The module (decompressed if DKMS compressed it) lands in build/<flavour>/
# for scripts/vm-run --kernel <flavour>; its vermagic and the compiler that
# built it are checked against the root's kernel and gcc.
#
# Usage: scripts/dkms-root.sh RELEASE [--force]   (bookworm -> build/deb12,
#                                                  trixie -> build/deb13)
# Skips the build when build/<flavour>/shca.ko was made from the same
# module sources, dkms.conf and root (the key in build/<flavour>/.dkms-key),
# or takes it from the cache ($SHCA_CACHE/dkms-root/RELEASE-KEY/, the 5
# newest kept) when a clean clone has built the same before.
# Environment: SHCA_CACHE, SHCA_VM_ROOT (another root of that release).
# Must run as root (mount, chroot).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd -P)
. "$top/scripts/root-lib.sh"
CACHE=${SHCA_CACHE:-$HOME/.cache/shca}
release=${1:?usage: dkms-root.sh bookworm|trixie [--force]}
force=0
[ "${2:-}" = --force ] && force=1
case "$release" in
bookworm) flavour=deb12 ;;
trixie) flavour=deb13 ;;
*) echo "dkms-root: unknown release $release" >&2; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { echo "dkms-root: must run as root" >&2; exit 1; }

if [ -n "${SHCA_VM_ROOT:-}" ]; then
	root=$(cd "$SHCA_VM_ROOT" && pwd -P)
	rootid=$root
else
	root=$("$top/scripts/debian-root.sh" "$release")
	rootid=$(cat "$CACHE/roots/$release.stamp")
fi
kver=$(root_kver "$root") || { echo "dkms-root: no kernel in $root/boot" >&2; exit 1; }
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
out=$top/build/$flavour

key=$( {
	echo "$rootid $kver"
	cd "$top" && find drivers kunit include dkms.conf Kbuild Makefile scripts/dkms-root.sh scripts/root-lib.sh \
		-type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
} | sha256sum | cut -c1-16)
if [ "$force" = 0 ] && [ -f "$out/shca.ko" ] && [ "$(cat "$out/.dkms-key" 2>/dev/null)" = "$key" ]; then
	echo "dkms-root: $out/shca.ko is up to date ($kver)"
	exit 0
fi
kcache=$CACHE/dkms-root/$release-$key
if [ "$force" = 0 ] && [ -f "$kcache/shca.ko" ]; then
	mkdir -p "$out"
	cp "$kcache/shca.ko" "$out/shca.ko"
	echo "$key" >"$out/.dkms-key"
	echo "dkms-root: $out/shca.ko from the cache ($kcache, $kver)"
	exit 0
fi

t0=$(date +%s)
mkdir -p "$CACHE/dkms-root"
work=$(mktemp -d "$CACHE/dkms-root/.work.XXXXXX")
mnt=$work/merged
cleanup() {
	root_unmount_all
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

root_overlay "$root" "$work" "$mnt" shca-dkms
root_chroot_mounts "$mnt"
root_mount "$mnt/tmp" -t tmpfs tmpfs

# The sources as a tarball would bring them: no build outputs, no .git.
mkdir -p "$mnt/usr/src/shca-$ver"
rsync -a --exclude /build --exclude /.git --exclude '*.o' --exclude '*.ko' \
	"$top/" "$mnt/usr/src/shca-$ver/"

echo "dkms-root: $release ($kver): dkms add + build shca/$ver"
root_run "$mnt" dkms add -m shca -v "$ver"
if ! root_run "$mnt" dkms build -m shca -v "$ver" -k "$kver"; then
	find "$mnt/var/lib/dkms/shca/$ver" -name make.log -exec tail -n 40 {} \; 2>/dev/null
	exit 1
fi
ko=$(find "$mnt/var/lib/dkms/shca/$ver/$kver" -name 'shca.ko*' | head -n1)
[ -n "$ko" ] || { echo "dkms-root: dkms built no shca.ko" >&2; exit 1; }

mkdir -p "$out"
tmpko=$out/.shca.tmp.ko   # modinfo wants a .ko name
case "$ko" in
*.ko.xz) xz -dc "$ko" >"$tmpko" ;;
*.ko.zst) zstd -qdc "$ko" >"$tmpko" ;;
*.ko.gz) gzip -dc "$ko" >"$tmpko" ;;
*) cp "$ko" "$tmpko" ;;
esac

# vermagic: this kernel; compiler: the root's gcc (from its .comment).
vm=$(modinfo -F vermagic "$tmpko")
case "$vm" in "$kver "*) ;; *) echo "dkms-root: vermagic '$vm' is not for $kver" >&2; exit 1 ;; esac
gccver=$(root_run "$mnt" gcc -dumpfullversion)
cc=$(readelf -p .comment "$tmpko" | grep -o 'GCC: .*' | sort -u | tr '\n' ' ')
case "$cc" in *" $gccver"*) ;; *) echo "dkms-root: built by '$cc', not the root's gcc $gccver" >&2; exit 1 ;; esac

mv "$tmpko" "$out/shca.ko"
echo "$key" >"$out/.dkms-key"
mkdir -p "$kcache.tmp" && cp "$out/shca.ko" "$kcache.tmp/" && mv -T "$kcache.tmp" "$kcache" 2>/dev/null ||
	rm -rf "$kcache.tmp"
ls -1dt "$CACHE/dkms-root/$release"-*/ 2>/dev/null | tail -n +6 | xargs -r rm -rf
echo "dkms-root: $out/shca.ko for $kver (vermagic '$vm'; ${cc% }) in $(( $(date +%s) - t0 )) s"
