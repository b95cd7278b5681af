# shellcheck shell=bash
# Tiny TAP-like helpers for the in-VM end-to-end suites.
# Every case prints exactly one line "ok - <suite>: <name>" or
# "not ok - <suite>: <name>: <why>"; scripts/check.sh counts those lines.

E2E_SUITE=${E2E_SUITE:-e2e}
E2E_FAILED=0
# this file's folder, scripts/e2e (the suites and progs/ beside them)
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

ok() { echo "ok - $E2E_SUITE: $1"; }
not_ok() { echo "not ok - $E2E_SUITE: $1: $2"; E2E_FAILED=$((E2E_FAILED + 1)); }

# check NAME CMD...: the case passes when CMD exits 0.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		ok "$name"
	else
		not_ok "$name" "'$*' failed: $(echo "$out" | tail -n 3 | tr '\n' ' ')"
	fi
}

# exits_ok NAME CMD...: run CMD with its output shown (a test program that
# prints its own cases); one more case, NAME, passes when it exits 0, so
# a crash or an exception never fails a suite without a "not ok" line.
exits_ok() {
	local name=$1 rc
	shift
	"$@"
	rc=$?
	if [ $rc -eq 0 ]; then
		ok "$name"
	else
		not_ok "$name" "'$1' exited with status $rc"
	fi
	return $rc
}

# dev_stat DEV NAME: the value of counter NAME of DEV's port 1, as
# `rdma statistic` shows it (empty if there is no such counter).
dev_stat() {
	rdma statistic show link "$1/1" | tr -s ' ' '\n' |
		awk -v n="$2" 'prev == n { print; exit } { prev = $0 }'
}

# stat_above DEV NAME MIN: counter NAME of DEV is above MIN.
stat_above() {
	local v
	v=$(dev_stat "$1" "$2")
	[ "${v:-0}" -gt "$3" ]
}

# check_fails NAME CMD...: the case passes when CMD exits non-zero.
check_fails() {
	local name=$1
	shift
	if "$@" >/dev/null 2>&1; then
		not_ok "$name" "'$*' succeeded but must fail"
	else
		ok "$name"
	fi
}

# nap SECS: sleep without starting a process (TCG makes every fork slow):
# a read that times out on a pipe nobody writes to (its timeout status is
# not a failure, also under set -e).
exec {E2E_NAP_FD}<> <(:)
nap() {
	read -r -t "$1" -u "$E2E_NAP_FD" _ 2>/dev/null || :
}

# wait_for SECS CMD...: poll until CMD succeeds, at most SECS seconds (TCG
# is slow, so be generous).  The first checks come quickly, then every
# half second; CMD may be a shell function, so a condition that needs no
# process (see port_active, rdma_gid, tcp_listening) costs none.
wait_for() {
	local end=$((SECONDS + $1)) t=0.05
	shift
	while :; do
		"$@" >/dev/null 2>&1 && return 0
		[ "$SECONDS" -lt "$end" ] || return 1
		nap "$t"
		case $t in 0.05) t=0.1 ;; 0.1) t=0.2 ;; *) t=0.5 ;; esac
	done
}

# port_active DEV: port 1 of DEV is ACTIVE.
port_active() {
	local s
	read -r s <"/sys/class/infiniband/$1/ports/1/state" 2>/dev/null && [[ $s == *ACTIVE* ]]
}

# tcp_listening PID PORT: a TCP socket listens on PORT in the network
# namespace of process PID (read from /proc, no process started).
tcp_listening() {
	_listen_rows "$2" </proc/"$1"/net/tcp || _listen_rows "$2" </proc/"$1"/net/tcp6
}
# _listen_rows PORT: stdin (/proc/net/tcp rows) has a listener on PORT.
_listen_rows() {
	local hex sl addr rem st
	printf -v hex '%04X' "$1"
	while read -r sl addr rem st _; do
		[ "$st" = 0A ] && [[ $addr == *":$hex" ]] && return 0
	done
	return 1
}

# wait_tcp_listen NETNS_CMD PORT: until a TCP listener on PORT exists in
# NETNS_CMD's namespace ("" = init_net), e.g. the out-of-band exchange
# socket of ibv_*_pingpong (18515).
wait_tcp_listen() {
	wait_for 120 _tcp_listen_in "$1" "$2"
}
_tcp_listen_in() {
	$1 cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | _listen_rows "$2"
}

# wait_cm_listen: until an RDMA CM id is listening (rdma restrack).
wait_cm_listen() {
	wait_for 120 _cm_listening
}
_cm_listening() {
	[[ $(rdma resource show cm_id 2>/dev/null) == *LISTEN* ]]
}

# expect_eq NAME GOT WANT
expect_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got '$2', want '$3'"; fi
}

e2e_finish() {
	[ "$E2E_FAILED" -eq 0 ]
}

# --- RDMA pair helpers (rc.sh, interop.sh, netem.sh, bench) ---------------

# Every per-run log goes under $E2E_LOGS.
E2E_LOGS=${E2E_LOGS:-${SHCA_OUT:-${TMPDIR:-/tmp}}/e2e-logs}
mkdir -p "$E2E_LOGS"

# rdma_gid DEV PATTERN: the index of DEV's RoCE v2 GID whose value matches
# PATTERN (a substring of the sysfs text), e.g. "ffff:0a4d:0001".
rdma_gid() {
	local f g t
	for f in /sys/class/infiniband/"$1"/ports/1/gids/*; do
		read -r g <"$f" 2>/dev/null || continue
		[[ $g == *$2* ]] || continue
		read -r t <"/sys/class/infiniband/$1/ports/1/gid_attrs/types/${f##*/}" 2>/dev/null ||
			continue
		[ "$t" = "RoCE v2" ] || continue
		echo "${f##*/}"
		return 0
	done
	return 1
}

# The sysfs spelling of the test addresses' GIDs.
GID4_A="ffff:0a4d:0001"
GID4_B="ffff:0a4d:0002"
GID6_A="fd77:0000:0000:0000:0000:0000:0000:0001"
GID6_B="fd77:0000:0000:0000:0000:0000:0000:0002"

# rdma_dev_add NSCMD DRIVER DEV NETDEV: create DEV (type shca or rxe) on
# NETDEV in the namespace NSCMD ("" = init_net, else "ip netns exec X") and
# wait until it is ACTIVE with its IPv4 and IPv6 RoCE v2 GIDs.
rdma_dev_add() {
	local ns=$1 drv=$2 dev=$3 nd=$4 v4 v6
	case "$drv" in
	shca) modprobe shca ;;
	rxe) modprobe rdma_rxe ;;
	*) echo "unknown driver $drv" >&2; return 1 ;;
	esac || return 1
	$ns rdma link add "$dev" type "$drv" netdev "$nd" || return 1
	case "$nd" in
	veth-a|pv0) v4=$GID4_A; v6=$GID6_A ;;
	*) v4=$GID4_B; v6=$GID6_B ;;
	esac
	wait_for 90 port_active "$dev" &&
	wait_for 90 rdma_gid "$dev" "$v4" &&
	wait_for 90 rdma_gid "$dev" "$v6"
}

# rdma_dev_del NSCMD DEV
rdma_dev_del() {
	$1 rdma link delete "$2"
}

# veth_b_to_init_net: move veth-b (10.77.0.2, fd77::2) out of shca-b into
# init_net, where rdma_rxe works on every kernel.  veth_b_to_netns undoes it.
veth_b_to_init_net() {
	ip netns exec shca-b ip link set veth-b netns 1 &&
	ip addr add 10.77.0.2/24 dev veth-b &&
	ip -6 addr add fd77::2/64 dev veth-b nodad &&
	ip link set veth-b up
}
veth_b_to_netns() {
	ip link set veth-b netns shca-b &&
	ip netns exec shca-b ip addr add 10.77.0.2/24 dev veth-b &&
	ip netns exec shca-b ip -6 addr add fd77::2/64 dev veth-b nodad &&
	ip netns exec shca-b ip link set veth-b up
}

# prog NAME: print the path of the test program NAME, built on the host by
# `make -C scripts/e2e/progs` into $SHCA_PROGS (default <repo>/build/progs);
# nothing is compiled in the VM.  If it is missing: a "not ok" line naming
# that make command, and non-zero.  Use: bin=$(prog rcstream) || exit 1
prog() {
	local dir
	dir=${SHCA_PROGS:-$(cd "$E2E_DIR/../.." && pwd)/build/progs}
	if [ -x "$dir/$1" ]; then
		echo "$dir/$1"
	else
		# on stderr: the caller captures stdout
		not_ok "program $1 built" "$dir/$1 missing (make -C scripts/e2e/progs)" >&2
		return 1
	fi
}

# solo_setup DEV VETH ADDR GIDPAT: one shca device DEV in init_net on a
# fresh veth VETH (its peer VETHp stays idle) with IPv4 address ADDR/24;
# wait until it is ACTIVE with the GID matching GIDPAT.  `ip link del VETH`
# undoes the veth.
solo_setup() {
	modprobe shca &&
	ip link add "$2" type veth peer name "${2}p" &&
	ip link set "$2" up && ip link set "${2}p" up &&
	ip addr add "$3/24" dev "$2" &&
	rdma link add "$1" type shca netdev "$2" &&
	wait_for 90 port_active "$1" &&
	wait_for 90 rdma_gid "$1" "$4"
}

# solo_cases DEV VETH ADDR GIDPAT PROG [ARGS...]: DEV alone on a fresh
# VETH (solo_setup), the Python case program progs/PROG run on it with
# --dev DEV ARGS (exits_ok), then DEV and VETH deleted.
solo_cases() {
	local dev=$1 veth=$2 prog=$5
	check "setup $dev on $veth" solo_setup "$dev" "$veth" "$3" "$4"
	shift 5
	exits_ok "$prog exits 0" /usr/bin/python3 "$E2E_DIR/progs/$prog" --dev "$dev" "$@"
	check "rdma link delete" rdma link delete "$dev"
	ip link del "$veth"
}

# server_reap PID: wait up to 120 s for the background process PID (a
# child of this shell: a server, a receiver) to exit; SERVER_RC is its
# exit status, or "hung" if it had to be killed (SIGKILL: a hung process
# may not take SIGTERM, and the wait for it must end).  Returns 0 when it
# exited 0.
server_reap() {
	wait_for 120 _gone "$1"
	if kill -0 "$1" 2>/dev/null; then
		kill -9 "$1" 2>/dev/null
		wait "$1" 2>/dev/null
		SERVER_RC=hung
	else
		wait "$1"
		SERVER_RC=$?
	fi
	[ "$SERVER_RC" = 0 ]
}

# tap_relay FILE: turn a test program's "ok - X" / "not ok - X" lines in
# FILE into this suite's TAP lines; anything else becomes a comment.
tap_relay() {
	local line
	while IFS= read -r line; do
		case "$line" in
		"ok - "*) ok "${line#ok - }" ;;
		"not ok - "*) not_ok "${line#not ok - }" "see above" ;;
		*) echo "# $line" ;;
		esac
	done <"$1"
}

# tail1 FILE: the last lines of FILE on one line, for failure messages.
tail1() {
	tail -n "${2:-3}" "$1" 2>/dev/null | tr '\n' ' '
}

# gist FILE [N]: why a program failed, from its log: its first three lines
# that look like an error (programs like perftest print the error on
# stderr, which lands above their buffered stdout), else the last N lines.
gist() {
	local e
	e=$(grep -a -i -m 3 -E "error|fail|couldn'?t|unable|refused|timed? ?out|invalid|denied|no such" \
		"$1" 2>/dev/null | tr '\n' ' ')
	if [ -n "$e" ]; then
		echo "$e"
	else
		tail1 "$1" "${2:-3}"
	fi
}

# e2e_selected NAME: false when $E2E_ONLY (an extended regex, for ad hoc
# runs) is set and NAME does not match it.
e2e_selected() {
	[ -z "${E2E_ONLY:-}" ] || echo "$1" | grep -Eq -- "$E2E_ONLY"
}

# _gone PID: process PID has exited.
_gone() { ! kill -0 "$1" 2>/dev/null; }

# pair_case NAME WAIT SRVNS SRVCMD CLINS CLICMD [CHECK]: run SRVCMD (a string,
# word-split) in namespace SRVNS, wait for it (WAIT: "tcp:PORT" or "cm"),
# then CLICMD in CLINS.  The case passes when both exit 0 and, if given, the
# function CHECK SRVLOG CLILOG succeeds (it prints why when it does not).
# The logs' paths stay in E2E_SRV_LOG/E2E_CLI_LOG.  Each side runs under
# `timeout $E2E_T`; a server still running 120 s after its client finished
# is killed and fails the case.
E2E_T=${E2E_T:-300}
pair_case() {
	local name=$1 chk=${7:-} t0=$SECONDS
	e2e_selected "$name" || return 0
	pair_run "$@"
	echo "# $E2E_SUITE: $name: $((SECONDS - t0)) s"
	pair_verdict "$name" "$chk"
}

# pair_verdict NAME [CHECK]: the case NAME from the last run (PAIR_CRC,
# PAIR_SRC, PAIR_NOREPORT and the logs E2E_SRV_LOG, E2E_CLI_LOG, as
# pair_run leaves them): it passes when both sides exited 0 and, if
# given, CHECK SRVLOG CLILOG succeeds.  Returns 0 when it passed.
pair_verdict() {
	local name=$1 chk=${2:-} why
	if [ "${PAIR_NOREPORT:-0}" = 1 ]; then
		not_ok "$name" "no report in 3 tries (perftest's r^2 check under TCG)"
	elif [ "$PAIR_CRC" != 0 ] || [ "$PAIR_SRC" != 0 ]; then
		not_ok "$name" "client rc=$PAIR_CRC: $(gist "$E2E_CLI_LOG" 6) | server rc=$PAIR_SRC: $(gist "$E2E_SRV_LOG" 6)"
	elif [ -n "$chk" ] && ! why=$("$chk" "$E2E_SRV_LOG" "$E2E_CLI_LOG" 2>&1); then
		not_ok "$name" "$why"
	else
		ok "$name"
		return 0
	fi
	return 1
}

# pair_setup MODE: create the two ends of a test and set
#   NA NB    namespace commands of the client (A) and server (B) side
#   DA DB    their devices; AA AB their IPv4 addresses, A6 B6 IPv6 ones
#   GA4 GB4 GA6 GB6   their RoCE v2 GID indices
# MODE shca: shca0 in shca-a (veth-a) <-> shca1 in shca-b (veth-b).
# MODE rxe: rdma_rxe on 6.1 and 6.12 has no network namespace support, so
#   its "pair" is one rxe0 in init_net on veth-b (moved there) talking to
#   its own address: rxe loops such packets back inside the driver.  It
#   only serves to check the suites themselves and as the bench baseline.
pair_setup() {
	PAIR_MODE=$1
	case "$1" in
	shca)
		NA="ip netns exec shca-a" NB="ip netns exec shca-b" DA=shca0 DB=shca1
		AA=10.77.0.1 AB=10.77.0.2 A6=fd77::1 B6=fd77::2
		rdma_dev_add "$NA" shca "$DA" veth-a && rdma_dev_add "$NB" shca "$DB" veth-b &&
		GA4=$(rdma_gid "$DA" "$GID4_A") && GA6=$(rdma_gid "$DA" "$GID6_A")
		;;
	rxe)
		NA="" NB="" DA=rxe0 DB=rxe0
		AA=10.77.0.2 AB=10.77.0.2 A6=fd77::2 B6=fd77::2
		veth_b_to_init_net && rdma_dev_add "$NB" rxe "$DB" veth-b &&
		GA4=$(rdma_gid "$DA" "$GID4_B") && GA6=$(rdma_gid "$DA" "$GID6_B")
		;;
	*) return 1 ;;
	esac &&
	GB4=$(rdma_gid "$DB" "$GID4_B") && GB6=$(rdma_gid "$DB" "$GID6_B")
}

# pair_teardown: undo pair_setup (the shca module stays loaded).
pair_teardown() {
	case "$PAIR_MODE" in
	shca)
		rdma_dev_del "$NA" "$DA"
		rdma_dev_del "$NB" "$DB"
		;;
	rxe)
		rdma_dev_del "" "$DB"
		modprobe -r rdma_rxe
		veth_b_to_netns
		;;
	esac
}

# --- result checks of the RC tools (rc.sh, interop.sh) ---------------------

# bw_ok SRVLOG CLILOG: the client printed its result line (#bytes
# #iterations peak average rate) for a completed run with a non-zero
# iteration count.  The rates themselves are not judged: perftest derives
# them from the TSC, which TCG guests may find unstable after boot (then
# a finished run can print 0.00), and timing never decides a test here.
bw_ok() {
	awk '$1 ~ /^[0-9]+$/ && NF >= 5 && $2 ~ /^[0-9]+$/ && $2 + 0 > 0 { n++ }
	     END { exit !(n > 0) }' "$2" && return 0
	echo "no bandwidth result line: $(tail1 "$2" 4)"
	return 1
}

# lat_ok SRVLOG CLILOG: the client printed its result line (#bytes
# #iterations ...); the times themselves are meaningless under TCG.
lat_ok() {
	awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 5 { n++ } END { exit !(n > 0) }' "$2" && return 0
	echo "no latency result line: $(tail1 "$2" 4)"
	return 1
}

# pp_ok SRVLOG CLILOG: ibv_*_pingpong printed its summary on both sides.
pp_ok() {
	grep -q 'bytes in .* seconds' "$1" && grep -q 'bytes in .* seconds' "$2" && return 0
	echo "no pingpong summary: $(tail1 "$2")"
	return 1
}

# rping_ok SRVLOG CLILOG: no validation error on either side.
rping_ok() {
	! grep -qi 'data mismatch\|error' "$1" "$2" && return 0
	echo "rping reported: $(grep -hi 'mismatch\|error' "$1" "$2" | head -n 2 | tr '\n' ' ')"
	return 1
}

# --- direct path and bench helpers (direct.sh, bench.sh) -------------------

# cq_mod_for N: the largest of perftest's usual completion moderations
# (-Q: 100, 50, 25, 20, 10, 5, 1) that divides an iteration count N.  A
# multi-QP perftest run whose -n the moderation does not divide may stop
# polling before every QP got the completion it waits for (direct.sh,
# qp16_mode), and hang.
cq_mod_for() {
	local m
	for m in 100 50 25 20 10 5 1; do
		[ $(($1 % m)) = 0 ] && break
	done
	echo "$m"
}

# hw_stat_read VAR DEV NAME: set VAR (a name, array elements too) to counter
# NAME of DEV's port 1, read from sysfs without starting a process; empty
# when DEV has no such counter.
hw_stat_read() {
	printf -v "$1" '%s' ''
	# stderr first: redirections apply in order, a missing file's error too
	read -r "$1" 2>/dev/null <"/sys/class/infiniband/$2/ports/1/hw_counters/$3"
	return 0
}

# path_mark DEV...: remember DEVs' tx_direct_msgs and tx_wire_msgs, the
# start of what path_check judges (without a mark: from 0).
declare -A PATH_BASE
path_mark() {
	local d n
	for d in "$@"; do
		for n in tx_direct_msgs tx_wire_msgs; do
			hw_stat_read "PATH_BASE[$d,$n]" "$d" "$n"
		done
	done
}

# path_check WANT LABEL DEV...: which path the messages DEVs started since
# path_mark took, summed from tx_direct_msgs and tx_wire_msgs (read before
# the devices go).  WANT wire: one case, LABEL, that none went direct and
# some took the wire; auto: the same in a @wire step of run.sh
# (SHCA_E2E_WIRE=1), otherwise the counts are only printed.
path_check() {
	local want=$1 label=$2 d v dir=0 wire=0 missing=
	shift 2
	if [ "$want" = auto ]; then
		want=any
		[ "${SHCA_E2E_WIRE:-0}" = 1 ] && want=wire
	fi
	for d in "$@"; do
		hw_stat_read v "$d" tx_direct_msgs
		[ -n "$v" ] || missing+=" $d/tx_direct_msgs"
		dir=$((dir + ${v:-0} - ${PATH_BASE[$d,tx_direct_msgs]:-0}))
		hw_stat_read v "$d" tx_wire_msgs
		[ -n "$v" ] || missing+=" $d/tx_wire_msgs"
		wire=$((wire + ${v:-0} - ${PATH_BASE[$d,tx_wire_msgs]:-0}))
	done
	echo "# $E2E_SUITE: $label: tx_direct_msgs +$dir, tx_wire_msgs +$wire ($*)"
	[ "$want" = wire ] || return 0
	if [ -z "$missing" ] && [ "$dir" = 0 ] && [ "$wire" -gt 0 ]; then
		ok "$label: every message took the wire"
		return 0
	fi
	not_ok "$label: every message took the wire" \
		"tx_direct_msgs +$dir, tx_wire_msgs +$wire${missing:+, no counter$missing}"
	return 1
}

# has_text FILE TEXT: FILE contains TEXT (no process started).
has_text() {
	[[ $(<"$1") == *"$2"* ]] 2>/dev/null
}

# pair_run NAME WAIT SRVNS SRVCMD CLINS CLICMD: pair_case's run without a
# verdict (pair_verdict gives it).  PAIR_CRC and PAIR_SRC are the client's and the server's exit
# status ("hung" if the server had to be killed); the logs are in
# E2E_SRV_LOG and E2E_CLI_LOG.  A perftest run that gave up with "Can't
# produce a report" (its r^2 check of the TSC, under TCG) runs again, at
# most 3 tries: PAIR_TRIES counts them, PAIR_NOREPORT=1 if the last one
# still gave up.
pair_run() {
	local name=$1 wait=$2 sns=$3 scmd=$4 cns=$5 ccmd=$6 slug srv try
	slug=$(echo "$E2E_SUITE-$name" | tr -c 'A-Za-z0-9.\n-' '_')
	for try in 1 2 3; do
		E2E_SRV_LOG=$E2E_LOGS/$slug.srv E2E_CLI_LOG=$E2E_LOGS/$slug.cli
		# shellcheck disable=SC2086
		$sns timeout "$E2E_T" $scmd >"$E2E_SRV_LOG" 2>&1 &
		srv=$!
		case "$wait" in
		tcp:*) wait_for 120 tcp_listening "$srv" "${wait#tcp:}" ;;
		cm) wait_cm_listen ;;
		esac
		# shellcheck disable=SC2086
		$cns timeout "$E2E_T" $ccmd >"$E2E_CLI_LOG" 2>&1
		PAIR_CRC=$?
		server_reap "$srv"
		PAIR_SRC=$SERVER_RC PAIR_TRIES=$try PAIR_NOREPORT=0
		grep -q "Can't produce a report" "$E2E_SRV_LOG" "$E2E_CLI_LOG" || break
		PAIR_NOREPORT=1
		echo "# $E2E_SUITE: $name: try $try: perftest's r^2 check gave up"
	done
}

# veth_pair_add: recreate the boot's veth pair (scripts/vm/guest.sh) after
# it was deleted: veth-a in shca-a (10.77.0.1, fd77::1) <-> veth-b in
# shca-b (10.77.0.2, fd77::2).
veth_pair_add() {
	ip link add veth-a netns shca-a type veth peer name veth-b netns shca-b || return 1
	ip -n shca-a -b - <<-EOT || return 1
		addr add 10.77.0.1/24 dev veth-a
		addr add fd77::1/64 dev veth-a nodad
		link set veth-a up
	EOT
	ip -n shca-b -b - <<-EOT
		addr add 10.77.0.2/24 dev veth-b
		addr add fd77::2/64 dev veth-b nodad
		link set veth-b up
	EOT
}
