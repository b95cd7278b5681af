#!/usr/bin/python3
# FLUSH (IBTA 1.5 Memory Placement Extensions) from a requester device to a
# responder device over RC, each outcome asserted: a WRITE then a FLUSH to
# global visibility of its range (the data is there), of the whole region
# (the length is ignored), of nothing; a FLUSH to persistence, to an MR
# registered without IBV_ACCESS_FLUSH_GLOBAL and past the MR's end all
# complete with a remote access error.  The devices' capabilities are
# checked first: shca advertises FLUSH_GLOBAL (IB_UVERBS_DEVICE bit 38)
# and never FLUSH_PERSISTENT (bit 39), and refuses an MR with
# IBV_ACCESS_FLUSH_PERSISTENT (EOPNOTSUPP).
#
# usage: flush_cases.py REQDEV REQGID RESPDEV RESPGID [LABEL]
# SHCA_FLUSH_TRAFFIC=0: the capability checks only.  SHCA_FLUSH_RAN=FILE:
# FILE is created when FLUSH traffic is about to run.
# Without FLUSH in the kernel (6.1) the shca device must not advertise it
# and must refuse IBV_ACCESS_FLUSH_GLOBAL; without ibv_wr_flush in
# pyverbs (rdma-core 44) only the capability checks run.
import errno, os, sys, time
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.qp import QPInitAttrEx, QPCap, QPEx, QPAttr
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.wr import SGE
from pyverbs.pyverbs_error import PyverbsRDMAError
import pyverbs.enums as e

reqdev, reqgid = sys.argv[1], int(sys.argv[2])
respdev, respgid = sys.argv[3], int(sys.argv[4])
LABEL = sys.argv[5] if len(sys.argv) > 5 else f'{reqdev} -> {respdev}'
FAILS = 0
SZ = 1 << 16
# the values of rdma-core 45 on, spelled out: 44's pyverbs lacks the names
ACCESS_FLUSH_GLOBAL, ACCESS_FLUSH_PERSISTENT = 1 << 8, 1 << 9
DEVICE_FLUSH_GLOBAL, DEVICE_FLUSH_PERSISTENT = 1 << 38, 1 << 39
FLUSH_GLOBAL, FLUSH_PERSISTENT = 1, 2
FLUSH_RANGE, FLUSH_MR = 0, 1
WC_FLUSH = 8
HAVE_WR_FLUSH = hasattr(e, 'IBV_WR_FLUSH') and hasattr(QPEx, 'wr_flush')
BASE = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
        e.IBV_ACCESS_REMOTE_READ)


def result(name, ok, why=''):
    global FAILS
    if ok:
        print(f'ok - flush({LABEL}): {name}')
    else:
        FAILS += 1
        print(f'not ok - flush({LABEL}): {name}: {why}')


def kernel_has_flush():
    """6.2 and later name FLUSH: the uapi header's work completion opcode."""
    major, minor = (int(x) for x in os.uname().release.split('.')[:2])
    return (major, minor) >= (6, 2)


def mr_errno(pd, access):
    try:
        MR(pd, 4096, access).close()
        return 0
    except PyverbsRDMAError as ex:
        return ex.error_code


def caps(dev):
    """What a shca device advertises and lets an MR carry."""
    ctx = Context(name=dev)
    flags = ctx.query_device_ex().device_cap_flags_ex
    pd = PD(ctx)
    if kernel_has_flush():
        result(f'{dev} advertises FLUSH_GLOBAL', flags & DEVICE_FLUSH_GLOBAL,
               hex(flags))
        result(f'{dev} registers an MR with FLUSH_GLOBAL',
               mr_errno(pd, BASE | ACCESS_FLUSH_GLOBAL) == 0)
    else:
        result(f'{dev} does not advertise FLUSH_GLOBAL (no FLUSH here)',
               not flags & DEVICE_FLUSH_GLOBAL, hex(flags))
        err = mr_errno(pd, BASE | ACCESS_FLUSH_GLOBAL)
        result(f'{dev} refuses an MR with FLUSH_GLOBAL (no FLUSH here)',
               err in (errno.EINVAL, errno.EOPNOTSUPP), f'errno {err}')
    result(f'{dev} does not advertise FLUSH_PERSISTENT',
           not flags & DEVICE_FLUSH_PERSISTENT, hex(flags))
    err = mr_errno(pd, BASE | ACCESS_FLUSH_PERSISTENT)
    result(f'{dev} refuses an MR with FLUSH_PERSISTENT',
           err in (errno.EOPNOTSUPP, errno.EINVAL), f'errno {err}')
    pd.close()
    ctx.close()


class Side:
    def __init__(self, dev, gidx, mr_access, qp_access, flush_ops):
        self.ctx = Context(name=dev)
        self.gidx = gidx
        self.qp_access = qp_access
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 64)
        self.mr = MR(self.pd, SZ, mr_access)
        ops = e.IBV_QP_EX_WITH_RDMA_WRITE
        if flush_ops:
            ops |= e.IBV_QP_EX_WITH_FLUSH
        cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1,
                    max_recv_sge=1)
        ia = QPInitAttrEx(qp_type=e.IBV_QPT_RC, scq=self.cq, rcq=self.cq,
                          cap=cap, pd=self.pd, send_ops_flags=ops,
                          comp_mask=e.IBV_QP_INIT_ATTR_PD |
                          e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
        self.qp = QPEx(self.ctx, ia)

    def connect(self, peer):
        a = QPAttr()
        a.qp_access_flags = self.qp_access
        a.path_mtu = e.IBV_MTU_1024
        a.dest_qp_num = peer.qp.qp_num
        a.sq_psn = 0x100
        a.rq_psn = 0x100
        a.max_rd_atomic = 4
        a.max_dest_rd_atomic = 4
        a.min_rnr_timer = 1
        a.timeout = 14
        a.retry_cnt = 7
        a.rnr_retry = 7
        gr = GlobalRoute(dgid=peer.ctx.query_gid(1, peer.gidx),
                         sgid_index=self.gidx)
        a.ah_attr = AHAttr(port_num=1, is_global=1, gr=gr)
        self.qp.to_rts(a)


def pair(resp_mr=BASE | ACCESS_FLUSH_GLOBAL,
         resp_qp=BASE | ACCESS_FLUSH_GLOBAL | ACCESS_FLUSH_PERSISTENT):
    r = Side(reqdev, reqgid, BASE, BASE, True)
    p = Side(respdev, respgid, resp_mr, resp_qp, False)
    r.connect(p)
    p.connect(r)
    return r, p


def poll(cq, tmo=30):
    end = time.time() + tmo
    while time.time() < end:
        nc, wcs = cq.poll(num_entries=1)
        if nc:
            return wcs[0]
    return None


def post(r, wr_id, fn):
    r.qp.wr_start()
    r.qp.wr_id = wr_id
    r.qp.wr_flags = e.IBV_SEND_SIGNALED
    fn()
    r.qp.wr_complete()
    return poll(r.cq)


def flush(r, p, wr_id, ptype, level, length, addr=None):
    return post(r, wr_id, lambda: r.qp.wr_flush(
        p.mr.rkey, p.mr.buf if addr is None else addr, length, ptype, level))


def expect(name, wc, wr_id, status, opcode=None):
    if wc is None:
        result(name, False, 'no completion')
        return False
    ok = wc.status == status and wc.wr_id == wr_id and \
        (opcode is None or wc.opcode == opcode)
    result(name, ok, f'status {wc.status} opcode {wc.opcode} '
           f'wr_id {wc.wr_id}')
    return ok


def good_flushes():
    r, p = pair()
    n = 3000
    data = os.urandom(n)
    r.mr.write(data, n, 0)
    p.mr.write(b'\0' * n, n, 0)

    def write():
        r.qp.wr_rdma_write(p.mr.rkey, p.mr.buf)
        r.qp.wr_set_sge(SGE(r.mr.buf, n, r.mr.lkey))
    expect('RDMA WRITE before the FLUSH', post(r, 1, write), 1,
           e.IBV_WC_SUCCESS, e.IBV_WC_RDMA_WRITE)
    if expect('FLUSH global, range of the WRITE',
              flush(r, p, 2, FLUSH_GLOBAL, FLUSH_RANGE, n), 2,
              e.IBV_WC_SUCCESS, WC_FLUSH):
        result('the WRITE is in place after the FLUSH',
               p.mr.read(n, 0) == data)
    expect('FLUSH global, whole MR (length ignored)',
           flush(r, p, 3, FLUSH_GLOBAL, FLUSH_MR, 12345678), 3,
           e.IBV_WC_SUCCESS, WC_FLUSH)
    expect('FLUSH global, empty range',
           flush(r, p, 4, FLUSH_GLOBAL, FLUSH_RANGE, 0), 4,
           e.IBV_WC_SUCCESS, WC_FLUSH)
    expect('FLUSH global, range at the MR\'s end',
           flush(r, p, 5, FLUSH_GLOBAL, FLUSH_RANGE, 64, p.mr.buf + SZ - 64),
           5, e.IBV_WC_SUCCESS, WC_FLUSH)


def bad_flush(name, ptype, level, length, addr_off=0, **kw):
    r, p = pair(**kw)
    expect(name, flush(r, p, 9, ptype, level, length, p.mr.buf + addr_off),
           9, e.IBV_WC_REM_ACCESS_ERR)


for dev in (reqdev, respdev):
    if dev.startswith('shca'):
        caps(dev)
if os.environ.get('SHCA_FLUSH_TRAFFIC', '1') == '0':
    print(f'# flush({LABEL}): no FLUSH traffic (SHCA_FLUSH_TRAFFIC=0)')
    sys.exit(1 if FAILS else 0)
if not kernel_has_flush() or not HAVE_WR_FLUSH:
    print(f'# flush({LABEL}): no FLUSH traffic (kernel '
          f'{os.uname().release}, pyverbs without ibv_wr_flush: '
          f'{not HAVE_WR_FLUSH})')
    sys.exit(1 if FAILS else 0)
if os.environ.get('SHCA_FLUSH_RAN'):
    open(os.environ['SHCA_FLUSH_RAN'], 'w').close()
good_flushes()
bad_flush('FLUSH to persistence: remote access error',
          FLUSH_PERSISTENT, FLUSH_RANGE, 64)
bad_flush('FLUSH to an MR without FLUSH_GLOBAL: remote access error',
          FLUSH_GLOBAL, FLUSH_RANGE, 64, resp_mr=BASE)
bad_flush('FLUSH of the whole MR without FLUSH_GLOBAL: remote access error',
          FLUSH_GLOBAL, FLUSH_MR, 0, resp_mr=BASE)
bad_flush('FLUSH past the MR\'s end: remote access error',
          FLUSH_GLOBAL, FLUSH_RANGE, 128, SZ - 64)
if respdev.startswith('shca'):
    # rxe refuses a QP without the permission with another NAK
    bad_flush('FLUSH to a QP without FLUSH_GLOBAL: remote access error',
              FLUSH_GLOBAL, FLUSH_RANGE, 64, resp_qp=BASE)
sys.exit(1 if FAILS else 0)
