#!/bin/bash
# Helpers for the scripts that work on a Debian root of
# scripts/debian-root.sh from the host (sourced, not run):
#
#   root_kver DIR             the newest kernel in DIR/boot (vmlinuz-KVER)
#   root_run DIR CMD...       CMD chrooted in DIR, in a clean environment
#   root_mount TARGET ARGS... mount ARGS... TARGET, remembered in ROOT_MOUNTS
#   root_overlay LOWER WORK MNT NAME
#                             a throwaway copy of LOWER at MNT: overlayfs
#                             with its upper and work dirs under WORK
#   root_chroot_mounts DIR    /proc, /sys, /dev and a private /dev/pts in DIR
#   root_kill_procs DIR       end the processes chrooted in DIR
#   root_unmount_to N         unmount the newest mounts until N remain;
#                             a busy one is retried after ending the
#                             processes chrooted in the first mount (a
#                             daemon a maintainer script left running);
#                             fails on the first that will still not go
#   root_unmount_all          unmount everything, lazily where busy (for an
#                             EXIT trap)

ROOT_MOUNTS=()

root_kver() {
	local k
	k=$(ls -1 "$1/boot" 2>/dev/null | sed -n 's/^vmlinuz-//p' | sort -V | tail -n1)
	[ -n "$k" ] && echo "$k"
}

root_run() {
	local dir=$1
	shift
	chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LANG=C.UTF-8 TMPDIR=/tmp DEBIAN_FRONTEND=noninteractive "$@"
}

root_mount() {
	local target=$1
	shift
	mount "$@" "$target" && ROOT_MOUNTS+=("$target")
}

root_overlay() {
	mkdir -p "$2/upper" "$2/ovlwork" "$3" &&
		root_mount "$3" -t overlay -o "lowerdir=$1,upperdir=$2/upper,workdir=$2/ovlwork" "$4"
}

root_chroot_mounts() {
	root_mount "$1/proc" -t proc proc &&
		root_mount "$1/sys" -t sysfs sysfs &&
		root_mount "$1/dev" --bind /dev &&
		root_mount "$1/dev/pts" -t devpts -o newinstance devpts
}

root_kill_procs() {
	local dir p r sig
	dir=$(realpath "$1") || return 0
	for sig in TERM KILL; do
		for p in /proc/[0-9]*; do
			r=$(readlink "$p/root" 2>/dev/null) || continue
			[ "$r" = "$dir" ] || continue
			echo "# root-lib: SIG$sig ${p#/proc/} ($(tr '\0' ' ' <"$p/cmdline" 2>/dev/null | cut -c1-80)) chrooted in $dir" >&2
			kill -"$sig" "${p#/proc/}" 2>/dev/null
		done
		sleep 1
	done
}

root_unmount_to() {
	local try
	while [ ${#ROOT_MOUNTS[@]} -gt "$1" ]; do
		for try in 1 2 3 4; do
			umount "${ROOT_MOUNTS[-1]}" 2>/dev/null && break
			[ "$try" = 4 ] && { umount "${ROOT_MOUNTS[-1]}" || return 1; break; }
			root_kill_procs "${ROOT_MOUNTS[0]}"
		done
		unset 'ROOT_MOUNTS[-1]'
	done
}

root_unmount_all() {
	local i
	for ((i = ${#ROOT_MOUNTS[@]} - 1; i >= 0; i--)); do
		umount "${ROOT_MOUNTS[i]}" 2>/dev/null || umount -l "${ROOT_MOUNTS[i]}" 2>/dev/null || true
	done
	ROOT_MOUNTS=()
}
