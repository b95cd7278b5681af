#!/bin/bash
# rdma-core's whole pyverbs test suite (every module tests/run_tests.py
# loads) on shca0 and then, for what shca0 did not pass, on rdma_rxe, both
# bound to the same veth with an IPv4 address and IPv6 link-local only.
# Runs inside the VM.
#
# The tests send over GID 0, the default (link-local) GID.  On a device
# with the device/net/<ifname> link (shca; rxe lacks it) every test's
# setUp asks `ls` and `ip addr` once per GID; pyverbs-run.py memoizes
# both, and the veth has no global IPv6 address (two GIDs, not three).
# IPv6 stays on: the default GID needs the link-local route.
#
# shca goes first and records its outcomes.  The suite fails for every
# test that was ok on rxe and is not ok on shca (unless listed in
# progs/pyverbs-needs.txt), and for any RDMA CM, XRC or tag matching test
# that skips on shca (rxe has neither XRC nor tag matching: those tests
# skip there).  Only rxe's outcome of a test shca did not pass can fail
# it, so rxe runs just those, and a few canaries that must pass there (a
# baseline without a pass is a broken rxe, and fails the comparison):
# minutes of rxe's traffic under TCG saved.  Each test is seeded from its
# id (pyverbs-run.py), so a subset draws what a whole run would.
# Arguments (ad hoc runs): module names, e.g. test_qpex; default: all.
set -u
E2E_SUITE=pyverbs
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

ip link add pv0 type veth peer name pv1
ip link set pv0 up; ip link set pv1 up
ip addr add 10.97.0.1/24 dev pv0
rxe_rec=$TMPDIR/pyverbs-rxe0.txt
shca_rec=$TMPDIR/pyverbs-shca0.txt
rm -f "$rxe_rec" "$shca_rec"
needs=$here/progs/pyverbs-needs.txt

# --- shca0: every selected test
start=$SECONDS
modprobe shca
rdma link add shca0 type shca netdev pv0
wait_for 90 port_active shca0
wait_for 90 rdma_gid shca0 ffff:0a61:0001
must=()
case " $* " in "  " | *" test_rdmacm "*) must=(--must-run tests.test_rdmacm) ;; esac
# rdma-core's XRC tests skip on rxe (no XRC there), so the comparison
# cannot demand them: on shca (IBV_DEVICE_XRC) they must run (test_odp's
# with the ODP tests below).  MODULE:PREFIX, the same in 44 and 56.
xrc=(test_qpex:tests.test_qpex.QpExTestCase.test_qp_ex_xrc
	test_atomic:tests.test_atomic.AtomicTest.test_xrc
	test_cqex:tests.test_cqex.CqExTestCase.test_xrc
	test_relaxed_ordering:tests.test_relaxed_ordering.RoTestCase.test_ro_xrc)
# Tag matching: rdma-core's TMTest skips without IBV_TM_CAP_RC (rxe has
# none, so the comparison cannot demand it either); shca advertises it.
tm=(test_tag_matching:tests.test_tag_matching.TMTest.test_tm_traffic
	test_tag_matching:tests.test_tag_matching.TMTest.test_tm_unexpected_tag
	test_tag_matching:tests.test_tag_matching.TMTest.test_tm_no_tag
	test_tag_matching:tests.test_tag_matching.TMTest.test_tm_rndv)
# RAW_PACKET QPs, flow steering and RSS: rxe has none of them (the tests
# skip there); shca has all, so every one must run: test_flow's five spec
# tests, test_rss_traffic, and test_qp's raw QP creation (legacy and
# extended, with and without attributes) and query.
raw=(test_flow:tests.test_flow.FlowTest
	test_rss_traffic:tests.test_rss_traffic.RSSTrafficTest
	test_qp:tests.test_qp.QPTest.test_create_raw_qp_no_attr
	test_qp:tests.test_qp.QPTest.test_create_raw_qp_with_attr
	test_qp:tests.test_qp.QPTest.test_create_raw_qp_ex_no_attr
	test_qp:tests.test_qp.QPTest.test_create_raw_qp_ex_with_attr
	test_qp:tests.test_qp.QPTest.test_query_raw_qp)
# On-demand paging: rxe advertises none on Debian's 6.1 and 6.12 (its
# test_odp tests skip: "No ODP caps"), so the comparison cannot demand
# these either; shca advertises explicit and implicit ODP on every
# transport and ibv_advise_mr, so each test of them in both releases must
# run (but the huge page ones, which skip where the boot has no 2 MiB
# pages).
odp=()
for t in rc_traffic rc_atomic_cmp_and_swp rc_atomic_fetch_and_add \
	rc_rdma_read rc_rdma_write ud_traffic xrc_traffic \
	implicit_rc_traffic implicit_sync_prefetch_rc_traffic \
	implicit_async_prefetch_rc_traffic \
	sync_prefetch_rc_traffic async_prefetch_rc_traffic \
	prefetch_sync_no_page_fault_rc_traffic \
	prefetch_async_no_page_fault_rc_traffic; do
	odp+=("test_odp:tests.test_odp.OdpTestCase.test_odp_$t")
done
for x in "${xrc[@]}" "${tm[@]}" "${raw[@]}" "${odp[@]}"; do
	case " $* " in "  " | *" ${x%%:*} "*) must+=(--must-run "${x#*:}") ;; esac
done
rc=0
exits_ok "pyverbs-run.py exits 0" /usr/bin/python3 "$here/progs/pyverbs-run.py" \
	--dev shca0 --needs "$needs" --record "$shca_rec" "${must[@]}" "$@" || rc=$?
path_check auto "shca0's messages (pyverbs' traffic)" shca0 || rc=1
rdma link delete shca0
modprobe -r shca
echo "# pyverbs: shca0 took $((SECONDS - start)) s"

# --- rxe0: what shca0 did not pass, and the canaries
# rxe's outcomes depend only on the kernel, rdma-core's tests, the runner
# and the seed: they are cached per test under that key, and only the
# tests the cache lacks run.  $SHCA_PYVERBS_CACHE (a host directory,
# read-only here) holds earlier records; the merged one goes to
# $SHCA_OUT/pyverbs-baseline/ for the host to keep (scripts/check.sh).
# Canaries: a test of each kind that passes on rxe (device query, RC, UD
# and XRC-free CQ-ex traffic, RDMA CM), present in rdma-core 44 and 56.
canaries=(tests.test_device.DeviceTest.test_query_device
	tests.test_cqex.CqExTestCase.test_rc_traffic_cq_ex
	tests.test_cqex.CqExTestCase.test_ud_traffic_cq_ex
	tests.test_rdmacm.CMTestCase.test_rdmacm_sync_traffic)
key=$( {
	echo "per-test v2"
	uname -r
	dpkg-query -W -f='${Version}\n' python3-pyverbs
	cat "$here/progs/pyverbs-run.py"
	echo "seed ${SHCA_PYVERBS_SEED:-4791}"
} | sha256sum | cut -c1-16)
cached=${SHCA_PYVERBS_CACHE:-/nonexistent}/rxe-$key.rec
fresh=${SHCA_OUT:-$TMPDIR}/pyverbs-baseline
# An earlier run in this boot (pyverbs, then pyverbs@wire) left a fresher one.
[ -s "$fresh/rxe-$key.rec" ] && cached=$fresh/rxe-$key.rec
start=$SECONDS
ask=$TMPDIR/pyverbs-ask.txt missing=$TMPDIR/pyverbs-missing.txt
if [ -s "$shca_rec" ]; then
	{ awk '$1 != "ok" && $1 !~ /^#/ { print $2 }' "$shca_rec"
	  printf '%s\n' "${canaries[@]}"; } | sort -u >"$ask"
	if [ -s "$cached" ]; then
		cp "$cached" "$rxe_rec"
	else
		echo "# device rxe0" >"$rxe_rec"
	fi
	awk 'NR == FNR { if ($1 !~ /^#/) have[$2] = 1; next } !($1 in have)' \
		"$rxe_rec" "$ask" >"$missing"
	echo "# pyverbs: rxe0 baseline: $(wc -l <"$ask") tests asked, $(wc -l <"$missing") not in the cache"
	if [ -s "$missing" ]; then
		if modprobe rdma_rxe && rdma link add rxe0 type rxe netdev pv0 &&
			wait_for 90 port_active rxe0; then
			/usr/bin/python3 "$here/progs/pyverbs-run.py" --dev rxe0 --baseline \
				--only "$missing" --record "$TMPDIR/pyverbs-rxe0-new.txt" "$@"
			rdma link delete rxe0
		else
			echo "# rxe baseline unavailable"
		fi
		modprobe -r rdma_rxe
		# the record is written only by a run that finished
		if [ -s "$TMPDIR/pyverbs-rxe0-new.txt" ]; then
			{ echo "# device rxe0"
			  grep -hv '^#' "$rxe_rec" "$TMPDIR/pyverbs-rxe0-new.txt" |
				awk '{ s[$2] = $1 } END { for (t in s) print s[t], t }' | sort -k2
			} >"$rxe_rec.merged"
			mv "$rxe_rec.merged" "$rxe_rec"
			mkdir -p "$fresh"
			cp "$rxe_rec" "$fresh/rxe-$key.rec"
		fi
	fi
	echo "# pyverbs(rxe0): $(grep -vc '^#' "$rxe_rec") tests on record, $(grep -c '^ok ' "$rxe_rec") ok"
fi
echo "# pyverbs: rxe0 took $((SECONDS - start)) s"
exits_ok "shca0 passes what rxe0 passes" /usr/bin/python3 "$here/progs/pyverbs-run.py" \
	--dev shca0 --needs "$needs" --outcome "$shca_rec" --compare "$rxe_rec" || rc=1
ip link del pv0
exit $rc
