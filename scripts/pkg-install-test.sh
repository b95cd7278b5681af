#!/bin/bash
# pkg-install-test.sh: install shca's Debian packages (build/debs, from
# scripts/deb-build.sh) the way a user would, into a throwaway copy of a
# Debian root (scripts/debian-root.sh), then boot that copy and use them.
#
#   scripts/pkg-install-test.sh bookworm|trixie [--no-vm]
#
# 1. The copy: an overlayfs over the cached root with an upper dir in a
#    temporary directory (the cached root is never written).
# 2. Chrooted on the host (a DKMS build under TCG would take far too long):
#    `apt-get install ./shca-dkms_*.deb ./libshca1_*+rdmacoreR_*.deb`, R
#    being the root's own libibverbs1 release; the postinst must build
#    shca.ko with DKMS for the root's kernel (not the host's uname -r) into
#    /lib/modules/KVER/updates/dkms/.  Then the negative case: apt must
#    refuse the provider package built for the other rdma-core release.
# 3. Unless --no-vm: `scripts/vm-run --kernel deb12|deb13 --root <copy>` runs
#    scripts/e2e/pkg.sh there, with vm-run's own module and provider
#    injection turned off (SHCA_KO_DIR and SHCA_PROVIDER_DIR name an empty
#    directory), so only the packages' files can serve.
# 4. Back in the chroot: `apt-get remove shca-dkms` must take shca.ko out of
#    the kernel's tree and the module out of DKMS; `apt-get purge libshca1`
#    must remove the provider and its .driver file.
# Prints "ok - pkg-install-RELEASE: ..." / "not ok - ..." lines and the time
# of each stage; exits non-zero if any case failed.
# Environment: SHCA_CACHE, SHCA_DEB_OUT (default <repo>/build/debs),
# SHCA_PKG_VM_TIMEOUT (default 1500 s), SHCA_PKG_VM_LOCK (a file: vm-run runs
# under `flock` on it, so that only the boot waits for other VMs), SHCA_PKG_KEEP=1 (leave the copy and
# its mounts in place for inspection; the path is printed).
# Must run as root (mount, chroot).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd -P)
. "$top/scripts/root-lib.sh"
release=${1:?usage: pkg-install-test.sh bookworm|trixie [--no-vm]}
vm=1
[ "${2:-}" = --no-vm ] && vm=0
case "$release" in
bookworm) flavour=deb12 ;;
trixie) flavour=deb13 ;;
*) echo "pkg-install-test: unknown release $release" >&2; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { echo "pkg-install-test: must run as root" >&2; exit 2; }
debs=${SHCA_DEB_OUT:-$top/build/debs}

work=$(mktemp -d "${TMPDIR:-/tmp}/pkg-install-$release.XXXXXX")
E2E_SUITE=pkg-install-$release E2E_LOGS=$work/logs
. "$top/scripts/e2e/lib.sh"
m=$work/root
cleanup() {
	if [ "${SHCA_PKG_KEEP:-0}" = 1 ]; then
		echo "# pkg-install-test: kept $m (umount -R $m; rm -rf $work)"
		return
	fi
	root_unmount_all
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
die() { not_ok "$1" "$2"; exit 1; }
stage_t0=$SECONDS
stage() { echo "# $E2E_SUITE: $1: $((SECONDS - stage_t0)) s"; stage_t0=$SECONDS; }

inchroot() { root_run "$m" "$@"; }

# --- the packages ---------------------------------------------------------------
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
dkms_deb=$debs/shca-dkms_${ver}_all.deb
[ -f "$dkms_deb" ] || die "packages built" "$dkms_deb missing (scripts/deb-build.sh)"

# --- 1. the copy ----------------------------------------------------------------
base=$("$top/scripts/debian-root.sh" "$release") || die "$release root" "scripts/debian-root.sh $release failed"
stage "root ready"
root_overlay "$base" "$work" "$m" "pkg-$release" || die "copy of the root" "overlay mount failed"
kver=$(root_kver "$m") || die "root kernel" "no /boot/vmlinuz-* in $base"
verbs=$(dpkg-query --admindir="$m/var/lib/dpkg" -W -f='${Version}' libibverbs1 2>/dev/null)
rc_up=${verbs%-*}
[[ $rc_up =~ ^[0-9]+\.[0-9]+$ ]] || die "root's rdma-core" "libibverbs1 version '$verbs'"
prov_deb=$(ls "$debs"/libshca1_"$ver"+rdmacore"$rc_up"_*.deb 2>/dev/null | head -n1)
[ -n "$prov_deb" ] || die "provider package for rdma-core $rc_up" "no $debs/libshca1_${ver}+rdmacore${rc_up}_*.deb (scripts/deb-build.sh $rc_up)"
other_deb=$(ls "$debs"/libshca1_"$ver"+rdmacore*_*.deb 2>/dev/null | grep -v "+rdmacore${rc_up}_" | head -n1)
echo "# $E2E_SUITE: root $base: kernel $kver, libibverbs1 $verbs; host kernel $(uname -r)"
mkdir -p "$m/tmp/shca-debs"
cp "$dkms_deb" "$prov_deb" ${other_deb:+"$other_deb"} "$m/tmp/shca-debs/"
root_chroot_mounts "$m" || die "chroot mounts" "mounting proc, sys or dev failed"
stage "overlay copy"

# --- 2. install, chrooted ---------------------------------------------------------
log=$work/apt-install.log
if inchroot apt-get install -y -q --no-install-recommends \
	"/tmp/shca-debs/${dkms_deb##*/}" "/tmp/shca-debs/${prov_deb##*/}" >"$log" 2>&1; then
	ok "apt-get install shca-dkms ${prov_deb##*/}"
else
	cat "$log"
	mlog=$m/var/lib/dkms/shca/$ver/build/make.log
	[ -f "$mlog" ] && { echo "---- tail of DKMS's make.log ----"; tail -n 40 "$mlog"; }
	die "apt-get install shca-dkms ${prov_deb##*/}" "apt-get failed (above)"
fi
stage "chroot install (DKMS build)"
grep -E '^shca-dkms:|^Error|rror!' "$log" | sed 's/^/# /'
expect_eq "shca-dkms configured" \
	"$(inchroot dpkg-query -W -f='${Status} ${Version}' shca-dkms)" "install ok installed $ver"
expect_eq "libshca1 configured" \
	"$(inchroot dpkg-query -W -f='${Status} ${Version}' libshca1)" "install ok installed $ver+rdmacore$rc_up"
ko=$(ls "$m/lib/modules/$kver/updates/dkms"/shca.ko* 2>/dev/null | head -n1)
if [ -n "$ko" ]; then
	ok "shca.ko installed in /lib/modules/$kver/updates/dkms (${ko##*/})"
else
	not_ok "shca.ko installed in /lib/modules/$kver/updates/dkms" "not there; $(tail1 "$log" 5)"
fi
expect_eq "the module's vermagic is the root's kernel" \
	"$(inchroot modinfo -F vermagic "${ko#"$m"}" 2>&1 | cut -d' ' -f1)" "$kver"
expect_eq "modinfo -k $kver -n shca (depmod ran)" \
	"$(inchroot modinfo -k "$kver" -n shca 2>&1)" "${ko#"$m"}"
check "dkms status: installed for $kver" sh -c \
	"chroot '$m' dkms status -m shca -v '$ver' -k '$kver' | grep -q ': installed'"
check_fails "nothing built for the host's kernel $(uname -r)" \
	sh -c "ls -d '$m/lib/modules/$(uname -r)' '$m/var/lib/dkms/shca/$ver/$(uname -r)' 2>/dev/null | grep -q ."
check "provider in the libibverbs directory" \
	test -f "$m/usr/lib/x86_64-linux-gnu/libibverbs/libshca-rdmav34.so"
expect_eq "/etc/libibverbs.d/shca.driver" "$(cat "$m/etc/libibverbs.d/shca.driver" 2>&1)" "driver shca"

# --- negative: the provider of the other rdma-core release --------------------------
if [ -z "$other_deb" ]; then
	not_ok "provider for another rdma-core refused" "no other libshca1_${ver}+rdmacore*.deb in $debs to try"
else
	nlog=$work/apt-negative.log
	if inchroot apt-get install -y -q --no-install-recommends "/tmp/shca-debs/${other_deb##*/}" >"$nlog" 2>&1; then
		not_ok "apt refuses ${other_deb##*/}" "apt-get installed it: $(tail1 "$nlog" 4)"
	elif grep -q 'libibverbs1' "$nlog"; then
		ok "apt refuses ${other_deb##*/} (libibverbs1 $verbs: $(grep -m1 'Depends: libibverbs1' "$nlog" | sed 's/^ *//'))"
	else
		not_ok "apt refuses ${other_deb##*/}" "failed, but not over libibverbs1: $(tail1 "$nlog" 4)"
	fi
	expect_eq "libshca1 unchanged after the refusal" \
		"$(inchroot dpkg-query -W -f='${Status} ${Version}' libshca1)" "install ok installed $ver+rdmacore$rc_up"
fi
stage "negative case"

# --- 3. boot the copy ---------------------------------------------------------------
if [ "$vm" = 1 ]; then
	root_unmount_to 1 || die "chroot unmounts" "could not unmount proc/sys/dev in $m"
	empty=$work/empty
	mkdir -p "$empty"
	vout=$work/vm
	lock=()
	[ -n "${SHCA_PKG_VM_LOCK:-}" ] && lock=(flock "$SHCA_PKG_VM_LOCK")
	SHCA_KO_DIR=$empty SHCA_PROVIDER_DIR=$empty SHCA_PKG_VERSION=$ver SHCA_PKG_RDMACORE=$rc_up \
		"${lock[@]}" "$top/scripts/vm-run" --kernel "$flavour" --root "$m" \
		--timeout "${SHCA_PKG_VM_TIMEOUT:-1500}" --out "$vout" -- scripts/e2e/pkg.sh
	vrc=$?
	if [ "$vrc" = 0 ]; then
		ok "VM suite scripts/e2e/pkg.sh on $flavour"
	else
		not_ok "VM suite scripts/e2e/pkg.sh on $flavour" "vm-run exit $vrc (see above)"
	fi
	grep -q '^not ok - ' "$vout/console.log" 2>/dev/null && E2E_FAILED=$((E2E_FAILED + 1))
	stage "VM boot and suite"
	root_chroot_mounts "$m" || die "chroot mounts" "mounting proc, sys or dev failed"
fi

# --- 4. removal -----------------------------------------------------------------------
rlog=$work/apt-remove.log
apt_logged() { inchroot apt-get "$@" >>"$rlog" 2>&1; }
check "apt-get remove shca-dkms" apt_logged remove -y -q shca-dkms
check_fails "shca.ko gone from /lib/modules/$kver" sh -c "ls '$m/lib/modules/$kver/updates/dkms'/shca.ko* 2>/dev/null | grep -q ."
check_fails "modinfo -k $kver shca fails (depmod ran)" inchroot modinfo -k "$kver" -n shca
check_fails "shca unknown to DKMS" sh -c "chroot '$m' dkms status -m shca | grep -q ."
check_fails "/usr/src/shca-$ver gone" test -e "$m/usr/src/shca-$ver"
check "apt-get purge libshca1" apt_logged purge -y -q libshca1
check_fails "provider and shca.driver gone" sh -c \
	"ls '$m/usr/lib/x86_64-linux-gnu/libibverbs/libshca-rdmav34.so' '$m/etc/libibverbs.d/shca.driver' 2>/dev/null | grep -q ."
stage "removal"

e2e_finish
