#!/bin/bash
# Build (once) and locate the KUnit/KASAN/lockdep/kmemleak/UBSAN test kernel.
#
#   scripts/testkernel.sh dir      print the cache dir for the current config
#                                  (no build; it may not exist yet)
#   scripts/testkernel.sh build    build it unless already complete
#   scripts/testkernel.sh config   only generate + verify the .config (quick
#                                  sanity check of scripts/testkernel.config)
#
# The cache dir is $SHCA_CACHE/testkernel/<hash>, hash = sha256 over
# scripts/testkernel.config, the linux-source stamp, the compiler version and
# RECIPE below.  A complete dir holds:
#   version                  uname -r
#   bzImage
#   root/lib/modules/$KVER/  modules_install'ed (stripped) + depmod'ed
#   build/                   the O= build tree, usable as KDIR for M= modules
#                            (its Makefile points at the unpacked source in
#                            $SHCA_CACHE/linux-source-6.1, which must stay)
#   build.log                full build log
#   complete                 written last; its presence means "done"
# The build runs in the final location (O= trees record absolute paths);
# an interrupted build is resumed incrementally by the next "build".
# Environment: SHCA_CACHE (default ~/.cache/shca), SHCA_TESTKERNEL_JOBS
# (default nproc+1), SHCA_TESTKERNEL_KEEP (cache dirs kept, default 3).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CACHE=${SHCA_CACHE:-$HOME/.cache/shca}
TKROOT=$CACHE/testkernel
FRAGMENT=$here/testkernel.config
# Bump when the build steps below change in a way that changes the output.
RECIPE=2

src_stamp() {
	local tarball=/usr/src/linux-source-6.1.tar.xz
	if [ -f "$tarball" ]; then
		stat -c %Y-%s "$tarball"
	else
		cat "$CACHE/linux-source-6.1/.shca-stamp" 2>/dev/null || echo none
	fi
}

cache_dir() {
	local h
	h=$( { echo "recipe=$RECIPE"; echo "src=$(src_stamp)"
	       echo "cc=$(gcc --version 2>/dev/null | head -1)"
	       cat "$FRAGMENT"; } | sha256sum | cut -c1-16)
	echo "$TKROOT/$h"
}

log() { echo "testkernel: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Check that every option the fragment sets survived dependency resolution.
# "CONFIG_X=v" must appear verbatim; "# CONFIG_X is not set" must not be
# set to y/m (absent counts as off).  Prints every offender, then fails.
verify_config() {
	local config=$1 line sym bad=0
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*)
			if ! grep -qxF -- "$line" "$config"; then
				sym=${line%%=*}
				log "required '$line' but .config has: $(grep -E "^(# )?${sym}[= ]" "$config" || echo '(absent: unmet dependency)')"
				bad=1
			fi ;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }; sym=${sym%% *}
			if grep -qE "^$sym=[ym]" "$config"; then
				log "required '$line' but .config has: $(grep -E "^$sym=" "$config")"
				bad=1
			fi ;;
		esac
	done < "$FRAGMENT"
	[ "$bad" = 0 ] || die "config fragment not honoured (see above): fix scripts/testkernel.config"
}

# make allnoconfig + fragment, olddefconfig, verify.  $1 = O= dir.
make_config() {
	local out=$1
	mkdir -p "$out"
	make -C "$SRC" O="$out" KCONFIG_ALLCONFIG="$FRAGMENT" allnoconfig >>"$LOGFILE" 2>&1 \
		|| die "allnoconfig failed, see $LOGFILE"
	make -C "$SRC" O="$out" olddefconfig >>"$LOGFILE" 2>&1 \
		|| die "olddefconfig failed, see $LOGFILE"
	verify_config "$out/.config"
}

prune() {
	local keep=${SHCA_TESTKERNEL_KEEP:-3} cur=$1 d n=0
	# newest first by mtime of the dir; always keep the current one
	# shellcheck disable=SC2045  # cache dir names are hex hashes
	for d in $(ls -1dt "$TKROOT"/*/ 2>/dev/null); do
		d=${d%/}
		[ "$d" = "$cur" ] && continue
		n=$((n + 1))
		if [ "$n" -ge "$keep" ]; then
			log "pruning old test kernel $d"
			rm -rf "$d"
		fi
	done
}

cmd=${1:-}
case "$cmd" in
dir)
	cache_dir
	;;
config)
	SRC=$("$here/linux-source.sh")
	tmp=$(mktemp -d)
	LOGFILE=$tmp/config.log
	make_config "$tmp/build"
	log "config OK ($(grep -c '=[ym]$' "$tmp/build/.config") options y/m)"
	rm -rf "$tmp"
	;;
build)
	SRC=$("$here/linux-source.sh")
	dir=$(cache_dir)
	if [ -f "$dir/complete" ]; then   # fast path: no lock needed
		touch "$dir" 2>/dev/null || true   # LRU for prune
		log "up to date: $dir ($(cat "$dir/version"))"
		exit 0
	fi
	mkdir -p "$TKROOT"
	exec 9>"$TKROOT/.lock"
	if ! flock -n 9; then
		log "another build holds $TKROOT/.lock, waiting"
		flock 9
	fi
	if [ -f "$dir/complete" ]; then
		log "up to date: $dir ($(cat "$dir/version"))"
		touch "$dir"
		exit 0
	fi
	mkdir -p "$dir"
	touch "$dir"
	rm -f "$dir/version" "$dir/complete"   # kernel-info.sh treats "version" as built
	LOGFILE=$dir/build.log
	: > "$LOGFILE"
	jobs=${SHCA_TESTKERNEL_JOBS:-$(( $(nproc) + 1 ))}
	start=$(date +%s)
	log "building in $dir (make -j$jobs, log: $LOGFILE)"
	make_config "$dir/build"
	log "config verified ($(grep -c '=[ym]$' "$dir/build/.config") options y/m)"
	# UBSAN_SANITIZE=n: no UBSAN instrumentation in the kernel itself (see
	# testkernel.config); the modules built against this tree keep it.
	if ! make -C "$SRC" O="$dir/build" -j"$jobs" UBSAN_SANITIZE=n all >>"$LOGFILE" 2>&1; then
		grep -E 'error|Error' "$LOGFILE" | tail -20 >&2 || true
		die "kernel build failed after $(( $(date +%s) - start ))s, see $LOGFILE"
	fi
	built=$(date +%s)
	kver=$(make -s -C "$SRC" O="$dir/build" kernelrelease 2>>"$LOGFILE")
	[ -n "$kver" ] || die "could not get kernelrelease"
	rm -rf "$dir/root"
	make -C "$SRC" O="$dir/build" modules_install INSTALL_MOD_PATH="$dir/root" \
		INSTALL_MOD_STRIP=1 DEPMOD=/bin/true >>"$LOGFILE" 2>&1 \
		|| die "modules_install failed, see $LOGFILE"
	depmod -b "$dir/root" "$kver" >>"$LOGFILE" 2>&1 || die "depmod failed, see $LOGFILE"
	cp "$dir/build/arch/x86/boot/bzImage" "$dir/bzImage"
	echo "$kver" > "$dir/version"
	end=$(date +%s)
	echo "kver=$kver build_s=$((built - start)) total_s=$((end - start)) jobs=$jobs date=$(date -u +%FT%TZ)" > "$dir/complete"
	nmods=$(find "$dir/root/lib/modules/$kver" -name '*.ko' | wc -l)
	log "done: $kver in $((end - start))s (compile $((built - start))s, -j$jobs), $nmods modules, bzImage $(du -h "$dir/bzImage" | cut -f1)"
	log "dir: $dir"
	prune "$dir"
	;;
*)
	echo "usage: $0 dir|build|config" >&2
	exit 2
	;;
esac
