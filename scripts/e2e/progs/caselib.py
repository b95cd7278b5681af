# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The pieces the e2e Python case programs of this folder share.

Each program runs as `/usr/bin/python3 scripts/e2e/progs/NAME.py ...`, so
Python puts this folder first on sys.path and `import caselib` finds this
file from any working directory.  Nothing here runs at import time but
the standard library's imports: pyverbs is imported where it is used, so
the programs keep their own order of imports (those that stage rdma-core's
tests first import it only once the tests are staged).

  - load_runner(), run_cases(): the *_cases.py built on rdma-core's test
    scaffolding run their TestCase through pyverbs-run.py;
  - named(): the module and name a TestCase's ids (and so its TAP lines)
    carry;
  - counters(): a device's port counters as `rdma statistic` shows them;
  - ctx_pd_cq(): a device's context with a PD and a CQ;
  - poll(): the completions of a CQ, with a hang guard;
  - rc_attr(): the attributes that take an RC (or UC, XRC) QP to RTS
    toward a GID;
  - xrcd(), xrc_srq(): an XRC domain and an XRC SRQ in it;
  - MS_RSS_KEY, toeplitz(): the RSS hash; csum(): the Internet checksum;
  - Tap: "ok - ..." / "not ok - ..." lines and their failure count.
"""
import importlib.util
import os
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def load_runner():
    """pyverbs-run.py as module pyverbs_run (its name has a dash, so no
    import statement reaches it)."""
    spec = importlib.util.spec_from_file_location(
        'pyverbs_run', os.path.join(HERE, 'pyverbs-run.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_cases(define_tests, label, lean=False, hostile=None):
    """main() of a *_cases.py: the TestCase define_tests() returns, run on
    --dev by pyverbs-run.py (lean: see its enter_tests) with LABEL in its
    scratch directory and count line.  With --hostile among the arguments
    (taken out of them) only the tests named in HOSTILE run.  Returns the
    exit status."""
    only = None
    if hostile is not None and '--hostile' in sys.argv:
        sys.argv.remove('--hostile')
        only = hostile

    def define():
        cls = define_tests()
        for name in list(vars(cls)):
            if only and name.startswith('test_') and name not in only:
                delattr(cls, name)
        return cls
    return load_runner().run_extra_cases(define, label, lean=lean)


def named(cls, module):
    """CLS with the module name MODULE and its own name as qualified name
    (define_tests() defines it in a function): its tests' ids, which the
    TAP lines print, read MODULE.CLASS.test_..."""
    cls.__module__ = module
    cls.__qualname__ = cls.__name__
    return cls


def counters(dev):
    """The counters of DEV's port 1 as `rdma statistic` shows them."""
    out = subprocess.run(['rdma', 'statistic', 'show', 'link', f'{dev}/1'],
                         capture_output=True, text=True, check=True).stdout
    words = out.split()
    return {a: int(b) for a, b in zip(words, words[1:]) if b.isdigit()}


def poll(cq, n=1, secs=120, nap=0.001):
    """Up to n completions of cq (any status) within secs seconds (TCG is
    slow, and a lost completion must not hang); nap seconds between empty
    polls."""
    out = []
    end = time.monotonic() + secs
    while len(out) < n and time.monotonic() < end:
        k, wcs = cq.poll(num_entries=n - len(out))
        if k:
            out += wcs[:k]
        else:
            time.sleep(nap)
    return out


def ctx_pd_cq(dev, cqe):
    """A context of device dev, a PD and a CQ of cqe entries in it."""
    from pyverbs.cq import CQ
    from pyverbs.device import Context
    from pyverbs.pd import PD

    ctx = Context(name=dev)
    return ctx, PD(ctx), CQ(ctx, cqe)


def rc_attr(dgid, sgid_index, psn, access, rd_atomic=4, min_rnr_timer=12,
            timeout=14, rnr_retry=7, port=1, dqpn=None):
    """The QPAttr that takes a connected QP to RTS toward dgid from
    sgid_index on port: path MTU 1024, PSN psn both ways, retry_cnt 7, the
    rest as given (dest_qp_num only when dqpn is not None)."""
    import pyverbs.enums as e
    from pyverbs.addr import AHAttr, GlobalRoute
    from pyverbs.qp import QPAttr

    a = QPAttr()
    a.qp_access_flags = access
    a.port_num = port
    a.path_mtu = e.IBV_MTU_1024
    if dqpn is not None:
        a.dest_qp_num = dqpn
    a.rq_psn = psn
    a.sq_psn = psn
    a.max_dest_rd_atomic = rd_atomic
    a.max_rd_atomic = rd_atomic
    a.min_rnr_timer = min_rnr_timer
    a.timeout = timeout
    a.retry_cnt = 7
    a.rnr_retry = rnr_retry
    a.ah_attr = AHAttr(port_num=port, is_global=1,
                       gr=GlobalRoute(dgid=dgid, sgid_index=sgid_index))
    return a


def xrcd(ctx):
    """An XRC domain of ctx on a new temporary file; returns it and the
    file, which the caller keeps open as long as the domain lives."""
    from pyverbs.xrcd import XRCD, XRCDInitAttr
    import pyverbs.enums as e

    tmp = tempfile.NamedTemporaryFile()
    fd = os.open(tmp.name, os.O_RDONLY | os.O_CREAT, 0o600)
    x = XRCD(ctx, XRCDInitAttr(e.IBV_XRCD_INIT_ATTR_FD |
                               e.IBV_XRCD_INIT_ATTR_OFLAGS, os.O_CREAT, fd))
    os.close(fd)
    return x, tmp


def xrc_srq(ctx, pd, domain, cq, max_wr, max_sge=1):
    """An XRC SRQ of domain, PD pd, completing on cq; also returns its
    init attr (ibv_create_srq_ex writes the caps back)."""
    from pyverbs.srq import SRQ, SrqInitAttrEx
    import pyverbs.enums as e

    a = SrqInitAttrEx(max_wr=max_wr, max_sge=max_sge)
    a.srq_type = e.IBV_SRQT_XRC
    a.pd = pd
    a.xrcd = domain
    a.cq = cq
    a.comp_mask = e.IBV_SRQ_INIT_ATTR_TYPE | e.IBV_SRQ_INIT_ATTR_PD | \
        e.IBV_SRQ_INIT_ATTR_CQ | e.IBV_SRQ_INIT_ATTR_XRCD
    return SRQ(ctx, a), a


# Microsoft's RSS verification key (its RSS specification's examples)
MS_RSS_KEY = bytes.fromhex('6d5a56da255b0ec24167253d43a38fb0'
                           'd0ca2bcbae7b30b477cb2da38030f20c'
                           '6a42b73bbeac01fa')


def toeplitz(key, data):
    """The Toeplitz hash of data under key, as Microsoft RSS defines it
    (bit i of the input selects the 32 key bits starting at bit i)."""
    k = int.from_bytes(key, 'big')
    klen = len(key) * 8
    h = 0
    for i in range(len(data) * 8):
        if data[i // 8] & (0x80 >> (i % 8)):
            h ^= (k >> (klen - 32 - i)) & 0xffffffff
    return h


def csum(data):
    """The Internet checksum (RFC 1071) of data, padded to even length."""
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack(f'!{len(data) // 2}H', data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


class Tap:
    """TAP-like result lines, "ok - PREFIXname" and "not ok - PREFIXname:
    why", printed at once; fails counts the second kind."""

    def __init__(self, prefix=''):
        self.prefix = prefix
        self.fails = 0

    def ok(self, name):
        print(f'ok - {self.prefix}{name}', flush=True)

    def not_ok(self, name, why):
        self.fails += 1
        print(f'not ok - {self.prefix}{name}: {why}', flush=True)

    def result(self, name, good, why=''):
        """ok(name) if good, else not_ok(name, why); returns good."""
        if good:
            self.ok(name)
        else:
            self.not_ok(name, why)
        return good
