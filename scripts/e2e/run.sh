#!/bin/bash
# In-VM end-to-end driver: runs every suite and exits non-zero if any case
# failed.  Invoked by scripts/check.sh through scripts/vm-run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
export TMPDIR=${TMPDIR:-/tmp}
rc=0
echo "# e2e on $(uname -r)"
"$here/lifecycle.sh" || rc=1
"$here/devinfo.sh" || rc=1
"$here/udata.sh" || rc=1
"$here/ud.sh" || rc=1
"$here/pyverbs.sh" || rc=1
exit $rc
