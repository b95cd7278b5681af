#!/usr/bin/python3
"""Shared receive queue cases on one device (RC and UD loopback).

Checks the statements of ibv_create_srq(3), ibv_modify_srq(3),
ibv_post_srq_recv(3) and the SRQ NOTES of ibv_create_qp(3) with
rdma-core's own test resources (tests.base RCResources/UDResources with
with_srq=True) as staged by pyverbs-run.py, and prints TAP-like lines.

    srq_cases.py --dev shca0
"""
import errno
import signal
import sys
import time

import caselib

EVENT_TIMEOUT = 120     # seconds; TCG is slow, a lost event must not hang


def define_tests():
    import pyverbs.enums as e
    from pyverbs.pyverbs_error import PyverbsRDMAError
    from pyverbs.mr import MR
    from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
    from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr, SrqInitAttrEx
    from pyverbs.wr import RecvWR, SendWR, SGE
    from tests.base import RDMATestCase, RCResources, UDResources
    import tests.utils as u

    GRH = 40

    def wait_async_event(ctx, want):
        """The next async event of ctx, which must be `want`."""
        def expired(*_):
            raise TimeoutError(f'no async event {want} in {EVENT_TIMEOUT} s')
        old = signal.signal(signal.SIGALRM, expired)
        signal.alarm(EVENT_TIMEOUT)
        try:
            ev = ctx.get_async_event()
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        got = ev.event_type
        ev.ack()
        if got != want:
            raise AssertionError(f'async event {got}, expected {want}')

    class SrqTest(RDMATestCase):
        def setUp(self):
            super().setUp()
            self.server = None
            self.client = None

        def pair(self, resource=RCResources, qp_count=1):
            self.client = resource(**self.dev_info, with_srq=True,
                                   qp_count=qp_count)
            self.server = resource(**self.dev_info, with_srq=True,
                                   qp_count=qp_count)
            self.client.pre_run(self.server.psns, self.server.qps_num)
            self.server.pre_run(self.client.psns, self.client.qps_num)

        def send(self, player, qp_idx, sge, ah=None):
            wr = SendWR(opcode=e.IBV_WR_SEND, num_sge=1, sg=[sge])
            if ah:
                wr.set_wr_ud(ah, self.server.qps_num[qp_idx],
                             player.UD_QKEY)
            player.qps[qp_idx].post_send(wr)

        def recv_slots(self, player, count, size):
            """An MR of count slots of size bytes, each posted to the SRQ."""
            mr = MR(player.pd, count * size, e.IBV_ACCESS_LOCAL_WRITE)
            for i in range(count):
                mr.write(b'\0' * size, size, i * size)
                player.srq.post_recv(RecvWR(wr_id=i, num_sge=1, sg=[
                    SGE(mr.buf + i * size, size, mr.lkey)]))
            return mr

        def test_caps_at_least_requested(self):
            res = RCResources(**self.dev_info)
            attr = res.ctx.query_device()
            self.assertGreater(attr.max_srq, 0)
            srq = SRQ(res.pd, SrqInitAttr(SrqAttr(max_wr=100, max_sge=3)))
            got = srq.query()
            self.assertGreaterEqual(got.max_wr, 100)
            self.assertGreaterEqual(got.max_sge, 3)
            self.assertEqual(got.srq_limit, 0)
            for bad in (SrqAttr(max_wr=attr.max_srq_wr + 1),
                        SrqAttr(max_wr=16, max_sge=attr.max_srq_sge + 1)):
                with self.assertRaises(PyverbsRDMAError) as ctx:
                    SRQ(res.pd, SrqInitAttr(bad))
                self.assertEqual(ctx.exception.error_code, errno.EINVAL)
            # resize (xrc_cases.py proves the posted WQEs survive it)
            self.assertTrue(attr.device_cap_flags & e.IBV_DEVICE_SRQ_RESIZE)
            srq.modify(SrqAttr(max_wr=512), e.IBV_SRQ_MAX_WR)
            got = srq.query()
            self.assertGreaterEqual(got.max_wr, 512)
            with self.assertRaises(PyverbsRDMAError) as ctx:
                srq.modify(SrqAttr(srq_limit=got.max_wr + 1), e.IBV_SRQ_LIMIT)
            self.assertEqual(ctx.exception.error_code, errno.EINVAL)
            srq.close()

        def test_only_rc_and_ud_take_an_srq(self):
            res = RCResources(**self.dev_info, with_srq=True)
            for qpt in (e.IBV_QPT_UC,):
                with self.assertRaises(PyverbsRDMAError) as ctx:
                    QP(res.pd, QPInitAttr(qp_type=qpt, scq=res.cq,
                                          rcq=res.cq, srq=res.srq,
                                          cap=QPCap()))
                self.assertEqual(ctx.exception.error_code, errno.EINVAL)
            # max_recv_wr/max_recv_sge are ignored with an SRQ
            big = QPCap(max_recv_wr=1 << 30, max_recv_sge=1 << 20)
            for qpt in (e.IBV_QPT_RC, e.IBV_QPT_UD):
                QP(res.pd, QPInitAttr(qp_type=qpt, scq=res.cq, rcq=res.cq,
                                      srq=res.srq, cap=big)).close()

        def test_post_errors(self):
            res = RCResources(**self.dev_info, with_srq=True)
            got = res.srq.query()
            sge = SGE(res.mr.buf, 8, res.mr.lkey)
            with self.assertRaises(PyverbsRDMAError) as ctx:
                res.srq.post_recv(RecvWR(num_sge=got.max_sge + 1,
                                         sg=[sge] * (got.max_sge + 1)))
            self.assertEqual(ctx.exception.error_code, errno.EINVAL)
            with self.assertRaises(PyverbsRDMAError) as ctx:
                res.qp.post_recv(RecvWR(num_sge=1, sg=[sge]))
            self.assertEqual(ctx.exception.error_code, errno.EINVAL)
            for _ in range(got.max_wr):
                res.srq.post_recv(RecvWR(num_sge=1, sg=[sge]))
            with self.assertRaises(PyverbsRDMAError) as ctx:
                res.srq.post_recv(RecvWR(num_sge=1, sg=[sge]))
            self.assertEqual(ctx.exception.error_code, errno.ENOMEM)

        def test_rc_traffic_loop(self):
            """rdma-core's own traffic loop, 3 RC QPs per side on an SRQ."""
            self.pair(qp_count=3)
            u.traffic(self.client, self.server, 10, self.gid_index,
                      self.ib_port)

        def test_ud_traffic_loop(self):
            """rdma-core's own loop over UD; it reads the data at 40."""
            self.pair(resource=UDResources, qp_count=2)
            u.traffic(self.client, self.server, 10, self.gid_index,
                      self.ib_port)

        def test_rc_qps_share_one_srq(self):
            """One SEND per QP into distinct SRQ slots, each checked for
            QP, slot, length and bytes."""
            n = 3
            self.pair(qp_count=n)
            size = 256
            mr = self.recv_slots(self.server, n, size)
            src = MR(self.client.pd, n * size, e.IBV_ACCESS_LOCAL_WRITE)
            for q in range(n):
                src.write(bytes([0x41 + q]) * size, size, q * size)
                self.send(self.client, q,
                          SGE(src.buf + q * size, size - q, src.lkey))
                u.poll_cq(self.client.cq)
            wcs = u.poll_cq(self.server.cq, n)
            seen = {}
            for wc in wcs:
                self.assertEqual(wc.opcode, e.IBV_WC_RECV)
                q = self.server.qps_num.index(wc.qp_num)
                self.assertEqual(wc.byte_len, size - q)
                seen[q] = wc.wr_id
                got = mr.read(size - q, wc.wr_id * size)
                self.assertEqual(got, bytes([0x41 + q]) * (size - q))
            self.assertEqual(sorted(seen), list(range(n)))
            self.assertEqual(sorted(seen.values()), list(range(n)))

        def test_ud_grh_in_first_40_bytes(self):
            self.pair(resource=UDResources, qp_count=2)
            ah = u.get_global_ah(self.client, self.gid_index, self.ib_port)
            size = 128
            mr = self.recv_slots(self.server, 2, GRH + size)
            src = MR(self.client.pd, size, e.IBV_ACCESS_LOCAL_WRITE)
            src.write(b'\x5a' * size, size)
            for q in range(2):
                self.send(self.client, q, SGE(src.buf, size, src.lkey), ah)
                u.poll_cq(self.client.cq)
            for wc in u.poll_cq(self.server.cq, 2):
                self.assertTrue(wc.wc_flags & e.IBV_WC_GRH)
                self.assertEqual(wc.byte_len, GRH + size)
                self.assertIn(wc.qp_num, self.server.qps_num)
                got = mr.read(size, wc.wr_id * (GRH + size) + GRH)
                self.assertEqual(got, b'\x5a' * size)

        def test_limit_event(self):
            """Armed by modify_srq, fired once fewer than srq_limit WQEs
            are left, and disarmed by firing."""
            self.pair()
            size = 64
            mr = self.recv_slots(self.server, 10, size)
            self.server.srq.modify(SrqAttr(srq_limit=8), e.IBV_SRQ_LIMIT)
            self.assertEqual(self.server.srq.query().srq_limit, 8)
            sge = SGE(self.client.mr.buf, size, self.client.mr.lkey)
            for _ in range(2):
                self.send(self.client, 0, sge)
                u.poll_cq(self.client.cq)
                u.poll_cq(self.server.cq)
            # 8 WQEs left: not below the limit, still armed
            self.assertEqual(self.server.srq.query().srq_limit, 8)
            self.send(self.client, 0, sge)
            u.poll_cq(self.client.cq)
            u.poll_cq(self.server.cq)
            wait_async_event(self.server.ctx, e.IBV_EVENT_SRQ_LIMIT_REACHED)
            self.assertEqual(self.server.srq.query().srq_limit, 0)
            del mr

        def test_rnr_until_srq_posted(self):
            """A SEND into an empty SRQ is RNR-NAKed and retried (rnr_retry
            7) until a receive is posted."""
            self.pair()
            size = 64
            self.client.mr.write(b'\x33' * size, size)
            self.send(self.client, 0,
                      SGE(self.client.mr.buf, size, self.client.mr.lkey))
            time.sleep(1)
            nc, _ = self.server.cq.poll(1)
            self.assertEqual(nc, 0)
            mr = self.recv_slots(self.server, 1, size)
            u.poll_cq(self.client.cq)
            wc = u.poll_cq(self.server.cq)[0]
            self.assertEqual(wc.byte_len, size)
            self.assertEqual(mr.read(size, 0), b'\x33' * size)

        def test_qp_error_keeps_srq_wqes(self):
            """A QP moved to ERR raises LAST_WQE_REACHED and flushes none
            of the SRQ's WQEs: the other QP still receives into them."""
            self.pair(qp_count=2)
            size = 64
            mr = self.recv_slots(self.server, 4, size)
            err = QPAttr()
            err.qp_state = e.IBV_QPS_ERR
            self.server.qps[0].modify(err, e.IBV_QP_STATE)
            wait_async_event(self.server.ctx,
                             e.IBV_EVENT_QP_LAST_WQE_REACHED)
            nc, _ = self.server.cq.poll(4)
            self.assertEqual(nc, 0)
            self.client.mr.write(b'\x77' * size, size)
            sge = SGE(self.client.mr.buf, size, self.client.mr.lkey)
            for _ in range(4):
                self.send(self.client, 1, sge)
                u.poll_cq(self.client.cq)
            wcs = u.poll_cq(self.server.cq, 4)
            self.assertEqual(sorted(wc.wr_id for wc in wcs), [0, 1, 2, 3])
            for wc in wcs:
                self.assertEqual(wc.qp_num, self.server.qps_num[1])
                self.assertEqual(mr.read(size, wc.wr_id * size),
                                 b'\x77' * size)

    return caselib.named(SrqTest, 'srq_cases')


if __name__ == '__main__':
    sys.exit(caselib.run_cases(define_tests, 'srq', lean=True))
