#!/bin/bash
# readme-check.sh: every command the README shows is one that make check
# runs, so that none of them can go stale unnoticed.
#
#   scripts/readme-check.sh [README]     (default: the repo's README)
#
# A command is a README line indented by blanks whose text starts with
# "$ "; the command is the rest of the line, without a trailing comment
# set off by two or more blanks ("    $ make demo    # a VM").  It passes
#   - `make T...`: when each T is a target the Makefile defines (make
#     check itself runs the scripts behind them: demo.sh, deb-build.sh, ...);
#   - anything else: when its exact text stands whole (its neighbours on
#     the line are the line's ends, blanks, quotes or shell punctuation) on
#     a line that is not a comment, an echo/printf or a case's report (lib.sh's
#     ok/not_ok, or the NAME of check/check_fails/exits_ok/expect_eq), in one
#     of the scripts make check executes:
#       on the host: scripts/check.sh and what it runs: scripts/deps.sh,
#         scripts/rdma-core.sh, scripts/testkernel.sh, scripts/run-kunit.sh,
#         scripts/dkms-check.sh, scripts/dkms-root.sh, scripts/debian-root.sh,
#         scripts/deb-build.sh, scripts/pkg-install-test.sh, scripts/vm-run;
#       in the VMs: scripts/vm/guest.sh, scripts/e2e/run.sh, scripts/e2e/lib.sh,
#         scripts/e2e/pkg.sh (pkg-install-test.sh's boot) and every suite
#         scripts/e2e/matrix runs in tier check (scripts/e2e/NAME.sh; the
#         step demo is scripts/demo.sh, kunit scripts/kunit/vm-inner.sh).
#     (dkms, vm-selftest and the package tests, pkg.sh among them, run when
#     their inputs changed since they last passed: always on a fresh
#     machine, and again whenever the script holding the command changes.)
# Prints each command that fails, with its README line, and at the end
# "readme-check: N commands, all run by make check"; exits 1 if any failed
# (or if the README shows no command at all).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd -P)
readme=${1:-$top/README}
[ -f "$readme" ] || { echo "readme-check: no such file: $readme" >&2; exit 2; }

# The scripts make check executes (above), as paths under $top.
scripts=(scripts/check.sh scripts/deps.sh scripts/rdma-core.sh scripts/testkernel.sh
	scripts/run-kunit.sh scripts/dkms-check.sh scripts/dkms-root.sh
	scripts/debian-root.sh scripts/deb-build.sh scripts/pkg-install-test.sh
	scripts/vm-run scripts/vm/guest.sh scripts/e2e/run.sh scripts/e2e/lib.sh
	scripts/e2e/pkg.sh)
while read -r step; do
	case "$step" in
	demo) scripts+=(scripts/demo.sh) ;;
	kunit) scripts+=(scripts/kunit/vm-inner.sh) ;;
	*) scripts+=("scripts/e2e/$step.sh") ;;
	esac
done < <(awk '$1 == "check" { for (i = 3; i <= NF; i++) print $i }' "$top/scripts/e2e/matrix" |
	sed 's/[:@].*//' | sort -u)
for f in "${scripts[@]}"; do
	[ -f "$top/$f" ] || { echo "readme-check: $f (make check runs it) is missing" >&2; exit 2; }
done

# make_ok CMD: CMD is `make T...` and the Makefile defines every T.
make_ok() {
	local words t
	read -r -a words <<<"$1"
	[ "${words[0]}" = make ] && [ ${#words[@]} -gt 1 ] || return 1
	for t in "${words[@]:1}"; do
		[[ $t =~ ^[A-Za-z0-9_.-]+$ ]] || return 1
		grep -qE "^${t//./\\.}:" "$top/Makefile" || return 1
	done
}

# run_by CMD: the first "script:line" of the scripts above where CMD stands whole.
run_by() {
	(cd "$top" && CMD=$1 awk '
		function whole(line, cmd,   p, off, rest, pre, post) {
			off = 0
			rest = line
			while ((p = index(rest, cmd)) > 0) {
				p += off
				pre = p > 1 ? substr(line, p - 1, 1) : ""
				post = substr(line, p + length(cmd), 1)
				if (pre ~ /^([ \t"'\''(;|&`]|)$/ && post ~ /^([ \t"'\'');|&<>\\]|)$/)
					return 1
				off = p
				rest = substr(line, p + 1)
			}
			return 0
		}
		FNR == 1 { cmd = ENVIRON["CMD"] }
		/^[ \t]*(#|echo[ \t]|printf[ \t]|ok[ \t]|not_ok[ \t])/ { next }
		{
			line = $0
			# a case name (lib.sh: check "NAME" CMD...) is not a command
			sub(/^[ \t]*(check|check_fails|exits_ok|expect_eq)[ \t]+"[^"]*"/, "", line)
		}
		whole(line, cmd) { print FILENAME ":" FNR; found = 1; exit }
		END { exit !found }' "${scripts[@]}")
}

n=0
bad=0
lineno=0
while IFS= read -r line; do
	lineno=$((lineno + 1))
	[[ $line =~ ^[[:blank:]]+\$\ (.*)$ ]] || continue
	cmd=${BASH_REMATCH[1]}
	cmd=$(sed -E 's/[[:blank:]]{2,}#.*$//; s/[[:blank:]]+$//' <<<"$cmd")
	n=$((n + 1))
	if make_ok "$cmd"; then
		echo "ok - ${readme##*/}:$lineno: $cmd (a Makefile target)"
	elif where=$(run_by "$cmd"); then
		echo "ok - ${readme##*/}:$lineno: $cmd ($where)"
	else
		echo "not ok - ${readme##*/}:$lineno: $cmd: make check runs no such command" \
			"(neither a Makefile target nor found in ${#scripts[@]} scripts: scripts/readme-check.sh's header)"
		bad=$((bad + 1))
	fi
done <"$readme"

if [ "$n" = 0 ]; then
	echo "readme-check: no \"\$ \" command lines in $readme" >&2
	exit 1
fi
if [ "$bad" -gt 0 ]; then
	echo "readme-check: $bad of $n commands not run by make check"
	exit 1
fi
echo "readme-check: $n commands, all run by make check"
