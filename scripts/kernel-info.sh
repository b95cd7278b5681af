#!/bin/bash
# Print shell assignments describing one kernel flavour, for eval:
#   KVER      uname -r of the kernel
#   KIMAGE    bootable bzImage/vmlinuz
#   KMODROOT  directory holding lib/modules/$KVER (depmod'ed)
#   KDIR      kernel build tree for out-of-tree modules (make -C $KDIR M=...)
#   KFLAVOUR  the flavour name
# Flavours: 6.1 and 6.12 (Debian stock, scripts/fetch-kernels.sh),
# test (the KUnit/KASAN kernel, scripts/testkernel.sh), and deb12/deb13 (the
# kernel of a whole Debian 12/13 root, scripts/debian-root.sh; $SHCA_VM_ROOT
# names another root of that release).  For those, also:
#   KROOT     the root directory (vm-run boots it as the guest's /)
# Fetches a stock kernel if it is not cached yet; never builds the test
# kernel or a root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/root-lib.sh"
CACHE=${SHCA_CACHE:-$HOME/.cache/shca}
flavour=${1:?usage: kernel-info.sh 6.1|6.12|test|deb12|deb13}
kroot=''
case "$flavour" in
6.1|6.12)
	"$here/fetch-kernels.sh" "$flavour"
	dir=$CACHE/stock/$flavour
	kver=$(cat "$dir/version")
	image=$dir/root/boot/vmlinuz-$kver
	modroot=$dir/root
	kdir=$dir/root/usr/src/linux-headers-$kver
	;;
test)
	dir=$("$here/testkernel.sh" dir)
	[ -f "$dir/version" ] || { echo "test kernel not built: scripts/testkernel.sh build" >&2; exit 1; }
	kver=$(cat "$dir/version")
	image=$dir/bzImage
	modroot=$dir/root
	kdir=$dir/build
	;;
deb12|deb13)
	[ "$flavour" = deb12 ] && release=bookworm || release=trixie
	if [ -n "${SHCA_VM_ROOT:-}" ]; then
		modroot=$(cd "$SHCA_VM_ROOT" && pwd -P)
		kver=$(root_kver "$modroot") || { echo "no kernel in $modroot/boot" >&2; exit 1; }
	else
		kver=$("$here/debian-root.sh" --kver "$release") || exit 1
		modroot=$("$here/debian-root.sh" --dir "$release")
	fi
	image=$modroot/boot/vmlinuz-$kver
	kdir=$modroot/usr/src/linux-headers-$kver
	kroot=$modroot
	;;
*) echo "unknown flavour: $flavour" >&2; exit 2 ;;
esac
printf 'KFLAVOUR=%q\nKVER=%q\nKIMAGE=%q\nKMODROOT=%q\nKDIR=%q\nKROOT=%q\n' \
	"$flavour" "$kver" "$image" "$modroot" "$kdir" "$kroot"
