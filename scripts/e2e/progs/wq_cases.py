#!/usr/bin/python3
"""Work queues, RSS indirection tables and RSS QPs on one device.

Checks the statements of ibv_create_wq(3), ibv_modify_wq(3),
ibv_create_rwq_ind_table(3) and ibv_create_qp_ex(3) (RX hash), with
rdma-core's test scaffolding as staged by pyverbs-run.py, and prints
TAP-like lines:
  - rss_caps: RAW_PACKET RSS QPs, 4096 tables of up to 256 entries,
    Toeplitz over IPv4/IPv6 addresses and TCP/UDP ports; max_wq_type_rq;
  - WQ states: RESET -> RDY -> ERR -> RESET -> RDY, RESET -> ERR; ERR ->
    RDY and a wrong current state: EINVAL; creation flags:
    CVLAN_STRIPPING accepted (at create and by modify), the others
    EOPNOTSUPP;
  - receives posted in RDY complete with IBV_WC_WR_FLUSH_ERR, their
    wr_ids in posting order and qp_num = wq_num, on the move to ERR; a
    receive posted in ERR is flushed too; a move to RESET completes
    nothing;
  - RSS QPs: good hash configurations (IPv4, IPv6 with TCP ports, IPv4
    with UDP ports, one address, one port) are accepted; a key that is not 40 bytes,
    another function, IPv4 with IPv6 fields, TCP with UDP ports, no field
    on a table of more than one entry: EINVAL; IPSEC_SPI and INNER:
    EOPNOTSUPP;
    ibv_modify_qp on an RSS QP: EOPNOTSUPP;
  - traffic: UDP frames sent by a RAW_PACKET QP on the same port and
    steered to an RSS QP (ETH flow) land whole in the WQ that the
    Toeplitz hash of their addresses and ports picks (computed here), one
    CQE each (status, byte_len, qp_num = that WQ's number, the bytes).
Destroying a WQ in a table or a table an RSS QP uses (EBUSY) and the
caps written back by ibv_create_wq are checked by a C program: pyverbs
closes the users first and does not read max_wr back.

    wq_cases.py --dev shca9
"""
import errno
import sys
import time

import caselib

POLL_TIMEOUT = 120      # seconds; TCG is slow, a lost completion must not hang
QUIET = 0.5             # seconds to look for a completion that must not come
KEY = caselib.MS_RSS_KEY
SLOT = 256


def udp_frame(dmac, smac, src, dst, sport, dport, payload):
    udp = sport.to_bytes(2, 'big') + dport.to_bytes(2, 'big') + \
        (8 + len(payload)).to_bytes(2, 'big') + b'\0\0' + payload
    ip = bytearray([0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, 17, 0, 0]) + src + dst
    ip[2:4] = (20 + len(udp)).to_bytes(2, 'big')
    ip[10:12] = caselib.csum(bytes(ip)).to_bytes(2, 'big')
    return dmac + smac + b'\x08\x00' + bytes(ip) + udp


def define_tests():
    import pyverbs.enums as e
    from pyverbs.cq import CQ
    from pyverbs.flow import Flow, FlowAttr
    from pyverbs.mr import MR
    from pyverbs.pyverbs_error import PyverbsRDMAError
    from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr, QPInitAttrEx, QPEx
    from pyverbs.spec import EthSpec
    from pyverbs.wq import (WQ, WQAttr, WQInitAttr, RwqIndTable,
                            RwqIndTableInitAttr, RxHashConf)
    from pyverbs.wr import RecvWR, SendWR, SGE
    from tests.base import RDMATestCase

    V4 = e.IBV_RX_HASH_SRC_IPV4 | e.IBV_RX_HASH_DST_IPV4
    V6 = e.IBV_RX_HASH_SRC_IPV6 | e.IBV_RX_HASH_DST_IPV6
    TCP = e.IBV_RX_HASH_SRC_PORT_TCP | e.IBV_RX_HASH_DST_PORT_TCP
    UDP = e.IBV_RX_HASH_SRC_PORT_UDP | e.IBV_RX_HASH_DST_PORT_UDP
    IPSEC_SPI = 1 << 8      # IBV_RX_HASH_IPSEC_SPI (not in pyverbs.enums)
    INNER = 1 << 31         # IBV_RX_HASH_INNER
    DMAC = bytes([0x02, 0xca, 0x5e, 0x00, 0x00, 0x09])
    SMAC = bytes([0x02, 0xca, 0x5e, 0x00, 0x00, 0x0a])

    class WqTest(RDMATestCase):
        def setUp(self):
            super().setUp()
            self.ctx, self.pd, self.cq = caselib.ctx_pd_cq(self.dev_name, 256)
            self.objs = []

        def tearDown(self):
            # users first: pyverbs' own order trips over ib_core's usecnt
            for o in reversed(self.objs):
                o.close()
            self.ctx.close()
            super().tearDown()

        def keep(self, obj):
            self.objs.append(obj)
            return obj

        def wq(self, cq=None, max_wr=16, **kw):
            return self.keep(WQ(self.ctx, WQInitAttr(
                wq_pd=self.pd, wq_cq=cq or self.cq, max_wr=max_wr,
                max_sge=1, **kw)))

        def modify(self, wq, state, cur=None):
            mask = e.IBV_WQ_ATTR_STATE
            if cur is not None:
                mask |= e.IBV_WQ_ATTR_CURR_STATE
            wq.modify(WQAttr(attr_mask=mask, wq_state=state,
                             curr_wq_state=cur or 0))

        def assert_errno(self, code, fn, *args, **kw):
            with self.assertRaises(PyverbsRDMAError) as ctx:
                fn(*args, **kw)
            self.assertEqual(ctx.exception.error_code, code,
                             str(ctx.exception))

        def poll(self, cq, n):
            return caselib.poll(cq, n, POLL_TIMEOUT, nap=0)

        def quiet(self, cq):
            end = time.time() + QUIET
            while time.time() < end:
                k, wcs = cq.poll(1)
                if k:
                    return wcs[0]
            return None

        def post(self, wq, mr, wr_ids):
            for i, w in enumerate(wr_ids):
                wq.post_recv(RecvWR(wr_id=w, num_sge=1, sg=[
                    SGE(mr.buf + (i % 16) * SLOT, SLOT, mr.lkey)]))

        def table(self, wqs, log):
            return self.keep(RwqIndTable(self.ctx,
                                         RwqIndTableInitAttr(log, wqs)))

        def rss_qp(self, tbl, fields, key=KEY, func=None):
            conf = RxHashConf(
                rx_hash_function=e.IBV_RX_HASH_FUNC_TOEPLITZ
                if func is None else func,
                rx_hash_key_len=len(key), rx_hash_key=list(key),
                rx_hash_fields_mask=fields)
            mask = e.IBV_QP_INIT_ATTR_PD | e.IBV_QP_INIT_ATTR_RX_HASH | \
                e.IBV_QP_INIT_ATTR_IND_TABLE
            return self.keep(QPEx(self.ctx, QPInitAttrEx(
                qp_type=e.IBV_QPT_RAW_PACKET, comp_mask=mask, pd=self.pd,
                hash_conf=conf, ind_table=tbl)))

        def test_caps(self):
            a = self.ctx.query_device_ex()
            rss = a.rss_caps
            self.assertEqual(rss.supported_qpts, 1 << e.IBV_QPT_RAW_PACKET)
            self.assertEqual(rss.max_rwq_indirection_tables, 4096)
            self.assertEqual(rss.max_rwq_indirection_table_size, 256)
            self.assertEqual(rss.rx_hash_function,
                             e.IBV_RX_HASH_FUNC_TOEPLITZ)
            self.assertEqual(rss.rx_hash_fields_mask, V4 | V6 | TCP | UDP)
            self.assertEqual(a.max_wq_type_rq, 4096)
            self.assertTrue(a.raw_packet_caps &
                            e.IBV_RAW_PACKET_CAP_CVLAN_STRIPPING)
            self.assertTrue(a.raw_packet_caps &
                            e.IBV_RAW_PACKET_CAP_DELAY_DROP)
            self.assertFalse(a.raw_packet_caps &
                             e.IBV_RAW_PACKET_CAP_SCATTER_FCS)

        def test_states_and_flags(self):
            wq = self.wq()
            self.modify(wq, e.IBV_WQS_RDY)
            self.modify(wq, e.IBV_WQS_RDY)
            self.modify(wq, e.IBV_WQS_ERR)
            self.assert_errno(errno.EINVAL, self.modify, wq, e.IBV_WQS_RDY)
            self.assert_errno(errno.EINVAL, self.modify, wq, e.IBV_WQS_RESET,
                              cur=e.IBV_WQS_RDY)
            self.modify(wq, e.IBV_WQS_RESET, cur=e.IBV_WQS_ERR)
            self.modify(wq, e.IBV_WQS_ERR)
            self.modify(wq, e.IBV_WQS_RESET)
            self.modify(wq, e.IBV_WQS_RDY)
            self.wq(comp_mask=e.IBV_WQ_INIT_ATTR_FLAGS,
                    create_flags=e.IBV_WQ_FLAGS_CVLAN_STRIPPING)
            self.wq(comp_mask=e.IBV_WQ_INIT_ATTR_FLAGS,
                    create_flags=e.IBV_WQ_FLAGS_DELAY_DROP)
            for fl in (e.IBV_WQ_FLAGS_CVLAN_STRIPPING,
                       e.IBV_WQ_FLAGS_DELAY_DROP):
                for flags in (0, fl):
                    wq.modify(WQAttr(attr_mask=e.IBV_WQ_ATTR_FLAGS,
                                     flags=flags, flags_mask=fl))
            for flag in (e.IBV_WQ_FLAGS_SCATTER_FCS,
                         e.IBV_WQ_FLAGS_PCI_WRITE_END_PADDING):
                self.assert_errno(errno.EOPNOTSUPP, self.wq,
                                  comp_mask=e.IBV_WQ_INIT_ATTR_FLAGS,
                                  create_flags=flag)

        def test_flush(self):
            mr = self.keep(MR(self.pd, 16 * SLOT, e.IBV_ACCESS_LOCAL_WRITE))
            wq = self.wq()
            self.modify(wq, e.IBV_WQS_RDY)
            self.post(wq, mr, [0x10, 0x11, 0x12])
            self.assertIsNone(self.quiet(self.cq), 'a receive completed')
            self.modify(wq, e.IBV_WQS_ERR)
            wcs = self.poll(self.cq, 3)
            self.assertEqual([w.wr_id for w in wcs], [0x10, 0x11, 0x12])
            for w in wcs:
                self.assertEqual(w.status, e.IBV_WC_WR_FLUSH_ERR)
                self.assertEqual(w.qp_num, wq.wqn)
            self.post(wq, mr, [0x20])
            wcs = self.poll(self.cq, 1)
            self.assertEqual([(w.wr_id, w.status) for w in wcs],
                             [(0x20, e.IBV_WC_WR_FLUSH_ERR)])
            self.modify(wq, e.IBV_WQS_RESET)
            self.modify(wq, e.IBV_WQS_RDY)
            self.post(wq, mr, [0x30])
            self.modify(wq, e.IBV_WQS_RESET)
            self.assertIsNone(self.quiet(self.cq), 'RESET completed a WQE')

        def test_rss_qp_configs(self):
            wqs = [self.wq() for _ in range(4)]
            tbl = self.table(wqs, 2)
            for fields in (V4, V6 | TCP, V4 | UDP, e.IBV_RX_HASH_SRC_IPV4,
                           e.IBV_RX_HASH_DST_PORT_TCP):
                qp = self.rss_qp(tbl, fields)
                self.assertNotEqual(qp.qp_num, 0)
                qp.close()
            bad = [(errno.EINVAL, dict(fields=V4, key=KEY[:39])),
                   (errno.EINVAL, dict(fields=V4, key=KEY + b'\0')),
                   (errno.EINVAL, dict(fields=V4, func=0)),
                   (errno.EINVAL, dict(fields=V4 | V6)),
                   (errno.EINVAL, dict(fields=TCP | UDP)),
                   (errno.EINVAL, dict(fields=0)),
                   (errno.EINVAL, dict(fields=1 << 20)),
                   (errno.EOPNOTSUPP,
                    dict(fields=V4 | IPSEC_SPI)),
                   (errno.EOPNOTSUPP, dict(fields=V4 | INNER))]
            for code, kw in bad:
                with self.subTest(**{k: str(v) for k, v in kw.items()}):
                    self.assert_errno(code, self.rss_qp, tbl, **kw)
            qp = self.rss_qp(tbl, V4)
            self.assert_errno(errno.EOPNOTSUPP, qp.modify,
                              QPAttr(qp_state=e.IBV_QPS_INIT),
                              e.IBV_QP_STATE)

        def sender(self):
            """A RAW_PACKET QP in RTS with an MR for one frame."""
            cq = self.keep(CQ(self.ctx, 16))
            qp = self.keep(QP(self.pd, QPInitAttr(
                qp_type=e.IBV_QPT_RAW_PACKET, scq=cq, rcq=cq,
                cap=QPCap(max_send_wr=4, max_recv_wr=1))))
            qp.to_rts(QPAttr(port_num=1))
            return qp, cq, self.keep(MR(self.pd, 2048,
                                        e.IBV_ACCESS_LOCAL_WRITE))

        def test_rss_traffic(self):
            n_wq, n_frames = 4, 16
            cqs = [self.keep(CQ(self.ctx, 64)) for _ in range(n_wq)]
            wqs = [self.wq(cq) for cq in cqs]
            mrs = [self.keep(MR(self.pd, 16 * SLOT, e.IBV_ACCESS_LOCAL_WRITE))
                   for _ in wqs]
            for wq, mr in zip(wqs, mrs):
                self.modify(wq, e.IBV_WQS_RDY)
                self.post(wq, mr, [(wq.wqn << 8) | i for i in range(16)])
            fields = V4 | UDP
            qp = self.rss_qp(self.table(wqs, 2), fields)
            fa = FlowAttr(num_of_specs=1, port=1)
            fa.specs.append(EthSpec(ether_type=0x0800,
                                    dst_mac=':'.join(f'{b:02x}'
                                                     for b in DMAC)))
            flow = self.keep(Flow(qp, fa))
            sqp, scq, smr = self.sender()
            want = [[] for _ in wqs]
            for i in range(n_frames):
                src = bytes([10, 9, i, 1 + i])
                dst = bytes([10, 9, 0, 100])
                sport, dport = 1000 + 7 * i, 4791 + i
                frame = udp_frame(DMAC, SMAC, src, dst, sport, dport,
                                  bytes((i + j) & 0xff for j in range(64)))
                h = caselib.toeplitz(KEY, src + dst +
                                     sport.to_bytes(2, 'big') +
                                     dport.to_bytes(2, 'big'))
                want[h & (n_wq - 1)].append(frame)
                smr.write(frame, len(frame))
                sqp.post_send(SendWR(opcode=e.IBV_WR_SEND, num_sge=1,
                                     sg=[SGE(smr.buf, len(frame),
                                             smr.lkey)]))
                wcs = self.poll(scq, 1)
                self.assertEqual([w.status for w in wcs], [e.IBV_WC_SUCCESS])
            for k, (wq, cq, mr) in enumerate(zip(wqs, cqs, mrs)):
                wcs = self.poll(cq, len(want[k]))
                self.assertEqual(len(wcs), len(want[k]), f'WQ {k}')
                for j, (w, frame) in enumerate(zip(wcs, want[k])):
                    self.assertEqual(w.status, e.IBV_WC_SUCCESS)
                    self.assertEqual(w.wr_id, (wq.wqn << 8) | j)
                    self.assertEqual(w.qp_num, wq.wqn)
                    self.assertEqual(w.byte_len, len(frame))
                    self.assertEqual(mr.read(len(frame), j * SLOT), frame)
                self.assertIsNone(self.quiet(cq), f'WQ {k}: extra CQE')
            self.assertGreater(sum(1 for x in want if x), 1,
                               'the frames all hashed to one WQ')

    return caselib.named(WqTest, 'wq_cases')


if __name__ == '__main__':
    sys.exit(caselib.run_cases(define_tests, 'wq', lean=True))
