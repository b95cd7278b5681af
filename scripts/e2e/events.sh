#!/bin/bash
# Completion vectors, CQ moderation and UD multicast: the provider's
# vm_events program (built on the host by `make -C scripts/e2e/progs`).
exec "$(dirname "$0")/progs/vm_events.sh" "$@"
