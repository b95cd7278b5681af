#!/bin/bash
# In-VM end-to-end driver: runs every suite and exits non-zero if any case
# failed.  Invoked by scripts/check.sh through scripts/vm-run.
#   SHCA_E2E_SUITES="ud rc ..." runs a subset (ad hoc runs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
export TMPDIR=${TMPDIR:-/tmp}
rc=0
echo "# e2e on $(uname -r)"
for s in ${SHCA_E2E_SUITES:-lifecycle devinfo udata ud rc interop netem pyverbs}; do
	start=$SECONDS
	"$here/$s.sh" || rc=1
	echo "# suite $s took $((SECONDS - start)) s"
done
exit $rc
