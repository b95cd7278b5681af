#!/bin/bash
# Completion vectors, CQ moderation and UD multicast: the provider's
# vm_events program (built on the host by `make -C providers/shca vm_events`).
exec "$(dirname "$0")/../../providers/shca/tests/vm_events.sh" "$@"
