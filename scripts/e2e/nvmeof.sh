#!/bin/bash
# NVMe over Fabrics (RDMA) on shca: the in-kernel FRWR consumer.
#
# nvmet + nvmet-rdma export a brd RAM disk on shca0 (init_net, on a veth),
# nvme-rdma connects to the device's own address over RC loopback through
# RDMA CM.  The host registers its I/O buffers with IB_WR_REG_MR, the
# target RDMA READs/WRITEs them and answers with SEND_WITH_INV (or the
# host posts LOCAL_INV).  Data is checked byte for byte, on the fabric
# device and on the target's RAM disk.  Runs inside the VM.
set -u
E2E_SUITE=nvmeof
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/nvmetlib.sh"

NQN=nqn.2026-11.org.shca:nvmeof-e2e
ADDR=10.96.0.1
SIZE_MB=32
# The data files live in the guest's tmpfs (TMPDIR), not with the logs on
# the host share: 9p moved them at well under 1 MB/s under make check's
# load, most of the suite's time.
W=$(mktemp -d "${TMPDIR:-/tmp}/nvmeof.XXXXXX")

check "setup shca0 on nv0" solo_setup shca0 nv0 "$ADDR" ffff:0a60:0001
caps=$(ibv_devinfo -v -d shca0)
for f in max_mw; do
	v=$(echo "$caps" | awk -v f="$f:" '$1 == f { print $2 }')
	if [ -n "$v" ] && [ "$v" -gt 0 ]; then ok "$f $v"; else not_ok "$f" "'$v'"; fi
done
if grep -q MEM_MGT_EXTENSIONS <<< "$caps"; then
	ok "MEM_MGT_EXTENSIONS advertised"
else
	not_ok "MEM_MGT_EXTENSIONS advertised" "not in ibv_devinfo -v"
fi

check "modules load" modprobe -a configfs brd nvmet nvmet-rdma nvme-rdma
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
check "nvmet in configfs" test -d $NVMET_CFG/subsystems
check "RAM disk of $SIZE_MB MiB" nvmet_ramdisk "$SIZE_MB"
expect_eq "RAM disk size" "$(blockdev --getsize64 /dev/ram0)" $((SIZE_MB << 20))
check "target configured (configfs)" nvmet_export "$NQN" "$ADDR" "$SIZE_MB"

NVME_CTRL=
if nvme_connect "$NQN" "$ADDR"; then
	ok "connect over RDMA to $ADDR:4420"
else
	not_ok "connect over RDMA to $ADDR:4420" "$(dmesg | tail -n 5 | tr '\n' ' ')"
fi

ns=
if [ -n "$NVME_CTRL" ] && wait_for 120 nvme_ns; then
	ns=$(nvme_ns)
	wait_for 60 test -b "/dev/$ns"
	ok "namespace /dev/$ns"
	expect_eq "namespace size" "$(blockdev --getsize64 "/dev/$ns")" $((SIZE_MB << 20))
else
	not_ok "namespace" "no block device for '$NVME_CTRL'"
fi

if [ -n "$ns" ]; then
	dev=/dev/$ns
	head -c $((SIZE_MB << 20)) /dev/urandom > "$W/pattern"
	# large I/O: multi-page registrations, RDMA READ of the host's pages
	check "write ${SIZE_MB} MiB, 1 MiB O_DIRECT" \
		dd if="$W/pattern" of="$dev" bs=1M oflag=direct status=none
	check "read back, 1 MiB O_DIRECT" \
		dd if="$dev" of="$W/back" bs=1M iflag=direct status=none
	check "read data equals written (cmp)" cmp "$W/pattern" "$W/back"
	check "target RAM disk holds the data (cmp)" \
		cmp -n $((SIZE_MB << 20)) "$W/pattern" /dev/ram0
	# small I/O (4 KiB writes may go inline; reads are always registered)
	head -c $((1 << 20)) /dev/urandom > "$W/small"
	check "write 1 MiB at 8 MiB, 4 KiB O_DIRECT" \
		dd if="$W/small" of="$dev" bs=4k seek=2048 oflag=direct status=none
	check "read 1 MiB at 8 MiB, 4 KiB O_DIRECT" \
		dd if="$dev" of="$W/small.back" bs=4k skip=2048 count=256 \
		iflag=direct status=none
	check "small read equals written (cmp)" cmp "$W/small" "$W/small.back"
	# odd sizes: 68 KiB requests, not a power of two of pages
	cp "$W/pattern" "$W/want"
	dd if="$W/small" of="$W/want" bs=4k seek=2048 conv=notrunc status=none
	check "read 15.9 MiB, 68 KiB O_DIRECT" \
		dd if="$dev" of="$W/back.68k" bs=68k count=240 iflag=direct status=none
	check "68 KiB reads equal written (cmp)" \
		cmp -n $((68 * 1024 * 240)) "$W/want" "$W/back.68k"
	sha_host=$(sha256sum < "$W/back" | cut -d' ' -f1)
	echo "# sha256 of the device after the large write: $sha_host"
fi

# FRWR really was used: registrations, and invalidations (remote by the
# target's SEND_WITH_INV or local by the host), none of them failed.
if [ -n "$ns" ]; then
	regs=$(dev_stat shca0 fast_regs)
	invs=$(( $(dev_stat shca0 remote_invs) + $(dev_stat shca0 local_invs) ))
	echo "# fast_regs $regs remote_invs $(dev_stat shca0 remote_invs) local_invs $(dev_stat shca0 local_invs)"
	if [ "$regs" -gt 0 ]; then ok "IB_WR_REG_MR used ($regs)"; else not_ok "IB_WR_REG_MR used" "fast_regs $regs"; fi
	if [ "$invs" -gt 0 ]; then ok "MRs invalidated ($invs)"; else not_ok "MRs invalidated" "0"; fi
	expect_eq "no failed memory operation" "$(dev_stat shca0 mem_op_errs)" 0
fi

if [ -n "$NVME_CTRL" ]; then
	if nvme_disconnect; then
		ok "disconnect ($NVME_CTRL deleted)"
	else
		not_ok "disconnect" "$NVME_CTRL still there"
	fi
fi
check "target torn down" nvmet_unexport "$NQN"
check "unload nvme-rdma, nvmet-rdma, nvmet" modprobe -r nvme-rdma nvmet-rdma nvmet
rm -rf "$W"
check "rdma link delete" rdma link delete shca0
check "unload shca" modprobe -r shca
modprobe -r brd
ip link del nv0
e2e_finish
