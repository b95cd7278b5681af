#!/bin/bash
# Print shell assignments describing one kernel flavour, for eval:
#   KVER      uname -r of the kernel
#   KIMAGE    bootable bzImage/vmlinuz
#   KMODROOT  directory holding lib/modules/$KVER (depmod'ed)
#   KDIR      kernel build tree for out-of-tree modules (make -C $KDIR M=...)
#   KFLAVOUR  the flavour name
# Flavours: 6.1 and 6.12 (Debian stock, scripts/fetch-kernels.sh) and
# test (the KUnit/KASAN kernel, scripts/testkernel.sh).
# Fetches a stock kernel if it is not cached yet; never builds the test kernel.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CACHE=${SHCA_CACHE:-$HOME/.cache/shca}
flavour=${1:?usage: kernel-info.sh 6.1|6.12|test}
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
*) echo "unknown flavour: $flavour" >&2; exit 2 ;;
esac
printf 'KFLAVOUR=%q\nKVER=%q\nKIMAGE=%q\nKMODROOT=%q\nKDIR=%q\n' \
	"$flavour" "$kver" "$image" "$modroot" "$kdir"
