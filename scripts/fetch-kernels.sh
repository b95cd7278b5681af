#!/bin/bash
# Fetch and unpack Debian 12's stock kernels (image, modules, headers, kbuild)
# into a cache outside the repository, and run depmod on them.
#
# Usage: scripts/fetch-kernels.sh [6.1|6.12]...   (default: both)
# Prints nothing but errors; scripts/kernel-info.sh reads the results.
# Cache: ${SHCA_CACHE:-$HOME/.cache/shca}/stock/<flavour>/{root,version}
set -euo pipefail

CACHE=${SHCA_CACHE:-$HOME/.cache/shca}

# Newest available version string of a package-name pattern.
newest() {
	apt-cache search --names-only "$1" | awk '{print $1}' | sort -V | tail -n1
}

# The ABI name (uname -r) for a flavour, resolved from apt's lists.
resolve_kver() {
	case "$1" in
	6.1)  apt-cache depends linux-image-amd64 |
		awk '/Depends: linux-image-6\.1/ {sub("linux-image-", "", $2); print $2; exit}' ;;
	6.12) newest '^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$' |
		sed -e 's/^linux-image-//' -e 's/-unsigned$//' ;;
	*) echo "unknown flavour $1" >&2; return 1 ;;
	esac
}

# Package names needed to boot and build modules for one kernel.
packages_for() {
	local kver=$1 flavour=$2 common kbuild image
	common=${kver%-amd64}-common
	if [ "$flavour" = 6.1 ]; then
		image=linux-image-$kver
		kbuild=linux-kbuild-6.1
	else
		image=linux-image-$kver-unsigned
		kbuild=linux-kbuild-${kver%-amd64}
	fi
	echo "$image linux-headers-$kver linux-headers-$common $kbuild"
}

# fetch_one FLAVOUR: under the flavour's lock, as make check's stages (and
# a developer's build beside them) may ask for the same kernel at once, and
# two unpackings into one .tmp tree leave a root without its image.
fetch_one() {
	mkdir -p "$CACHE/stock"
	(
		flock 9
		fetch_locked "$1"
	) 9>"$CACHE/stock/$1.lock"
}

fetch_locked() {
	local flavour=$1 kver dir pkgs p deb
	kver=$(resolve_kver "$flavour")
	if [ -z "$kver" ]; then
		# Fresh machine: apt's package lists may not be there yet.
		apt-get -o DPkg::Lock::Timeout=900 update -q >&2
		kver=$(resolve_kver "$flavour")
	fi
	[ -n "$kver" ] || { echo "cannot resolve the Debian $flavour kernel from apt" >&2; return 1; }
	dir=$CACHE/stock/$flavour
	if [ -f "$dir/version" ] && [ "$(cat "$dir/version")" = "$kver" ] &&
	   [ -f "$dir/root/lib/modules/$kver/modules.dep" ]; then
		return 0
	fi
	rm -rf "$dir.tmp"
	mkdir -p "$dir.tmp/root" "$CACHE/debs"
	pkgs=$(packages_for "$kver" "$flavour")
	(cd "$CACHE/debs" && for p in $pkgs; do
		ls "${p}"_*.deb >/dev/null 2>&1 || apt-get download -q "$p" >/dev/null 2>&1
	done)
	for p in $pkgs; do
		deb=$(ls "$CACHE/debs/${p}"_*.deb | sort -V | tail -n1)
		dpkg-deb -x "$deb" "$dir.tmp/root"
	done
	depmod -b "$dir.tmp/root" "$kver"
	echo "$kver" > "$dir.tmp/version"
	rm -rf "$dir"
	mv "$dir.tmp" "$dir"
}

[ $# -gt 0 ] || set -- 6.1 6.12
for f in "$@"; do
	fetch_one "$f"
done
