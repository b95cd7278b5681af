# shellcheck shell=bash
# Two hosts (scripts/vm-pair, check.sh's paired stock boots): what both
# sides of a test across the link share.  Sourced after lib.sh by
# twohost.sh and the bench's two-host column (scripts/bench-twohost.sh).
#
# Set before use: ROLE (a or b), ND (the link's netdev), ME4 ME6 (this
# side's addresses), PEER4 PEER6 (the other side's), DEV (the RDMA device
# the cases use); then pair_mailbox.  two_case reports through side_ok
# under the phase name PH; T is each side's timeout.

CTLPORT=${CTLPORT:-18600}
T=${E2E_T:-300}
PH=
CASE_N=0
DRV=

# --- the mailbox --------------------------------------------------------------
# pair_mailbox: this side listens on CTLPORT of its link address and
# appends every line it receives to MB (a file in TMPDIR); send_msg
# connects to the other side's (bash's /dev/tcp: no process started) and
# writes one.  Killed when the shell exits.
pair_mailbox() {
	MB=$TMPDIR/pair-mailbox
	: >"$MB"
	perl -MIO::Socket::INET -e '
	my $s = IO::Socket::INET->new(LocalAddr => $ARGV[0], LocalPort => $ARGV[1],
		Listen => 16, ReuseAddr => 1) or die "listen: $!\n";
	open(my $f, ">>", $ARGV[2]) or die "$ARGV[2]: $!\n";
	$f->autoflush(1);
	while (my $c = $s->accept) { print $f $_ while <$c>; close $c; }
' "$ME4" "$CTLPORT" "$MB" &
	MBPID=$!
	PEER_LOST=0
	# shellcheck disable=SC2064 # the pid now
	trap "kill $MBPID 2>/dev/null" EXIT
}

# send_msg MSG [SECS]: MSG to the other side, retried for SECS (default
# 120) while it cannot be reached.
send_msg() {
	local end=$((SECONDS + ${2:-120}))
	[ "$PEER_LOST" = 0 ] || return 1
	while :; do
		{ echo "$1" >"/dev/tcp/$PEER4/$CTLPORT"; } 2>/dev/null && return 0
		[ "$SECONDS" -lt "$end" ] || break
		nap 0.5
	done
	PEER_LOST=1
	return 1
}
# got_msg PREFIX: a message beginning with PREFIX arrived; MSG is it.
# (No message is the beginning of another: "at:NAME;", "ready:N;",
# "done:N:RC".)
got_msg() {
	local l
	while IFS= read -r l; do
		[[ $l == "$1"* ]] && MSG=$l && return 0
	done <"$MB"
	return 1
}
# wait_msg PREFIX [SECS]: until got_msg PREFIX (default 600 s); after a
# wait ran out every later one fails at once (the other host is gone).
wait_msg() {
	MSG=
	[ "$PEER_LOST" = 0 ] || return 1
	wait_for "${2:-600}" got_msg "$1" && got_msg "$1" && return 0
	PEER_LOST=1
	return 1
}
# barrier NAME [SECS]: both sides got here.
barrier() {
	send_msg "at:$1;" "${2:-600}" && wait_msg "at:$1;" "${2:-600}"
}

# --- devices -----------------------------------------------------------------
# gid4 ADDR, gid6 ADDR: the sysfs spelling of the RoCE v2 GID of an address.
gid4() {
	local IFS=.
	# shellcheck disable=SC2086
	set -- $1
	printf 'ffff:%02x%02x:%02x%02x' "$1" "$2" "$3" "$4"
}
gid6() {
	local head=${1%%::*} tail='' h grp=() n i
	[[ $1 == *::* ]] && tail=${1#*::}
	local -a hs ts
	IFS=: read -r -a hs <<<"$head"
	IFS=: read -r -a ts <<<"$tail"
	n=$((8 - ${#hs[@]} - ${#ts[@]}))
	for h in "${hs[@]}"; do grp+=("$(printf '%04x' "0x$h")"); done
	for ((i = 0; i < n; i++)); do grp+=(0000); done
	for h in "${ts[@]}"; do grp+=("$(printf '%04x' "0x$h")"); done
	local IFS=:
	echo "${grp[*]}"
}

# dev_up DRIVER: DEV of DRIVER on the link, ACTIVE with both GIDs; GI4 and
# GI6 are their indices.
# shellcheck disable=SC2034 # GI4, GI6: read by the sourcing suite
dev_up() {
	local g4 g6
	DRV=$1
	g4=$(gid4 "$ME4") && g6=$(gid6 "$ME6") || return 1
	rdma_dev_del "" "$DEV" 2>/dev/null
	case "$1" in shca) modprobe shca ;; rxe) modprobe rdma_rxe ;; esac &&
	rdma link add "$DEV" type "$1" netdev "$ND" &&
	wait_for 90 port_active "$DEV" &&
	wait_for 90 rdma_gid "$DEV" "$g4" && wait_for 90 rdma_gid "$DEV" "$g6" &&
	GI4=$(rdma_gid "$DEV" "$g4") && GI6=$(rdma_gid "$DEV" "$g6")
}
# dev_down: DEV goes; rdma_rxe is unloaded (its UDP port is the one shca
# takes in the next phase).
dev_down() {
	rdma_dev_del "" "$DEV" 2>/dev/null
	[ "$DRV" = rxe ] && modprobe -r rdma_rxe
	DRV=
	return 0
}

# --- cases ---------------------------------------------------------------------

# side_ok NAME SIDE CHECK LOG RC: this side's half of a case: exit status 0
# and CHECK LOG.
side_ok() {
	local name="$PH: $1 ($2, $DRV)" why
	if [ "$5" != 0 ]; then
		not_ok "$name" "rc=$5: $(gist "$4" 6)"
	elif ! why=$("$3" "$4" 2>&1); then
		not_ok "$name" "$why"
	else
		ok "$name"
	fi
}

# two_run NAME SERVER WAIT SRVCMD CLICMD: a run across the link, without a
# verdict.  SERVER (a or b) runs SRVCMD (a string, word-split) and, once
# WAIT holds (tcp:PORT, cm, or text:STRING in its log), tells the other
# side, which runs CLICMD; the server side waits for the client's exit
# status, then for its own process.  Sets CASE_LOG (this side's log),
# CASE_SIDE (server or client), CASE_RC (this side's exit status; "hung"
# or "lost" when it never ended or never started) and CASE_CLI_RC (the
# client's, on both sides).
two_run() {
	local name=$1 srv=$2 wait=$3 scmd=$4 ccmd=$5 pid
	CASE_N=$((CASE_N + 1))
	CASE_LOG=$E2E_LOGS/pair-$CASE_N.log
	CASE_RC=lost CASE_CLI_RC=lost
	if [ "$ROLE" = "$srv" ]; then
		CASE_SIDE=server
		[ "$PEER_LOST" = 0 ] || return 0
		# shellcheck disable=SC2086
		timeout "$T" $scmd >"$CASE_LOG" 2>&1 &
		pid=$!
		case "$wait" in
		tcp:*) wait_for 120 tcp_listening "$pid" "${wait#tcp:}" ;;
		cm) wait_cm_listen ;;
		text:*) wait_for 120 has_text "$CASE_LOG" "${wait#text:}" ;;
		esac
		send_msg "ready:$CASE_N;"
		wait_msg "done:$CASE_N:" $((T + 120)) && CASE_CLI_RC=${MSG##*:}
		server_reap "$pid"
		CASE_RC=$SERVER_RC
	else
		CASE_SIDE=client
		[ "$PEER_LOST" = 0 ] || return 0
		if wait_msg "ready:$CASE_N;" $((T + 120)); then
			# shellcheck disable=SC2086
			timeout "$T" $ccmd >"$CASE_LOG" 2>&1
			CASE_RC=$?
		else
			echo "the server side never said it was ready" >"$CASE_LOG"
		fi
		CASE_CLI_RC=$CASE_RC
		send_msg "done:$CASE_N:$CASE_RC"
	fi
}

# two_case NAME SERVER WAIT SRVCMD CLICMD CHECK: two_run, then this side's
# verdict: its exit status 0 and CHECK LOG.
two_case() {
	local t0=$SECONDS
	if [ "$PEER_LOST" = 1 ]; then
		CASE_N=$((CASE_N + 1))
		not_ok "$PH: $1" "the other host stopped answering earlier"
		return
	fi
	two_run "$@"
	side_ok "$1" "$CASE_SIDE" "$6" "$CASE_LOG" "$CASE_RC"
	[ "$CASE_SIDE" = server ] && echo "# $PH: $1: the client exited $CASE_CLI_RC"
	echo "# $E2E_SUITE: $PH: $1: $((SECONDS - t0)) s"
}

# peer_of SIDE, peer6_of SIDE: SIDE's link address (IPv4, IPv6): where a
# client finds the server of a case.
peer_of() { if [ "$ROLE" = "$1" ]; then echo "$ME4"; else echo "$PEER4"; fi; }
peer6_of() { if [ "$ROLE" = "$1" ]; then echo "$ME6"; else echo "$PEER6"; fi; }
