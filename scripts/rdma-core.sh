#!/bin/bash
# Build the shca provider inside rdma-core's own source tree, against the
# private headers of the exact rdma-core release it will run with.
#
# Usage:
#   scripts/rdma-core.sh source VERSION
#       Fetch Debian's source package of rdma-core VERSION and unpack it
#       (once) into $SHCA_CACHE/rdma-core/VERSION/src; prints that path.
#   scripts/rdma-core.sh build VERSION [OUTDIR]
#       Copy providers/shca and include/uapi/rdma/shca-abi.h into a copy of
#       that tree, list them the way rdma-core lists its own providers,
#       configure rdma-core's CMake build (ninja) and build only the shca
#       provider, its host tests and what they link against.  Leaves
#       libshca-rdmav34.so, shca.driver, lib/libibverbs.so.1* (the
#       libibverbs of that release, for the tests) and tests/test_unit,
#       tests/test_dlopen in OUTDIR (default build/provider/VERSION).
#       The build directory stays in the cache, so a second run is
#       incremental; our sources are re-copied each time.  Prints OUTDIR.
#   scripts/rdma-core.sh test VERSION [OUTDIR]
#       Run the host tests of that build: tests/test_unit, then
#       tests/test_dlopen, which must see the provider accept the libibverbs
#       it was built with (and the host's, if that is the same release) and
#       refuse the host's libibverbs and the other builds' in
#       build/provider/*/lib when they are another release.
#   scripts/rdma-core.sh cppflags VERSION
#       Build VERSION (as above, default OUTDIR) and print the flags a
#       program outside rdma-core's tree needs to include the provider's
#       shca.h and rdma-core's private headers of that release.
#   scripts/rdma-core.sh host-version
#       Print the host's rdma-core release (libibverbs1's version).
#   scripts/rdma-core.sh versions
#       Print the supported releases, one per line.
#
# Supported: 44.0 (Debian 12 bookworm, 44.0-2), 56.1 (Debian 13 trixie,
# 56.1-1).  Any other VERSION fails with a message naming these.
#
# The source package comes from deb.debian.org via `apt-get source` with a
# private apt configuration under $SHCA_CACHE/rdma-core/apt (the host's
# /etc/apt is never touched); apt checks every file against the signed
# Sources index, dpkg-source -x against the .dsc.  When the mirror lacks a
# file of the package, the upstream release tarball is tried instead
# (accepted only if its sha256 matches Debian's orig tarball), and then,
# if SHCA_RDMA_CORE_GIT names a clone of github.com/linux-rdma/rdma-core,
# `git archive vVERSION` of it (that differs from the release tarball only
# by the prebuilt man pages, which we do not build); Debian's patches are
# applied on top either way.  $SHCA_CACHE/rdma-core/VERSION/src/.shca-source
# says where the tree came from.
#
# Environment:
#   SHCA_CACHE           cache root (default ~/.cache/shca)
#   SHCA_RDMA_CORE_GIT   optional rdma-core git clone, last-resort source
#   SHCA_DEBIAN_MIRROR   default http://deb.debian.org/debian
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${SHCA_CACHE:-$HOME/.cache/shca}
RC=$CACHE/rdma-core
MIRROR=${SHCA_DEBIAN_MIRROR:-http://deb.debian.org/debian}

die() {
	echo "rdma-core.sh: $*" >&2
	exit 1
}

usage() {
	sed -n '2,/^set -e/{/^set -e/d;s/^# \{0,1\}//;p}' "$0" >&2
	exit 2
}

# debian_version VERSION: the Debian source version we use for VERSION.
debian_version() {
	case "$1" in
	44.0) echo 44.0-2 ;;
	56.1) echo 56.1-1 ;;
	*) die "rdma-core $1 is not supported by shca; supported: 44.0 (Debian 12), 56.1 (Debian 13)" ;;
	esac
}

APT=$RC/apt
apt_opts=(-o "Dir::Etc::SourceList=$APT/sources.list"
	-o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$APT/lists"
	-o "Dir::Cache=$APT/cache"
	-o APT::Sandbox::User=root
	-o Debug::NoLocking=1
	-q)

# apt_update: refresh the private deb-src index (bookworm and trixie).
apt_update() {
	mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial"
	cat >"$APT/sources.list" <<-EOF
		deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR bookworm main
		deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR trixie main
	EOF
	apt-get "${apt_opts[@]}" update >&2
}

# sources_sha256 DEBVER FILE: the sha256 Debian's Sources index gives FILE.
sources_sha256() {
	apt-cache "${apt_opts[@]}" showsrc rdma-core | awk -v ver="$1" -v file="$2" '
		/^Version:/ { inver = ($2 == ver) }
		/^[A-Z]/ { insum = ($1 == "Checksums-Sha256:") }
		inver && insum && $3 == file { print $1; exit }'
}

# fetch_orig VERSION DEBVER DIR: put rdma-core_VERSION.orig.tar.gz into DIR
# from the upstream release when the Debian mirror does not have it.
fetch_orig() {
	local v=$1 dv=$2 dir=$3 want got
	local f=rdma-core_$v.orig.tar.gz
	want=$(sources_sha256 "$dv" "$f")
	[ -n "$want" ] || die "no checksum for $f in Debian's Sources index"
	if curl -fsSL --max-time 120 -o "$dir/$f.tmp" \
		"https://github.com/linux-rdma/rdma-core/releases/download/v$v/rdma-core-$v.tar.gz" 2>/dev/null; then
		got=$(sha256sum "$dir/$f.tmp" | cut -d' ' -f1)
		if [ "$got" = "$want" ]; then
			mv "$dir/$f.tmp" "$dir/$f"
			return 0
		fi
		echo "rdma-core.sh: upstream rdma-core-$v.tar.gz does not match Debian's $f; not used" >&2
	fi
	rm -f "$dir/$f.tmp"
	return 1
}

# unpack VERSION: fill $RC/VERSION/src (once).
unpack() {
	local v=$1 dv dl src tmp how patch
	dv=$(debian_version "$v")
	src=$RC/$v/src
	[ -f "$src/.shca-source" ] && return 0
	dl=$RC/$v/dl
	mkdir -p "$dl"
	apt_update
	# Files the mirror lacks are reported by apt and looked for below.
	(cd "$dl" && apt-get "${apt_opts[@]}" source --download-only "rdma-core=$dv" >&2) ||
		echo "rdma-core.sh: apt-get source rdma-core=$dv was incomplete; trying the fallbacks" >&2
	tmp=$RC/$v/src.tmp
	rm -rf "$tmp"
	if [ -f "$dl/rdma-core_$dv.dsc" ] && [ -f "$dl/rdma-core_$v.orig.tar.gz" ] &&
		[ -f "$dl/rdma-core_$dv.debian.tar.xz" ]; then
		dpkg-source --no-copy -x "$dl/rdma-core_$dv.dsc" "$tmp" >&2
		how="Debian source package rdma-core $dv (dpkg-source -x)"
	else
		[ -f "$dl/rdma-core_$dv.debian.tar.xz" ] ||
			die "cannot download rdma-core_$dv.debian.tar.xz from $MIRROR"
		mkdir -p "$tmp"
		if [ -f "$dl/rdma-core_$v.orig.tar.gz" ] || fetch_orig "$v" "$dv" "$dl"; then
			tar -xzf "$dl/rdma-core_$v.orig.tar.gz" -C "$tmp" --strip-components=1
			how="rdma-core_$v.orig.tar.gz (sha256 as in Debian's Sources)"
		elif [ -n "${SHCA_RDMA_CORE_GIT:-}" ]; then
			git -C "$SHCA_RDMA_CORE_GIT" rev-parse -q --verify "refs/tags/v$v" >/dev/null ||
				die "$SHCA_RDMA_CORE_GIT has no tag v$v"
			git -C "$SHCA_RDMA_CORE_GIT" archive "v$v" | tar -x -C "$tmp"
			how="git archive v$v ($(git -C "$SHCA_RDMA_CORE_GIT" rev-parse "v$v^{commit}")) of $SHCA_RDMA_CORE_GIT"
		else
			die "rdma-core_$v.orig.tar.gz is neither on $MIRROR nor at github.com/linux-rdma/rdma-core; set SHCA_RDMA_CORE_GIT to an rdma-core git clone"
		fi
		tar -xJf "$dl/rdma-core_$dv.debian.tar.xz" -C "$tmp"
		if [ -f "$tmp/debian/patches/series" ]; then
			while read -r patch _; do
				case "$patch" in '' | '#'*) continue ;; esac
				patch -d "$tmp" -p1 -s --no-backup-if-mismatch <"$tmp/debian/patches/$patch" ||
					die "Debian patch $patch does not apply"
			done <"$tmp/debian/patches/series"
		fi
		how="$how + debian/ and its patches from rdma-core_$dv.debian.tar.xz"
	fi
	grep -q "^set(PACKAGE_VERSION \"$v\")" "$tmp/CMakeLists.txt" ||
		die "the unpacked tree is not rdma-core $v"
	echo "$how" >"$tmp/.shca-source"
	rm -rf "$src"
	mv "$tmp" "$src"
}

# prepare_tree VERSION: $RC/VERSION/tree = src + our provider, listed in
# rdma-core's CMake files.  Files whose content did not change keep their
# time stamps, so ninja rebuilds only what our edits touched.  Our files
# are copied without their source time stamps (no -t): a changed file is
# always newer than the objects in the cached build, even when another
# checkout with older edits built there last.
prepare_tree() {
	local v=$1 src=$RC/$1/src tree=$RC/$1/tree
	mkdir -p "$tree"
	rsync -a --delete --checksum --exclude=/providers/shca \
		--exclude=/kernel-headers/rdma/shca-abi.h \
		--exclude=/CMakeLists.txt --exclude=/kernel-headers/CMakeLists.txt \
		"$src/" "$tree/"
	mkdir -p "$tree/providers/shca"
	rsync -rlp --delete --checksum --exclude=/build --exclude=/Makefile \
		"$top/providers/shca/" "$tree/providers/shca/"
	rsync -rlp --checksum "$top/include/uapi/rdma/shca-abi.h" "$tree/kernel-headers/rdma/shca-abi.h"
	# The provider goes next to siw in the provider list, its ABI header
	# next to siw's in both kernel-headers lists: the headers published to
	# the build's include/rdma and those transformed into kernel-abi/.
	sed '/^add_subdirectory(providers\/siw)$/a add_subdirectory(providers/shca)' \
		"$src/CMakeLists.txt" >"$tree/CMakeLists.txt.new"
	sed '/^  rdma\/siw-abi.h$/i \ \ rdma/shca-abi.h' \
		"$src/kernel-headers/CMakeLists.txt" >"$tree/kernel-headers/CMakeLists.txt.new"
	grep -q '^add_subdirectory(providers/shca)$' "$tree/CMakeLists.txt.new" ||
		die "cannot add providers/shca to rdma-core $v's CMakeLists.txt"
	grep -q '^  rdma/shca-abi.h$' "$tree/kernel-headers/CMakeLists.txt.new" ||
		die "cannot add rdma/shca-abi.h to rdma-core $v's kernel-headers/CMakeLists.txt"
	local f
	for f in CMakeLists.txt kernel-headers/CMakeLists.txt; do
		if cmp -s "$tree/$f.new" "$tree/$f"; then
			rm "$tree/$f.new"
		else
			mv "$tree/$f.new" "$tree/$f"
		fi
	done
}

build() {
	local v=$1 out=${2:-$top/build/provider/$1} bld=$RC/$1/build
	prepare_tree "$v"
	# Only libibverbs and the provider are built; everything that needs
	# more than the build dependencies in scripts/deps.sh is off.  Release
	# and the compiler flags as in debian/rules (hardening=+all; from the
	# tree, so the flags do not depend on where we were started).
	local cflags ldflags
	cflags=$(cd "$RC/$v/tree" && DEB_BUILD_MAINT_OPTIONS=hardening=+all \
		dpkg-buildflags --get CFLAGS && DEB_BUILD_MAINT_OPTIONS=hardening=+all \
		dpkg-buildflags --get CPPFLAGS)
	ldflags=$(cd "$RC/$v/tree" && DEB_BUILD_MAINT_OPTIONS=hardening=+all \
		dpkg-buildflags --get LDFLAGS)
	local cfg=(-G Ninja "$RC/$v/tree"
		-DDISTRO_FLAVOUR=Debian -DCMAKE_BUILD_TYPE=Release
		"-DCMAKE_C_FLAGS=${cflags//$'\n'/ }"
		"-DCMAKE_SHARED_LINKER_FLAGS=$ldflags"
		"-DCMAKE_MODULE_LINKER_FLAGS=$ldflags"
		"-DCMAKE_EXE_LINKER_FLAGS=$ldflags"
		-DCMAKE_INSTALL_PREFIX=/usr
		"-DCMAKE_INSTALL_LIBDIR=lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)"
		-DCMAKE_INSTALL_SYSCONFDIR=/etc
		-DNO_MAN_PAGES=1 -DNO_PYVERBS=1 -DENABLE_STATIC=0
		-DENABLE_RESOLVE_NEIGH=0 -DENABLE_VALGRIND=0)
	if [ ! -f "$bld/build.ninja" ] || [ "$(cat "$bld/.shca-cmake" 2>/dev/null)" != "${cfg[*]}" ]; then
		rm -rf "$bld"
		mkdir -p "$bld"
		(cd "$bld" && cmake "${cfg[@]}") >&2
		echo "${cfg[*]}" >"$bld/.shca-cmake"
	fi
	ninja -C "$bld" shca-rdmav34 shca_test_unit shca_test_dlopen >&2
	mkdir -p "$out/tests" "$out/lib"
	install -m 0644 "$bld/lib/libshca-rdmav34.so" "$out/libshca-rdmav34.so"
	install -m 0644 "$bld/providers/shca/shca.driver" "$out/shca.driver"
	rm -f "$out"/lib/libibverbs.so.1*
	cp -P "$bld"/lib/libibverbs.so.1 "$bld"/lib/libibverbs.so.1.* "$out/lib/"
	install -m 0755 "$bld/bin/shca_test_unit" "$out/tests/test_unit"
	install -m 0755 "$bld/bin/shca_test_dlopen" "$out/tests/test_dlopen"
	echo "$out"
}

# run_tests VERSION [OUTDIR]
run_tests() {
	local v=$1 out=${2:-$top/build/provider/$1} sys own o args=()
	[ -x "$out/tests/test_unit" ] && [ -x "$out/tests/test_dlopen" ] ||
		die "no host tests in $out: run scripts/rdma-core.sh build $v first"
	"$out/tests/test_unit"
	own=$(readlink -f "$out/lib/libibverbs.so.1")
	args=("+$own")
	sys=$(readlink -f "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/libibverbs.so.1" || true)
	if [ -f "$sys" ]; then
		[ "${sys##*/}" = "${own##*/}" ] && args+=("+$sys") || args+=("-$sys")
	fi
	for o in "$top"/build/provider/*/lib/libibverbs.so.1; do
		o=$(readlink -f "$o")
		[ -f "$o" ] && [ "${o##*/}" != "${own##*/}" ] && args+=("-$o")
	done
	"$out/tests/test_dlopen" "$out/libshca-rdmav34.so" "${args[@]}"
}

# cppflags VERSION: after a build, the flags for programs outside the tree.
cppflags() {
	local v=$1 bld=$RC/$1/build lib code
	lib=$(cd "$bld/lib" && echo libibverbs.so.1.*.*)
	[ -f "$bld/lib/$lib" ] || die "no libibverbs in $bld/lib"
	code=$((${v%%.*} * 100 + ${v#*.}))
	# -isystem: rdma-core's headers are not clean under -Wextra (they
	# build with -Wno-unused-parameter); the programs' own code is.
	echo "-D_GNU_SOURCE -isystem $bld/include" \
		"-DSHCA_RDMA_CORE_VERSION=\\\"$v\\\" -DSHCA_RDMA_CORE_VERSION_CODE=$code" \
		"-DSHCA_LIBIBVERBS_FILE=\\\"$lib\\\""
}

case "${1:-}" in
versions) printf '44.0\n56.1\n'; exit 0 ;;
host-version)
	dpkg-query -W -f '${Version}' libibverbs1 | sed 's/^[0-9]*://; s/-[^-]*$//'
	exit 0
	;;
esac
[ $# -ge 2 ] || usage
cmd=$1 v=$2
debian_version "$v" >/dev/null
mkdir -p "$RC/$v"
# One run per release at a time; different releases may build side by side.
exec 9>"$RC/$v.lock"
flock 9
case "$cmd" in
test)
	[ $# -le 3 ] || usage
	run_tests "$v" "${3:-}"
	;;
cppflags)
	[ $# -eq 2 ] || usage
	unpack "$v"
	build "$v" "" >/dev/null
	cppflags "$v"
	;;
source)
	[ $# -eq 2 ] || usage
	unpack "$v"
	echo "$RC/$v/src"
	;;
build)
	[ $# -le 3 ] || usage
	unpack "$v"
	build "$v" "${3:-}"
	;;
*) usage ;;
esac
