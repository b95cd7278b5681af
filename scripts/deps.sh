#!/bin/bash
# Install what the build and the checks need, with apt-get, when missing.
set -euo pipefail
PKGS="make gcc libc6-dev bc flex bison libelf-dev libssl-dev dwarves cpio kmod
xz-utils zstd rsync pkg-config python3 sparse linux-source-6.1
qemu-system-x86 busybox-static iproute2 iputils-ping ethtool
rdma-core ibverbs-utils rdmacm-utils perftest python3-pyverbs fio
libibverbs-dev librdmacm-dev dkms debootstrap dpkg-dev
cmake ninja-build libnl-3-dev libnl-route-3-dev patch curl"
missing=()
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
