#!/bin/bash
# deb-build.sh: build shca's Debian packages with dpkg's own tools
# (dpkg-gencontrol, dpkg-shlibdeps, dpkg-deb) from packaging/debian/:
#
#   shca-dkms_<ver>_all.deb                the module's source in /usr/src/shca-<ver>;
#                                          its postinst builds and installs shca.ko
#                                          with DKMS for every kernel that has headers
#   libshca1_<ver>+rdmacore<R>_<arch>.deb  the libibverbs provider built for
#                                          rdma-core release R, one package per R
#
# <ver> is dkms.conf's PACKAGE_VERSION.  A provider uses libibverbs' private
# ABI, so each build depends on exactly the libibverbs1 release it was built
# for: libibverbs1 (>= R), libibverbs1 (<< R's next minor~), and apt refuses
# it on a system with another rdma-core.  All builds share the package name
# libshca1; the "+rdmacoreR" version suffix tells them apart.
#
#   scripts/deb-build.sh [--lintian] [R...]
#
# R defaults to every release `scripts/rdma-core.sh versions` supports (44.0
# and 56.1); each provider comes from `scripts/rdma-core.sh build R`
# (build/provider/R/: built inside that release's rdma-core tree, or, for
# 44.0 where no tree can be had, against providers/shca/decl-44.0).
# --lintian runs lintian on the result and fails on its errors (warnings are
# printed).
# Environment: SHCA_DEB_OUT (default <repo>/build/debs), SOURCE_DATE_EPOCH
# (default: the HEAD commit's time; used for dates and file times).
set -euo pipefail
umask 022

top=$(cd "$(dirname "$0")/.." && pwd)
out=${SHCA_DEB_OUT:-$top/build/debs}
deb=$top/packaging/debian
die() { echo "deb-build: $*" >&2; exit 1; }

lintian=0
if [ "${1:-}" = --lintian ]; then lintian=1; shift; fi
if [ $# -gt 0 ]; then
	releases=("$@")
else
	mapfile -t releases < <("$top/scripts/rdma-core.sh" versions)
	[ ${#releases[@]} -gt 0 ] || die "scripts/rdma-core.sh versions listed no release"
fi

for t in dpkg-deb dpkg-gencontrol dpkg-shlibdeps rsync strip; do
	command -v "$t" >/dev/null || die "$t missing (scripts/deps.sh installs it)"
done
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
[ -n "$ver" ] || die "no PACKAGE_VERSION in dkms.conf"
name=$(sed -n 's/^PACKAGE_NAME="\(.*\)"$/\1/p' "$top/dkms.conf")
[ "$name" = shca ] || die "dkms.conf's PACKAGE_NAME is '$name', not shca"
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$top" log -1 --format=%ct 2>/dev/null || date +%s)}
rev=$(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

# provider_dir R: print the directory holding libshca-rdmav34.so built for R.
provider_dir() {
	local r=$1
	echo "deb-build: scripts/rdma-core.sh build $r" >&2
	"$top/scripts/rdma-core.sh" build "$r" >"$work/rdma-core-$r.log" 2>&1 || {
		tail -n 30 "$work/rdma-core-$r.log" >&2
		die "scripts/rdma-core.sh build $r failed"
	}
	echo "$top/build/provider/$r"
}

work=$(mktemp -d "${TMPDIR:-/tmp}/deb-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/debian" "$out"
cp "$deb/control" "$work/debian/control"
maint=$(sed -n 's/^Maintainer: //p' "$deb/control")
cat >"$work/debian/changelog" <<EOF
$name ($ver) unstable; urgency=medium

  * Built from shca $rev.

 -- $maint  $(LC_ALL=C date -u -R -d "@$SOURCE_DATE_EPOCH")
EOF

# docs PKGDIR PKG: copyright and changelog, as every Debian package has.
docs() {
	local d=$1/usr/share/doc/$2
	install -d "$d"
	install -m 644 "$deb/copyright" "$d/copyright"
	gzip -9nc "$work/debian/changelog" >"$d/changelog.gz"
	touch -d "@$SOURCE_DATE_EPOCH" "$d/changelog.gz"
}
# finish PKGDIR PKG [GENCONTROL ARGS...]: md5sums, control, the .deb.
finish() {
	local p=$1 pkg=$2
	shift 2
	(cd "$p" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z |
		xargs -0r md5sum) >"$p/DEBIAN/md5sums"
	(cd "$work" && dpkg-gencontrol -p"$pkg" -P"$p" -f"$work/files" "$@")
	dpkg-deb --root-owner-group -Zxz --build "$p" "$out" >/dev/null
}

# --- shca-dkms --------------------------------------------------------------
p=$work/pkg/shca-dkms
src=$p/usr/src/$name-$ver
install -d "$src" "$p/DEBIAN"
# what dkms.conf's MAKE (the top-level Makefile's module target) needs
rsync -a --chmod=D755,F644 --exclude build --exclude __pycache__ \
	"$top"/{dkms.conf,Makefile,Kbuild,drivers,include,kunit} "$src/"
for s in postinst prerm; do
	sed "s/@VERSION@/$ver/g" "$deb/shca-dkms.$s" >"$p/DEBIAN/$s"
	chmod 755 "$p/DEBIAN/$s"
done
docs "$p" shca-dkms
# shca(7): what shca is, its parameters, counters and tracepoints
install -d "$p/usr/share/man/man7"
gzip -9nc "$top/Documentation/shca.7" >"$p/usr/share/man/man7/shca.7.gz"
touch -d "@$SOURCE_DATE_EPOCH" "$p/usr/share/man/man7/shca.7.gz"
echo "misc:Depends=" >"$work/shca-dkms.substvars"
rm -f "$out"/shca-dkms_*.deb
finish "$p" shca-dkms -T"$work/shca-dkms.substvars"
echo "deb-build: $out/shca-dkms_${ver}_all.deb"

# --- libshca1, one per rdma-core release --------------------------------------
for r in "${releases[@]}"; do
	[[ $r =~ ^([0-9]+)\.([0-9]+)$ ]] || die "rdma-core release '$r' is not MAJOR.MINOR"
	next="${BASH_REMATCH[1]}.$((BASH_REMATCH[2] + 1))~"
	dir=$(provider_dir "$r")
	[ -f "$dir/libshca-rdmav34.so" ] || die "$dir/libshca-rdmav34.so missing"
	drv=$dir/shca.driver
	[ -f "$drv" ] || drv=$top/providers/shca/shca.driver
	grep -qx 'driver shca' "$drv" || die "$drv does not say 'driver shca'"

	p=$work/pkg/libshca1-$r
	install -d "$p/DEBIAN" "$p/usr/lib/$multiarch/libibverbs" "$p/etc/libibverbs.d"
	install -m 644 "$dir/libshca-rdmav34.so" "$p/usr/lib/$multiarch/libibverbs/"
	strip --strip-unneeded --remove-section=.comment --remove-section=.note \
		"$p/usr/lib/$multiarch/libibverbs/libshca-rdmav34.so"
	install -m 644 "$drv" "$p/etc/libibverbs.d/shca.driver"
	echo /etc/libibverbs.d/shca.driver >"$p/DEBIAN/conffiles"
	docs "$p" libshca1
	sv=$work/libshca1-$r.substvars
	# libc6 from the shlibs files; libibverbs1 pinned by hand (private ABI)
	(cd "$work" && dpkg-shlibdeps -T"$sv" -xlibibverbs1 \
		"$p/usr/lib/$multiarch/libibverbs/libshca-rdmav34.so") 2>&1 |
		grep -v 'should already be installed in their package' >&2 || true
	grep -q '^shlibs:Depends=' "$sv" || die "dpkg-shlibdeps gave no shlibs:Depends"
	{
		echo "rdmacore:Depends=libibverbs1 (>= $r), libibverbs1 (<< $next)"
		echo "rdmacore:Version=$r"
		echo "misc:Depends="
	} >>"$sv"
	rm -f "$out"/libshca1_*+rdmacore"${r}"_*.deb
	finish "$p" libshca1 -T"$sv" -v"$ver+rdmacore$r"
	echo "deb-build: $(ls "$out"/libshca1_"$ver"+rdmacore"$r"_*.deb)"
done

# --- sanity: the packages hold what the install needs -------------------------
dkms_deb=$out/shca-dkms_${ver}_all.deb
list=$(dpkg-deb -c "$dkms_deb")
for f in dkms.conf Makefile Kbuild drivers/infiniband/sw/shca/main.c include/uapi/rdma/shca-abi.h; do
	grep -q " \./usr/src/$name-$ver/$f\$" <<<"$list" || die "$dkms_deb lacks /usr/src/$name-$ver/$f"
done
grep -q " \./usr/share/man/man7/shca\.7\.gz\$" <<<"$list" || die "$dkms_deb lacks shca(7)"
for r in "${releases[@]}"; do
	d=$(ls "$out"/libshca1_"$ver"+rdmacore"$r"_*.deb)
	list=$(dpkg-deb -c "$d")
	grep -q " \./usr/lib/$multiarch/libibverbs/libshca-rdmav34.so\$" <<<"$list" || die "$d lacks the provider"
	grep -qF "libibverbs1 (>= $r), libibverbs1 (<< " <<<"$(dpkg-deb -f "$d" Depends)" ||
		die "$d is not pinned to libibverbs1 $r"
done

if [ "$lintian" = 1 ]; then
	command -v lintian >/dev/null || die "lintian missing (apt-get install lintian)"
	provs=()
	for r in "${releases[@]}"; do provs+=("$out"/libshca1_"$ver"+rdmacore"$r"_*.deb); done
	lintian --fail-on error --tag-display-limit 0 "$dkms_deb" "${provs[@]}"
	echo "deb-build: lintian: no errors"
fi
