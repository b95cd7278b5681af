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
#   root_unmount_to N         unmount the newest mounts until N remain;
#                             fails on the first that will not go
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

root_unmount_to() {
	while [ ${#ROOT_MOUNTS[@]} -gt "$1" ]; do
		umount "${ROOT_MOUNTS[-1]}" || return 1
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
