#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""odp_cases: on-demand paging MRs while the mm takes their pages away.

    odp_cases.py DEV GIDX                       (scripts/e2e/odp.sh)

Two RC QPs of DEV connected to each other (DEV's own address, GID index
GIDX).  The requester A has a plain MR; the target's buffer is a fresh
anonymous private mapping under an ODP MR (IBV_ACCESS_ON_DEMAND), so
MADV_DONTNEED on it makes the mm drop its pages (an MMU notifier
invalidation for an explicit MR) and later reads of it see zeros.  The
caps: IBV_ODP_SUPPORT and IMPLICIT, RC send/recv/write/read/atomic/SRQ;
ibv_advise_mr over a plain MR is EINVAL.  Then for each kind of target,
an explicit MR, an implicit one (the whole address space) and, where
2 MiB huge pages are set aside, an explicit MR of huge pages:

  - first touch: a WRITE into never-touched pages lands, faulting them
    in (odp_faults grows);
  - no stale pages, ROUNDS times: the CPU writes P, a READ sees P;
    MADV_DONTNEED; a READ sees zeros, not P (odp_invalidations grows,
    but for the implicit MR, which keeps no pages); the CPU writes Q, a
    READ sees Q; a WRITE of R, the CPU sees R;
  - atomics: FETCH_AND_ADD and CMP_AND_SWP after MADV_DONTNEED see 0 and
    leave what the CPU then reads;
  - prefetch: ibv_advise_mr PREFETCH_WRITE and PREFETCH_NO_FAULT succeed
    (odp_prefetches grows by two);
  - race: a thread keeps dropping the pages while WRITEs of round k and
    READs back run: every completion succeeds or, at most DONTNEED_ERRS
    times, ends with a remote access error (faulting a page in kept
    losing to the drops: see CLEAN_ERRS; both QPs are then reset and
    connected again), some rounds complete,
    and every byte read back is k or 0 (a byte of an earlier round
    would be a stale page); then the no-stale check once more.

Then invalidation races on a buffer this program maps itself (libc mmap,
so that it can unmap and move it), under an explicit and an implicit
ODP MR:

  - munmap: a thread keeps unmapping the buffer and mapping fresh pages
    at the same address (MAP_FIXED_NOREPLACE: never over a mapping
    something else took meanwhile), leaving it mapped for REMAP_PAUSE
    seconds each time, while WRITEs of round k and READs
    back run, as in the race above (a remote access error also when the
    address had no mapping at that moment);
  - mremap: the same with the thread moving the buffer's pages away
    (mremap MREMAP_FIXED onto a second area, whose previous pages that
    frees) and mapping fresh pages at the buffer's address: the moved
    pages keep older rounds' bytes, so a READ that still reached them
    would show one;
  - fork: with MADV_DONTFORK off (MADV_DOFORK) over the buffer, children
    are forked, each writing its copy-on-write copy with its own marker
    bytes for a while and checking that it reads back only them (never
    a WRITE of the parent's), while the parent runs rounds of CPU write
    p, READ (must see p), WRITE r, CPU read (must see r): no completion
    may fail, no marker may reach the parent, and every child exits 0.
  After each, the no-stale check once more.

Prints "ok - odp: ..." / "not ok - odp: ..." lines; exit status 1 if
any case failed.
"""
import ctypes
import mmap
import os
import sys
import threading
import time

import caselib
from pyverbs.mr import MR
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR
import pyverbs.enums as e

DEV = sys.argv[1]
GIDX = int(sys.argv[2])
SIZE = 64 * 1024
ROUNDS = 20
RACE_ROUNDS = 200
MADV_DONTNEED = 4
MAP_HUGETLB = 0x40000      # x86
MAP_FIXED_NOREPLACE = 0x100000
MREMAP_MAYMOVE, MREMAP_FIXED = 1, 2
MADV_DOFORK = 11
FORKS = 4
REMAP_PAUSE = 0.002
FORK_SECS = 2.0
HUGE = 2 * 1024 * 1024
TAP = caselib.Tap('odp: ')
result = TAP.result
ACC = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | \
    e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC

libc = ctypes.CDLL(None, use_errno=True)
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.mremap.restype = ctypes.c_void_p
libc.mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t,
                        ctypes.c_int, ctypes.c_void_p]
MAP_FAILED = ctypes.c_void_p(-1).value
ibv_wc_status_str = ctypes.CDLL('libibverbs.so.1').ibv_wc_status_str
ibv_wc_status_str.restype = ctypes.c_char_p
ibv_wc_status_str.argtypes = [ctypes.c_int]

ctx, pd, cq = caselib.ctx_pd_cq(DEV, 64)
gid = ctx.query_gid(port_num=1, index=GIDX)


def rc_qp():
    return QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                             cap=QPCap(max_send_wr=8, max_recv_wr=8,
                                       max_send_sge=1, max_recv_sge=1)))


class Target:
    """B's buffer, an anonymous private mapping, under an ODP MR: explicit
    over the buffer, implicit (the whole address space), or explicit
    over 2 MiB huge pages (IBV_ACCESS_HUGETLB)."""

    def __init__(self, kind):
        self.kind = kind
        flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
        self.maplen = SIZE
        if kind == 'huge':
            flags |= MAP_HUGETLB
            self.maplen = HUGE
        self.map = mmap.mmap(-1, self.maplen, flags=flags)
        self.addr = ctypes.addressof(ctypes.c_char.from_buffer(self.map))
        acc = ACC | e.IBV_ACCESS_ON_DEMAND
        if kind == 'huge':
            acc |= e.IBV_ACCESS_HUGETLB
        self.mr = MR(pd, self.maplen, acc, address=self.addr,
                     implicit=kind == 'implicit')

    def drop(self):
        """MADV_DONTNEED: the mm drops the pages; they read as zeros."""
        if libc.madvise(self.addr, self.maplen, MADV_DONTNEED):
            raise OSError(ctypes.get_errno(), 'madvise')

    def cpu_write(self, byte):
        self.map[0:SIZE] = bytes([byte]) * SIZE

    def cpu_read(self):
        return self.map[0:SIZE]


class MapTarget:
    """B's buffer mapped with libc's mmap (anonymous, private), so that a
    race can unmap, remap and move it, under an explicit or implicit ODP
    MR; the CPU reaches it through ctypes."""

    def __init__(self, kind):
        self.kind = kind
        self.maplen = SIZE
        self.addr = anon_map(None, 0)
        if self.addr is None:
            raise OSError(ctypes.get_errno(), 'mmap')
        self.mr = MR(pd, SIZE, ACC | e.IBV_ACCESS_ON_DEMAND,
                     address=self.addr, implicit=kind == 'implicit')

    def drop(self):
        if libc.madvise(self.addr, SIZE, MADV_DONTNEED):
            raise OSError(ctypes.get_errno(), 'madvise')

    def cpu_write(self, byte):
        ctypes.memset(self.addr, byte, SIZE)

    def cpu_read(self):
        return ctypes.string_at(self.addr, SIZE)


def anon_map(addr, flags):
    """SIZE bytes of fresh anonymous memory (at addr with flags), or None."""
    p = libc.mmap(addr, SIZE, mmap.PROT_READ | mmap.PROT_WRITE,
                  mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | flags, -1, 0)
    return None if p in (None, MAP_FAILED) else p


a, b = rc_qp(), rc_qp()


def connect():
    """Take A and B (back) to RTS, connected to each other."""
    for x, y in ((a, b), (b, a)):
        x.to_rts(caselib.rc_attr(gid, GIDX, 0x10000, ACC, dqpn=y.qp_num))


def reconnect():
    """After an error completion: reset A and B and connect them again."""
    for q in (a, b):
        q.modify(QPAttr(qp_state=e.IBV_QPS_RESET), e.IBV_QP_STATE)
    cq.poll(num_entries=8)      # one WR at a time: nothing is left
    connect()


connect()
src = MR(pd, SIZE, ACC)


def run(tgt, opcode, nbytes=SIZE, atomic=None):
    """One WRITE, READ or atomic from A's src MR at tgt; True if it
    completed successfully."""
    return run_status(tgt, opcode, nbytes, atomic) == e.IBV_WC_SUCCESS


def run_status(tgt, opcode, nbytes=SIZE, atomic=None):
    """One WRITE, READ or atomic from A's src MR at tgt; its completion's
    status, None if none came."""
    wr = SendWR(opcode=opcode, num_sge=1,
                sg=[SGE(src.buf, nbytes, src.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    if atomic is None:
        wr.set_wr_rdma(tgt.mr.rkey, tgt.addr)
    else:
        wr.set_wr_atomic(rkey=tgt.mr.rkey, addr=tgt.addr,
                         compare_add=atomic[0], swap=atomic[1])
    a.post_send(wr)
    wcs = caselib.poll(cq)
    return wcs[0].status if len(wcs) == 1 else None


def write(tgt, byte):
    src.write(bytes([byte]) * SIZE, SIZE, 0)
    return run(tgt, e.IBV_WR_RDMA_WRITE)


def read(tgt):
    """tgt's bytes as a READ sees them, or None if it failed."""
    src.write(b'\xa5' * SIZE, SIZE, 0)
    if not run(tgt, e.IBV_WR_RDMA_READ):
        return None
    return src.read(SIZE, 0)


def stat(name):
    return caselib.counters(DEV).get(name, 0)


def case_caps():
    caps = ctx.query_device_ex().odp_caps
    rc = e.IBV_ODP_SUPPORT_SEND | e.IBV_ODP_SUPPORT_RECV | \
        e.IBV_ODP_SUPPORT_WRITE | e.IBV_ODP_SUPPORT_READ | \
        e.IBV_ODP_SUPPORT_ATOMIC | e.IBV_ODP_SUPPORT_SRQ_RECV
    general = e.IBV_ODP_SUPPORT | e.IBV_ODP_SUPPORT_IMPLICIT
    result('caps: explicit and implicit ODP, every RC operation',
           caps.general_caps == general and caps.rc_odp_caps == rc,
           f'general {caps.general_caps:#x} rc {caps.rc_odp_caps:#x}')


def case_first_touch(tgt):
    faults = stat('odp_faults')
    ok = write(tgt, 0x11)
    result(f'{tgt.kind}: a WRITE into untouched pages lands',
           ok and tgt.cpu_read() == b'\x11' * SIZE,
           'completion failed' if not ok else 'the CPU sees other bytes')
    result(f'{tgt.kind}: odp_faults grew', stat('odp_faults') > faults,
           f'odp_faults stayed {faults}')


def no_stale(tgt, rnd):
    """One round of the no-stale check; '' or what went wrong."""
    p, q, r = 0x21 + rnd % 64, 0x61 + rnd % 64, 0xa1 + rnd % 64
    tgt.cpu_write(p)
    if read(tgt) != bytes([p]) * SIZE:
        return 'a READ missed what the CPU wrote'
    tgt.drop()
    got = read(tgt)
    if got != bytes(SIZE):
        return 'a READ after MADV_DONTNEED saw ' + \
            ('nothing' if got is None else 'old bytes, not zeros')
    tgt.cpu_write(q)
    if read(tgt) != bytes([q]) * SIZE:
        return 'a READ missed the CPU\'s bytes on the new pages'
    if not write(tgt, r) or tgt.cpu_read() != bytes([r]) * SIZE:
        return 'the CPU missed a WRITE to the new pages'
    return ''


def case_no_stale(tgt):
    inval = stat('odp_invalidations')
    why = ''
    for rnd in range(ROUNDS):
        why = no_stale(tgt, rnd)
        if why:
            why = f'round {rnd}: {why}'
            break
    result(f'{tgt.kind}: no stale pages: {ROUNDS} rounds of CPU, READ, '
           'DONTNEED, WRITE', not why, why)
    if tgt.kind != 'implicit':      # it keeps no pages to invalidate
        result(f'{tgt.kind}: odp_invalidations grew',
               stat('odp_invalidations') > inval,
               f'odp_invalidations stayed {inval}')


def case_atomics(tgt):
    for op, name, arg, want in (
            (e.IBV_WR_ATOMIC_FETCH_AND_ADD, 'FETCH_AND_ADD', (5, 0), 5),
            (e.IBV_WR_ATOMIC_CMP_AND_SWP, 'CMP_AND_SWP', (0, 7), 7)):
        tgt.cpu_write(0x33)
        tgt.drop()
        ok = run(tgt, op, 8, arg)
        old = int.from_bytes(src.read(8, 0), 'little')
        now = int.from_bytes(tgt.cpu_read()[:8], 'little')
        result(f'{tgt.kind}: {name} on dropped pages sees 0, leaves {want}',
               ok and old == 0 and now == want,
               f'ok {ok} old {old:#x} now {now:#x}')


def advise(advice, mr, addr):
    try:
        pd.advise_mr(advice, e._IBV_ADVISE_MR_FLAG_FLUSH,
                     [SGE(addr, SIZE, mr.lkey)])
    except PyverbsRDMAError as ex:
        return ex.error_code
    return 0


def case_prefetch(tgt):
    pre = stat('odp_prefetches')
    tgt.drop()
    rc = advise(e._IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, tgt.mr, tgt.addr)
    result(f'{tgt.kind}: prefetch: PREFETCH_WRITE', rc == 0, f'errno {rc}')
    rc = advise(e._IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, tgt.mr, tgt.addr)
    result(f'{tgt.kind}: prefetch: PREFETCH_NO_FAULT', rc == 0,
           f'errno {rc}')
    result(f'{tgt.kind}: prefetch: odp_prefetches grew by 2',
           stat('odp_prefetches') == pre + 2,
           f'{pre} -> {stat("odp_prefetches")}')


def case_prefetch_plain():
    rc = advise(e._IBV_ADVISE_MR_ADVICE_PREFETCH, src, src.buf)
    result('prefetch: a plain MR is EINVAL', rc == 22, f'errno {rc}')


# The completion status a WR may end with while the mm takes its target's
# pages away, besides success: a remote access error, when the target
# address has no mapping at that moment (between munmap and mmap, or
# moved away), or when faulting a page in fails: ib_core's
# ib_umem_odp_map_dma_and_lock() retries a fault that invalidations keep
# interrupting for HMM_RANGE_DEFAULT_TIMEOUT (a second), then fails it.
# The huge page MADV_DONTNEED race got such an error in 2 of 7 suite runs
# on a loaded host (its dropper ran a tenth as often as in the others);
# shca now tries such a fault again (up to 8 times, shca_odp_fault()), so
# for MADV_DONTNEED, where the mapping never goes away, at most
# DONTNEED_ERRS of the rounds may end so: more would be a fault path that
# fails where it should not.
CLEAN_ERRS = (e.IBV_WC_REM_ACCESS_ERR,)
DONTNEED_ERRS = 2


def race_rounds(tgt):
    """RACE_ROUNDS rounds of a WRITE of the round's byte k into tgt and a
    READ back, while another thread takes tgt's pages away: each
    completion must succeed or end with a status of CLEAN_ERRS (both QPs
    are then reset and connected again, and the round ends), and each
    byte a successful READ returns must be k or 0 (a byte of an earlier
    round came from a page the mm let go of).  Returns (what went wrong
    or '', the rounds that completed both WRs, {status: count})."""
    why, good, errs = '', 0, {}

    def clean(st, what, k):
        """Count a failed completion; '' if it was a clean one."""
        if st not in CLEAN_ERRS:
            return f'round {k}: {what}: {status_str(st)}'
        errs[st] = errs.get(st, 0) + 1
        reconnect()
        return ''

    for k in range(RACE_ROUNDS):
        byte = 0x40 + k % 64
        src.write(bytes([byte]) * SIZE, SIZE, 0)
        st = run_status(tgt, e.IBV_WR_RDMA_WRITE)
        if st != e.IBV_WC_SUCCESS:
            why = clean(st, 'WRITE', k)
            if why:
                break
            continue
        src.write(b'\xa5' * SIZE, SIZE, 0)
        st = run_status(tgt, e.IBV_WR_RDMA_READ)
        if st != e.IBV_WC_SUCCESS:
            why = clean(st, 'READ', k)
            if why:
                break
            continue
        good += 1
        stray = set(src.read(SIZE, 0)) - {byte, 0}
        if stray:
            why = f'round {k}: read bytes {sorted(stray)[:4]} of ' \
                'another round'
            break
    if not why and not good:
        why = 'no round completed both WRs'
    return why, good, errs


def rounds_beside(spoiler, tgt):
    """race_rounds(tgt) while a thread runs spoiler(stop), which returns
    once the threading.Event stop is set; after a failure both QPs are
    reset and connected again, so the cases after it get working QPs.
    Returns race_rounds' (why, good, errs)."""
    stop = threading.Event()
    t = threading.Thread(target=spoiler, args=(stop,))
    t.start()
    try:
        why, good, errs = race_rounds(tgt)
    finally:
        stop.set()
        t.join()
    if why:
        reconnect()
    return why, good, errs


def case_race(tgt):
    drops = [0]

    def dropper(stop):
        while not stop.is_set():
            libc.madvise(tgt.addr, tgt.maplen, MADV_DONTNEED)
            drops[0] += 1

    why, good, errs = rounds_beside(dropper, tgt)
    if not why and sum(errs.values()) > DONTNEED_ERRS:
        why = f'{sum(errs.values())} remote access errors (at most ' \
            f'{DONTNEED_ERRS}: the mapping was there all along)'
    print(f'# odp: {tgt.kind}: race: {drops[0]} drops, {good} good rounds, '
          f'clean errors {errs}')
    result(f'{tgt.kind}: race: {RACE_ROUNDS} WRITE+READ rounds against '
           f'MADV_DONTNEED: each completion good or (at most '
           f'{DONTNEED_ERRS}) a remote access error, each byte read the '
           'round\'s or 0', not why, why)
    why = no_stale(tgt, 0)
    result(f'{tgt.kind}: race: no stale page after it', not why, why)


def remap_race(tgt, how):
    """The munmap or mremap race (see the top) on MapTarget tgt."""
    cycles, trouble = [0], ['']
    other = anon_map(None, 0) if how == 'mremap' else None

    def remapper(stop):
        while not stop.is_set():
            if how == 'munmap':
                libc.munmap(tgt.addr, SIZE)
            elif libc.mremap(tgt.addr, SIZE, SIZE,
                             MREMAP_MAYMOVE | MREMAP_FIXED,
                             other) != other:
                trouble[0] = f'mremap: errno {ctypes.get_errno()}'
                return
            if anon_map(tgt.addr, MAP_FIXED_NOREPLACE) != tgt.addr:
                trouble[0] = f'the address was taken (errno ' \
                    f'{ctypes.get_errno()})'
                return
            cycles[0] += 1
            # mapped for a moment: some rounds find the pages (under
            # TCG most would otherwise fall between munmap and mmap)
            stop.wait(REMAP_PAUSE)

    why, good, errs = rounds_beside(remapper, tgt)
    if trouble[0]:
        why = trouble[0]
    print(f'# odp: {tgt.kind}: {how} race: {cycles[0]} remaps, {good} '
          f'good rounds, clean errors {errs}')
    result(f'{tgt.kind}: {how} race: {RACE_ROUNDS} WRITE+READ rounds '
           f'against {how} and mmap again: each completion good or a '
           'remote access error, each byte read the round\'s or 0',
           not why, why)
    if other is not None:
        libc.munmap(other, SIZE)
    if trouble[0]:
        return          # the buffer may have no mapping: do not touch it
    # mapped again now (the thread stops only after a whole cycle)
    why = no_stale(tgt, 0)
    result(f'{tgt.kind}: {how} race: no stale page after it', not why, why)


def status_str(st):
    """A completion status as text (libibverbs' ibv_wc_status_str())."""
    if st is None:
        return 'no completion'
    return f'status {st} ({ibv_wc_status_str(st).decode()})'


def fork_child(tgt, nr):
    """In a forked child: write its copy of tgt with its own marker bytes
    for FORK_SECS, checking each time that it reads back only them; exits
    0, or 1 on another byte (the parent's WRITE reached its copy)."""
    end = time.monotonic() + FORK_SECS
    i = 0
    code = 0
    while time.monotonic() < end:
        m = 0xe0 + (nr * 5 + i) % 16
        ctypes.memset(tgt.addr, m, SIZE)
        if ctypes.string_at(tgt.addr, SIZE) != bytes([m]) * SIZE:
            code = 1
            break
        i += 1
    os._exit(code)


def fork_race(tgt):
    """The fork race (see the top) on MapTarget tgt."""
    why, rounds = '', 0
    if libc.madvise(tgt.addr, SIZE, MADV_DOFORK):
        why = f'MADV_DOFORK: errno {ctypes.get_errno()}'
    for nr in range(FORKS if not why else 0):
        tgt.cpu_write(0x10 + nr)
        pid = os.fork()
        if pid == 0:
            fork_child(tgt, nr)
        k, status = 0, None
        while not why:
            p, r = 0x40 + (rounds + k) % 64, 0x80 + (rounds + k) % 64
            tgt.cpu_write(p)
            got = read(tgt)
            if got != bytes([p]) * SIZE:
                why = f'fork {nr} round {k}: a READ saw ' + \
                    ('nothing' if got is None else
                     f'bytes {sorted(set(got) - {p})[:4]}, not {p:#x}')
            elif not write(tgt, r):
                why = f'fork {nr} round {k}: a WRITE failed'
            elif tgt.cpu_read() != bytes([r]) * SIZE:
                why = f'fork {nr} round {k}: the CPU missed a WRITE'
            k += 1
            done, st = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                status = st
                break
        if status is None:
            status = os.waitpid(pid, 0)[1]
        rounds += k
        if not why and status != 0:
            why = f'fork {nr}: the child ended with status {status:#x} ' \
                '(1 << 8: it read a byte not its own)'
        if not why and not k:
            why = f'fork {nr}: no parent round ran'
        if why:
            break
    print(f'# odp: {tgt.kind}: fork race: {FORKS} children, {rounds} '
          'parent rounds')
    result(f'{tgt.kind}: fork race (MADV_DOFORK): the parent\'s READs and '
           'WRITEs see only its bytes while children write their '
           'copy-on-write copies, each child only its own', not why, why)
    why = no_stale(tgt, 0)
    result(f'{tgt.kind}: fork race: no stale page after it', not why, why)


def huge_pages():
    """Are 2 MiB huge pages set aside (odp.sh asks for some)?"""
    try:
        with open('/sys/kernel/mm/hugepages/hugepages-2048kB/'
                  'free_hugepages') as f:
            return int(f.read()) > 0
    except OSError:
        return False


case_caps()
case_prefetch_plain()
kinds = ['explicit', 'implicit'] + (['huge'] if huge_pages() else [])
if 'huge' not in kinds:
    print('# no free 2 MiB huge pages: the huge page cases do not run')
for kind in kinds:
    tgt = Target(kind)
    case_first_touch(tgt)
    case_no_stale(tgt)
    case_atomics(tgt)
    case_prefetch(tgt)
    case_race(tgt)
for kind in ('explicit', 'implicit'):
    reconnect()     # whatever a case before left, A and B start afresh
    tgt = MapTarget(kind)
    case_first_touch(tgt)
    remap_race(tgt, 'munmap')
    remap_race(tgt, 'mremap')
    fork_race(tgt)
pages = stat('odp_invalidated_pages')
result('odp_invalidated_pages counted', pages > 0, f'{pages}')
sys.exit(1 if TAP.fails else 0)
