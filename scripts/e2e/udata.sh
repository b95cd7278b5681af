#!/bin/bash
# The uapi contract, proven against the live driver: progs/udata_strict.c
# issues real uverbs commands with hand-made driver data (comp_mask,
# reserved fields, short/long requests and responses, hostile attributes,
# mmap of bad keys) and prints one TAP line per case.  Built on the host by
# make -C scripts/e2e/progs.  Runs inside the VM.
set -u
E2E_SUITE=udata
. "$(dirname "$0")/lib.sh"

bin=$(prog udata_strict) || exit 1

ip link add ud0 type veth peer name ud1
ip link set ud0 up; ip link set ud1 up
ip addr add 10.97.0.1/24 dev ud0
# ibdev_dbg on, so every rejection can be checked for its debug line
modprobe shca dyndbg=+p
rdma link add shca0 type shca netdev ud0
check "device shca0 appears" wait_for 90 test -e /sys/class/infiniband/shca0
check "port active" wait_for 90 sh -c "ibv_devinfo -d shca0 | grep -q 'state:.*PORT_ACTIVE'"
check "RoCE v2 IPv4 GID listed" wait_for 90 sh -c \
	"ibv_devinfo -v -d shca0 | grep -q 'GID\\[.*::ffff:10.97.0.1, RoCE v2'"

out=$TMPDIR/udata.out
IBV_SHOW_WARNINGS=1 "$bin" shca0 > "$out" 2>&1
rc=$?
# pass the program's TAP lines through, counting its failures as ours
while IFS= read -r line; do
	echo "$line"
	case "$line" in
	"not ok - "*) E2E_FAILED=$((E2E_FAILED + 1)) ;;
	esac
done < "$out"
grep -q '^# udata_strict: ' "$out" || not_ok "udata_strict completed" "exit $rc, no summary line"
[ "$rc" -eq 0 ] || grep -q '^not ok - ' "$out" || not_ok "udata_strict exit status" "exit $rc without a failing case"

# "Bad attributes give -EINVAL with an ibdev_dbg line": one per kind
dbg=$TMPDIR/udata.dmesg
dmesg > "$dbg"
for msg in 'ucontext: unknown comp_mask bits' 'create_cq: unknown comp_mask bits' \
	'create_cq: reserved field not zero' 'resize_cq: reserved field not zero' \
	'create_qp: unknown comp_mask bits' 'udata: inlen 0 < required 4' \
	'udata: unknown non-zero bytes past' 'udata: unexpected request data' \
	'cq: cqe 0 out of range' 'qp: caps wr' 'qp: type 255 not supported' \
	'mr: unsupported access flags' 'mr: bad range' \
	'mmap: executable mapping refused' 'mmap: no entry at pgoff' \
	'bad transition' 'qp: path mtu' 'qp: bad access flags' \
	'qp: APM/rate limit not supported'; do
	check "ibdev_dbg line: $msg" grep -q "$msg" "$dbg"
done

rdma link delete shca0
ip link del ud0
check "module unloads" modprobe -r shca
e2e_finish
