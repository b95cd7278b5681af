#!/usr/bin/env python3
"""Strict parser for KUnit KTAP output found in a kernel log.

Reads a dmesg/console/kmsg dump (file or stdin), extracts the KTAP that KUnit
prints when a module with kunit_test_suites() is loaded (Linux 6.1 format:
suites at indent 4, parameterised cases at indent 8, suite results at indent
0, no top-level header), and prints

    ok suite.case
    not ok suite.case
    skip suite.case  # reason
    ...
    kunit: N passed, N failed[ (N skipped)]

Structural problems (suite opened but never finished, plan/result count
mismatch, suite result disagreeing with its cases, result without a suite)
are reported as "kunit: error: ..." and make the run fail.

Exit status: 0 if at least one case ran and none failed and there were no
errors, 1 otherwise.

--ktap FILE writes the extracted, normalised KTAP (timestamps stripped,
suites renumbered, top-level "KTAP version 1" + plan added) so it can be fed
to tools/testing/kunit/kunit.py parse as a cross-check.
"""
import argparse
import re
import sys

# Log line prefixes: "[    1.234567] ", "<6>[    1.2] ", "[    1.2][  T12] ",
# "<6>", kmsg "6,123,456,-;".
PREFIX_RE = re.compile(
    r'^\d+,\d+,\d+,[^;]*;'
    r'|^(?:<\d+>)?(?:\[\s*\d+\.\d+\](?:\[\s*[TC]\d+\])? ?)?')
KTAP_VER_RE = re.compile(r'^(\s*)(?:K?TAP) version \d+\s*$')
SUBTEST_RE = re.compile(r'^(\s*)# Subtest: (\S+)\s*$')
PLAN_RE = re.compile(r'^(\s*)1\.\.(\d+)\s*$')
RESULT_RE = re.compile(
    r'^(\s*)(ok|not ok) (\d+)(?: -)? ([^#]*?)\s*(?:#\s*(?:(SKIP|TODO)\b)?\s*(.*?))?\s*$')
DIAG_RE = re.compile(r'^(\s*)#')

MAX_LOG_LINES = 60


class Group:
    def __init__(self, indent, name, lineno):
        self.indent = indent
        self.name = name
        self.lineno = lineno
        self.plan = None
        self.results = []      # (name, status, reason, loglines)
        self.pending_log = []
        self.ktap = []         # normalised KTAP lines of this group
        self.unfinished = False


def strip_prefix(line):
    line = line.rstrip('\r\n').rstrip()
    return PREFIX_RE.sub('', line, count=1).replace('\t', '    ')


def status_of(okword, directive):
    if directive == 'SKIP':
        return 'skip'
    return 'ok' if okword == 'ok' else 'not ok'


def parse(lines):
    stack = []          # open groups, innermost last
    suites = []         # finished top-level suites: (Group, status, reason)
    errors = []
    orphan_log = []
    for lineno, raw in enumerate(lines, 1):
        line = strip_prefix(raw)
        m = SUBTEST_RE.match(line)
        if m:
            indent = len(m.group(1))
            # A new top-level suite while another is still open at the same
            # or deeper indent means the previous one never finished.
            while stack and stack[-1].indent >= indent:
                g = stack.pop()
                errors.append('%s (line %d) never reported its result'
                              % ('.'.join([x.name for x in stack] + [g.name]),
                                 g.lineno))
            g = Group(indent, m.group(2), lineno)
            g.ktap.append(' ' * indent + 'KTAP version 1')
            g.ktap.append(line)
            stack.append(g)
            continue
        if KTAP_VER_RE.match(line):
            continue
        m = PLAN_RE.match(line)
        if m and stack and len(m.group(1)) == stack[-1].indent:
            stack[-1].plan = int(m.group(2))
            stack[-1].ktap.append(line)
            continue
        m = RESULT_RE.match(line)
        if m:
            indent = len(m.group(1))
            okword, name = m.group(2), m.group(4).strip()
            directive, reason = m.group(5), (m.group(6) or '').strip()
            st = status_of(okword, directive)
            if stack and stack[-1].indent == indent:
                # a case (or parameter) inside the innermost group
                g = stack[-1]
                g.results.append((name, st, reason, g.pending_log))
                g.pending_log = []
                g.ktap.append(line)
                continue
            if stack and stack[-1].indent == indent + 4:
                # closes the innermost group
                g = stack.pop()
                if name != g.name:
                    errors.append('result "%s" closes subtest "%s" (line %d)'
                                  % (name, g.name, lineno))
                if g.plan is not None and g.plan != len(g.results):
                    errors.append('%s: plan 1..%d but %d results'
                                  % (g.name, g.plan, len(g.results)))
                g.ktap.append(line)
                if stack:
                    # parameterised case: becomes a case of the parent
                    p = stack[-1]
                    p.results.append((name, st, reason,
                                      p.pending_log + g.pending_log,
                                      ) + ((g.results,) if g.results else ()))
                    p.pending_log = []
                    p.ktap.extend(g.ktap)
                else:
                    suites.append((g, st, reason))
                continue
            if not stack and indent == 0:
                errors.append('line %d: result "%s" outside any suite'
                              % (lineno, line.strip()))
                continue
            # Anything else with a result shape at an odd indent: treat as log.
        if stack:
            stack[-1].pending_log.append(line)
            if DIAG_RE.match(line):
                stack[-1].ktap.append(line)
        else:
            orphan_log.append(line)
    while stack:
        g = stack.pop()
        errors.append('subtest "%s" (line %d) never finished (crash or '
                      'truncated log?)' % (g.name, g.lineno))
        g.unfinished = True
        if stack:
            stack[-1].results.append((g.name, 'not ok', 'did not finish',
                                      g.pending_log, g.results))
        else:
            suites.append((g, 'not ok', 'did not finish'))
    return suites, errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('log', nargs='?', help='kernel log (default: stdin)')
    ap.add_argument('--ktap', help='write normalised KTAP here')
    ap.add_argument('--quiet-logs', action='store_true',
                    help="don't print the log lines of failed cases")
    args = ap.parse_args()
    if args.log:
        with open(args.log, errors='backslashreplace') as f:
            lines = f.readlines()
    else:
        sys.stdin.reconfigure(errors='backslashreplace')
        lines = sys.stdin.readlines()

    suites, errors = parse(lines)
    passed = failed = skipped = 0
    for g, st, reason in suites:
        case_failed = False
        for res in g.results:
            name, cst, creason, log = res[:4]
            params = res[4] if len(res) > 4 else []
            full = '%s.%s' % (g.name, name)
            if g.unfinished and not log and cst == 'not ok':
                log = ['(no result line: the suite did not finish)']
            if cst == 'ok':
                passed += 1
                print('ok %s' % full)
            elif cst == 'skip':
                skipped += 1
                print('skip %s%s' % (full, '  # ' + creason if creason else ''))
            else:
                failed += 1
                case_failed = True
                print('not ok %s' % full)
                for pname, pst, preason, plog in params:
                    if pst == 'not ok':
                        print('    not ok %s.%s' % (full, pname))
                if not args.quiet_logs:
                    shown = log[-MAX_LOG_LINES:]
                    if len(log) > len(shown):  # noqa
                        print('    ... (%d earlier lines)' % (len(log) - len(shown)))
                    for l in shown:
                        print('    | ' + l)
        if st == 'not ok' and not case_failed:
            # e.g. suite_init failed: no case failed but the suite did
            failed += 1
            print('not ok %s  # suite failed%s' % (g.name, ': ' + reason if reason else ''))
        elif st != 'not ok' and case_failed:
            errors.append('suite %s reported "%s" although a case failed'
                          % (g.name, st))
    for e in errors:
        print('kunit: error: %s' % e)
    if not suites:
        hint = ''
        if any('kunit: disabled' in l for l in lines):
            hint = ' ("kunit: disabled": boot with kunit.enable=1 or build ' \
                   'with CONFIG_KUNIT_DEFAULT_ENABLED=y)'
        print('kunit: error: no KUnit suites found in the log' + hint)

    if args.ktap:
        with open(args.ktap, 'w') as f:
            f.write('KTAP version 1\n1..%d\n' % len(suites))
            for i, (g, st, reason) in enumerate(suites, 1):
                for l in (g.ktap if g.unfinished else g.ktap[:-1]):
                    f.write(l + '\n')
                d = ' # SKIP %s' % reason if st == 'skip' else ''
                f.write('%s %d %s%s\n' % ('not ok' if st == 'not ok' else 'ok',
                                          i, g.name, d))

    extra = ' (%d skipped)' % skipped if skipped else ''
    print('kunit: %d passed, %d failed%s' % (passed, failed, extra))
    ok = suites and (passed + skipped) > 0 and failed == 0 and not errors
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
