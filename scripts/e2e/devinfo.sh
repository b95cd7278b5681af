#!/bin/bash
# ibv_devices / ibv_devinfo through the shca provider.  Runs inside the VM.
#   devinfo.sh [PART...]   PART: caps (the device's attributes and rdma res
#                          -dd), trace (the tracepoints over a ping-pong),
#                          counters (QP counters); default all three
set -u
E2E_SUITE=devinfo
. "$(dirname "$0")/lib.sh"
parts=" ${*:-caps trace counters} "
want() { [[ $parts == *" $1 "* ]]; }

ip link add di0 type veth peer name di1
ip link set di0 up; ip link set di1 up
ip addr add 10.98.0.1/24 dev di0
modprobe shca
rdma link add shca0 type shca netdev di0
wait_for 90 test -e /sys/class/infiniband/shca0

# caps_cases: what ibv_devinfo -v shows of the device, and rdma res -dd of
# a live QP and CQ.
caps_cases() {
	out=$TMPDIR/devinfo.out
	err=$TMPDIR/devinfo.err
	export IBV_SHOW_WARNINGS=1
	check "ibv_devices lists shca0" sh -c 'ibv_devices | grep -qw shca0'
	check "ibv_devinfo -v succeeds" sh -c "ibv_devinfo -v -d shca0 > $out 2> $err"
	check "provider loaded without warnings" test ! -s "$err"
	check "transport InfiniBand" grep -q 'transport:.*InfiniBand' "$out"
	check "link_layer Ethernet" grep -q 'link_layer:.*Ethernet' "$out"
	check "port active" wait_for 90 sh -c "ibv_devinfo -d shca0 | grep -q 'state:.*PORT_ACTIVE'"
	check "one physical port" grep -q 'phys_port_cnt:.*1$' "$out"
	check "fw_ver reported as major.minor.sub" grep -Eq 'fw_ver:[[:space:]]+0\.1\.0$' "$out"
	check "vendor_id non-zero" grep -Eq 'vendor_id:[[:space:]]+0x0*2ca5e$' "$out"
	check "RoCE v2 GID listed" wait_for 90 sh -c "ibv_devinfo -v -d shca0 | grep -q 'GID\\[.*::ffff:10.98.0.1, RoCE v2'"
	check "SRQs advertised (max_srq 4096)" grep -q 'max_srq:[[:space:]]*4096$' "$out"
	check "SRQ sizes advertised" sh -c "grep -Eq 'max_srq_wr:[[:space:]]*[1-9][0-9]*$' $out && grep -Eq 'max_srq_sge:[[:space:]]*12$' $out"
	check "RNR NAK generation advertised" grep -q RC_RNR_NAK_GEN "$out"
	check "XRC advertised" grep -Eq '^[[:space:]]*XRC$' "$out"
	check "SRQ resize advertised" grep -Eq '^[[:space:]]*SRQ_RESIZE$' "$out"
	# tm_caps: ibv_devinfo -v prints the block only when max_num_tags > 0
	tm_caps=$(grep -A5 '^[[:space:]]*max_rndv_hdr_size:' "$out" | tr -s '[:space:]' ' ')
	expect_eq "tag matching advertised (tm_caps)" "$tm_caps" \
		" max_rndv_hdr_size: 64 max_num_tags: 1024 max_ops: 1024 max_sge: 4 flags: IBV_TM_CAP_RC "
	check "HCA-wide atomics advertised" grep -q "atomic_cap:.*ATOMIC_HCA" "$out"
	# RAW_PACKET QPs and flow steering (ibv_create_flow(3): devices with
	# MANAGED_FLOW_STEERING), IP checksums done by the device (in software)
	check "flow steering advertised" grep -Eq '^[[:space:]]*MANAGED_FLOW_STEERING$' "$out"
	check "raw IP checksums advertised" sh -c "grep -Eq '^[[:space:]]*RAW_IP_CSUM$' $out &&
		grep -Eq '^[[:space:]]*IP csum offload$' $out"
	# RSS: Toeplitz over IPv4/IPv6 addresses and TCP/UDP ports, on RAW_PACKET
	# QPs; tables of up to 256 entries; WQs
	rss_caps=$(grep -A6 '^[[:space:]]*rss_caps:' "$out" | tr -s '[:space:]' ' ')
	expect_eq "RSS advertised (rss_caps)" "$rss_caps" \
		" rss_caps: max_rwq_indirection_tables: 4096 max_rwq_indirection_table_size: 256 rx_hash_function: 0x1 rx_hash_fields_mask: 0xFF supported_qp: SUPPORT_RAW_PACKET "
	check "WQs advertised (max_wq_type_rq 4096)" grep -Eq 'max_wq_type_rq:[[:space:]]*4096$' "$out"
	node_guid=$(awk '/node_guid/ {print $2}' "$out")
	check "node_guid non-zero" test -n "$node_guid" -a "$node_guid" != "0000:0000:0000:0000"
	# The driver's attributes in restrack (res.c, rdma resource show -dd): an
	# ibv_rc_pingpong server has created its RC QP and CQ and posted its
	# 37 receives (-r) before it waits for a client: the QP's RQ ring shows
	# 37 produced, none consumed, its requester at rest; the CQ is empty.
	timeout 120 ibv_rc_pingpong -d shca0 -r 37 -p 18600 >/dev/null 2>&1 &
	pp=$!
	# has LINE WORD...: every WORD (a " name value " run) is in LINE
	has() {
		local line=" $1 " w
		shift
		for w in "$@"; do
			[[ $line == *" $w "* ]] || return 1
		done
	}
	# res_show OBJ ARGS...: rdma -dd resource show OBJ ARGS, one line per
	# object (newer rdma tools put the driver attributes on lines of their
	# own, indented)
	res_show() {
		rdma -dd resource show "$@" 2>/dev/null |
			awk '/^[^ \t]/ { if (l != "") print l; l = $0; next } { l = l " " $0 } END { if (l != "") print l }' |
			tr -s ' \t' '  '
	}
	pp_qp() { res_show qp link shca0 | grep ' type RC .*comm ibv_rc_pingpong'; }
	pp_qp_posted() { pp_qp | grep -q ' drv_rq_prod 37 '; }
	if wait_for 60 pp_qp_posted; then
		qpl=$(pp_qp)
		cql=$(res_show cq dev shca0 | grep 'comm ibv_rc_pingpong')
		check "rdma res show qp -dd: an RC QP's rings (37 receives posted, none taken, no send)" \
			has "$qpl" "drv_sq_prod 0" "drv_sq_cons 0" "drv_rq_prod 37" "drv_rq_cons 0"
		check "rdma res show qp -dd: its requester at rest (head, cur, fetch 0; nothing held)" \
			has "$qpl" "drv_req_head 0" "drv_req_cur 0" "drv_req_fetch 0" "drv_req_held 0" "drv_resp_held 0"
		check "rdma res show cq -dd: its CQ empty (nothing written, none polled)" \
			has "$cql" "drv_kprod 0" "drv_overflow 0" "drv_prod 0" "drv_cons 0"
	else
		not_ok "rdma res show qp -dd: an RC QP's rings" "no RC QP of ibv_rc_pingpong with drv_rq_prod 37: $(res_show qp link shca0 | tail -n 2 | tr '\n' ' ')"
	fi
	kill "$pp" 2>/dev/null
	wait "$pp" 2>/dev/null
}

# Tracepoints (shca_trace.h): all eight are in events/shca; recorded with
# trace-cmd (or tracefs alone where it is missing) over an RC ping-pong
# on shca0 and one UDP datagram to port 4791 too short for a BTH, the
# trace shows what those must cause: QP state changes, packets out and
# in, completions, and the drop named by its counter (rx_malformed).
trace_cases() {
	TR=/sys/kernel/tracing
	mountpoint -q $TR || mount -t tracefs nodev $TR 2>/dev/null
	missing=
	for e in qp_state pkt drop retransmit timeout hold cqe async; do
		[ -d "$TR/events/shca/shca_$e" ] || missing+=" shca_$e"
	done
	expect_eq "tracepoints in events/shca" "${missing:-none}" none
	# tp_traffic: the ping-pong (10 round trips, 64 bytes) and the datagram
	tp_traffic() {
		local gi srv rc
		gi=$(rdma_gid shca0 ffff:0a62:0001) || return 1
		timeout 120 ibv_rc_pingpong -d shca0 -g "$gi" -n 10 -s 64 -p 18601 >"$E2E_LOGS/tp-srv.log" 2>&1 &
		srv=$!
		wait_for 60 tcp_listening "$srv" 18601
		timeout 120 ibv_rc_pingpong -d shca0 -g "$gi" -n 10 -s 64 -p 18601 10.98.0.1 \
			>"$E2E_LOGS/tp-cli.log" 2>&1
		rc=$?
		wait "$srv" || rc=1
		echo -n "not RoCE" >/dev/udp/10.98.0.1/4791
		nap 1
		return $rc
	}
	tp=$E2E_LOGS/trace-shca.txt
	if command -v trace-cmd >/dev/null; then
		how=trace-cmd
		trace-cmd record -e shca -o "$E2E_LOGS/trace-shca.dat" >"$E2E_LOGS/trace-cmd.log" 2>&1 &
		tc=$!
		wait_for 60 has_text "$E2E_LOGS/trace-cmd.log" "Hit Ctrl^C"
		tp_traffic
		tprc=$?
		kill -INT "$tc"
		wait "$tc"
		trace-cmd report -i "$E2E_LOGS/trace-shca.dat" >"$tp" 2>&1
	else
		how=tracefs
		echo >"$TR/trace"
		echo 1 >"$TR/events/shca/enable"
		tp_traffic
		tprc=$?
		echo 0 >"$TR/events/shca/enable"
		cp "$TR/trace" "$tp"
	fi
	expect_eq "traced ping-pong exits 0 ($how)" "$tprc" 0
	# tp_has EVENT REGEX: a line of event EVENT in the trace matches REGEX
	tp_has() { grep "$1:" "$tp" | grep -Eq -- "$2"; }
	check "trace ($how): QP to RTS (shca_qp_state)" tp_has shca_qp_state "RTR -> RTS"
	tp_tx_rx() { tp_has shca_pkt " tx " && tp_has shca_pkt " rx "; }
	check "trace ($how): packets sent and received (shca_pkt)" tp_tx_rx
	check "trace ($how): SEND completions, 64 bytes (shca_cqe)" tp_has shca_cqe "byte_len=64"
	check "trace ($how): the short datagram dropped (shca_drop reason=rx_malformed)" \
		tp_has shca_drop "reason=rx_malformed"
	echo "# trace ($how): $(grep -c 'shca_' "$tp") events, $(grep -c 'shca_pkt:' "$tp") packets"
}

# QP counters of ib_core's binding (rdma statistic qp): auto mode by type
# and a manual bind and unbind, the counts checked against the port's
counter_cases() {
	exits_ok "counter_cases.py exits 0" /usr/bin/python3 "$E2E_DIR/progs/counter_cases.py" --dev shca0
}

want caps && caps_cases
want trace && trace_cases
want counters && counter_cases

rdma link delete shca0
ip link del di0
modprobe -r shca
e2e_finish
