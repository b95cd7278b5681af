# NVMe over Fabrics on RDMA through the kernel's own target and host
# (nvmet-rdma, nvme-rdma), for nvmeof.sh, twohost.sh and bench.sh: a brd
# RAM disk exported through configfs on port 4420, and a host controller
# connected through /dev/nvme-fabrics.  Sourced after lib.sh (wait_for).
NVMET_CFG=/sys/kernel/config/nvmet

# nvmet_ramdisk MB: /dev/ram0 of MB MiB (brd reloaded when its size is
# another: its default is 4 MiB on some configs).
nvmet_ramdisk() {
	[ "$(blockdev --getsize64 /dev/ram0 2>/dev/null)" = $(($1 << 20)) ] && return 0
	rmmod brd 2>/dev/null
	modprobe brd rd_nr=1 rd_size=$(($1 * 1024))
}

# nvmet_export NQN ADDR MB: the subsystem NQN, with a RAM disk of MB MiB
# as namespace 1, on port 1 at IPv4 address ADDR over RDMA.
nvmet_export() {
	local nqn=$1 addr=$2 s=$NVMET_CFG/subsystems/$1 p=$NVMET_CFG/ports/1
	modprobe -a configfs brd nvmet nvmet-rdma || return 1
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || return 1
	nvmet_ramdisk "$3" || return 1
	mkdir "$s" && echo 1 >"$s/attr_allow_any_host" && mkdir "$s/namespaces/1" &&
		echo -n /dev/ram0 >"$s/namespaces/1/device_path" &&
		echo 1 >"$s/namespaces/1/enable" && mkdir "$p" &&
		echo rdma >"$p/addr_trtype" && echo ipv4 >"$p/addr_adrfam" &&
		echo "$addr" >"$p/addr_traddr" && echo 4420 >"$p/addr_trsvcid" &&
		ln -s "$s" "$p/subsystems/$nqn"
}

# nvmet_unexport NQN: undo nvmet_export; true when nothing of it is left.
nvmet_unexport() {
	local nqn=$1 s=$NVMET_CFG/subsystems/$1 p=$NVMET_CFG/ports/1
	rm -f "$p/subsystems/$nqn"
	rmdir "$p" 2>/dev/null
	[ -e "$s/namespaces/1/enable" ] && echo 0 >"$s/namespaces/1/enable"
	rmdir "$s/namespaces/1" "$s" 2>/dev/null
	[ ! -e "$s" ] && [ ! -e "$p" ]
}

# nvme_connect NQN ADDR: NVME_CTRL := the host's new controller (nvmeN),
# connected to NQN at ADDR.  /dev/nvme-fabrics takes the options and
# answers "instance=N,cntlid=M" on the same open file.
nvme_connect() {
	local out
	NVME_CTRL=
	modprobe nvme-rdma || return 1
	exec 3<>/dev/nvme-fabrics || return 1
	echo "transport=rdma,traddr=$2,trsvcid=4420,nqn=$1" >&3 || { exec 3>&-; return 1; }
	read -r out <&3
	exec 3>&-
	NVME_CTRL=nvme${out#instance=}
	NVME_CTRL=${NVME_CTRL%%,*}
	echo "# connected: $out ($NVME_CTRL)"
	[ -e "/sys/class/nvme/$NVME_CTRL" ]
}

# nvme_ns: print the namespace block device of the fabrics controller,
# e.g. nvme0n1 (the VM has no other NVMe device); false while there is
# none.  With native multipath the per-path nodes (nvme0c0n1) are hidden
# and have no /dev entry.
nvme_ns() {
	local d n
	for d in /sys/block/nvme*n1; do
		n=${d##*/}
		[[ $n =~ ^nvme[0-9]+n1$ ]] || continue
		echo "$n"
		return 0
	done
	return 1
}

# nvme_disconnect: delete NVME_CTRL, if any; true once it is gone.
nvme_disconnect() {
	[ -n "${NVME_CTRL:-}" ] && [ -e "/sys/class/nvme/$NVME_CTRL/delete_controller" ] ||
		return 0
	echo 1 >"/sys/class/nvme/$NVME_CTRL/delete_controller"
	wait_for 120 eval "! test -e /sys/class/nvme/$NVME_CTRL"
}
