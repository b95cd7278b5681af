#!/bin/bash
# Completion vectors, CQ moderation and multicast (vm_events) on shca0 in
# netns shca-a.  Runs inside the VM (scripts/vm-run topology); build
# first with `make -C providers/shca vm_events`.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
. "$repo/scripts/e2e/lib.sh"
A="ip netns exec shca-a"

# gid_index DEV PATTERN: the RoCE v2 GID whose value matches PATTERN.
gid_index() {
	local dev=$1 pat=$2 f i
	for f in /sys/class/infiniband/"$dev"/ports/1/gids/*; do
		i=${f##*/}
		grep -q "$pat" "$f" 2>/dev/null || continue
		grep -q "RoCE v2" /sys/class/infiniband/"$dev"/ports/1/gid_attrs/types/"$i" 2>/dev/null || continue
		echo "$i"
		return 0
	done
	return 1
}

modprobe shca
$A rdma link add shca0 type shca netdev veth-a
wait_for 60 grep -q ACTIVE /sys/class/infiniband/shca0/ports/1/state
wait_for 60 sh -c 'grep -q "ffff:0a4d:0001" /sys/class/infiniband/shca0/ports/1/gids/*'
g=$(gid_index shca0 "ffff:0a4d:0001")
$A timeout 600 "$repo/providers/shca/build/vm_events" shca0 "$g" "$@"
rc=$?
$A rdma link delete shca0
modprobe -r shca
exit $rc
