#!/bin/bash
# Install what a make target needs, with apt-get, when missing.
#
#   scripts/deps.sh demo    make demo: shca.ko for the stock kernels, the
#                           provider, and one VM running rping (QEMU, the
#                           verbs tools the VM takes from this root)
#   scripts/deps.sh [check] make check: the demo's, plus sparse, the e2e
#                           suites' tools (perftest, pyverbs, fio, nft,
#                           trace-cmd, UCX's ucx_perftest and io_demo,
#                           ...),
#                           DKMS, debootstrap and the test kernel's
#                           build tools
#   scripts/deps.sh bench   make bench: check's, plus iperf3 (the link's
#                           own throughput beside the two-host column)
#
# linux-source-6.1 (140 MB), for checkpatch and the test kernel, is not
# here: scripts/linux-source.sh installs it the first time it is needed.
set -euo pipefail
DEMO="make gcc libc6-dev libelf-dev kmod xz-utils zstd cpio rsync pkg-config
python3 qemu-system-x86 busybox-static iproute2 iputils-ping ethtool
rdma-core ibverbs-utils rdmacm-utils dpkg-dev cmake ninja-build
libnl-3-dev libnl-route-3-dev patch curl"
CHECK="$DEMO bc flex bison libssl-dev dwarves sparse perftest
python3-pyverbs fio libibverbs-dev librdmacm-dev dkms debootstrap nftables
trace-cmd ucx-utils"
case "${1:-check}" in
demo) PKGS=$DEMO ;;
check) PKGS=$CHECK ;;
bench) PKGS="$CHECK iperf3" ;;
*) echo "usage: scripts/deps.sh [demo|check|bench]" >&2; exit 2 ;;
esac
missing=()
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# waiting for dpkg's and apt's locks, as the other installers do
apt-get -o DPkg::Lock::Timeout=900 update -q
apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends "${missing[@]}"
