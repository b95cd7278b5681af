#!/usr/bin/python3
"""Tag matching (IBV_SRQT_TM) cases on one device: a plain RC QP sends to
an RC QP on a TM SRQ through the device's own RoCE v2 GID.

Checks the statements of ibv_create_srq_ex(3), ibv_post_srq_ops(3),
ibv_create_cq_ex(3) (ibv_wc_read_tm_info) and rdma-core's
Documentation/tag_matching.md, with rdma-core's test scaffolding as
staged by pyverbs-run.py, and prints TAP-like lines:
  - tm_caps: max_rndv_hdr_size 64, max_num_tags 1024, max_ops 1024,
    max_sge 4, IBV_TM_CAP_RC;
  - ibv_create_srq_ex(IBV_SRQT_TM) writes tm_cap back, at least as asked;
    0 or more than the caps, no CQ or no IBV_SRQ_INIT_ATTR_TM: EINVAL;
    only RC QPs may use a TM SRQ;
  - ibv_post_srq_ops: ADD, DEL and SYNC complete (IBV_WC_TM_ADD/DEL/SYNC,
    the op's wr_id) when signaled, and not otherwise; IBV_WC_TM_SYNC_REQ
    exactly while the device counted unexpected messages software has not
    reported (IBV_OPS_TM_SYNC); an ADD made out of phase never matches, a
    SYNC with the right count re-arms later ADDs; DEL of a consumed or an
    already deleted entry: IBV_WC_TM_ERR; of a handle never issued:
    EINVAL; a full list: ENOMEM until a DEL or a match frees an entry;
    more ops in one call than max_ops: ENOMEM, bad_wr the first that did
    not fit, the ones before it done; num_sge above max_sge: EINVAL;
  - receives: a single- and a multi-packet eager message matched through
    a partial mask (MATCH|DATA_VALID, or MATCH then DATA_VALID; tag, priv,
    byte_len, the payload scattered over 4 SGEs, the bytes around it
    untouched); unexpected eager and rendezvous messages, NO_TAG and FIN
    messages whole in ordinary receives; a rendezvous READ by the device
    (QP without send queue) and its FIN at the sender;
  - hostile headers, each landing whole in an ordinary receive as
    IBV_WC_RECV and counted in tm_malformed, the tag list untouched: an
    empty message, a truncated TMH, unknown opcodes, a rendezvous header
    too short, too long or in more than one packet; a rendezvous whose
    R_Key is bad (MATCH, then DATA_VALID with IBV_WC_REM_ACCESS_ERR, the
    QP in error, tm_rndv_errs) or whose length exceeds the tagged buffer
    (IBV_WC_TM_RNDV_INCOMPLETE, the headers in the buffer, no READ, no
    FIN, tm_rndv_incomplete);
  - every case checks the deltas of the device's tm_* counters
    (`rdma statistic show link DEV/1`).
ibv_destroy_srq/ibv_destroy_cq EBUSY while a QP uses the TM SRQ or the
SRQ its CQ are checked by progs/tm_stress.c (pyverbs closes the users
first).

    tm_cases.py --dev shca9 [--hostile]
"""
import errno
import sys
import time

import caselib

POLL_TIMEOUT = 120      # seconds; TCG is slow, a lost completion must not hang
QUIET = 0.5             # seconds to look for a completion that must not come
PSN = 0x2345
SENT = 0xee             # guard bytes
TM_COUNTERS = ('tm_matched', 'tm_unexpected', 'tm_no_tag', 'tm_malformed',
               'tm_rndv_reads', 'tm_rndv_errs', 'tm_rndv_incomplete',
               'tm_op_errs')


def tmh(op, tag, ctx=0):
    """Tag matching header: op, 3 reserved bytes, be32 app_ctx, be64 tag."""
    return bytes([op, 0, 0, 0]) + ctx.to_bytes(4, 'big') + \
        tag.to_bytes(8, 'big')


def rvh(va, rkey, length):
    """Rendezvous header: be64 va, be32 rkey, be32 len."""
    return va.to_bytes(8, 'big') + rkey.to_bytes(4, 'big') + \
        length.to_bytes(4, 'big')


def payload(n, seed):
    return bytes((seed * 31 + i * 7 + (i >> 8) * 3 + 1) & 0xff
                 for i in range(n))


def define_tests():
    import pyverbs.enums as e
    from pyverbs.cq import CQ, CQEX, CqInitAttrEx, PollCqAttr
    from pyverbs.device import Context
    from pyverbs.mr import MR
    from pyverbs.pd import PD
    from pyverbs.pyverbs_error import PyverbsRDMAError
    from pyverbs.qp import QP, QPCap, QPInitAttr
    from pyverbs.srq import SRQ, OpsWr, SrqInitAttrEx
    from pyverbs.wr import RecvWR, SendWR, SGE
    from tests.base import RDMATestCase

    ACC = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
           e.IBV_ACCESS_REMOTE_READ)
    MATCH = e.IBV_WC_TM_MATCH
    DV = e.IBV_WC_TM_DATA_VALID
    SREQ = e.IBV_WC_TM_SYNC_REQ
    SIG = e.IBV_OPS_SIGNALED
    SYNC = e.IBV_OPS_TM_SYNC
    FULL = (1 << 64) - 1
    SLOT = 8192             # ordinary receive buffers
    NSLOT = 16
    ORD = 0x1000            # wr_id of ordinary receive k: ORD + k
    RECV = 0x7700           # recv_wr_id of tagged buffers: RECV + k

    class TmTest(RDMATestCase):
        def setUp(self):
            super().setUp()
            self.server = None
            self.client = None
            self.ctx = Context(name=self.dev_name)
            self.caps = self.ctx.query_device_ex().tm_caps
            if not self.caps.flags & e.IBV_TM_CAP_RC:
                self.fail('IBV_TM_CAP_RC not advertised')
            self.pd = PD(self.ctx)
            self.tmcq = CQEX(self.ctx, CqInitAttrEx(
                cqe=512, wc_flags=e.IBV_WC_STANDARD_FLAGS |
                e.IBV_WC_EX_WITH_TM_INFO))
            self.scq = CQ(self.ctx, 128)
            self.rcq = CQ(self.ctx, 128)
            self.ord = None
            self.fins = None

        def tearDown(self):
            self.ctx.close()
            super().tearDown()

        # --- resources ---------------------------------------------------
        def srq(self, tags=32, ops=16, max_wr=NSLOT, tm=True, cq=True):
            a = SrqInitAttrEx(max_wr=max_wr, max_sge=1)
            a.comp_mask = e.IBV_SRQ_INIT_ATTR_TYPE | e.IBV_SRQ_INIT_ATTR_PD
            a.srq_type = e.IBV_SRQT_TM
            a.pd = self.pd
            if cq:
                a.comp_mask |= e.IBV_SRQ_INIT_ATTR_CQ
                a.cq = self.tmcq
            if tm:
                a.comp_mask |= e.IBV_SRQ_INIT_ATTR_TM
            a.max_num_tags = tags
            a.max_ops = ops
            return SRQ(self.ctx, a), a

        def gid_attr(self):
            return caselib.rc_attr(
                self.ctx.query_gid(self.ib_port, self.gid_index),
                self.gid_index, PSN, ACC, port=self.ib_port)

        def pair(self, srq):
            """A plain RC QP (16 receives posted for FINs) connected to an
            RC QP on srq with no send queue of its own; srq gets NSLOT
            ordinary receives of SLOT bytes."""
            snd = QP(self.pd, QPInitAttr(
                qp_type=e.IBV_QPT_RC, scq=self.scq, rcq=self.rcq,
                cap=QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1,
                          max_recv_sge=1)))
            rcv = QP(self.pd, QPInitAttr(
                qp_type=e.IBV_QPT_RC, scq=self.scq, rcq=self.tmcq, srq=srq,
                cap=QPCap(max_send_wr=0, max_recv_wr=0, max_send_sge=0,
                          max_recv_sge=0)))
            for me, peer in ((snd, rcv), (rcv, snd)):
                a = self.gid_attr()
                a.dest_qp_num = peer.qp_num
                me.to_rts(a)
            self.ord = MR(self.pd, NSLOT * SLOT, e.IBV_ACCESS_LOCAL_WRITE)
            for k in range(NSLOT):
                self.post_ord(srq, k)
            self.fins = MR(self.pd, 16 * 64, e.IBV_ACCESS_LOCAL_WRITE)
            self.fins.write(bytes([SENT]) * 16 * 64, 16 * 64)
            for k in range(16):
                snd.post_recv(RecvWR(wr_id=k, num_sge=1, sg=[
                    SGE(self.fins.buf + 64 * k, 64, self.fins.lkey)]))
            self.src = MR(self.pd, 65536, ACC)
            self.snd, self.rcv = snd, rcv
            return snd, rcv

        def post_ord(self, srq, k):
            self.ord.write(bytes([SENT]) * SLOT, SLOT, k * SLOT)
            srq.post_recv(RecvWR(wr_id=ORD + k, num_sge=1, sg=[
                SGE(self.ord.buf + k * SLOT, SLOT, self.ord.lkey)]))

        def tagged(self, size, nsge=1, gap=64):
            """A tagged buffer of size bytes in nsge SGEs with gap guard
            bytes around each: (MR, [SGE], [(offset, length)])."""
            base = [size // nsge + (1 if k < size % nsge else 0)
                    for k in range(nsge)]
            total = sum(base) + gap * (nsge + 1)
            mr = MR(self.pd, total, e.IBV_ACCESS_LOCAL_WRITE)
            mr.write(bytes([SENT]) * total, total)
            sges, parts, off = [], [], gap
            for n in base:
                sges.append(SGE(mr.buf + off, n, mr.lkey))
                parts.append((off, n))
                off += n + gap
            return mr, sges, parts

        def check_tagged(self, mr, parts, want):
            """The bytes of the SGEs hold want, then guard bytes; every
            gap byte is untouched."""
            got = b''.join(mr.read(n, off) for off, n in parts)
            self.assertEqual(got[:len(want)], want, 'tagged buffer bytes')
            self.assertEqual(got[len(want):], bytes([SENT]) *
                             (len(got) - len(want)),
                             'bytes beyond the data were written')
            edges = [0] + [x for off, n in parts for x in (off, off + n)] + \
                [mr.length]
            for a, b in zip(edges[0::2], edges[1::2]):
                self.assertEqual(mr.read(b - a, a), bytes([SENT]) * (b - a),
                                 f'guard bytes {a}..{b} were written')

        # --- ops ---------------------------------------------------------
        def add(self, srq, tag, mask, sges, recv_wr_id, wr_id=1,
                flags=SIG | SYNC, cnt=0):
            wr = OpsWr(wr_id=wr_id, opcode=e.IBV_WR_TAG_ADD, flags=flags,
                       unexpected_cnt=cnt, recv_wr_id=recv_wr_id,
                       num_sge=len(sges), tag=tag, mask=mask,
                       sg_list=sges if sges else None)
            srq.post_srq_ops(wr)
            return wr.handle

        def op(self, srq, opcode, handle=0, wr_id=2, flags=SIG | SYNC,
               cnt=0):
            wr = OpsWr(wr_id=wr_id, opcode=opcode, flags=flags,
                       unexpected_cnt=cnt)
            wr.handle = handle
            srq.post_srq_ops(wr)

        def one_tag(self, size, tag, recv_wr_id):
            """A TM SRQ, paired, counting, with one tagged buffer of size
            bytes added (synced) for tag: the SRQ, the buffer's
            self.tagged() triple, its handle."""
            srq, _ = self.srq()
            self.pair(srq)
            self.counting()
            m, s, p = self.tagged(size)
            h = self.add(srq, tag, FULL, s, recv_wr_id, flags=SYNC)
            return srq, m, s, p, h

        def delete(self, srq, handle, wr_id, cnt=0, **want):
            """A signaled, synced DEL of handle (unexpected_cnt cnt) and
            its IBV_WC_TM_DEL completion, with the fields of want too."""
            self.op(srq, e.IBV_WR_TAG_DEL, handle, wr_id=wr_id, cnt=cnt)
            self.expect({'wr_id': wr_id, 'opcode': e.IBV_WC_TM_DEL, **want})

        def assert_errno(self, code, fn, *args, **kw):
            with self.assertRaises(PyverbsRDMAError) as ctx:
                fn(*args, **kw)
            self.assertEqual(ctx.exception.error_code, code,
                             f'{ctx.exception}')

        # --- completions -------------------------------------------------
        def poll_tm(self, n, timeout=POLL_TIMEOUT):
            """Up to n completions of the TM CQ within timeout seconds."""
            cq = self.tmcq
            out = []
            end = time.monotonic() + timeout
            attr = PollCqAttr()
            while len(out) < n and time.monotonic() < end:
                if cq.start_poll(attr) != 0:
                    time.sleep(0.001)
                    continue
                while True:
                    info = cq.read_tm_info()
                    out.append({'wr_id': cq.wr_id, 'status': cq.status,
                                'opcode': cq.read_opcode(),
                                'flags': cq.read_wc_flags() &
                                (MATCH | DV | SREQ),
                                'byte_len': cq.read_byte_len(),
                                'qp_num': cq.read_qp_num(),
                                'tag': info.tag, 'priv': info.priv})
                    if len(out) >= n or cq.poll_next() != 0:
                        break
                cq.end_poll()
            return out

        def expect(self, *want, timeout=POLL_TIMEOUT):
            """The next completions of the TM CQ, in order: each a dict of
            the fields to check; then nothing more."""
            got = self.poll_tm(len(want), timeout)
            self.assertEqual(len(got), len(want),
                             f'{len(want)} completions expected, got {got}')
            for k, (g, w) in enumerate(zip(got, want)):
                w = dict(w)
                w.setdefault('status', e.IBV_WC_SUCCESS)
                for key, val in w.items():
                    self.assertEqual(
                        g[key], val, f'completion {k}: {key} is {g[key]}, '
                        f'want {val}: {g}')
            self.nothing_more()
            return got

        def nothing_more(self):
            extra = self.poll_tm(1, QUIET)
            self.assertEqual(extra, [], 'a completion that must not come')

        def send(self, data, ok=True):
            """SEND data from the plain QP; its completion must succeed."""
            if data:
                self.src.write(data, len(data))
            self.snd.post_send(SendWR(wr_id=len(data), num_sge=1, sg=[
                SGE(self.src.buf, len(data), self.src.lkey)]))
            wcs = caselib.poll(self.scq, 1)
            self.assertEqual(len(wcs), 1, 'no send completion')
            if ok:
                self.assertEqual(wcs[0].status, e.IBV_WC_SUCCESS,
                                 f'SEND of {len(data)} bytes')

        def ordinary(self, c, data, opcode):
            """Completion c took an ordinary receive, holding data whole."""
            self.assertTrue(ORD <= c['wr_id'] < ORD + NSLOT,
                            f'not an ordinary receive: {c}')
            self.assertEqual(c['opcode'], opcode, f'{c}')
            self.assertEqual(c['flags'] & (MATCH | DV), 0, f'{c}')
            self.assertEqual(c['tag'], 0, f'tm_info.tag of {c}')
            self.assertEqual(c['byte_len'], len(data), f'{c}')
            self.assertEqual(c['qp_num'], self.rcv.qp_num)
            k = c['wr_id'] - ORD
            self.assertEqual(self.ord.read(len(data) + 16, k * SLOT),
                             data + bytes([SENT]) * 16,
                             'ordinary receive bytes')
            return k

        def no_fin(self):
            wcs = caselib.poll(self.rcq, 1, QUIET)
            self.assertEqual(wcs, [], 'a message (FIN?) at the sender')

        def counting(self):
            self.before = caselib.counters(self.dev_name)
            for c in TM_COUNTERS:
                self.assertIn(c, self.before, f'no counter {c}')

        def counted(self, **want):
            """Counter deltas since counting(): those named as given,
            the other tm_* counters 0 (None: not checked)."""
            now = caselib.counters(self.dev_name)
            for c in TM_COUNTERS:
                w = want.get(c, 0)
                if w is None:
                    continue
                d = now[c] - self.before[c]
                self.assertEqual(d, w, f'{c} grew by {d}, want {w}')

        # --- creation ----------------------------------------------------
        def test_caps(self):
            c = self.caps
            self.assertEqual((c.max_rndv_hdr_size, c.max_num_tags,
                              c.max_ops, c.max_sge), (64, 1024, 1024, 4))
            self.assertTrue(c.flags & e.IBV_TM_CAP_RC)

        def test_create_writes_back(self):
            for tags, ops in ((1, 1), (5, 3), (100, 7), (1024, 1024)):
                srq, a = self.srq(tags, ops)
                self.assertGreaterEqual(a.max_num_tags, tags)
                self.assertGreaterEqual(a.max_ops, ops)
                srq.close()

        def test_create_einval(self):
            for tags, ops in ((0, 4), (1025, 4), (4, 0), (4, 1025),
                              (0xffffffff, 4), (4, 0xffffffff)):
                self.assert_errno(errno.EINVAL, self.srq, tags, ops)
            self.assert_errno(errno.EINVAL, self.srq, 4, 4, cq=False)
            self.assert_errno(errno.EINVAL, self.srq, 4, 4, tm=False)

        def test_only_rc(self):
            srq, _ = self.srq()
            QP(self.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.scq,
                                   rcq=self.tmcq, srq=srq,
                                   cap=QPCap(max_send_wr=1))).close()
            for qpt in (e.IBV_QPT_UC, e.IBV_QPT_UD):
                with self.assertRaises(PyverbsRDMAError,
                                       msg=f'QP type {qpt} on a TM SRQ'):
                    QP(self.pd, QPInitAttr(qp_type=qpt, scq=self.scq,
                                           rcq=self.tmcq, srq=srq,
                                           cap=QPCap(max_send_wr=1)))

        # --- list operations ---------------------------------------------
        def test_op_completions(self):
            srq, _ = self.srq()
            mr, sges, _ = self.tagged(64)
            self.counting()
            h1 = self.add(srq, 1, FULL, sges, RECV, wr_id=11)
            self.expect({'wr_id': 11, 'opcode': e.IBV_WC_TM_ADD, 'flags': 0})
            h2 = self.add(srq, 2, FULL, sges, RECV + 1, wr_id=12, flags=SYNC)
            self.nothing_more()
            self.assertNotEqual(h1, h2, 'two listed entries, one handle')
            self.delete(srq, h1, 13, flags=0)
            self.op(srq, e.IBV_WR_TAG_DEL, h2, wr_id=14, flags=0)
            self.nothing_more()
            self.op(srq, e.IBV_WR_TAG_SYNC, wr_id=15)
            self.expect({'wr_id': 15, 'opcode': e.IBV_WC_TM_SYNC,
                         'flags': 0})
            self.op(srq, e.IBV_WR_TAG_SYNC, wr_id=16, flags=SYNC)
            self.nothing_more()
            # a chain: completions in order, the unsignaled one silent
            w4 = OpsWr(wr_id=24, opcode=e.IBV_WR_TAG_SYNC, flags=SIG | SYNC)
            w3 = OpsWr(wr_id=23, opcode=e.IBV_WR_TAG_DEL, flags=SIG,
                       next_wr=w4)
            w2 = OpsWr(wr_id=22, opcode=e.IBV_WR_TAG_ADD, flags=0,
                       recv_wr_id=RECV + 2, num_sge=1, tag=3, mask=FULL,
                       sg_list=sges)
            w1 = OpsWr(wr_id=21, opcode=e.IBV_WR_TAG_ADD, flags=SIG,
                       recv_wr_id=RECV + 3, num_sge=1, tag=4, mask=FULL,
                       sg_list=sges, next_wr=w2)
            srq.post_srq_ops(w1)
            self.assertNotEqual(w1.handle, w2.handle)
            w3.handle = w1.handle
            srq.post_srq_ops(w3)
            self.expect({'wr_id': 21, 'opcode': e.IBV_WC_TM_ADD},
                        {'wr_id': 23, 'opcode': e.IBV_WC_TM_DEL},
                        {'wr_id': 24, 'opcode': e.IBV_WC_TM_SYNC})
            self.delete(srq, w2.handle, 25)
            self.counted()

        def test_sync_req_and_phase(self):
            srq, _ = self.srq()
            self.pair(srq)
            ma, sa, pa = self.tagged(256)
            mb, sb, pb = self.tagged(256)
            mc, sc, pc = self.tagged(256)
            self.counting()
            # in phase: armed, no SYNC_REQ
            ha = self.add(srq, 0xa, FULL, sa, RECV, wr_id=1)
            self.expect({'wr_id': 1, 'opcode': e.IBV_WC_TM_ADD, 'flags': 0})
            # an unexpected message: the device counts it
            m1 = tmh(e.IBV_TMH_EAGER, 0x99, 7) + payload(40, 1)
            self.send(m1)
            (c,) = self.expect({'opcode': e.IBV_WC_TM_RECV})
            self.post_ord(srq, self.ordinary(c, m1, e.IBV_WC_TM_RECV))
            # an ADD that does not report it: SYNC_REQ, and never matches
            hb = self.add(srq, 0xb, FULL, sb, RECV + 1, wr_id=2, flags=SIG)
            self.expect({'wr_id': 2, 'opcode': e.IBV_WC_TM_ADD,
                         'flags': SREQ})
            m2 = tmh(e.IBV_TMH_EAGER, 0xb, 8) + payload(50, 2)
            self.send(m2)
            (c,) = self.expect({'opcode': e.IBV_WC_TM_RECV})
            self.post_ord(srq, self.ordinary(c, m2, e.IBV_WC_TM_RECV))
            self.check_tagged(mb, pb, b'')
            # a stale count: still out of phase
            self.op(srq, e.IBV_WR_TAG_SYNC, wr_id=3, cnt=1)
            self.expect({'wr_id': 3, 'opcode': e.IBV_WC_TM_SYNC,
                         'flags': SREQ})
            # the right count: in phase, later ADDs match
            self.op(srq, e.IBV_WR_TAG_SYNC, wr_id=4, cnt=2)
            self.expect({'wr_id': 4, 'opcode': e.IBV_WC_TM_SYNC, 'flags': 0})
            self.add(srq, 0xc, FULL, sc, RECV + 2, wr_id=5, flags=SIG)
            self.expect({'wr_id': 5, 'opcode': e.IBV_WC_TM_ADD, 'flags': 0})
            m3 = tmh(e.IBV_TMH_EAGER, 0xc, 9) + payload(60, 3)
            self.send(m3)
            self.expect({'wr_id': RECV + 2, 'opcode': e.IBV_WC_TM_RECV,
                         'flags': MATCH | DV, 'tag': 0xc, 'priv': 9,
                         'byte_len': 60})
            self.check_tagged(mc, pc, payload(60, 3))
            # the entry added in phase before the unexpected ones: armed
            m4 = tmh(e.IBV_TMH_EAGER, 0xa, 10) + payload(70, 4)
            self.send(m4)
            self.expect({'wr_id': RECV, 'opcode': e.IBV_WC_TM_RECV,
                         'flags': MATCH | DV, 'tag': 0xa, 'priv': 10,
                         'byte_len': 70})
            self.check_tagged(ma, pa, payload(70, 4))
            # the disarmed one was never consumed: DEL succeeds
            self.delete(srq, hb, 6, cnt=2, flags=0)
            self.assertNotEqual(ha, hb)
            self.counted(tm_matched=2, tm_unexpected=2)

        def test_del_consumed_polled(self):
            """DEL of an entry a message consumed, its completion polled:
            the handle went back to the application, so the DEL is EINVAL
            from the post (as mlx5: no completion is owed on it) and
            nothing is completed."""
            srq, m, s, _, h = self.one_tag(100, 0x51, RECV)
            self.send(tmh(e.IBV_TMH_EAGER, 0x51) + payload(10, 5))
            self.expect({'wr_id': RECV, 'flags': MATCH | DV,
                         'byte_len': 10})
            self.assert_errno(errno.EINVAL, self.op, srq, e.IBV_WR_TAG_DEL,
                              h, wr_id=31, flags=SIG)
            self.nothing_more()
            self.counted(tm_matched=1)

        def test_del_consumed_unpolled(self):
            """DEL racing the consumption (ibv_post_srq_ops(3)): the
            message arrived (its SEND completed), nothing polled yet."""
            srq, m, s, p, h = self.one_tag(100, 0x52, RECV + 1)
            self.send(tmh(e.IBV_TMH_EAGER, 0x52, 6) + payload(10, 6))
            self.op(srq, e.IBV_WR_TAG_DEL, h, wr_id=32)
            got = self.poll_tm(2)
            self.assertEqual(sorted((c['wr_id'], c['status']) for c in got),
                             [(32, e.IBV_WC_TM_ERR),
                              (RECV + 1, e.IBV_WC_SUCCESS)], f'{got}')
            self.nothing_more()
            self.check_tagged(m, p, payload(10, 6))
            self.counted(tm_matched=1, tm_op_errs=1)

        def test_del_after_match(self):
            """A multi-packet message: DEL after its MATCH, its data
            still to come (DATA_VALID not polled): IBV_WC_TM_ERR, and the
            data lands all the same."""
            srq, m, s, p, h = self.one_tag(5000, 0x53, RECV + 2)
            self.send(tmh(e.IBV_TMH_EAGER, 0x53, 3) + payload(4000, 7))
            (c,) = self.poll_tm(1)
            self.assertEqual((c['wr_id'], c['flags'], c['tag'], c['priv']),
                             (RECV + 2, MATCH, 0x53, 3), f'{c}')
            self.op(srq, e.IBV_WR_TAG_DEL, h, wr_id=33)
            got = self.poll_tm(2)
            self.assertEqual(sorted((c['wr_id'], c['status'], c['flags']
                                     & (MATCH | DV)) for c in got),
                             [(33, e.IBV_WC_TM_ERR, 0),
                              (RECV + 2, e.IBV_WC_SUCCESS, DV)], f'{got}')
            self.nothing_more()
            self.check_tagged(m, p, payload(4000, 7))
            self.counted(tm_matched=1, tm_op_errs=1)

        def test_del_deleted(self):
            """DEL of an entry deleted already: EINVAL from the post, no
            completion (the handle is the application's again)."""
            srq, _ = self.srq()
            m, s, _ = self.tagged(100)
            self.counting()
            h = self.add(srq, 0x54, FULL, s, RECV + 3, flags=SYNC)
            self.op(srq, e.IBV_WR_TAG_DEL, h, wr_id=34, flags=SYNC)
            self.nothing_more()
            self.assert_errno(errno.EINVAL, self.op, srq, e.IBV_WR_TAG_DEL,
                              h, wr_id=35, flags=SIG | SYNC)
            self.nothing_more()
            self.counted()

        def test_del_never_issued(self):
            """DEL of a handle never issued: EINVAL from the post, bad_wr
            that DEL, no completion."""
            srq, a = self.srq()
            for bad in (a.max_num_tags, a.max_num_tags + 1, 0xffffffff):
                wr = OpsWr(wr_id=36, opcode=e.IBV_WR_TAG_DEL, flags=SIG)
                wr.handle = bad
                badwr = OpsWr()
                with self.assertRaises(PyverbsRDMAError) as ctx:
                    srq.post_srq_ops(wr, badwr)
                self.assertEqual(ctx.exception.error_code, errno.EINVAL,
                                 f'DEL of handle {bad}')
                self.assertEqual(badwr.wr_id, 36)
            self.nothing_more()

        def test_list_full(self):
            srq, a = self.srq(tags=4)
            self.pair(srq)
            n = a.max_num_tags
            m, s, _ = self.tagged(64)
            handles = [self.add(srq, 0x100 + k, FULL, s, RECV + k,
                                flags=SYNC) for k in range(n)]
            self.assertEqual(len(set(handles)), n, 'handles repeat')
            self.assert_errno(errno.ENOMEM, self.add, srq, 0x999, FULL, s,
                              RECV + n)
            self.nothing_more()
            # a DEL frees an entry
            self.op(srq, e.IBV_WR_TAG_DEL, handles[1], flags=SYNC)
            self.add(srq, 0x200, FULL, s, RECV + 1, flags=SYNC)
            self.assert_errno(errno.ENOMEM, self.add, srq, 0x999, FULL, s,
                              RECV + n)
            # and so does a match (once its completion was polled)
            self.send(tmh(e.IBV_TMH_EAGER, 0x100) + payload(8, 8))
            self.expect({'wr_id': RECV, 'flags': MATCH | DV,
                         'byte_len': 8})
            self.add(srq, 0x201, FULL, s, RECV, flags=SYNC)
            self.assert_errno(errno.ENOMEM, self.add, srq, 0x999, FULL, s,
                              RECV + n)
            self.nothing_more()

        def test_too_many_ops(self):
            srq, a = self.srq(ops=2)
            m = a.max_ops
            wrs = [OpsWr(wr_id=100 + k, opcode=e.IBV_WR_TAG_SYNC,
                         flags=SIG | SYNC) for k in range(m + 1)]
            for w1, w2 in zip(wrs, wrs[1:]):
                w1.next_wr = w2
            badwr = OpsWr()
            with self.assertRaises(PyverbsRDMAError) as ctx:
                srq.post_srq_ops(wrs[0], badwr)
            self.assertEqual(ctx.exception.error_code, errno.ENOMEM)
            self.assertEqual(badwr.wr_id, 100 + m,
                             f'bad_wr: not the op after {m} (max_ops)')
            self.expect(*({'wr_id': 100 + k, 'opcode': e.IBV_WC_TM_SYNC}
                          for k in range(m)))
            # max_ops in one call are fine
            chain = [OpsWr(wr_id=200 + k, opcode=e.IBV_WR_TAG_SYNC,
                           flags=SIG | SYNC) for k in range(m)]
            for w1, w2 in zip(chain, chain[1:]):
                w1.next_wr = w2
            srq.post_srq_ops(chain[0])
            self.expect(*({'wr_id': 200 + k, 'opcode': e.IBV_WC_TM_SYNC}
                          for k in range(m)))

        def test_num_sge(self):
            srq, _ = self.srq()
            self.pair(srq)
            self.assertEqual(self.caps.max_sge, 4)
            m, s, p = self.tagged(5 * 300, nsge=5)
            self.assert_errno(errno.EINVAL, self.add, srq, 0x77, FULL, s,
                              RECV)
            self.nothing_more()
            m, s, p = self.tagged(4 * 300, nsge=4)
            self.add(srq, 0x77, FULL, s, RECV, flags=SYNC)
            data = payload(1000, 9)
            self.send(tmh(e.IBV_TMH_EAGER, 0x77, 1) + data)
            self.expect({'wr_id': RECV, 'flags': MATCH | DV,
                         'byte_len': 1000})
            self.check_tagged(m, p, data)

        # --- receives ----------------------------------------------------
        def test_eager_matched(self):
            srq, _ = self.srq()
            self.pair(srq)
            self.counting()
            # one packet, through a partial mask, the message's tag set
            # in the bits the mask ignores
            m, s, p = self.tagged(1200, nsge=3)
            self.add(srq, 0x1200, 0xff00ff00, s, RECV, flags=SYNC)
            data = payload(1000, 10)
            self.send(tmh(e.IBV_TMH_EAGER, 0xabcd00001234, 0x1234567)
                      + data)
            self.expect({'wr_id': RECV, 'opcode': e.IBV_WC_TM_RECV,
                         'flags': MATCH | DV, 'tag': 0xabcd00001234,
                         'priv': 0x1234567, 'byte_len': 1000,
                         'qp_num': self.rcv.qp_num})
            self.check_tagged(m, p, data)
            # several packets: MATCH when it starts, DATA_VALID at its end
            m, s, p = self.tagged(9000, nsge=4)
            self.add(srq, 0x42, FULL, s, RECV + 1, flags=SYNC)
            data = payload(8191, 11)
            self.send(tmh(e.IBV_TMH_EAGER, 0x42, 0xfeed) + data)
            self.expect({'wr_id': RECV + 1, 'opcode': e.IBV_WC_TM_RECV,
                         'flags': MATCH, 'tag': 0x42, 'priv': 0xfeed},
                        {'wr_id': RECV + 1, 'opcode': e.IBV_WC_TM_RECV,
                         'flags': DV, 'tag': 0, 'byte_len': 8191})
            self.check_tagged(m, p, data)
            # an empty payload; a tag with mask 0
            m, s, p = self.tagged(16)
            self.add(srq, 0, 0, s, RECV + 2, flags=SYNC)
            self.send(tmh(e.IBV_TMH_EAGER, 0xffffffffffffffff, 5))
            self.expect({'wr_id': RECV + 2, 'flags': MATCH | DV,
                         'tag': 0xffffffffffffffff, 'priv': 5,
                         'byte_len': 0})
            self.check_tagged(m, p, b'')
            self.no_fin()
            self.counted(tm_matched=3)

        def test_unexpected_and_no_tag(self):
            srq, _ = self.srq()
            self.pair(srq)
            m, s, p = self.tagged(64)
            self.add(srq, 0x10, FULL, s, RECV, flags=SYNC)
            self.counting()
            msgs = [
                (tmh(e.IBV_TMH_EAGER, 0x11, 1) + payload(3000, 12),
                 e.IBV_WC_TM_RECV),
                (tmh(e.IBV_TMH_RNDV, 0x10 | (1 << 40), 2) +
                 rvh(self.src.buf, self.src.rkey, 100) + payload(8, 13),
                 e.IBV_WC_TM_RECV),
                (tmh(e.IBV_TMH_NO_TAG, 0x10, 3) + payload(50, 14),
                 e.IBV_WC_TM_NO_TAG),
                (bytes([e.IBV_TMH_NO_TAG]), e.IBV_WC_TM_NO_TAG),
                (tmh(e.IBV_TMH_FIN, 0x10, 4) + rvh(0x1000, 0x22, 33),
                 e.IBV_WC_TM_NO_TAG),
                (tmh(e.IBV_TMH_NO_TAG, 0x10) + payload(2500, 15),
                 e.IBV_WC_TM_NO_TAG),
            ]
            for data, opcode in msgs:
                self.send(data)
                (c,) = self.expect({'opcode': opcode})
                self.post_ord(srq, self.ordinary(c, data, opcode))
            self.check_tagged(m, p, b'')
            self.no_fin()
            self.counted(tm_unexpected=2, tm_no_tag=4)

        def test_rndv(self):
            srq, _ = self.srq()
            self.pair(srq)
            self.counting()
            m, s, p = self.tagged(8000, nsge=2)
            self.add(srq, 0x600d, FULL, s, RECV, flags=SYNC)
            data = payload(6000, 16)
            self.src.write(bytes(1024) + data, 1024 + len(data))
            head = tmh(e.IBV_TMH_RNDV, 0x600d, 0x77) + \
                rvh(self.src.buf + 1024, self.src.rkey, 6000)
            msg = head + payload(8, 17)
            self.src.write(msg, len(msg), 32768)
            self.snd.post_send(SendWR(num_sge=1, sg=[
                SGE(self.src.buf + 32768, len(msg), self.src.lkey)]))
            wcs = caselib.poll(self.scq, 1)
            self.assertEqual([w.status for w in wcs], [e.IBV_WC_SUCCESS])
            self.expect({'wr_id': RECV, 'opcode': e.IBV_WC_TM_RECV,
                         'flags': MATCH, 'tag': 0x600d, 'priv': 0x77},
                        {'wr_id': RECV, 'opcode': e.IBV_WC_TM_RECV,
                         'flags': DV, 'tag': 0, 'byte_len': 6000})
            self.check_tagged(m, p, data)
            fin = caselib.poll(self.rcq, 1)
            self.assertEqual(len(fin), 1, 'no FIN at the sender')
            f = fin[0]
            self.assertEqual((f.status, f.opcode, f.byte_len),
                             (e.IBV_WC_SUCCESS, e.IBV_WC_RECV, 32))
            self.assertEqual(self.fins.read(64, 64 * f.wr_id),
                             tmh(e.IBV_TMH_FIN, 0x600d, 0x77) + head[16:]
                             + bytes([SENT]) * 32, 'FIN bytes')
            self.no_fin()
            self.counted(tm_matched=1, tm_rndv_reads=1)

        # --- hostile headers ---------------------------------------------
        def test_malformed(self):
            srq, _ = self.srq()
            self.pair(srq)
            m, s, p = self.tagged(256)
            tag = 0x5a5a
            h = self.add(srq, tag, FULL, s, RECV, flags=SYNC)
            self.counting()
            va, rkey = self.src.buf, self.src.rkey
            cases = [
                b'',
                tmh(e.IBV_TMH_EAGER, tag)[:15],
                tmh(e.IBV_TMH_EAGER, tag)[:1],
                tmh(4, tag) + payload(48, 18),
                tmh(0xff, tag) + payload(2000, 19),
                tmh(e.IBV_TMH_RNDV, tag),
                tmh(e.IBV_TMH_RNDV, tag) + rvh(va, rkey, 64)[:15],
                tmh(e.IBV_TMH_RNDV, tag) + rvh(va, rkey, 64) +
                payload(33, 20),
                tmh(e.IBV_TMH_RNDV, tag) + rvh(va, rkey, 64) +
                payload(1500, 21),
            ]
            for data in cases:
                try:
                    self.send(data)
                    (c,) = self.expect({'opcode': e.IBV_WC_RECV})
                    self.post_ord(srq, self.ordinary(c, data,
                                                     e.IBV_WC_RECV))
                except AssertionError as ex:
                    op = data[0] if data else None
                    raise AssertionError(f'{len(data)} bytes, op {op}: '
                                         f'{ex}') from None
            self.counted(tm_malformed=len(cases))
            # the entry was never consumed
            self.check_tagged(m, p, b'')
            self.delete(srq, h, 41)
            self.no_fin()

        def test_rndv_bad_rkey(self):
            srq, _ = self.srq()
            self.pair(srq)
            m, s, p = self.tagged(4096)
            # the R_Key of an MR no more (and none registered after it)
            gone = MR(self.pd, 4096, ACC)
            bad_rkey = gone.rkey
            gone.close()
            self.add(srq, 0xbad, FULL, s, RECV, flags=SYNC)
            self.counting()
            self.send(tmh(e.IBV_TMH_RNDV, 0xbad, 0x33) +
                      rvh(self.src.buf, bad_rkey, 3000))
            got = self.poll_tm(2)
            self.assertEqual(len(got), 2, f'{got}')
            c1, c2 = got
            self.assertEqual((c1['wr_id'], c1['status'], c1['opcode'],
                              c1['flags'], c1['tag'], c1['priv']),
                             (RECV, e.IBV_WC_SUCCESS, e.IBV_WC_TM_RECV,
                              MATCH, 0xbad, 0x33), f'{c1}')
            self.assertEqual((c2['wr_id'], c2['status'],
                              c2['flags'] & DV),
                             (RECV, e.IBV_WC_REM_ACCESS_ERR, DV), f'{c2}')
            self.nothing_more()
            self.check_tagged(m, p, b'')
            qa, _ = self.rcv.query(e.IBV_QP_STATE)
            self.assertEqual(qa.qp_state, e.IBV_QPS_ERR,
                             'the TM QP is not in the error state')
            # no FIN (the sender's receives may be flushed)
            wcs = caselib.poll(self.rcq, 16, QUIET)
            self.assertEqual([w for w in wcs
                              if w.status == e.IBV_WC_SUCCESS], [],
                             'a message (FIN?) at the sender')
            self.counted(tm_matched=None, tm_rndv_reads=None,
                         tm_rndv_errs=1)

        def test_rndv_incomplete(self):
            srq, _ = self.srq()
            self.pair(srq)
            m, s, p = self.tagged(100, nsge=2)
            self.add(srq, 0x1c, FULL, s, RECV, flags=SYNC)
            self.counting()
            head = tmh(e.IBV_TMH_RNDV, 0x1c, 0x44) + \
                rvh(self.src.buf, self.src.rkey, 5000) + payload(20, 22)
            self.send(head)
            (c,) = self.expect({'wr_id': RECV,
                                'status': e.IBV_WC_TM_RNDV_INCOMPLETE})
            self.assertEqual(c['flags'] & (MATCH | DV), MATCH | DV, f'{c}')
            self.check_tagged(m, p, head)
            self.no_fin()
            self.counted(tm_matched=None, tm_rndv_incomplete=1)

    return caselib.named(TmTest, 'tm_cases')


# --hostile (the debug kernel's lifecycle run): only these.
HOSTILE = ('test_malformed', 'test_rndv_bad_rkey', 'test_rndv_incomplete',
           'test_del_consumed_unpolled', 'test_del_after_match',
           'test_del_never_issued')


if __name__ == '__main__':
    sys.exit(caselib.run_cases(define_tests, 'tm', hostile=HOSTILE))
