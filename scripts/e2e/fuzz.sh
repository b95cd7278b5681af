#!/bin/bash
# The tools that find the next bugs (issue 37), on shca0 of the boot's
# pair (shca0 in shca-a <-> shca1 in shca-b):
#  - progs/verbs_fuzz as an unprivileged user (nobody): random sequences
#    of verbs over every object type, hostile attributes, driver data and
#    ring contents, threads, fork, the device closed with objects alive;
#    then a shorter run as root, which raw packet QPs, RSS QPs and flows
#    need (the unprivileged run must see them refused: EPERM);
#  - progs/verbs_fault: each allocation of each create path failed in
#    turn with fail-nth (failslab and fail_page_alloc failing sleeping
#    allocations); a kernel without fault injection skips this part,
#    the test kernel must have it;
#  - after each, ibv_rc_pingpong -c between shca0 and shca1 (buffers
#    compared), and at the end the module unloads (nothing held).
# The VM harness fails the run on any WARN, KASAN, lockdep or UBSAN report
# and on a kmemleak leak.  Prints "# fuzz(verbs): ..." and
# "# fuzz(faults): ..." count lines, which make check repeats.
#   SHCA_FUZZ_SECS (default 80), SHCA_FUZZ_ROOT_SECS (30): the two runs'
#   lengths; SHCA_VERBS_SEED (default 0x37f0): the seed (the root run
#   takes SEED + 0x100); SHCA_FAULT_MAXN (2000): faults per verb at most;
#   SHCA_FUZZ_TOPUPS (4), SHCA_FUZZ_TOPUP_SECS (20): further unprivileged
#   runs while a verb it must reach is missing, and their length.
set -u
E2E_SUITE=fuzz
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

fuzz=$(prog verbs_fuzz) || exit 1
fault=$(prog verbs_fault) || exit 1
SECS=${SHCA_FUZZ_SECS:-80}
ROOT_SECS=${SHCA_FUZZ_ROOT_SECS:-30}
TOPUPS=${SHCA_FUZZ_TOPUPS:-4}
TOPUP_SECS=${SHCA_FUZZ_TOPUP_SECS:-20}
SEED=${SHCA_VERBS_SEED:-0x37f0}
MAXN=${SHCA_FAULT_MAXN:-2000}

if ! pair_setup shca; then
	not_ok "setup shca pair" "devices or RoCE v2 GIDs missing"
	exit 1
fi
ok "setup shca pair ($DA GID $GA4, $DB GID $GB4)"

# pingpong LABEL: ibv_rc_pingpong -c between the devices (data compared).
pingpong() {
	pair_case "ibv_rc_pingpong -c after $1" tcp:18515 \
		"$NB" "ibv_rc_pingpong -d $DB -g $GB4 -c -n 20 -s 4096" \
		"$NA" "ibv_rc_pingpong -d $DA -g $GA4 -c -n 20 -s 4096 $AB" pp_ok
}

# verb_ok OUT VERB: VERB's row in verbs_fuzz's table: "CALLS OK FAILED".
verb_row() {
	awk -v v="$2" '$1 == "verbs_fuzz:" && $2 == v { print $3, $4, $5; exit }' "$1"
}

# fuzz_run LABEL OUT ARGS...: one verbs_fuzz run, its lines relayed as
# they come (a hang shows how far it got), kept in OUT.
fuzz_run() {
	local label=$1 out=$2 rc t0=$SECONDS
	shift 2
	"$@" 2>&1 | tee "$out" | tap_relay /dev/stdin
	rc=${PIPESTATUS[0]}
	echo "# fuzz: verbs_fuzz ($label): $((SECONDS - t0)) s"
	[ "$rc" = 0 ] || not_ok "verbs_fuzz ($label) exit status" "$rc (seed in the lines above)"
	return "$rc"
}

# --- the fuzzer, unprivileged ---------------------------------------------
# nobody needs the program where it can run it; the device node is 0666
bin=$TMPDIR/verbs_fuzz
install -m 0755 "$fuzz" "$bin"
out=$TMPDIR/fuzz-user.out
echo "# fuzz: verbs_fuzz as nobody on $DA, seed $SEED, $SECS s"
# shellcheck disable=SC2086 # $NA: a command prefix, word-split
fuzz_run nobody "$out" $NA timeout -k 10 $((SECS + 900)) setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$bin" "$DA" "$GA4" -s "$SEED" -t "$SECS" -j 3
user_out=$out
read -r calls okn _ <<<"$(verb_row "$out" create_qp_raw)"
if [ "${calls:-0}" -gt 0 ] && [ "${okn:-1}" = 0 ] &&
	grep -q ', uid 65534$' "$out"; then
	ok "verbs_fuzz ran as uid 65534: raw packet QPs refused ($calls tries)"
else
	not_ok "verbs_fuzz ran as uid 65534: raw packet QPs refused" \
		"create_qp_raw: ${calls:-?} calls, ${okn:-?} made; $(grep -m1 'uid' "$out")"
fi
# Verbs an unprivileged run must have made succeed at least once, and the
# hostile ones it must have tried (they are meant to fail): what the
# fuzzer reached (a verb that is never reached tests nothing).
must="open_device close_device alloc_pd reg_mr rereg_mr alloc_mw bind_mw
	dealloc_mw create_comp_channel create_cq create_cq_ex resize_cq
	req_notify_cq poll_cq destroy_cq create_qp_rc create_qp_uc
	create_qp_ud create_qp_xrc_ini create_qp_xrc_tgt create_qp_ex_ops
	modify_qp query_qp connect_qps destroy_qp create_srq create_srq_xrc
	create_srq_tm modify_srq destroy_srq open_xrcd close_xrcd create_wq
	modify_wq destroy_wq create_rwq_ind_table destroy_rwq_ind_table
	create_ah destroy_ah attach_mcast post_send post_send_ex post_recv
	post_srq_recv post_wq_recv post_srq_ops udata_alloc_pd scribble_sq
	scribble_rq scribble_srq scribble_cq fork"
tried="open_qp create_flow cmd_post_send cmd_post_srq_recv udata_create_cq
	udata_create_qp udata_create_srq"
# must_missing OUT...: the must verbs no run in OUT... made succeed and
# the tried ones none called, merged over the runs (one awk over every
# table: a verb_row per verb, 59 of them, took 44 s on the debug boot).
must_missing() {
	awk -v must="$must" -v tried="$tried" '
		FNR == 1 { delete seen }
		$1 == "verbs_fuzz:" && !($2 in seen) {
			seen[$2] = 1; calls[$2] += $3; okn[$2] += $4
		}
		END {
			n = split(must, m, " ")
			for (i = 1; i <= n; i++)
				if (!(okn[m[i]] + 0 > 0)) printf " %s", m[i]
			n = split(tried, t, " ")
			for (i = 1; i <= n; i++)
				if (!(calls[t[i]] + 0 > 0)) printf " %s(never tried)", t[i]
		}' "$@"
}
# How many sequences SECS s hold depends on how fast the guest runs (a
# loaded TCG host ran 938 where an idle one runs 1188, and a rare verb
# such as a successful attach_mcast may not come up).  What is missing
# after the run gets further short runs, each on a new seed, up to
# TOPUPS of them: the reached set is the union, and a verb the driver
# refuses stays missing however many runs there are.
user_outs=("$out")
missing=$(must_missing "${user_outs[@]}")
k=0
while [ -n "$missing" ] && [ $k -lt "$TOPUPS" ]; do
	k=$((k + 1))
	tseed=$(printf '%#x' $((SEED + 0x10 * k)))
	out=$TMPDIR/fuzz-user-$k.out
	echo "# fuzz: missing after ${#user_outs[@]} run(s):$missing; a further $TOPUP_SECS s on seed $tseed"
	# shellcheck disable=SC2086
	fuzz_run "nobody, further run $k" "$out" $NA timeout -k 10 $((TOPUP_SECS + 900)) \
		setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$bin" "$DA" "$GA4" -s "$tseed" -t "$TOPUP_SECS" -j 3
	user_outs+=("$out")
	missing=$(must_missing "${user_outs[@]}")
done
if [ -z "$missing" ]; then
	ok "verbs_fuzz (nobody) reached every verb it must ($(wc -w <<<"$must $tried"), ${#user_outs[@]} run(s))"
else
	not_ok "verbs_fuzz (nobody) reached every verb it must" "never succeeded in ${#user_outs[@]} run(s):$missing"
fi
pingpong "the unprivileged fuzz"

# --- the fuzzer as root: raw packet QPs, RSS, flows --------------------------
out=$TMPDIR/fuzz-root.out
rseed=$(printf '%#x' $((SEED + 0x100)))
echo "# fuzz: verbs_fuzz as root on $DA, seed $rseed, $ROOT_SECS s"
# shellcheck disable=SC2086
fuzz_run root "$out" $NA timeout -k 10 $((ROOT_SECS + 900)) "$fuzz" "$DA" "$GA4" -s "$rseed" -t "$ROOT_SECS" -j 2
root_out=$out
missing=
for v in create_qp_raw create_qp_rss create_flow destroy_flow; do
	read -r calls okn _ <<<"$(verb_row "$out" "$v")"
	[ "${okn:-0}" -gt 0 ] || missing+=" $v"
done
# What a run of ROOT_SECS reaches depends on how fast the guest runs (a
# wall-clock bound): said, not asserted.  verbs_fault creates raw packet
# and RSS QPs, fault by fault, whatever the speed.
if [ -z "$missing" ]; then
	echo "# fuzz: verbs_fuzz (root) reached raw packet QPs, RSS QPs and flows"
else
	echo "# fuzz: verbs_fuzz (root) did not get to:$missing in $ROOT_SECS s"
fi
pingpong "the fuzz as root"

# The counts make check repeats: sequences, and the verbs and object types
# that were reached (succeeded at least once) in either run.
seqs=0
for f in "${user_outs[@]}" "$root_out"; do
	s=$(awk '$1 == "verbs_fuzz:" && $3 == "sequences," { print $2; exit }' "$f")
	seqs=$((seqs + ${s:-0}))
done
reached=$(awk '$1 == "verbs_fuzz:" && NF == 5 && $3 ~ /^[0-9]+$/ && $4 > 0 { print $2 }' \
	"${user_outs[@]}" "$root_out" | sort -u)
nv=$(awk '$1 == "verbs_fuzz:" && NF == 5 && $3 ~ /^[0-9]+$/ { print $2 }' "$user_out" | sort -u | wc -l)
types=$(echo "$reached" | sed -n 's/^\(alloc\|create\|open\|reg\)_//p' | sort -u | tr '\n' ' ')
echo "# fuzz(verbs): $seqs sequences (seed $SEED nobody ${SECS} s, $rseed root ${ROOT_SECS} s); $(echo "$reached" | wc -w) of $nv verbs reached; objects: $types"

# --- fault injection on every create path -------------------------------------
fi_dir=/sys/kernel/debug
[ -d $fi_dir/failslab ] || mount -t debugfs none $fi_dir 2>/dev/null
if [ ! -e /proc/self/fail-nth ] || [ ! -d $fi_dir/failslab ] || [ ! -d $fi_dir/fail_page_alloc ]; then
	if [ "${SHCA_KFLAVOUR:-}" = test ]; then
		not_ok "fault injection available on the test kernel" \
			"no /proc/self/fail-nth or $fi_dir/failslab, fail_page_alloc"
	else
		# the fixture, the create paths and the restrack check, once
		# each, no fault injected
		out=$TMPDIR/fault-dry.out
		# shellcheck disable=SC2086
		$NA "$fault" "$DA" "$GA4" -d >"$out" 2>&1
		rc=$?
		tap_relay "$out"
		[ $rc = 0 ] || not_ok "verbs_fault -d exit status" "$rc"
		ok "fault injection # SKIP $(uname -r) has no CONFIG_FAULT_INJECTION (failslab, fail_page_alloc, fail-nth)"
	fi
else
	# fail-nth overrides probability, interval and times; sleeping
	# (GFP_KERNEL) allocations must be failed too; verbose 0: no stack
	# dump per fault on the serial console.  Pages of order 1 and up
	# only: a failed order-0 page is, among others, a page table that
	# remap_pfn_range() allocates while the provider maps a ring, and
	# Linux 6.1 mishandles that failure (its error path zaps the range
	# and untrack_pfn() WARNs in arch/x86/mm/pat/memtype.c, whichever
	# driver maps; seen once, as the mapping's address decides whether
	# a page table is needed).  Order-0 pages that shca allocates fail
	# where larger ones do (the same unwinding), and slab allocations
	# all fail as before.
	for k in failslab fail_page_alloc; do
		echo N >$fi_dir/$k/ignore-gfp-wait
		echo 0 >$fi_dir/$k/verbose
	done
	echo 1 >$fi_dir/fail_page_alloc/min-order
	out=$TMPDIR/fault.out
	t0=$SECONDS
	# shellcheck disable=SC2086
	$NA "$fault" "$DA" "$GA4" -m "$MAXN" >"$out" 2>&1
	rc=$?
	echo "# fuzz: verbs_fault: $((SECONDS - t0)) s"
	for k in failslab fail_page_alloc; do
		echo Y >$fi_dir/$k/ignore-gfp-wait
	done
	tap_relay "$out"
	[ $rc = 0 ] || not_ok "verbs_fault exit status" "$rc"
	# kmemleak's own allocations can be failed too, and it turns itself
	# off then: the leak check after the run would be empty
	kl=$fi_dir/kmemleak
	if [ -e $kl ]; then
		if cat $kl >/dev/null 2>&1; then
			ok "kmemleak still on after the faults"
		else
			not_ok "kmemleak still on after the faults" "$(dmesg | grep -m2 'kmemleak:' | tr '\n' ' ')"
		fi
	fi
	n=$(awk '$1 == "verbs_fault:" && $2 == "total" { print $3 }' "$out")
	nverb=$(grep -c '^ok - fault: .* faults, each failed cleanly' "$out")
	echo "# fuzz(faults): ${n:-0} faults injected over $nverb create paths (each failed cleanly, nothing left behind)"
	pingpong "fault injection"
fi

path_check auto "the pair's messages" "$DA" "$DB"
pair_teardown
# rmmod, not modprobe -r: ib_core and ib_uverbs stay loaded, so that a
# kmemleak report (vm-run scans after the command) names their functions
check "unload shca (nothing left behind)" rmmod shca
e2e_finish
