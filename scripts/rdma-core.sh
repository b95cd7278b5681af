#!/bin/bash
# Build the shca provider inside rdma-core's own source tree, against the
# private headers of the exact rdma-core release it will run with; for
# 44.0, when no such tree can be had, against our own declarations of the
# part of that private interface the provider uses (providers/shca/decl-44.0).
#
# Usage:
#   scripts/rdma-core.sh source VERSION
#       Fetch Debian's source package of rdma-core VERSION and unpack it
#       (once) into $SHCA_CACHE/rdma-core/VERSION/src; prints that path
#       (fails if no tree could be had; see below).
#   scripts/rdma-core.sh build VERSION [OUTDIR]
#       Copy providers/shca and include/uapi/rdma/shca-abi.h into a copy of
#       that tree, list them the way rdma-core lists its own providers,
#       configure rdma-core's CMake build (ninja) and build only the shca
#       provider, its host tests and what they link against.  Without a
#       tree (44.0 only): build the same files with
#       providers/shca/decl-44.0/build.mk against our declarations and
#       Debian's libibverbs-dev and libibverbs1 44.0-2 (apt-get download),
#       with the same compiler and linker flags.  Either way leaves
#       libshca-rdmav34.so, shca.driver, lib/libibverbs.so.1* (the
#       libibverbs of that release, for the tests) and tests/test_unit,
#       tests/test_dlopen in OUTDIR (default build/provider/VERSION), and
#       says in one line which way it built.  The build directory stays in
#       the cache, so a second run is incremental; our sources are
#       re-copied each time.  Prints OUTDIR.
#   scripts/rdma-core.sh test VERSION [OUTDIR]
#       Run the host tests of that build: tests/test_unit, then
#       tests/test_dlopen, which must see the provider accept the libibverbs
#       it was built with (and the host's, if that is the same release) and
#       refuse the host's libibverbs and the other builds' in
#       build/provider/*/lib when they are another release.
#   scripts/rdma-core.sh cppflags VERSION
#       Build VERSION (as above, default OUTDIR) and print the flags a
#       program outside rdma-core's tree needs to include the provider's
#       shca.h and rdma-core's private headers of that release (or our
#       declarations of them).
#   scripts/rdma-core.sh compare VERSION [--write]
#       Prove that the declarations' way builds the same provider as
#       rdma-core's tree (44.0; make check's provider stage runs it).  A
#       probe (decl-44.0/probe.c) prints the size of every private struct
#       the provider uses and the offset and size of their members, and of
#       its DECLARE_DRV_CMD() commands; it is built against our
#       declarations and, when a tree can be had, against the tree's
#       headers: the outputs must be equal, and so must the symbols (with
#       versions) the provider built each way imports.  Always, with or
#       without a tree: the probe's rows for rdma-core's structs must equal
#       decl-44.0/layout.txt and the declarations' provider's imports
#       decl-44.0/imports.txt.  Says which comparisons ran, which were
#       skipped and why; fails on any difference.  --write (needs the tree)
#       first rewrites layout.txt and imports.txt from the tree's build.
#   scripts/rdma-core.sh host-version
#       Print the host's rdma-core release (libibverbs1's version).
#   scripts/rdma-core.sh versions
#       Print the supported releases, one per line.
#
# Supported: 44.0 (Debian 12 bookworm, 44.0-2), 56.1 (Debian 13 trixie,
# 56.1-1).  Any other VERSION fails with a message naming these.
#
# The sources come from deb.debian.org with a private apt configuration
# under $SHCA_CACHE/rdma-core/apt (the host's /etc/apt is never touched):
# apt-get update fetches the signed Sources index, and each file of the
# source package (.dsc, orig and debian tarballs) is downloaded from the
# pool directory that index names and accepted only with the sha256 it
# gives; dpkg-source -x checks the files against the .dsc.  The tree is
# made from the first of these that can be had:
#   1. Debian's source package (all three files);
#   2. the orig tarball, from the mirror or else the upstream release
#      tarball (accepted only if its sha256 matches Debian's orig
#      tarball), plus Debian's debian/ and its patches;
#   3. if SHCA_RDMA_CORE_GIT names a clone of
#      github.com/linux-rdma/rdma-core, `git archive vVERSION` of it (that
#      differs from the release tarball only by the prebuilt man pages,
#      which we do not build), plus Debian's debian/ and its patches;
#   4. none (44.0 only): our declarations, as described under build.
# $SHCA_CACHE/rdma-core/VERSION/src/.shca-source says which; a record of
# the declarations' way is retried when SHCA_RDMA_CORE_GIT is set.
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
	-o Acquire::Languages=none
	-q)

# apt_update: refresh the private index (once per run): bookworm's and
# trixie's sources, bookworm's binary packages (for the declarations' way).
apt_updated=
apt_update() {
	[ -z "$apt_updated" ] || return 0
	mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial"
	cat >"$APT/sources.list" <<-EOF
		deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR bookworm main
		deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR trixie main
		deb [arch=$(dpkg --print-architecture) signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR bookworm main
	EOF
	apt-get "${apt_opts[@]}" update >&2
	apt_updated=1
}

# sources_record DEBVER: rdma-core DEBVER's record in the signed Sources index.
sources_record() {
	apt-cache "${apt_opts[@]}" showsrc rdma-core | awk -v RS= -v ver="$1" '
		{ n = split($0, l, "\n"); for (i = 1; i <= n; i++)
			if (l[i] == "Version: " ver) { print; exit } }'
}

# sources_sha256 DEBVER FILE: the sha256 Debian's Sources index gives FILE.
sources_sha256() {
	sources_record "$1" | awk -v file="$2" '
		/^[A-Z]/ { insum = ($1 == "Checksums-Sha256:") }
		insum && $3 == file { print $1; exit }'
}

# fetch_pool DEBVER FILE DIR: download FILE of rdma-core DEBVER from the
# mirror's pool (the Sources record's Directory:) into DIR, accepted only
# with the sha256 the signed index gives it.  Fails if the mirror lacks it.
fetch_pool() {
	local dv=$1 f=$2 dir=$3 want rel
	[ -f "$dir/$f" ] && return 0
	want=$(sources_sha256 "$dv" "$f")
	[ -n "$want" ] || die "no checksum for $f in Debian's Sources index"
	rel=$(sources_record "$dv" | awk '$1 == "Directory:" { print $2; exit }')
	[ -n "$rel" ] || die "no Directory for rdma-core $dv in Debian's Sources index"
	if ! curl -fs --max-time 600 -o "$dir/$f.tmp" "$MIRROR/$rel/$f"; then
		rm -f "$dir/$f.tmp"
		echo "rdma-core.sh: $f is not on $MIRROR" >&2
		return 1
	fi
	[ "$(sha256sum "$dir/$f.tmp" | cut -d' ' -f1)" = "$want" ] ||
		die "$MIRROR/$rel/$f does not match the sha256 in Debian's Sources index"
	mv "$dir/$f.tmp" "$dir/$f"
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

# tree_from_pieces VERSION DEBVER DL TMP: unpack rdma-core into TMP from
# the files in DL (Debian's source package, or an upstream orig tarball or
# git archive plus Debian's debian/ and patches); prints how.  Returns 3
# if no tree can be had (any other failure is an error).
tree_from_pieces() {
	local v=$1 dv=$2 dl=$3 tmp=$4 how patch
	if [ -f "$dl/rdma-core_$dv.dsc" ] && [ -f "$dl/rdma-core_$v.orig.tar.gz" ] &&
		[ -f "$dl/rdma-core_$dv.debian.tar.xz" ]; then
		dpkg-source --no-copy -x "$dl/rdma-core_$dv.dsc" "$tmp" >&2
		echo "Debian source package rdma-core $dv (dpkg-source -x)"
		return 0
	fi
	[ -f "$dl/rdma-core_$dv.debian.tar.xz" ] || {
		echo "rdma-core.sh: rdma-core_$dv.debian.tar.xz is not on $MIRROR" >&2
		return 3
	}
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
		echo "rdma-core.sh: rdma-core_$v.orig.tar.gz is neither on $MIRROR nor at github.com/linux-rdma/rdma-core, and SHCA_RDMA_CORE_GIT is not set" >&2
		return 3
	fi
	tar -xJf "$dl/rdma-core_$dv.debian.tar.xz" -C "$tmp"
	if [ -f "$tmp/debian/patches/series" ]; then
		while read -r patch _; do
			case "$patch" in '' | '#'*) continue ;; esac
			patch -d "$tmp" -p1 -s --no-backup-if-mismatch <"$tmp/debian/patches/$patch" ||
				die "Debian patch $patch does not apply"
		done <"$tmp/debian/patches/series"
	fi
	echo "$how + debian/ and its patches from rdma-core_$dv.debian.tar.xz"
}

# decl_dir VERSION: our declarations of VERSION's private interface.
decl_dir() {
	echo "$top/providers/shca/decl-$1"
}

# decl_out VERSION: where the declarations' way builds: in this checkout,
# not the cache, as its objects depend on this checkout's provider sources
# (a cached build made from another checkout named files that are not here).
decl_out() {
	echo "$top/build/rdma-core/$1/decl"
}

# is_decl VERSION: whether $RC/VERSION/src stands for our declarations
# (no tree could be had) rather than an rdma-core tree.
is_decl() {
	[ -f "$RC/$1/src/.shca-source" ] && [ ! -f "$RC/$1/src/CMakeLists.txt" ]
}

# unpack VERSION: fill $RC/VERSION/src (once) with rdma-core's tree, or,
# when none can be had and we have declarations of VERSION, only its
# .shca-source saying so.  A record of the declarations' way is retried
# when SHCA_RDMA_CORE_GIT is set.
unpack() {
	local v=$1 dv dl src tmp how f rc=0
	dv=$(debian_version "$v")
	src=$RC/$v/src
	if [ -f "$src/.shca-source" ]; then
		is_decl "$v" && [ -n "${SHCA_RDMA_CORE_GIT:-}" ] || return 0
	fi
	dl=$RC/$v/dl
	mkdir -p "$dl"
	apt_update
	# Each file straight from the pool, checked against the signed index;
	# the ones the mirror lacks are looked for by tree_from_pieces.
	for f in "rdma-core_$dv.dsc" "rdma-core_$v.orig.tar.gz" "rdma-core_$dv.debian.tar.xz"; do
		fetch_pool "$dv" "$f" "$dl" || true
	done
	tmp=$RC/$v/src.tmp
	rm -rf "$tmp"
	how=$(tree_from_pieces "$v" "$dv" "$dl" "$tmp") || rc=$?
	if [ "$rc" = 0 ]; then
		grep -q "^set(PACKAGE_VERSION \"$v\")" "$tmp/CMakeLists.txt" ||
			die "the unpacked tree is not rdma-core $v"
	elif [ "$rc" = 3 ] && [ -d "$(decl_dir "$v")" ]; then
		rm -rf "$tmp"
		mkdir -p "$tmp"
		how="shca's declarations (providers/shca/decl-$v) and Debian's libibverbs-dev, libibverbs1 $dv: no rdma-core $v tree could be had"
	else
		[ "$rc" = 3 ] || exit "$rc"
		die "no rdma-core $v tree could be had (see above)"
	fi
	echo "$how" >"$tmp/.shca-source"
	rm -rf "$src"
	mv "$tmp" "$src"
}

# fetch_debs VERSION: Debian's libibverbs-dev and libibverbs1 of VERSION
# (apt-get download: checked against the signed Packages index) unpacked
# into $RC/VERSION/sysroot (once); the declarations' way builds with their
# public headers and libibverbs.
fetch_debs() {
	local v=$1 dv sys=$RC/$1/sysroot deb
	[ -f "$sys/.shca-debs" ] && return 0
	dv=$(debian_version "$v")
	apt_update
	rm -rf "$RC/$v/debs" "$sys.tmp"
	mkdir -p "$RC/$v/debs" "$sys.tmp"
	(cd "$RC/$v/debs" && apt-get "${apt_opts[@]}" download \
		"libibverbs1=$dv" "libibverbs-dev=$dv" >&2) ||
		die "cannot download libibverbs1 and libibverbs-dev $dv from $MIRROR"
	for deb in "$RC/$v/debs"/*.deb; do
		dpkg-deb -x "$deb" "$sys.tmp"
	done
	(cd "$RC/$v/debs" && ls ./*.deb) >"$sys.tmp/.shca-debs"
	rm -rf "$sys"
	mv "$sys.tmp" "$sys"
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

# deb_flags DIR CFLAGS|LDFLAGS: the flags debian/rules builds with
# (hardening=+all), computed in DIR (-ffile-prefix-map names it).
deb_flags() {
	(cd "$1" && if [ "$2" = CFLAGS ]; then
		DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get CFLAGS
		DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get CPPFLAGS
	else
		DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get LDFLAGS
	fi) | tr '\n' ' ' | sed 's/ *$//'
}

# tree_build VERSION: build the provider and its tests in rdma-core's tree
# ($RC/VERSION/build).
tree_build() {
	local v=$1 bld=$RC/$1/build
	prepare_tree "$v"
	# Only libibverbs and the provider are built; everything that needs
	# more than the build dependencies in scripts/deps.sh is off.  Release
	# and the compiler flags as in debian/rules (hardening=+all; from the
	# tree, so the flags do not depend on where we were started).
	local cflags ldflags
	cflags=$(deb_flags "$RC/$v/tree" CFLAGS)
	ldflags=$(deb_flags "$RC/$v/tree" LDFLAGS)
	local cfg=(-G Ninja "$RC/$v/tree"
		-DDISTRO_FLAVOUR=Debian -DCMAKE_BUILD_TYPE=Release
		"-DCMAKE_C_FLAGS=$cflags"
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
}

# decl_make VERSION TARGET...: make TARGETs of our declarations' build
# (decl-VERSION/build.mk) in decl_out VERSION, with the flags as above.
decl_make() {
	local v=$1 o
	o=$(decl_out "$1")
	shift
	fetch_debs "$v"
	mkdir -p "$o"
	make -s -f "$(decl_dir "$v")/build.mk" -C "$o" O="$o" SYSROOT="$RC/$v/sysroot" \
		DEB_CFLAGS="$(deb_flags "$o" CFLAGS)" DEB_LDFLAGS="$(deb_flags "$o" LDFLAGS)" \
		"$@" >&2
}

# install_out BLD OUTDIR: what build leaves in OUTDIR, from a build
# directory laid out as rdma-core's (both ways' are).
install_out() {
	local bld=$1 out=$2
	mkdir -p "$out/tests" "$out/lib"
	install -m 0644 "$bld/lib/libshca-rdmav34.so" "$out/libshca-rdmav34.so"
	install -m 0644 "$bld/providers/shca/shca.driver" "$out/shca.driver"
	rm -f "$out"/lib/libibverbs.so.1*
	cp -P "$bld"/lib/libibverbs.so.1 "$bld"/lib/libibverbs.so.1.* "$out/lib/"
	install -m 0755 "$bld/bin/shca_test_unit" "$out/tests/test_unit"
	install -m 0755 "$bld/bin/shca_test_dlopen" "$out/tests/test_dlopen"
	echo "$out"
}

# build VERSION [OUTDIR]: the way unpack found, said in one line.
build() {
	local v=$1 out=${2:-$top/build/provider/$1}
	if is_decl "$v"; then
		echo "rdma-core.sh: $v: building with $(cat "$RC/$v/src/.shca-source")" >&2
		decl_make "$v" all
		install_out "$(decl_out "$v")" "$out"
	else
		echo "rdma-core.sh: $v: building in rdma-core's tree from $(cat "$RC/$v/src/.shca-source")" >&2
		tree_build "$v"
		install_out "$RC/$v/build" "$out"
	fi
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
	local v=$1 inc lib code
	if is_decl "$v"; then
		inc="-isystem $(decl_dir "$v") -isystem $(decl_out "$v")/include -isystem $RC/$v/sysroot/usr/include"
		lib=$(cd "$(decl_out "$v")/lib" && echo libibverbs.so.1.*.*)
		[ -f "$(decl_out "$v")/lib/$lib" ] || die "no libibverbs in $(decl_out "$v")/lib"
	else
		inc="-isystem $RC/$v/build/include"
		lib=$(cd "$RC/$v/build/lib" && echo libibverbs.so.1.*.*)
		[ -f "$RC/$v/build/lib/$lib" ] || die "no libibverbs in $RC/$v/build/lib"
	fi
	code=$((${v%%.*} * 100 + ${v#*.}))
	# -isystem: rdma-core's headers are not clean under -Wextra (they
	# build with -Wno-unused-parameter); the programs' own code is.
	echo "-D_GNU_SOURCE $inc" \
		"-DSHCA_RDMA_CORE_VERSION=\\\"$v\\\" -DSHCA_RDMA_CORE_VERSION_CODE=$code" \
		"-DSHCA_LIBIBVERBS_FILE=\\\"$lib\\\""
}

# imports SO: the symbols SO imports, with their versions, one a line.
imports() {
	nm -D --undefined-only --with-symbol-versions "$1" | awk '{ print $NF }' | LC_ALL=C sort
}

# same WHAT EXPECTED GOT: compare two listings; say which and how they differ.
same() {
	if diff -u "$2" "$3" >"$3.diff"; then
		echo "rdma-core.sh: compare: same: $1" >&2
		return 0
	fi
	echo "rdma-core.sh: compare: DIFFERENT: $1" >&2
	cat "$3.diff" >&2
	return 1
}

# compare VERSION [--write]: prove that the declarations' way builds the
# same provider as rdma-core's tree (see the usage above).
compare() {
	local v=$1 write=${2:-} d c=$top/build/rdma-core/$1/compare fail=0 ran=0 tree=
	d=$(decl_dir "$v")
	[ -d "$d" ] || die "compare: there are no declarations of rdma-core $v (providers/shca/decl-$v)"
	rm -rf "$c"
	mkdir -p "$c"
	decl_make "$v" all probe
	"$(decl_out "$v")/probe" >"$c/layout-decl.txt"
	grep -v '^ushca_' "$c/layout-decl.txt" >"$c/layout-decl-core.txt"
	imports "$(decl_out "$v")/lib/libshca-rdmav34.so" >"$c/imports-decl.txt"
	is_decl "$v" || tree=1
	if [ -n "$tree" ]; then
		tree_build "$v"
		make -s -f "$d/build.mk" -C "$c" O="$c" SYSROOT="$RC/$v/sysroot" \
			DEB_CFLAGS="$(deb_flags "$c" CFLAGS)" TREE_INCLUDE="$RC/$v/build/include" \
			"$c/probe-tree" >&2
		"$c/probe-tree" >"$c/layout-tree.txt"
		imports "$RC/$v/build/lib/libshca-rdmav34.so" >"$c/imports-tree.txt"
		if [ "$write" = --write ]; then
			grep -v '^ushca_' "$c/layout-tree.txt" >"$d/layout.txt"
			cp "$c/imports-tree.txt" "$d/imports.txt"
			echo "rdma-core.sh: compare: wrote $d/layout.txt and imports.txt from rdma-core's tree" >&2
		fi
		same "layouts, declarations vs rdma-core's tree" "$c/layout-tree.txt" "$c/layout-decl.txt" || fail=1
		same "imported symbols, declarations' build vs the tree's" "$c/imports-tree.txt" "$c/imports-decl.txt" || fail=1
		ran=2
	else
		[ "$write" != --write ] || die "compare: --write needs rdma-core's tree"
		echo "rdma-core.sh: compare: skipped: declarations vs rdma-core's tree, layouts and imported symbols: no tree ($(cat "$RC/$v/src/.shca-source"))" >&2
	fi
	same "layouts, declarations vs decl-$v/layout.txt" "$d/layout.txt" "$c/layout-decl-core.txt" || fail=1
	same "imported symbols, declarations' build vs decl-$v/imports.txt" "$d/imports.txt" "$c/imports-decl.txt" || fail=1
	ran=$((ran + 2))
	[ "$fail" = 0 ] || die "compare $v: the declarations' way differs (see above; listings in $c)"
	echo "rdma-core.sh: compare $v: $ran comparisons ran, all the same" >&2
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
compare)
	[ $# -eq 2 ] || { [ $# -eq 3 ] && [ "$3" = --write ]; } || usage
	unpack "$v"
	compare "$v" "${3:-}"
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
	! is_decl "$v" || die "no rdma-core $v tree could be had: $(cat "$RC/$v/src/.shca-source")"
	echo "$RC/$v/src"
	;;
build)
	[ $# -le 3 ] || usage
	unpack "$v"
	build "$v" "${3:-}"
	;;
*) usage ;;
esac
