#!/usr/bin/python3
# Byte-verified RC/UC requests from one device to another in one process:
#   rc_resp_rxe.py REQ_DEV RESP_DEV REQ_GID_INDEX RESP_GID_INDEX
# VT="rc uc err" selects the groups.
# Both devices are opened by this process (rdma netns mode "shared").
import sys, time, os

import caselib
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.mr import MR
from pyverbs.cq import CQ
from pyverbs.qp import QP, QPInitAttr, QPCap
from pyverbs.wr import SGE, SendWR, RecvWR
import pyverbs.enums as e

REQ, RESP = sys.argv[1], sys.argv[2]
GREQ, GRESP = int(sys.argv[3]), int(sys.argv[4])
ACC = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
       e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)
fails = 0

def check(name, cond, info=''):
    global fails
    if cond:
        print('ok - rc-resp:', name)
    else:
        fails += 1
        print('not ok - rc-resp:', name, info)

class Side:
    def __init__(self, dev, gidx, qpt, size=1 << 20):
        self.ctx = Context(name=dev)
        self.gidx = gidx
        self.gid = self.ctx.query_gid(port_num=1, index=gidx)
        self.pd = PD(self.ctx)
        self.mr = MR(self.pd, size, ACC)
        self.cq = CQ(self.ctx, 256)
        cap = QPCap(max_send_wr=128, max_recv_wr=128, max_send_sge=1,
                    max_recv_sge=1)
        self.qp = QP(self.pd, QPInitAttr(qp_type=qpt, scq=self.cq,
                                         rcq=self.cq, cap=cap))

def connect(a, b, rnr_retry=7, timeout=14):
    for x, y in ((a, b), (b, a)):
        # PSN 0xfffff0: exercise the PSN wrap
        x.qp.to_rts(caselib.rc_attr(y.gid, x.gidx, 0xfffff0, ACC,
                                    min_rnr_timer=1, timeout=timeout,
                                    rnr_retry=rnr_retry, dqpn=y.qp.qp_num))

def poll(cq, n=1, secs=60):
    return caselib.poll(cq, n, secs)

def recv(s, off, length, wr_id=1):
    s.qp.post_recv(RecvWR(wr_id=wr_id, num_sge=1,
                          sg=[SGE(s.mr.buf + off, length, s.mr.lkey)]))

def send(s, opcode, off, length, wr_id=2, imm=None, rdma=None, atomic=None):
    wr = SendWR(wr_id=wr_id, opcode=opcode, num_sge=1,
                sg=[SGE(s.mr.buf + off, length, s.mr.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    if imm is not None:
        wr.imm_data = imm
    if rdma:
        wr.set_wr_rdma(rdma[0], rdma[1])
    if atomic:
        wr.set_wr_atomic(*atomic)
    s.qp.post_send(wr)

def pattern(n, seed):
    return bytes((i * 7 + seed) & 0xff for i in range(n))

def rc_tests(qpt=e.IBV_QPT_RC):
    tag = 'RC' if qpt == e.IBV_QPT_RC else 'UC'
    a, b = Side(REQ, GREQ, qpt), Side(RESP, GRESP, qpt)
    connect(a, b)
    # SEND with imm, multi packet
    data = pattern(5000, 1)
    a.mr.write(data, len(data), 0)
    recv(b, 0, 8192, wr_id=11)
    send(a, e.IBV_WR_SEND_WITH_IMM, 0, len(data), imm=0x12345678)
    wa = poll(a.cq) if qpt == e.IBV_QPT_RC else poll(a.cq)
    wb = poll(b.cq)
    check(tag + ' send completion', wb and wb[0].status == 0 and wb[0].byte_len == 5000
          and wb[0].wr_id == 11 and wb[0].opcode == e.IBV_WC_RECV
          and (wb[0].wc_flags & e.IBV_WC_WITH_IMM) and wb[0].imm_data == 0x12345678,
          str([(w.status, w.byte_len, w.opcode, w.wc_flags, hex(w.imm_data)) for w in wb]))
    check(tag + ' send requester completion', wa and wa[0].status == 0, str([w.status for w in wa]))
    check(tag + ' send data', b.mr.read(5000, 0) == data)
    # many small sends (coalesced ACKs, MSN)
    for i in range(40):
        recv(b, 8192 + i * 64, 64, wr_id=100 + i)
    for i in range(40):
        a.mr.write(pattern(33, i), 33, 8192 + i * 64)
        send(a, e.IBV_WR_SEND, 8192 + i * 64, 33, wr_id=200 + i)
    wb = poll(b.cq, 40)
    wa = poll(a.cq, 40)
    check(tag + ' 40 small sends', len(wb) == 40 and all(w.status == 0 and w.byte_len == 33 for w in wb)
          and [w.wr_id for w in wb] == list(range(100, 140)) and len(wa) == 40
          and all(w.status == 0 for w in wa))
    check(tag + ' 40 small sends data', all(b.mr.read(33, 8192 + i * 64) == pattern(33, i) for i in range(40)))
    # RDMA WRITE, multi packet, unaligned
    data = pattern(10001, 3)
    a.mr.write(data, len(data), 65536)
    send(a, e.IBV_WR_RDMA_WRITE, 65536, len(data), rdma=(b.mr.rkey, b.mr.buf + 131075))
    wa = poll(a.cq)
    check(tag + ' write completion', wa and wa[0].status == 0, str([w.status for w in wa]))
    time.sleep(0.5 if qpt != e.IBV_QPT_RC else 0)
    check(tag + ' write data', b.mr.read(10001, 131075) == data)
    # WRITE with imm
    data = pattern(3000, 5)
    a.mr.write(data, len(data), 200000)
    recv(b, 0, 16, wr_id=12)
    send(a, e.IBV_WR_RDMA_WRITE_WITH_IMM, 200000, len(data), imm=0xabcdef01,
         rdma=(b.mr.rkey, b.mr.buf + 300000))
    wa = poll(a.cq)
    wb = poll(b.cq)
    check(tag + ' write_imm recv completion', wb and wb[0].status == 0 and wb[0].wr_id == 12
          and wb[0].opcode == e.IBV_WC_RECV_RDMA_WITH_IMM and wb[0].byte_len == 3000
          and wb[0].imm_data == 0xabcdef01,
          str([(w.status, w.byte_len, w.opcode, hex(w.imm_data)) for w in wb]))
    check(tag + ' write_imm data', b.mr.read(3000, 300000) == data)
    if qpt != e.IBV_QPT_RC:
        return
    # RDMA READ
    data = pattern(9000, 9)
    b.mr.write(data, len(data), 400000)
    send(a, e.IBV_WR_RDMA_READ, 500000, 9000, rdma=(b.mr.rkey, b.mr.buf + 400000))
    wa = poll(a.cq)
    check('RC read completion', wa and wa[0].status == 0 and wa[0].byte_len == 9000,
          str([(w.status, w.byte_len) for w in wa]))
    check('RC read data', a.mr.read(9000, 500000) == data)
    # several reads in flight
    for i in range(4):
        b.mr.write(pattern(2500, 20 + i), 2500, 600000 + i * 4096)
        send(a, e.IBV_WR_RDMA_READ, 700000 + i * 4096, 2500,
             wr_id=300 + i, rdma=(b.mr.rkey, b.mr.buf + 600000 + i * 4096))
    wa = poll(a.cq, 4)
    check('RC 4 reads in flight', len(wa) == 4 and all(w.status == 0 for w in wa),
          str([(w.status, w.wr_id) for w in wa]))
    check('RC 4 reads data', all(a.mr.read(2500, 700000 + i * 4096) == pattern(2500, 20 + i) for i in range(4)))
    # atomics on b's word at 800000, each fetching into a's buffer at off
    b.mr.write((1000).to_bytes(8, 'little'), 8, 800000)
    for name, op, off, args, want_got, want_mem, info in (
            ('RC fetch_add', e.IBV_WR_ATOMIC_FETCH_AND_ADD, 810000, (5, 0),
             1000, 1005, True),
            ('RC cmp_swap hit', e.IBV_WR_ATOMIC_CMP_AND_SWP, 810008,
             (1005, 77), 1005, 77, True),
            ('RC cmp_swap miss', e.IBV_WR_ATOMIC_CMP_AND_SWP, 810016,
             (1, 99), 77, 77, False)):
        send(a, op, off, 8, atomic=(b.mr.rkey, b.mr.buf + 800000) + args)
        wa = poll(a.cq)
        got = int.from_bytes(a.mr.read(8, off), 'little')
        mem = int.from_bytes(b.mr.read(8, 800000), 'little')
        check(name, wa and wa[0].status == 0 and got == want_got
              and mem == want_mem,
              '%s got=%d mem=%d' % ([w.status for w in wa], got, mem)
              if info else '')
    # RNR: no receive posted, then posted late
    a.mr.write(pattern(100, 44), 100, 0)
    send(a, e.IBV_WR_SEND, 0, 100, wr_id=400)
    time.sleep(1)
    recv(b, 900000, 128, wr_id=401)
    wa = poll(a.cq)
    wb = poll(b.cq)
    check('RC RNR then success', wa and wa[0].status == 0 and wb and wb[0].status == 0
          and wb[0].byte_len == 100 and b.mr.read(100, 900000) == pattern(100, 44),
          str([(w.status) for w in wa + wb]))
    # remote access error: bad rkey -> REM_ACCESS_ERR, responder QP to error
    send(a, e.IBV_WR_RDMA_WRITE, 0, 64, wr_id=500, rdma=(b.mr.rkey ^ 0x100, b.mr.buf))
    wa = poll(a.cq)
    check('RC bad rkey -> REM_ACCESS_ERR', wa and wa[0].status == e.IBV_WC_REM_ACCESS_ERR,
          str([w.status for w in wa]))
    time.sleep(0.5)
    st = b.qp.query(e.IBV_QP_STATE)[0].qp_state
    check('RC responder QP in error after access error', st == e.IBV_QPS_ERR, str(st))

def rc_errors():
    # out-of-range write on a fresh pair; and too-long send
    a, b = Side(REQ, GREQ, e.IBV_QPT_RC), Side(RESP, GRESP, e.IBV_QPT_RC)
    connect(a, b)
    recv(b, 0, 100, wr_id=1)
    a.mr.write(pattern(500, 1), 500, 0)
    send(a, e.IBV_WR_SEND, 0, 500, wr_id=2)
    wa = poll(a.cq)
    wb = poll(b.cq)
    check('RC too-long send: LOC_LEN_ERR at responder', wb and wb[0].status == e.IBV_WC_LOC_LEN_ERR,
          str([w.status for w in wb]))
    check('RC too-long send: requester INV_REQ', wa and wa[0].status == e.IBV_WC_REM_INV_REQ_ERR,
          str([w.status for w in wa]))
    a, b = Side(REQ, GREQ, e.IBV_QPT_RC), Side(RESP, GRESP, e.IBV_QPT_RC)
    connect(a, b)
    send(a, e.IBV_WR_RDMA_READ, 0, 64, wr_id=3, rdma=(b.mr.rkey, b.mr.buf + (1 << 20) - 32))
    wa = poll(a.cq)
    check('RC out-of-range read -> REM_ACCESS_ERR', wa and wa[0].status == e.IBV_WC_REM_ACCESS_ERR,
          str([w.status for w in wa]))

for t in (os.environ.get('VT') or 'rc uc err').split():
    {'rc': rc_tests, 'uc': lambda: rc_tests(e.IBV_QPT_UC), 'err': rc_errors}[t]()
print('fails', fails)
sys.exit(1 if fails else 0)
