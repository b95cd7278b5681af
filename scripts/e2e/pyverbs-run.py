#!/usr/bin/python3
"""Run rdma-core's pyverbs test modules against one RDMA device.

Copies the test suite shipped by python3-pyverbs (gzip'ed .py files under
/usr/share/doc/rdma-core/tests) into a scratch directory, runs the selected
modules with --dev, and prints one TAP-like line per test plus a summary.

Tests listed in the --needs file are reported as skipped with the reason
given there (features a later issue delivers) instead of being run.  The
list is exact test ids; an id that does not exist is an error, so the list
cannot silently rot.

Exit status: 0 when nothing failed or errored, 1 otherwise.
"""
import argparse
import gzip
import os
import shutil
import sys
import tempfile
import unittest

SRC = '/usr/share/doc/rdma-core/tests'


def stage_tests(dst):
    pkg = os.path.join(dst, 'tests')
    os.makedirs(pkg)
    for name in os.listdir(SRC):
        src = os.path.join(SRC, name)
        if name.endswith('.py.gz'):
            with gzip.open(src, 'rb') as f_in, \
                    open(os.path.join(pkg, name[:-3]), 'wb') as f_out:
                shutil.copyfileobj(f_in, f_out)
        elif name.endswith('.py'):
            shutil.copy(src, pkg)
    return pkg


def read_needs(path):
    needs = {}
    if not path:
        return needs
    with open(path) as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if line:
                test_id, _, reason = line.partition(' ')
                needs[test_id] = reason.strip() or 'not implemented yet'
    return needs


def iter_tests(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from iter_tests(item)
        else:
            yield item


class Result(unittest.TextTestResult):
    def _line(self, status, test, why=''):
        tail = f' # {why}' if why else ''
        lead = f'# baseline {status}' if BASELINE else status
        self.stream.writeln(f'{lead} - pyverbs({DEV}): {test.id()}{tail}')
        self.stream.flush()

    def addSuccess(self, test):
        unittest.TestResult.addSuccess(self, test)
        self._line('ok', test)

    def addSkip(self, test, reason):
        unittest.TestResult.addSkip(self, test, reason)
        self._line('ok', test, f'SKIP {reason}')

    def addFailure(self, test, err):
        unittest.TestResult.addFailure(self, test, err)
        self._line('not ok', test, 'FAIL')
        self.stream.writeln(self._exc_info_to_string(err, test))

    def addError(self, test, err):
        unittest.TestResult.addError(self, test, err)
        self._line('not ok', test, 'ERROR')
        self.stream.writeln(self._exc_info_to_string(err, test))

    def addExpectedFailure(self, test, err):
        unittest.TestResult.addExpectedFailure(self, test, err)
        self._line('ok', test, 'expected failure')

    def addUnexpectedSuccess(self, test):
        unittest.TestResult.addUnexpectedSuccess(self, test)
        self._line('not ok', test, 'unexpected success')

    def startTest(self, test):
        unittest.TestResult.startTest(self, test)

    def printErrors(self):
        pass


def skip_needed(suite, needs):
    seen = set()
    for test in iter_tests(suite):
        reason = needs.get(test.id())
        if reason:
            seen.add(test.id())
            setattr(test, test._testMethodName,
                    unittest.skip(reason)(getattr(test, test._testMethodName)))
    return set(needs) - seen


def main():
    global DEV, BASELINE
    ap = argparse.ArgumentParser()
    ap.add_argument('--dev', required=True)
    ap.add_argument('--needs', help='file: test id + reason to skip')
    ap.add_argument('--baseline', action='store_true',
                    help='comparison run (e.g. on rxe): print results as '
                         'comments and always exit 0')
    ap.add_argument('modules', nargs='*', help='e.g. test_device test_pd; default: all')
    args = ap.parse_args()
    DEV = args.dev
    BASELINE = args.baseline

    scratch = tempfile.mkdtemp(prefix='pyverbs-')
    pkg = stage_tests(scratch)
    sys.path[0:0] = [scratch, pkg]
    os.chdir(scratch)
    sys.argv = [sys.argv[0], '--dev', args.dev]
    from args_parser import parser
    parser.parse_args()
    import tests

    loader = unittest.TestLoader()
    if args.modules:
        names = [f'tests.{m}' for m in args.modules]
        suite = loader.loadTestsFromNames(names)
    else:
        suite = loader.loadTestsFromModule(tests)
    missing = skip_needed(suite, read_needs(args.needs))
    runner = unittest.TextTestRunner(stream=sys.stdout, resultclass=Result,
                                     verbosity=0)
    res = runner.run(suite)
    total = res.testsRun
    bad = len(res.failures) + len(res.errors) + len(res.unexpectedSuccesses)
    skipped = len(res.skipped)
    print(f'# pyverbs({DEV}): {total} tests, {total - bad - skipped} ok, '
          f'{bad} fail or error, {skipped} skipped')
    for test_id in sorted(missing):
        print(f'not ok - pyverbs({DEV}): stale entry in the skip list: {test_id}')
    shutil.rmtree(scratch, ignore_errors=True)
    if BASELINE:
        return 0
    return 1 if bad or missing else 0


DEV = None
BASELINE = False
if __name__ == '__main__':
    sys.exit(main())
