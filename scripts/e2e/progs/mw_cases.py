#!/usr/bin/python3
"""Memory window error cases on one device, beyond rdma-core's MWTest.

Uses rdma-core's own test resources (tests.test_mr.MWRC: an RC loopback
pair with an MR registered with IBV_ACCESS_MW_BIND and a window each) as
staged by pyverbs-run.py, and prints its TAP-like lines.

    mw_cases.py --dev shca0
"""
import errno
import sys

import caselib


def define_tests():
    import pyverbs.enums as e
    from pyverbs.pyverbs_error import PyverbsRDMAError
    from pyverbs.mr import MR, MWBindInfo
    from pyverbs.wr import SendWR
    from tests.base import RDMATestCase
    from tests.test_mr import MWRC
    import tests.utils as u

    class NoBindMR(MWRC):
        """An MR without IBV_ACCESS_MW_BIND: binding to it must fail."""
        def create_mr(self):
            self.mr = MR(self.pd, self.msg_size, e.IBV_ACCESS_LOCAL_WRITE)

    class MWExtraTest(RDMATestCase):
        def setUp(self):
            super().setUp()
            self.server = None
            self.client = None

        def tearDown(self):
            for p in (self.server, self.client):
                if p:
                    p.mw.close()
            super().tearDown()

        def players(self, resource=MWRC, mw_type=e.IBV_MW_TYPE_2):
            self.client = resource(**self.dev_info, mw_type=mw_type)
            self.server = resource(**self.dev_info, mw_type=mw_type)
            self.client.pre_run(self.server.psns, self.server.qps_num)
            self.server.pre_run(self.client.psns, self.client.qps_num)

        def bind2(self, player, length=None, access=None):
            """Post a type 2 bind on player's QP; return the new R_Key."""
            info = MWBindInfo(player.mr, player.mr.buf,
                              player.msg_size if length is None else length,
                              e.IBV_ACCESS_REMOTE_WRITE |
                              e.IBV_ACCESS_LOCAL_WRITE
                              if access is None else access)
            wr = SendWR(opcode=e.IBV_WR_BIND_MW)
            wr.set_bind_wr(player.mw, info)
            player.qp.post_send(wr)
            u.poll_cq(player.cq)
            return wr.rkey

        def bind_both(self, **kw):
            self.server.rkey = self.bind2(self.client, **kw)
            self.server.remote_addr = self.client.mr.buf
            self.client.rkey = self.bind2(self.server, **kw)
            self.client.remote_addr = self.server.mr.buf

        def write(self):
            u.rdma_traffic(self.client, self.server, 1, self.gid_index,
                           self.ib_port, send_op=e.IBV_WR_RDMA_WRITE)

        def test_dereg_mr_with_bound_mw_fails(self):
            """EBUSY while a window is bound; fine once it is invalidated."""
            self.players()
            self.bind_both()
            with self.assertRaises(PyverbsRDMAError) as ctx:
                self.server.mr.close()
            self.assertEqual(ctx.exception.error_code, errno.EBUSY)
            self.write()    # the window still works
            inv = SendWR(opcode=e.IBV_WR_LOCAL_INV)
            inv.imm_data = self.client.rkey
            self.server.qp.post_send(inv)
            u.poll_cq(self.server.cq)
            self.server.mr.close()

        def test_bind_needs_mw_bind_access(self):
            self.players(resource=NoBindMR)
            with self.assertRaisesRegex(PyverbsRDMAError,
                                        'Memory window bind error'):
                self.bind2(self.server)

        def test_bind_type2_twice_fails(self):
            """A bound type 2B window is not Free: a second bind fails."""
            self.players()
            self.bind2(self.server)
            with self.assertRaisesRegex(PyverbsRDMAError,
                                        'Memory window bind error'):
                self.bind2(self.server)

        def test_write_beyond_window(self):
            """The window covers half the buffer; a full WRITE is refused."""
            self.players()
            self.bind_both(length=self.server.msg_size // 2)
            with self.assertRaisesRegex(PyverbsRDMAError,
                                        'Remote access error'):
                self.write()

        def test_write_to_read_only_window(self):
            self.players()
            self.bind_both(access=e.IBV_ACCESS_REMOTE_READ)
            with self.assertRaisesRegex(PyverbsRDMAError,
                                        'Remote access error'):
                self.write()

        def test_type1_stale_rkey_after_rebind(self):
            """Rebinding a type 1 window changes its R_Key: the old one
            is dead, the new one works."""
            self.players(mw_type=e.IBV_MW_TYPE_1)
            for p in (self.server, self.client):
                p.qp.bind_mw(p.mw, p.mw_bind)
                u.poll_cq(p.cq)
            old = (self.server.mw.rkey, self.client.mw.rkey)
            for p in (self.server, self.client):
                p.qp.bind_mw(p.mw, p.mw_bind)
                u.poll_cq(p.cq)
            self.assertNotEqual(old[0], self.server.mw.rkey)
            self.server.rkey, self.server.remote_addr = \
                self.client.mw.rkey, self.client.mr.buf
            self.client.rkey, self.client.remote_addr = \
                self.server.mw.rkey, self.server.mr.buf
            self.write()
            self.server.rkey = old[1]
            self.client.rkey = old[0]
            with self.assertRaisesRegex(PyverbsRDMAError,
                                        'Remote access error'):
                self.write()

    return caselib.named(MWExtraTest, 'mw_cases')


if __name__ == '__main__':
    sys.exit(caselib.run_cases(define_tests, 'mw', lean=True))
