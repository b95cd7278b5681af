#!/bin/bash
# Unpack Debian's linux-source-6.1 into the cache (once) and print its path.
# Used for checkpatch.pl, kunit.py and as the base of the KUnit test kernel.
set -euo pipefail
CACHE=${SHCA_CACHE:-$HOME/.cache/shca}
dir=$CACHE/linux-source-6.1
# Two callers at once (make check's checkpatch lane and its test kernel)
# must neither install nor unpack side by side: the second waits for the
# first.  apt-get waits for dpkg's lock too (DPkg::Lock::Timeout): the
# DKMS lane may be installing dkms at the same moment.
mkdir -p "$CACHE"
exec 9>"$CACHE/linux-source-6.1.lock"
flock 9
tarball=$(ls /usr/src/linux-source-6.1.tar.xz 2>/dev/null || true)
if [ -z "$tarball" ]; then
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 \
		install -y -q linux-source-6.1 >&2
	tarball=/usr/src/linux-source-6.1.tar.xz
fi
stamp=$(stat -c %Y-%s "$tarball")
if [ "$(cat "$dir/.shca-stamp" 2>/dev/null)" != "$stamp" ]; then
	rm -rf "$dir" "$dir.tmp"
	mkdir -p "$dir.tmp"
	tar -xJf "$tarball" -C "$dir.tmp" --strip-components=1
	echo "$stamp" > "$dir.tmp/.shca-stamp"
	mv "$dir.tmp" "$dir"
fi
echo "$dir"
