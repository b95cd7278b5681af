#!/bin/bash
# rdma-core's whole pyverbs test suite (every module tests/run_tests.py
# loads) on rdma_rxe and then on shca0, both bound to the same veth with
# an IPv4 address and IPv6 link-local only.  Runs inside the VM.
#
# The tests send over GID 0, the default (link-local) GID.  On a device
# with the device/net/<ifname> link (shca; rxe lacks it) every test's
# setUp asks `ls` and `ip addr` once per GID; pyverbs-run.py memoizes
# both, and the veth has no global IPv6 address (two GIDs, not three).
# IPv6 stays on: the default GID needs the link-local route.
#
# rxe goes first and records its outcomes; the shca run then fails for
# every test that was ok on rxe and is not ok on shca (unless listed in
# progs/pyverbs-needs.txt), and for any RDMA CM, XRC or tag matching test
# that skips on shca (rxe has neither XRC nor tag matching: those tests
# skip there).
# Arguments (ad hoc runs): module names, e.g. test_qpex; default: all.
set -u
E2E_SUITE=pyverbs
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

ip link add pv0 type veth peer name pv1
ip link set pv0 up; ip link set pv1 up
ip addr add 10.97.0.1/24 dev pv0
rxe_rec=$TMPDIR/pyverbs-rxe0.txt
rm -f "$rxe_rec"

# The rxe baseline depends only on the kernel, rdma-core's tests, this
# suite's scripts (up to the shca run: what only the shca run uses, such
# as the must-run lists, can change without a new baseline), the seed and
# the arguments: it is cached under that key.
# $SHCA_PYVERBS_CACHE (a host directory, read-only here) holds earlier
# baselines; a new one goes to $SHCA_OUT/pyverbs-baseline/ for the host to
# keep (scripts/check.sh).
key=$( {
	uname -r
	dpkg-query -W -f='${Version}\n' python3-pyverbs
	cat "$here/progs/pyverbs-run.py"
	sed '/^# --- the shca run/,$d' "$0"
	echo "seed ${SHCA_PYVERBS_SEED:-4791} args $*"
} | sha256sum | cut -c1-16)
cached=${SHCA_PYVERBS_CACHE:-/nonexistent}/rxe-$key
fresh=${SHCA_OUT:-$TMPDIR}/pyverbs-baseline

# rxe's own failures never fail this suite; what it passes, shca must.
# An earlier run in this boot (pyverbs, then pyverbs@wire) left a fresh one.
start=$SECONDS
[ -s "$cached.rec" ] || cached=$fresh/rxe-$key
if [ -s "$cached.rec" ] && [ -s "$cached.summary" ]; then
	cp "$cached.rec" "$rxe_rec"
	echo "# pyverbs: rxe baseline from the cache ($cached.rec)"
	sed 's/$/ (cached baseline)/' "$cached.summary"
elif modprobe rdma_rxe && rdma link add rxe0 type rxe netdev pv0 &&
	wait_for 90 port_active rxe0; then
	/usr/bin/python3 "$here/progs/pyverbs-run.py" --dev rxe0 --baseline \
		--record "$rxe_rec" "$@" | tee "$TMPDIR/pyverbs-rxe0.out"
	rdma link delete rxe0
	modprobe -r rdma_rxe
	if [ -s "$rxe_rec" ] && grep -q '^# pyverbs(rxe0)' "$TMPDIR/pyverbs-rxe0.out"; then
		mkdir -p "$fresh"
		cp "$rxe_rec" "$fresh/rxe-$key.rec"
		grep '^# pyverbs(rxe0)' "$TMPDIR/pyverbs-rxe0.out" >"$fresh/rxe-$key.summary"
	fi
else
	echo "# rxe baseline unavailable"
fi
echo "# pyverbs: rxe0 took $((SECONDS - start)) s"

# --- the shca run (not part of the rxe baseline's cache key) ---
start=$SECONDS
modprobe shca
rdma link add shca0 type shca netdev pv0
wait_for 90 port_active shca0
wait_for 90 rdma_gid shca0 ffff:0a61:0001
must=()
case " $* " in "  " | *" test_rdmacm "*) must=(--must-run tests.test_rdmacm) ;; esac
# rdma-core's XRC tests skip on rxe (no XRC there), so the comparison
# cannot demand them: on shca (IBV_DEVICE_XRC) they must run (all but
# test_odp's, which needs ODP).  MODULE:PREFIX, the same in 44 and 56.
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
for x in "${xrc[@]}" "${tm[@]}" "${raw[@]}"; do
	case " $* " in "  " | *" ${x%%:*} "*) must+=(--must-run "${x#*:}") ;; esac
done
rc=0
exits_ok "pyverbs-run.py exits 0" /usr/bin/python3 "$here/progs/pyverbs-run.py" \
	--dev shca0 --needs "$here/progs/pyverbs-needs.txt" --compare "$rxe_rec" \
	"${must[@]}" "$@" || rc=$?
path_check auto "shca0's messages (pyverbs' traffic)" shca0 || rc=1
rdma link delete shca0
modprobe -r shca
echo "# pyverbs: shca0 took $((SECONDS - start)) s"
ip link del pv0
exit $rc
