#!/usr/bin/python3
"""XRC and SRQ resize cases on one device (XRC_SEND to XRC_RECV loopback
through the device's own RoCE v2 GID).

Checks the statements of ibv_create_srq_ex(3), ibv_modify_srq(3),
ibv_post_srq_recv(3) and ibv_create_qp(3) for XRC SRQs and SRQ resize,
with rdma-core's test scaffolding as staged by pyverbs-run.py, and prints
TAP-like lines:
  - IBV_DEVICE_XRC and IBV_DEVICE_SRQ_RESIZE are advertised;
  - ibv_create_srq_ex writes max_wr/max_sge back, at least as requested,
    for basic and XRC SRQs; beyond the device's limits: EINVAL;
  - an RC or UD QP given an XRC SRQ, a UC QP given any SRQ: EINVAL; RC
    and UD QPs with a basic SRQ ignore max_recv_wr/max_recv_sge;
  - ibv_post_srq_recv on an XRC SRQ stops at the first bad WR, sets
    bad_wr and posts none after it (proven with traffic);
  - growing a basic or an XRC SRQ (IBV_SRQ_MAX_WR) keeps every posted
    WQE: all complete in posting order with their bytes; the new max_wr is
    reported; max_wr above max_srq_wr, below the posted count, or a limit
    above max_wr: EINVAL;
  - an RDMA WRITE naming an XRC SRQ checks the R_Key against that SRQ's
    PD: a WRITE with an R_Key of another PD is refused
    (IBV_WC_REM_ACCESS_ERR) and nothing is written.

    xrc_cases.py --dev shca0
"""
import errno
import sys

import caselib

PSN = 0x1234


def define_tests():
    import pyverbs.enums as e
    from pyverbs.cq import CQ
    from pyverbs.mr import MR
    from pyverbs.pd import PD
    from pyverbs.pyverbs_error import PyverbsRDMAError
    from pyverbs.qp import QP, QPCap, QPInitAttr, QPInitAttrEx
    from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr, SrqInitAttrEx
    from pyverbs.wr import RecvWR, SendWR, SGE
    from tests.base import RDMATestCase

    ACC = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
           e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)

    class XrcTest(RDMATestCase):
        def setUp(self):
            super().setUp()
            self.server = None
            self.client = None
            self.ctx, self.pd, self.cq = caselib.ctx_pd_cq(self.dev_name, 512)
            self.attr = self.ctx.query_device()
            self.scq = CQ(self.ctx, 512)
            self.files = []

        def tearDown(self):
            self.ctx.close()
            for f in self.files:
                f.close()
            super().tearDown()

        # --- resources ---------------------------------------------------
        def xrcd(self):
            x, tmp = caselib.xrcd(self.ctx)
            self.files.append(tmp)
            return x

        def srq_ex(self, xrcd=None, pd=None, max_wr=16, max_sge=1):
            """A basic SRQ (xrcd None) or an XRC SRQ through
            ibv_create_srq_ex; also returns its init attr, written back."""
            if xrcd is not None:
                return caselib.xrc_srq(self.ctx, pd or self.pd, xrcd, self.cq,
                                       max_wr, max_sge)
            a = SrqInitAttrEx(max_wr=max_wr, max_sge=max_sge)
            a.pd = pd or self.pd
            a.comp_mask = e.IBV_SRQ_INIT_ATTR_TYPE | e.IBV_SRQ_INIT_ATTR_PD
            a.srq_type = e.IBV_SRQT_BASIC
            return SRQ(self.ctx, a), a

        def gid_attr(self):
            return caselib.rc_attr(
                self.ctx.query_gid(self.ib_port, self.gid_index),
                self.gid_index, PSN, ACC, port=self.ib_port)

        def xrc_pair(self, xrcd, pd=None):
            """An XRC_SEND QP connected to an XRC_RECV QP of xrcd."""
            tgt = QP(self.ctx, QPInitAttrEx(qp_type=e.IBV_QPT_XRC_RECV,
                                            comp_mask=e.IBV_QP_INIT_ATTR_XRCD,
                                            xrcd=xrcd))
            ini = QP(self.ctx, QPInitAttrEx(
                qp_type=e.IBV_QPT_XRC_SEND, sq_sig_all=1,
                comp_mask=e.IBV_QP_INIT_ATTR_PD, pd=pd or self.pd,
                scq=self.scq, cap=QPCap(max_send_wr=64, max_send_sge=1,
                                        max_recv_wr=0, max_recv_sge=0)))
            a = self.gid_attr()
            a.dest_qp_num = ini.qp_num
            tgt.to_rts(a)
            a = self.gid_attr()
            a.dest_qp_num = tgt.qp_num
            ini.to_rts(a)
            return ini, tgt

        def rc_pair(self, srq):
            """An RC QP (sender) connected to an RC QP on srq."""
            qps = [QP(self.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.scq,
                                          rcq=self.cq, srq=s,
                                          cap=QPCap(max_send_wr=64,
                                                    max_recv_wr=1,
                                                    max_send_sge=1,
                                                    max_recv_sge=1)))
                   for s in (None, srq)]
            for me, peer in ((qps[0], qps[1]), (qps[1], qps[0])):
                a = self.gid_attr()
                a.dest_qp_num = peer.qp_num
                me.to_rts(a)
            return qps[0], qps[1]

        def slots(self, count, size, fill=0):
            mr = MR(self.pd, count * size, e.IBV_ACCESS_LOCAL_WRITE)
            mr.write(bytes([fill]) * (count * size), count * size)
            return mr

        def post(self, srq, mr, first, count, size):
            """WQEs wr_id i -> slot i of mr, for i in first..first+count-1."""
            for i in range(first, first + count):
                srq.post_recv(RecvWR(wr_id=i, num_sge=1, sg=[
                    SGE(mr.buf + i * size, size, mr.lkey)]))

        def send(self, qp, src, off, length, srqn=None, wr_id=0,
                 opcode=e.IBV_WR_SEND, raddr=None, rkey=None):
            wr = SendWR(wr_id=wr_id, opcode=opcode, num_sge=1,
                        sg=[SGE(src.buf + off, length, src.lkey)])
            if srqn is not None:
                wr.set_qp_type_xrc(srqn)
            if raddr is not None:
                wr.set_wr_rdma(rkey, raddr)
            qp.post_send(wr)

        def send_msgs(self, qp, first, count, size, srqn=None):
            """Messages first..first+count-1, each size bytes of a pattern
            of its own, sent in order in batches; every send must succeed."""
            src = MR(self.pd, count * size, e.IBV_ACCESS_LOCAL_WRITE)
            for k in range(count):
                src.write(msg(first + k, size), size, k * size)
            done = 0
            while done < count:
                batch = min(32, count - done)
                for k in range(done, done + batch):
                    self.send(qp, src, k * size, size, srqn, wr_id=first + k)
                wcs = caselib.poll(self.scq, batch)
                self.assertEqual(len(wcs), batch, 'send completions missing')
                for wc in wcs:
                    self.assertEqual(wc.status, e.IBV_WC_SUCCESS,
                                     f'send {wc.wr_id}: status {wc.status}')
                done += batch

        def expect_in_order(self, mr, first, count, size, qp_num):
            """count receive completions on self.cq consuming WQEs
            first.. in posting order, each holding message wr_id."""
            wcs = caselib.poll(self.cq, count)
            self.assertEqual(len(wcs), count, 'receive completions missing')
            for k, wc in enumerate(wcs):
                self.assertEqual(wc.status, e.IBV_WC_SUCCESS)
                self.assertEqual(wc.opcode, e.IBV_WC_RECV)
                self.assertEqual(wc.qp_num, qp_num)
                self.assertEqual(wc.wr_id, first + k,
                                 f'completion {k} consumed WQE {wc.wr_id}')
                self.assertEqual(wc.byte_len, size)
                self.assertEqual(mr.read(size, wc.wr_id * size),
                                 msg(wc.wr_id, size),
                                 f'slot {wc.wr_id}: wrong bytes')

        def assert_errno(self, code, fn, *args):
            with self.assertRaises(PyverbsRDMAError) as ctx:
                fn(*args)
            self.assertEqual(ctx.exception.error_code, code,
                             f'{ctx.exception}')

        # --- cases -----------------------------------------------------
        def test_device_caps(self):
            self.assertTrue(self.attr.device_cap_flags & e.IBV_DEVICE_XRC,
                            'IBV_DEVICE_XRC not set')
            self.assertTrue(self.attr.device_cap_flags &
                            e.IBV_DEVICE_SRQ_RESIZE,
                            'IBV_DEVICE_SRQ_RESIZE not set')
            self.assertGreater(self.attr.max_srq_wr, 64)

        def test_create_srq_ex_writes_back(self):
            xrcd = self.xrcd()
            for x in (None, xrcd):
                srq, a = self.srq_ex(x, max_wr=100, max_sge=3)
                self.assertGreaterEqual(a.max_wr, 100)
                self.assertGreaterEqual(a.max_sge, 3)
                q = srq.query()
                self.assertGreaterEqual(q.max_wr, 100)
                self.assertGreaterEqual(q.max_sge, 3)
                if x is not None:
                    self.assertGreater(srq.get_srq_num(), 0)
                srq.close()
                self.assert_errno(errno.EINVAL, self.srq_ex, x, None,
                                  self.attr.max_srq_wr + 1)
                self.assert_errno(errno.EINVAL, self.srq_ex, x, None, 16,
                                  self.attr.max_srq_sge + 1)

        def test_srq_type_rules(self):
            xsrq, _ = self.srq_ex(self.xrcd())
            bsrq = SRQ(self.pd, SrqInitAttr(SrqAttr(max_wr=16, max_sge=1)))
            for qpt in (e.IBV_QPT_RC, e.IBV_QPT_UD):
                self.assert_errno(
                    errno.EINVAL, QP, self.pd,
                    QPInitAttr(qp_type=qpt, scq=self.scq, rcq=self.cq,
                               srq=xsrq, cap=QPCap()))
            self.assert_errno(
                errno.EINVAL, QP, self.pd,
                QPInitAttr(qp_type=e.IBV_QPT_UC, scq=self.scq, rcq=self.cq,
                           srq=bsrq, cap=QPCap()))
            big = QPCap(max_recv_wr=1 << 30, max_recv_sge=1 << 20)
            for qpt in (e.IBV_QPT_RC, e.IBV_QPT_UD):
                QP(self.pd, QPInitAttr(qp_type=qpt, scq=self.scq, rcq=self.cq,
                                       srq=bsrq, cap=big)).close()

        def test_post_stops_at_first_bad_wr(self):
            xrcd = self.xrcd()
            srq, _ = self.srq_ex(xrcd, max_wr=16, max_sge=2)
            max_sge = srq.query().max_sge
            size = 64
            mr = self.slots(110, size)

            def sges(i, n):
                return [SGE(mr.buf + i * size, size, mr.lkey)] * n
            wr3 = RecvWR(wr_id=3, num_sge=1, sg=sges(3, 1))
            wr2 = RecvWR(wr_id=2, num_sge=max_sge + 1,
                         sg=sges(2, max_sge + 1), next_wr=wr3)
            wr1 = RecvWR(wr_id=1, num_sge=1, sg=sges(1, 1), next_wr=wr2)
            wr0 = RecvWR(wr_id=0, num_sge=1, sg=sges(0, 1), next_wr=wr1)
            bad = RecvWR(wr_id=777, num_sge=1, sg=sges(0, 1))
            with self.assertRaises(PyverbsRDMAError) as ctx:
                srq.post_recv(wr0, bad)
            self.assertEqual(ctx.exception.error_code, errno.EINVAL)
            self.assertEqual(bad.wr_id, 2, 'bad_wr is not the bad WR')
            ini, tgt = self.xrc_pair(xrcd)
            srqn = srq.get_srq_num()
            # the two WRs before the bad one were posted, in order
            self.send_msgs(ini, 0, 2, size, srqn)
            self.expect_in_order(mr, 0, 2, size, tgt.qp_num)
            # the one after it was not: the next message takes WQE 99
            self.post(srq, mr, 99, 1, size)
            src = MR(self.pd, size, e.IBV_ACCESS_LOCAL_WRITE)
            src.write(msg(99, size), size)
            self.send(ini, src, 0, size, srqn, wr_id=99)
            wcs = caselib.poll(self.scq, 1)
            self.assertEqual([w.status for w in wcs], [e.IBV_WC_SUCCESS])
            wcs = caselib.poll(self.cq, 1)
            self.assertEqual([(w.status, w.wr_id) for w in wcs],
                             [(e.IBV_WC_SUCCESS, 99)],
                             'a WR after the bad one was posted')
            self.assertEqual(mr.read(size, 99 * size), msg(99, size))
            self.assertEqual(caselib.poll(self.cq, 1, secs=1), [])

        def resize(self, xrc):
            """Fill an SRQ, grow it, post more, then receive every WQE."""
            size = 64
            xrcd = self.xrcd() if xrc else None
            srq, _ = self.srq_ex(xrcd, max_wr=8)
            old = srq.query().max_wr
            self.assertGreaterEqual(old, 8)
            n = min(old, 256)
            mr = self.slots(3 * n, size, 0x55)
            self.post(srq, mr, 0, n, size)
            want = 3 * n + 8
            srq.modify(SrqAttr(max_wr=want), e.IBV_SRQ_MAX_WR)
            self.assertGreaterEqual(srq.query().max_wr, want,
                                    'ibv_query_srq: max_wr not grown')
            self.post(srq, mr, n, 2 * n, size)
            if xrc:
                ini, tgt = self.xrc_pair(xrcd)
                srqn, rqpn = srq.get_srq_num(), tgt.qp_num
            else:
                ini, tgt = self.rc_pair(srq)
                srqn, rqpn = None, tgt.qp_num
            self.send_msgs(ini, 0, 3 * n, size, srqn)
            self.expect_in_order(mr, 0, 3 * n, size, rqpn)
            # bad sizes
            self.assert_errno(errno.EINVAL, srq.modify,
                              SrqAttr(max_wr=self.attr.max_srq_wr + 1),
                              e.IBV_SRQ_MAX_WR)
            got = srq.query().max_wr
            self.assert_errno(errno.EINVAL, srq.modify,
                              SrqAttr(srq_limit=got + 1), e.IBV_SRQ_LIMIT)
            mr.write(b'\x55' * (10 * size), 10 * size)
            self.post(srq, mr, 0, 10, size)
            self.assert_errno(errno.EINVAL, srq.modify, SrqAttr(max_wr=4),
                              e.IBV_SRQ_MAX_WR)
            self.assertGreaterEqual(srq.query().max_wr, want,
                                    'a refused resize changed max_wr')
            # the 10 WQEs survived the refused shrink
            self.send_msgs(ini, 0, 10, size, srqn)
            self.expect_in_order(mr, 0, 10, size, rqpn)

        def test_resize_basic_srq(self):
            self.resize(False)

        def test_resize_xrc_srq(self):
            self.resize(True)

        def test_rdma_write_checks_the_srq_pd(self):
            """The R_Key of an RDMA WRITE to an XRC target is validated
            against the PD of the XRC SRQ it names."""
            xrcd = self.xrcd()
            pd2 = PD(self.ctx)
            srq1, _ = self.srq_ex(xrcd)
            srq2, _ = self.srq_ex(xrcd, pd=pd2)
            dst = MR(self.pd, 4096, ACC)
            dst.write(b'\x11' * 4096, 4096)
            src = MR(self.pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
            src.write(b'\x99' * 4096, 4096)
            ini, _ = self.xrc_pair(xrcd)
            self.send(ini, src, 0, 2048, srq1.get_srq_num(), wr_id=1,
                      opcode=e.IBV_WR_RDMA_WRITE, raddr=dst.buf,
                      rkey=dst.rkey)
            wcs = caselib.poll(self.scq, 1)
            self.assertEqual([w.status for w in wcs], [e.IBV_WC_SUCCESS])
            self.assertEqual(dst.read(2048, 0), b'\x99' * 2048)
            ini2, _ = self.xrc_pair(xrcd)
            self.send(ini2, src, 0, 2048, srq2.get_srq_num(), wr_id=2,
                      opcode=e.IBV_WR_RDMA_WRITE, raddr=dst.buf + 2048,
                      rkey=dst.rkey)
            wcs = caselib.poll(self.scq, 1)
            self.assertEqual([w.status for w in wcs],
                             [e.IBV_WC_REM_ACCESS_ERR])
            self.assertEqual(dst.read(2048, 2048), b'\x11' * 2048,
                             'the WRITE landed through another PD')

    def msg(k, size):
        """Message k: its number, then a pattern of its own."""
        head = k.to_bytes(4, 'little')
        return head + bytes((k * 31 + i * 7 + 1) & 0xff
                            for i in range(4, size))

    return caselib.named(XrcTest, 'xrc_cases')


if __name__ == '__main__':
    sys.exit(caselib.run_cases(define_tests, 'xrc'))
