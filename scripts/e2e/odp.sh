#!/bin/bash
# On-demand paging MRs while the mm takes their pages away
# (scripts/e2e/progs/odp_cases.py) on shca0, RC loopback on a veth:
# explicit, implicit and huge page ODP MRs; faults on first touch, no
# stale page after MADV_DONTNEED (READ, WRITE, atomics), ibv_advise_mr,
# and WRITE/READ rounds racing page drops; the ODP counters; then UCX's
# io_demo with UCX_IB_REG_METHODS=odp (ucx_cases below).  rdma-core's
# own test_odp runs in pyverbs.sh.  Needs a kernel with
# CONFIG_INFINIBAND_ON_DEMAND_PAGING (Debian's 6.1 and 6.12); elsewhere
# shca advertises no ODP and one case says so.  Runs inside the VM.
set -u
E2E_SUITE=odp
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

# --- UCX (ucx-utils 1.13.1, scripts/deps.sh) over shca0 with ODP ---------
#
# UCX 1.13's verbs memory domain uses on-demand paging in one way only: with
# UCX_IB_REG_METHODS=odp, when ibv_query_device_ex() offers
# IBV_ODP_SUPPORT_IMPLICIT, it registers one implicit ODP MR (address 0,
# every byte: "shca0: using odp global key" in its debug log) and hands its
# keys out for every buffer UCX registers, except those it asks to have
# pinned (UCT_MD_MEM_FLAG_LOCK: its own bounce buffers).  Its per-buffer ODP
# (IBV_ACCESS_ON_DEMAND on each MR) is sized from the experimental verbs
# (ibv_exp_*) only, so never used with upstream rdma-core; UCX 1.15 dropped
# the implicit one too.  io_demo -q checks every byte each side receives and
# aborts on a difference; its messages above the rendezvous threshold go by
# RDMA READ (UCX_RNDV_SCHEME=get_zcopy) or WRITE (put_zcopy) straight
# between the two processes' buffers, through the implicit MR's keys:
# shca's odp_faults counts its page look-ups.  A run with
# UCX_IB_REG_METHODS=direct (every buffer pinned) is the control: its
# transfer works and odp_faults stays put.
#
# UCX 1.13.1's teardown of the implicit MR (uct_ib_md_release_reg_method()
# passes the memory handle where uct_ib_mem_dereg() takes a
# uct_md_mem_dereg_params_t) reads the MR's lkey as the parameters'
# field_mask: when its bit 0 is set (half of shca's key generations), the
# process dies of SIGSEGV in uct_ib_md_close() inside ucp_cleanup(), after
# the run.  A client is judged by its "Client exit with status 'OK'" line,
# and an exit status of 0, or 139 with that backtrace.
UCX_ENV=(UCX_NET_DEVICES=shca0:1 UCX_TLS=rc_verbs UCX_WARN_UNUSED_ENV_VARS=n)
UCX_PORT=20140

# ucx_client_ok LOG RC: the io_demo client of LOG, which exited with RC,
# finished well (see above); prints why not.
ucx_client_ok() {
	if grep -aq "corruption\|ERROR" "$1"; then
		grep -a -m 2 "corruption\|ERROR" "$1" | tr '\n' ' '
		return 1
	fi
	if ! grep -aq "Client exit with status 'OK'" "$1"; then
		echo "exit $2, no \"Client exit with status 'OK'\": $(tail1 "$1")"
		return 1
	fi
	case $2 in
	0) return 0 ;;
	139) grep -aq "uct_ib_md_close" "$1" && return 0 ;;
	esac
	echo "exit $2 after its OK line: $(grep -a -m 1 "Caught signal" "$1")"
	return 1
}

# ucx_io NAME METHOD [VAR=VALUE...]: io_demo -q between two processes on
# shca0 (10.94.0.1), 300 reads and writes of 1 byte to 256 KiB, with
# UCX_IB_REG_METHODS=METHOD and the extra UCX variables; UCX_ODP_GREW is
# odp_faults' growth.  One case, NAME: both sides ended well.
ucx_io() {
	local name=$1 m=$2 srv slog clog crc why before after
	shift 2
	slog=$E2E_LOGS/odp-ucx-$m-$UCX_PORT.srv clog=$E2E_LOGS/odp-ucx-$m-$UCX_PORT.cli
	before=$(dev_stat shca0 odp_faults)
	env "${UCX_ENV[@]}" UCX_IB_REG_METHODS="$m" "$@" \
		timeout 600 io_demo -q -p "$UCX_PORT" -d 1:262144 >"$slog" 2>&1 &
	srv=$!
	wait_for 120 tcp_listening "$srv" "$UCX_PORT"
	env "${UCX_ENV[@]}" UCX_IB_REG_METHODS="$m" "$@" \
		timeout 600 io_demo -q -p "$UCX_PORT" -d 1:262144 -i 300 -o read,write \
		10.94.0.1 >"$clog" 2>&1
	crc=$?
	after=$(dev_stat shca0 odp_faults)
	UCX_ODP_GREW=$((${after:-0} - ${before:-0}))
	if ! kill -0 "$srv" 2>/dev/null; then
		why="the server ended before the client: $(gist "$slog")"
	elif grep -aq "corruption\|ERROR" "$slog"; then
		why="server: $(grep -a -m 2 "corruption\|ERROR" "$slog" | tr '\n' ' ')"
	else
		why=$(ucx_client_ok "$clog" "$crc")
	fi
	kill -TERM "$srv" 2>/dev/null
	server_reap "$srv" >/dev/null
	UCX_PORT=$((UCX_PORT + 1))
	echo "# $E2E_SUITE: $name: odp_faults +$UCX_ODP_GREW; $(grep -a -m 1 'total min' "$clog")"
	if [ -z "$why" ]; then ok "$name"; else not_ok "$name" "$why"; fi
}

ucx_cases() {
	local f
	if ! command -v io_demo >/dev/null || ! command -v ucx_info >/dev/null; then
		not_ok "UCX installed" "no io_demo or ucx_info (ucx-utils: scripts/deps.sh)"
		return
	fi
	f=$E2E_LOGS/odp-ucx-info.log
	env "${UCX_ENV[@]}" UCX_IB_REG_METHODS=odp UCX_LOG_LEVEL=debug \
		timeout 300 ucx_info -d >"$f" 2>&1
	if grep -aq "shca0: using odp global key" "$f"; then
		ok "UCX registers shca0's memory with one implicit ODP MR (reg methods odp)"
	else
		not_ok "UCX registers shca0's memory with one implicit ODP MR (reg methods odp)" \
			"no \"shca0: using odp global key\": $(grep -a -m 2 "shca0: .*\(odp\|registration\)" "$f" | tr '\n' ' ')"
	fi
	ucx_io "UCX io_demo -q over shca0, implicit ODP, UCX_RNDV_SCHEME=get_zcopy" odp \
		UCX_RNDV_SCHEME=get_zcopy
	expect_eq "UCX get_zcopy run: pages taken through ODP (odp_faults grew)" \
		"$([ "$UCX_ODP_GREW" -gt 0 ] && echo yes)" yes
	ucx_io "UCX io_demo -q over shca0, implicit ODP, UCX_RNDV_SCHEME=put_zcopy" odp \
		UCX_RNDV_SCHEME=put_zcopy
	expect_eq "UCX put_zcopy run: pages taken through ODP (odp_faults grew)" \
		"$([ "$UCX_ODP_GREW" -gt 0 ] && echo yes)" yes
	ucx_io "UCX io_demo -q over shca0, pinned MRs (reg methods direct)" direct
	expect_eq "UCX pinned run: no ODP (odp_faults +0)" "$UCX_ODP_GREW" 0
}

check "setup shca0 on odp0" solo_setup shca0 odp0 10.94.0.1 ffff:0a5e:0001
gidx=$(rdma_gid shca0 ffff:0a5e:0001)
# ib_uverbs (loaded with shca) has ib_umem_odp_get only when built with ODP
if grep -qw ib_umem_odp_get /proc/kallsyms; then
	# four 2 MiB pages for the huge page cases (none: they do not run)
	nr=/proc/sys/vm/nr_hugepages
	read -r huge_was <"$nr" 2>/dev/null || huge_was=
	[ -n "$huge_was" ] && echo $((huge_was + 4)) >"$nr" 2>/dev/null
	exits_ok "odp_cases.py exits 0" /usr/bin/python3 "$here/progs/odp_cases.py" shca0 "$gidx"
	[ -n "$huge_was" ] && echo "$huge_was" >"$nr" 2>/dev/null
	ucx_cases
else
	ok "no ODP in $(uname -r) (CONFIG_INFINIBAND_ON_DEMAND_PAGING off): nothing to run"
fi
check "rdma link delete" rdma link delete shca0
check "unload shca (no ODP MR left behind)" modprobe -r shca
ip link del odp0
e2e_finish
