#!/usr/bin/python3
"""Run rdma-core's pyverbs test modules against one RDMA device.

Copies the test suite shipped by python3-pyverbs (gzip'ed .py files under
/usr/share/doc/rdma-core/tests) into a scratch directory, runs the selected
modules with --dev, and prints one TAP-like line per test plus a summary.

Tests listed in the --needs file are reported as skipped with the reason
given there (features a later issue delivers) instead of being run.  The
list is exact test ids; an id that does not exist is an error, so the list
cannot silently rot.

--record FILE writes every test's outcome ("ok", "skip" or "fail" and the
test id, one a line).  --compare FILE reads such a record from another
device (rxe) and checks that every test ok there is ok here too: one
"not ok" line per test that is not (failed, errored, skipped or not run),
or one "ok" line for the lot.  A test listed in the --needs file is exempt
and says so on its own line.  --must-run PREFIX fails every test whose id
starts with PREFIX and was skipped.  --only FILE runs only the tests whose
ids FILE lists (one a line).  --outcome FILE runs nothing: it takes this
device's outcomes from FILE (an earlier --record) for --compare.

The random module is seeded before each test from $SHCA_PYVERBS_SEED
(default 4791) and the test's id, so a test draws the same QP caps, PSNs
and flags whichever other tests run before it, on every device: a run is
repeatable, and a run of a subset (--only) sees what a whole run saw.
The slowest tests are listed after the run.

Exit status: 0 when nothing failed or errored, no comparison or --must-run
check failed and the skip list is not stale; 1 otherwise (always 0 with
--baseline).
"""
import argparse
import gc
import gzip
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
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


def rdma_core_major():
    """The major release of the rdma-core whose pyverbs runs (0 if unknown)."""
    try:
        out = subprocess.run(['dpkg-query', '-W', '-f=${Version}',
                              'python3-pyverbs'], capture_output=True,
                             text=True, check=True).stdout
        return int(out.split('.', 1)[0].split(':')[-1])
    except (OSError, ValueError, subprocess.CalledProcessError):
        return 0


def read_needs(path):
    """Test id -> reason.  A line may start with "rdma-core>=N": it applies
    only from that rdma-core release on (the test does not exist before)."""
    needs = {}
    if not path:
        return needs
    major = None
    with open(path) as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if line.startswith('rdma-core>='):
                cond, _, line = line.partition(' ')
                if major is None:
                    major = rdma_core_major()
                if major < int(cond[len('rdma-core>='):]):
                    continue
                line = line.strip()
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
    outcome = {}
    took = {}

    def _line(self, status, test, why=''):
        tail = f' # {why}' if why else ''
        lead = f'# baseline {status}' if BASELINE else status
        self.stream.writeln(f'{lead} - pyverbs({DEV}): {test.id()}{tail}')
        self.stream.flush()

    def addSuccess(self, test):
        unittest.TestResult.addSuccess(self, test)
        self.outcome[test.id()] = 'ok'
        self._line('ok', test)

    def addSkip(self, test, reason):
        unittest.TestResult.addSkip(self, test, reason)
        self.outcome[test.id()] = 'skip'
        self._line('ok', test, f'SKIP {reason}')

    def addFailure(self, test, err):
        unittest.TestResult.addFailure(self, test, err)
        self.outcome[test.id()] = 'fail'
        self._line('not ok', test, 'FAIL')
        self.stream.writeln(self._exc_info_to_string(err, test))

    def addError(self, test, err):
        unittest.TestResult.addError(self, test, err)
        self.outcome[test.id()] = 'fail'
        self._line('not ok', test, 'ERROR')
        self.stream.writeln(self._exc_info_to_string(err, test))

    def addExpectedFailure(self, test, err):
        unittest.TestResult.addExpectedFailure(self, test, err)
        self.outcome[test.id()] = 'ok'
        self._line('ok', test, 'expected failure')

    def addUnexpectedSuccess(self, test):
        unittest.TestResult.addUnexpectedSuccess(self, test)
        self.outcome[test.id()] = 'fail'
        self._line('not ok', test, 'unexpected success')

    def startTest(self, test):
        unittest.TestResult.startTest(self, test)
        random.seed(f'{SEED}:{test.id()}')
        self.started = time.monotonic()

    def stopTest(self, test):
        unittest.TestResult.stopTest(self, test)
        self.took[test.id()] = time.monotonic() - self.started

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


def collect_before_teardown(suite):
    """Run a garbage collection before each test's tearDown.  What a test
    body leaves in reference cycles (a CQ held by the traceback of an
    exception that assertRaises caught, or by a failed test's frames) is
    then destroyed while the device context is still open: tearDown
    closes the context, and with rdma-core 56's pyverbs (Debian 13) such
    an object destroyed by a later collection can crash the interpreter in
    libibverbs, ending the whole run.  Harmless with older pyverbs."""
    def wrap(orig):
        def tear_down():
            gc.collect()
            orig()
        return tear_down
    for test in iter_tests(suite):
        test.tearDown = wrap(test.tearDown)


def record(path, outcome):
    with open(path + '.new', 'w') as f:
        f.write(f'# device {DEV}\n')
        for test_id in sorted(outcome):
            f.write(f'{outcome[test_id]} {test_id}\n')
    os.rename(path + '.new', path)


def read_record(path):
    """A --record file: (device, {test id: status})."""
    dev, outcome = None, {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if w[:2] == ['#', 'device'] and len(w) > 2:
                dev = w[2]
            elif len(w) == 2 and not w[0].startswith('#'):
                outcome[w[1]] = w[0]
    return dev, outcome


def only_listed(suite, path):
    """The tests of @suite whose ids the file at @path lists."""
    with open(path) as f:
        ids = {line.strip() for line in f if line.strip()}
    return unittest.TestSuite(t for t in iter_tests(suite) if t.id() in ids)


def compare(path, outcome, needs):
    """Every test ok in the record at @path must be ok here; returns the
    number of those that are not."""
    tag = f'pyverbs({DEV} vs baseline)'
    try:
        there, theirs = read_record(path)
    except OSError as err:
        print(f'not ok - {tag}: no baseline record: {err}')
        return 1
    if not there:
        print(f'not ok - {tag}: {path} names no device')
        return 1
    tag = f'pyverbs({DEV} vs {there})'
    want = sorted(test_id for test_id, status in theirs.items()
                  if status == 'ok')
    bad = 0
    for test_id in want:
        ours = outcome.get(test_id, 'not run')
        if ours == 'ok':
            continue
        if test_id in needs:
            print(f'ok - {tag}: {test_id} # SKIP ok on {there}, {ours} '
                  f'on {DEV}: listed: {needs[test_id]}')
            continue
        print(f'not ok - {tag}: {test_id}: ok on {there}, {ours} on {DEV}')
        bad += 1
    if not want:
        print(f'not ok - {tag}: no test passed on {there}')
        return 1
    if not bad:
        print(f'ok - {tag}: each of the {len(want)} tests ok on {there} is '
              f'ok on {DEV} or listed')
    return bad


def must_run(prefixes, outcome):
    bad = 0
    for prefix in prefixes:
        ids = [t for t in outcome if t.startswith(prefix)]
        skipped = sorted(t for t in ids if outcome[t] == 'skip')
        for test_id in skipped:
            print(f'not ok - pyverbs({DEV}): {test_id}: skipped, must run')
        if not ids:
            print(f'not ok - pyverbs({DEV}): no test matches {prefix}')
        bad += len(skipped) + (not ids)
    return bad


def memoize_net_lookups():
    """RDMATestCase.setUp runs `ls /sys/class/infiniband/DEV/device/net/`
    and `ip -j addr show IF` for every GID of every test (on devices with a
    device/net link, as shca has and rxe has not): four processes a test,
    minutes over the suite under TCG.  Nothing in the suite adds or removes
    addresses, so each question is asked once and its answer reused."""
    import functools
    from tests import base
    cls = base.RDMATestCase
    for name in ('get_net_name', 'get_ip_mac_address'):
        fn = getattr(cls, name)
        setattr(cls, name, staticmethod(functools.lru_cache(maxsize=None)(fn)))


def stage_package(dst, lean):
    """stage_tests into DST; lean: the package's __init__.py imports only
    the argument parser (see enter_tests)."""
    pkg = stage_tests(dst)
    if lean:
        with open(os.path.join(pkg, '__init__.py'), 'w') as f:
            f.write('from args_parser import parser  # noqa: F401\n')


def staged_tests(lean):
    """The directory holding rdma-core's tests staged as a package
    ('tests'; lean: see enter_tests), staged by the first program of a
    boot and user that asks, then shared: the modules it compiles stay in
    its __pycache__ for the next (each program staged and compiled them
    anew before: seconds of a debug kernel's TCG time apiece).  Staged
    elsewhere and renamed into place, so a program never imports from a
    half-written one; a directory another user owns is not used."""
    kind = 'lean' if lean else 'whole'
    root = os.path.join(tempfile.gettempdir(),
                        f'shca-rdma-tests-{kind}-{os.getuid()}')
    try:
        if os.lstat(root).st_uid == os.getuid():
            return root
        return None
    except FileNotFoundError:
        pass
    tmp = tempfile.mkdtemp(prefix=os.path.basename(root) + '.',
                           dir=os.path.dirname(root))
    stage_package(tmp, lean)
    try:
        os.rename(tmp, root)
    except OSError:
        # another program of this boot staged it first
        shutil.rmtree(tmp, ignore_errors=True)
        return staged_tests(lean)
    return root


def enter_tests(prefix, dev, lean=False):
    """Make rdma-core's tests importable (staged_tests, or staged in the
    scratch directory where that is refused), work from a new scratch
    directory (returned), hand --dev to their argument parser and memoize
    their network lookups.  lean: the package's __init__.py imports only
    the argument parser (rdma-core's imports, and compiles, every test
    module, mlx5's and their providers' too: seconds of a debug kernel's
    TCG time), for callers that import what they use."""
    scratch = tempfile.mkdtemp(prefix=prefix)
    root = staged_tests(lean)
    if root is None:
        root = scratch
        stage_package(scratch, lean)
    sys.path[0:0] = [root, os.path.join(root, 'tests')]
    os.chdir(scratch)
    sys.argv = [sys.argv[0], '--dev', dev]
    from args_parser import parser
    parser.parse_args()
    memoize_net_lookups()
    return scratch


def run_extra_cases(define_tests, label, lean=False):
    """main() of the extra case files (mw_cases.py, srq_cases.py): run
    the TestCase that define_tests() returns on --dev, with rdma-core's
    tests staged and importable (lean: see enter_tests); one TAP line a
    test; exit status."""
    global DEV, BASELINE
    ap = argparse.ArgumentParser()
    ap.add_argument('--dev', required=True)
    args = ap.parse_args()
    DEV = args.dev
    BASELINE = False
    enter_tests(f'{label}-cases-', args.dev, lean)
    suite = unittest.TestLoader().loadTestsFromTestCase(define_tests())
    res = unittest.TextTestRunner(stream=sys.stdout, resultclass=Result,
                                  verbosity=0).run(suite)
    bad = len(res.failures) + len(res.errors) + len(res.skipped)
    print(f'# {label} cases({args.dev}): {res.testsRun} tests, '
          f'{bad} not ok or skipped')
    return 1 if bad else 0


def main():
    global DEV, BASELINE
    ap = argparse.ArgumentParser()
    ap.add_argument('--dev', required=True)
    ap.add_argument('--needs', help='file: test id + reason to skip')
    ap.add_argument('--baseline', action='store_true',
                    help='comparison run (e.g. on rxe): print results as '
                         'comments and always exit 0')
    ap.add_argument('--record', help='file: write each test\'s outcome')
    ap.add_argument('--compare', help='file: a --record of another device')
    ap.add_argument('--must-run', action='append', default=[],
                    help='test id prefix whose tests must not skip')
    ap.add_argument('--only', help='file: the test ids to run')
    ap.add_argument('--outcome', help='file: this device\'s --record; '
                    'run nothing, only --compare')
    ap.add_argument('modules', nargs='*', help='e.g. test_device test_pd; default: all')
    args = ap.parse_args()
    DEV = args.dev
    BASELINE = args.baseline
    if args.outcome:
        return compare_only(args)

    scratch = enter_tests('pyverbs-', args.dev)
    import tests

    # The tests draw QP caps, PSNs and flags at random: Result.startTest
    # seeds each test from this and its id; vary it by hand.
    random.seed(SEED)
    # (check.sh collects the lines starting '# pyverbs(': counts only)
    print(f'# {DEV}: random seed {SEED} (SHCA_PYVERBS_SEED)')
    loader = unittest.TestLoader()
    if args.modules:
        names = [f'tests.{m}' for m in args.modules]
        suite = loader.loadTestsFromNames(names)
    else:
        suite = loader.loadTestsFromModule(tests)
    if args.only:
        suite = only_listed(suite, args.only)
    needs = read_needs(args.needs)
    missing = skip_needed(suite, needs)
    collect_before_teardown(suite)
    runner = unittest.TextTestRunner(stream=sys.stdout, resultclass=Result,
                                     verbosity=0)
    res = runner.run(suite)
    total = res.testsRun
    bad = len(res.failures) + len(res.errors) + len(res.unexpectedSuccesses)
    skipped = len(res.skipped)
    slow = sorted(Result.took.items(), key=lambda kv: -kv[1])[:SLOWEST]
    print(f'# {DEV}: the {len(slow)} slowest tests (s): ' +
          ', '.join(f'{t.replace("tests.", "", 1)} {d:.1f}' for t, d in slow))
    print(f'# pyverbs({DEV}): {total} tests, {total - bad - skipped} ok, '
          f'{bad} fail or error, {skipped} skipped')
    for test_id in sorted(missing):
        print(f'not ok - pyverbs({DEV}): stale entry in the skip list: {test_id}')
    shutil.rmtree(scratch, ignore_errors=True)
    if args.record:
        record(args.record, Result.outcome)
    if args.compare:
        bad += compare(args.compare, Result.outcome, needs)
    bad += must_run(args.must_run, Result.outcome)
    if BASELINE:
        return 0
    return 1 if bad or missing else 0


def compare_only(args):
    """--outcome: compare an earlier run's record with --compare's."""
    try:
        _, outcome = read_record(args.outcome)
    except OSError as err:
        print(f'not ok - pyverbs({DEV}): no record of its run: {err}')
        return 1
    if not args.compare:
        print(f'not ok - pyverbs({DEV}): --outcome needs --compare')
        return 1
    bad = compare(args.compare, outcome, read_needs(args.needs))
    return 1 if bad else 0


SLOWEST = 8
SEED = int(os.environ.get('SHCA_PYVERBS_SEED', '4791'))
DEV = None
BASELINE = False
if __name__ == '__main__':
    sys.exit(main())
