#!/bin/bash
# Prove dkms.conf works: `dkms build` of this tree against a stock Debian
# kernel's headers, in a private dkms tree (nothing touches /var/lib/dkms).
# The copy DKMS builds carries one extra function that nothing calls, as a
# newer compiler's new warning would: the build must warn and still succeed
# (dkms.conf builds without -Werror), and the warning must be in its log.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
flavour=${1:-6.1}
eval "$("$top/scripts/kernel-info.sh" "$flavour")"
command -v dkms >/dev/null || {
	# waits for dpkg's lock: scripts/linux-source.sh may be installing beside it
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 \
		install -y -q --no-install-recommends dkms
}
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src" "$work/tree"
rsync -a --exclude build --exclude .git "$top/" "$work/src/shca-$ver/"
probe=shca_dkms_warning_probe
printf '\nstatic void %s(void)\n{\n}\n' "$probe" >>"$work/src/shca-$ver/drivers/infiniband/sw/shca/main.c"
opts=(--dkmstree "$work/tree" --sourcetree "$work/src" -k "$KVER" --kernelsourcedir "$KDIR")
dkms add -m shca -v "$ver" "${opts[@]}"
dkms build -m shca -v "$ver" "${opts[@]}"
ko=$(find "$work/tree/shca/$ver/$KVER" -name 'shca.ko*' | head -n1)
[ -n "$ko" ] || { echo "dkms-check: no shca.ko built" >&2; exit 1; }
modinfo -F vermagic "$ko" | grep -q "^$KVER " || { echo "dkms-check: wrong vermagic" >&2; exit 1; }
# DKMS keeps the build's log beside the module it built.
log=$(find "$work/tree/shca/$ver/$KVER" -name make.log | head -n1)
[ -n "$log" ] && grep -q "$probe.*-Wunused-function" "$log" ||
	{ echo "dkms-check: the probe's warning is not in the DKMS build log" >&2; exit 1; }
echo "dkms-check: built $(basename "$ko") for $KVER, with a warning and without -Werror"
