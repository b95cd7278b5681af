#!/bin/bash
# In-VM end-to-end driver: runs every suite and exits non-zero if any case
# failed.  Invoked by scripts/check.sh through scripts/vm-run.
#   SHCA_E2E_SUITES="ud rc ..." runs a subset (ad hoc runs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
export TMPDIR=${TMPDIR:-/tmp}
rc=0
failed=
echo "# e2e on $(uname -r)"
# The rxe suites move veth-b into init_net (rxe on 6.1 lives only there):
# interop moves it back, rc-req-rxe and rc-resp-rxe run last.
SUITES="lifecycle devinfo udata ud events rc srq hostile pyverbs mw nvmeof rc-resp-fuzz interop netem"
SUITES="$SUITES rc-req-rxe rc-resp-rxe"
# rc-req-rxe: byte-verified requester cases, clean and under netem loss
export SHCA_TESTS=${SHCA_TESTS:-verify verifyloss}
for s in ${SHCA_E2E_SUITES:-$SUITES}; do
	start=$SECONDS
	if ! "$here/$s.sh"; then
		rc=1
		failed="$failed $s"
	fi
	echo "# suite $s took $((SECONDS - start)) s"
done
[ $rc -eq 0 ] || echo "# e2e: failed suites:${failed}"
exit $rc
