#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""qp_path_cases: connected QPs take packets from their peer only.

    qp_path_cases.py DEV GID4 GID6 GIDX SRC4 SRC6 FORGER...
                                                (scripts/e2e/hostile.sh)

DEV has an IPv4 GID (index GID4), an IPv6 one (GID6) and a second IPv4
address (GIDX).  Victim QPs on DEV talk to peer QPs on DEV (their own
addresses, GID4 to GID4, GID6 to GID6): a UC pair over IPv4 and one over
IPv6, each victim with a receive posted into a buffer of 0xee, an RC
pair whose victim has a SEND outstanding (its peer has no receive yet: RNR
NAKs, retried forever), an XRC target (IPv4) whose XRC SRQ has a receive
posted, with its XRC initiator, and an RC QP (IPv4) on a tag matching SRQ
with a tag posted (and an ordinary receive), with its plain RC peer.
Then FORGER (a command: the rest of the
arguments, e.g. an unprivileged forge4791.py in another namespace, whose
addresses SRC4 and SRC6 are not DEV's) gets the QPNs and the PSN (as
forge4791.py SPECs) and forges, with valid ICRCs:
a UC SEND ONLY at each UC victim, two NAKs (remote access error, PSN
sequence error) for the outstanding SEND's PSN, an XRC SEND ONLY at the
XRC target's ePSN naming its live SRQ, and at the TM victim's ePSN an
eager SEND and a rendezvous request, both with a TMH for the posted tag;
and a QP of DEV on the
second address sends a UC SEND to the IPv4 UC victim through verbs (the
direct path, or the wire with direct=0).  Asserted: rx_bad_path grew by
exactly the number of those packets, rx_bad_icrc not at all; no victim
completed anything (no match, no unexpected message, nothing on the XRC
SRQ's CQ), no receive or tagged buffer changed, every victim is still in
RTS; then each real peer moves data to its victim byte for byte (the
outstanding SEND among it, the XRC initiator's SEND into the SRQ, the TM
peer's eager message consuming the posted tag).

Prints "ok - path: ..." / "not ok - path: ..." lines; exit status 1 if
any case failed.
"""
import ipaddress
import os
import struct
import subprocess
import sys
import time

import caselib
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ, CQEX, CqInitAttrEx, PollCqAttr
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr, QPInitAttrEx
from pyverbs.srq import SRQ, OpsWr, SrqInitAttrEx
from pyverbs.wr import SGE, RecvWR, SendWR
import pyverbs.enums as e

DEV = sys.argv[1]
GID4, GID6, GIDX = (int(a) for a in sys.argv[2:5])
SRC4, SRC6 = sys.argv[5:7]
FORGER = sys.argv[7:]
WAIT = 120          # seconds a wait may take before it is a failure
PSN = 0x5a5a00      # every QP's first PSN, both ways
RNR_TIMER = 26      # 81.92 ms between the RNR retries of the RC victim
FILL = b'\xee'
TAP = caselib.Tap('path: ')
result = TAP.result


HWC = '/sys/class/infiniband/%s/ports/1/hw_counters' % DEV


def stat(name):
    """Counter name of DEV (sysfs keeps a read for its lifespan: 10 ms);
    None if DEV has no such counter."""
    try:
        with open('%s/%s' % (HWC, name)) as f:
            return int(f.read())
    except OSError:
        return None


def wait_for(cond, secs=WAIT):
    end = time.time() + secs
    while not cond():
        if time.time() > end:
            return False
        time.sleep(0.02)
    return True


ctx = Context(name=DEV)
pd = PD(ctx)
ACC = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE


def path_attr(dqpn, gidx, rc, sgidx=None):
    """The attributes that take a QP to RTS, to QP dqpn at DEV's GID
    gidx, from GID sgidx (the same one if None); RC's when rc."""
    a = QPAttr()
    a.qp_access_flags = ACC
    a.path_mtu = e.IBV_MTU_1024
    a.dest_qp_num = dqpn
    a.rq_psn = PSN
    a.sq_psn = PSN
    a.port_num = 1
    if rc:
        a.max_dest_rd_atomic = 1
        a.max_rd_atomic = 1
        a.min_rnr_timer = RNR_TIMER
        a.timeout = 18
        a.retry_cnt = 7
        a.rnr_retry = 7         # RNR retried forever
    gid = ctx.query_gid(port_num=1, index=gidx)
    sgidx = gidx if sgidx is None else sgidx
    a.ah_attr = AHAttr(gr=GlobalRoute(dgid=gid, sgid_index=sgidx),
                       is_global=1, port_num=1)
    return a


class Side:
    """A QP with its own CQ and a 4 KiB buffer."""

    def __init__(self, qpt):
        self.cq = CQ(ctx, 16)
        self.qp = QP(pd, QPInitAttr(qp_type=qpt, scq=self.cq, rcq=self.cq,
                                    cap=QPCap(max_send_wr=4, max_recv_wr=4,
                                              max_send_sge=1,
                                              max_recv_sge=1)))
        self.mr = MR(pd, 4096, ACC)
        self.mr.write(FILL * 4096, 4096)

    def connect(self, dqpn, gidx, rc, sgidx=None):
        """To RTS, to QP dqpn at DEV's GID gidx, from GID sgidx (the
        same one if None)."""
        self.qp.to_rts(path_attr(dqpn, gidx, rc, sgidx))

    def recv(self, wr_id, n=64):
        self.qp.post_recv(RecvWR(wr_id=wr_id, num_sge=1,
                                 sg=[SGE(self.mr.buf, n, self.mr.lkey)]))

    def send(self, wr_id, data):
        self.mr.write(data, len(data), 1024)
        self.qp.post_send(SendWR(wr_id=wr_id, opcode=e.IBV_WR_SEND,
                                 num_sge=1,
                                 sg=[SGE(self.mr.buf + 1024, len(data),
                                         self.mr.lkey)],
                                 send_flags=e.IBV_SEND_SIGNALED))

    def poll(self, n=1, secs=WAIT):
        return caselib.poll(self.cq, n, secs, nap=0.005)

    def state(self):
        attr, _ = self.qp.query(e.IBV_QP_STATE)
        return attr.qp_state


def pair(qpt, gidx):
    v, p = Side(qpt), Side(qpt)
    rc = qpt == e.IBV_QPT_RC
    v.connect(p.qp.qp_num, gidx, rc)
    p.connect(v.qp.qp_num, gidx, rc)
    return v, p


uc4 = pair(e.IBV_QPT_UC, GID4)
uc6 = pair(e.IBV_QPT_UC, GID6)
rc4 = pair(e.IBV_QPT_RC, GID4)
for v, _ in (uc4, uc6):
    v.recv(1)
# the RC victim's SEND waits for a receive at its peer: RNR NAKs
rnr0 = stat('rc_rnr_naks_rcvd')
rc_data = os.urandom(48)
rc4[0].send(10, rc_data)
result('the RC victim\'s SEND is outstanding (its peer RNR NAKs it)',
       wait_for(lambda: stat('rc_rnr_naks_rcvd') > rnr0),
       'rc_rnr_naks_rcvd stayed at %s' % rnr0)

# an XRC target whose XRC SRQ has a receive posted, and its initiator
xrcd, xtmp = caselib.xrcd(ctx)
xcq = CQ(ctx, 16)
xsrq, _ = caselib.xrc_srq(ctx, pd, xrcd, xcq, 4)
xsrqn = xsrq.get_srq_num()
xmr = MR(pd, 4096, ACC)
xmr.write(FILL * 4096, 4096)
xsrq.post_recv(RecvWR(wr_id=30, num_sge=1, sg=[SGE(xmr.buf, 64, xmr.lkey)]))
xtgt = QP(ctx, QPInitAttrEx(qp_type=e.IBV_QPT_XRC_RECV,
                            comp_mask=e.IBV_QP_INIT_ATTR_XRCD, xrcd=xrcd))
xini_cq = CQ(ctx, 16)
xini = QP(ctx, QPInitAttrEx(qp_type=e.IBV_QPT_XRC_SEND, sq_sig_all=1,
                            comp_mask=e.IBV_QP_INIT_ATTR_PD, pd=pd,
                            scq=xini_cq,
                            cap=QPCap(max_send_wr=4, max_send_sge=1,
                                      max_recv_wr=0, max_recv_sge=0)))
xtgt.to_rts(path_attr(xini.qp_num, GID4, True))
xini.to_rts(path_attr(xtgt.qp_num, GID4, True))

# an RC QP on a tag matching SRQ, TAG posted in a 1 KiB tagged buffer and
# an ordinary receive for unexpected messages, and its plain RC peer
TAG = 0x7a6e0000beef
TMH_EAGER = 3           # infiniband/tm_types.h: enum ibv_tmh_op
tcq = CQEX(ctx, CqInitAttrEx(cqe=32, wc_flags=e.IBV_WC_STANDARD_FLAGS |
                             e.IBV_WC_EX_WITH_TM_INFO))
ta = SrqInitAttrEx(max_wr=4, max_sge=1)
ta.comp_mask = e.IBV_SRQ_INIT_ATTR_TYPE | e.IBV_SRQ_INIT_ATTR_PD | \
    e.IBV_SRQ_INIT_ATTR_CQ | e.IBV_SRQ_INIT_ATTR_TM
ta.srq_type = e.IBV_SRQT_TM
ta.pd = pd
ta.cq = tcq
ta.max_num_tags = 4
ta.max_ops = 4
tsrq = SRQ(ctx, ta)
tmr = MR(pd, 4096, ACC)
tmr.write(FILL * 4096, 4096)
tsrq.post_recv(RecvWR(wr_id=40, num_sge=1,
                      sg=[SGE(tmr.buf + 2048, 1024, tmr.lkey)]))
tsrq.post_srq_ops(OpsWr(wr_id=41, opcode=e.IBV_WR_TAG_ADD,
                        flags=e.IBV_OPS_SIGNALED | e.IBV_OPS_TM_SYNC,
                        unexpected_cnt=0, recv_wr_id=42, num_sge=1,
                        tag=TAG, mask=(1 << 64) - 1,
                        sg_list=[SGE(tmr.buf, 1024, tmr.lkey)]))
tv_scq = CQ(ctx, 16)
tv = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=tv_scq, rcq=tcq, srq=tsrq,
                       cap=QPCap(max_send_wr=0, max_recv_wr=0,
                                 max_send_sge=0, max_recv_sge=0)))
tp = Side(e.IBV_QPT_RC)
tv.to_rts(path_attr(tp.qp.qp_num, GID4, True))
tp.connect(tv.qp_num, GID4, True)


def poll_tm(n, secs=WAIT):
    """Up to n completions of the TM SRQ's CQ: (wr_id, status, opcode,
    flags, byte_len, tag)."""
    out, end, attr = [], time.time() + secs, PollCqAttr()
    while len(out) < n and time.time() < end:
        if tcq.start_poll(attr) != 0:
            time.sleep(0.005)
            continue
        while True:
            out.append((tcq.wr_id, tcq.status, tcq.read_opcode(),
                        tcq.read_wc_flags() & (e.IBV_WC_TM_MATCH |
                                               e.IBV_WC_TM_DATA_VALID),
                        tcq.read_byte_len(), tcq.read_tm_info().tag))
            if len(out) >= n or tcq.poll_next() != 0:
                break
        tcq.end_poll()
    return out


wcs = poll_tm(1)
result('the tag is posted on the TM SRQ (IBV_WC_TM_ADD)',
       len(wcs) == 1 and wcs[0][:3] == (41, e.IBV_WC_SUCCESS,
                                        e.IBV_WC_TM_ADD), str(wcs))

# an intruder on DEV, on its second address, set on the IPv4 UC victim
intruder = Side(e.IBV_QPT_UC)
intruder.connect(uc4[0].qp.qp_num, GID4, False, sgidx=GIDX)


def addr(gidx):
    """The IP address of DEV's GID gidx."""
    a = ipaddress.IPv6Address(str(ctx.query_gid(port_num=1, index=gidx)))
    return str(a.ipv4_mapped or a)


DST4, DST6 = addr(GID4), addr(GID6)
specs = ['uc-send,%s,%s,%d' % (SRC4, DST4, uc4[0].qp.qp_num),
         'uc-send,%s,%s,%d' % (SRC6, DST6, uc6[0].qp.qp_num),
         'nak,%s,%s,%d,%d,0x62' % (SRC4, DST4, rc4[0].qp.qp_num, PSN),
         'nak,%s,%s,%d,%d,0x60' % (SRC4, DST4, rc4[0].qp.qp_num, PSN),
         'xrc-send,%s,%s,%d,%d,%d' % (SRC4, DST4, xtgt.qp_num, PSN, xsrqn),
         'tm-eager,%s,%s,%d,%d,%d' % (SRC4, DST4, tv.qp_num, PSN, TAG),
         'tm-rndv,%s,%s,%d,%d,%d,%d,%d,64' % (SRC4, DST4, tv.qp_num, PSN, TAG,
                                              tp.mr.buf + 2048, tp.mr.rkey)]
forged = len(specs) + 1         # and the intruder's SEND
bad0, icrc0 = stat('rx_bad_path'), stat('rx_bad_icrc')
out = subprocess.run(FORGER + specs, capture_output=True, text=True,
                     timeout=WAIT)
for line in (out.stdout + out.stderr).splitlines():
    print('# %s' % line)
result('the forger ran unprivileged and sent %d packets' % len(specs),
       out.returncode == 0 and 'uid 65534 euid 65534' in out.stdout and
       out.stdout.count('forge4791: sent') == len(specs),
       'exit status %d' % out.returncode)
intruder.send(20, b'intruder on the second address')
wcs = intruder.poll(1)
result('the intruder\'s UC SEND went out',
       len(wcs) == 1 and wcs[0].status == e.IBV_WC_SUCCESS,
       str([(w.wr_id, w.status) for w in wcs]))

# every forged packet dropped where it arrived, and counted once
if bad0 is None:
    result('rx_bad_path counted the %d forged packets' % forged, False,
           'DEV has no rx_bad_path counter')
else:
    wait_for(lambda: stat('rx_bad_path') - bad0 >= forged)
    time.sleep(0.5)             # nothing more comes
    result('rx_bad_path counted the %d forged packets' % forged,
           stat('rx_bad_path') - bad0 == forged,
           'grew by %d' % (stat('rx_bad_path') - bad0))
result('rx_bad_icrc did not move (the ICRCs were valid)',
       stat('rx_bad_icrc') == icrc0,
       'grew by %d' % (stat('rx_bad_icrc') - icrc0))

# nothing delivered, nobody killed
for name, (v, _) in (('IPv4 UC', uc4), ('IPv6 UC', uc6), ('RC', rc4)):
    wcs = v.poll(1, secs=0.5)
    result('%s victim: no completion, its buffer untouched' % name,
           not wcs and v.mr.read(1024, 0) == FILL * 1024,
           'completions %s, buffer %r' % (
               [(w.wr_id, w.status, w.byte_len) for w in wcs],
               v.mr.read(16, 0)))
    result('%s victim: still in RTS' % name, v.state() == e.IBV_QPS_RTS,
           'state %d' % v.state())

time.sleep(0.5)
k, wcs = xcq.poll(num_entries=4)
result('XRC target: no completion on its SRQ\'s CQ, the SRQ\'s buffer '
       'untouched', k == 0 and xmr.read(4096, 0) == FILL * 4096,
       'completions %s, buffer %r' % (
           [(w.wr_id, w.status, w.byte_len) for w in wcs[:k]],
           xmr.read(16, 0)))
attr, _ = xtgt.query(e.IBV_QP_STATE)
result('XRC target: still in RTS', attr.qp_state == e.IBV_QPS_RTS,
       'state %d' % attr.qp_state)
wcs = poll_tm(1, secs=0.5)
result('RC QP on a TM SRQ: no completion (no match, no unexpected '
       'message), the tagged and the ordinary buffer untouched',
       not wcs and tmr.read(4096, 0) == FILL * 4096,
       'completions %s, buffer %r' % (wcs, tmr.read(16, 0)))
attr, _ = tv.query(e.IBV_QP_STATE)
result('RC QP on a TM SRQ: still in RTS', attr.qp_state == e.IBV_QPS_RTS,
       'state %d' % attr.qp_state)
k, wcs = tp.cq.poll(num_entries=4)
result('TM SRQ\'s peer: no completion (no FIN came to it)',
       k == 0, str([(w.wr_id, w.status, w.opcode) for w in wcs[:k]]))

# the real peers still get through, byte for byte
for name, (v, p) in (('IPv4 UC', uc4), ('IPv6 UC', uc6)):
    data = os.urandom(40)
    p.send(2, data)
    wcs, swc = v.poll(1), p.poll(1)
    result('%s: the peer\'s SEND arrives byte for byte' % name,
           len(wcs) == 1 and wcs[0].status == e.IBV_WC_SUCCESS and
           wcs[0].wr_id == 1 and wcs[0].byte_len == len(data) and
           v.mr.read(len(data), 0) == data and len(swc) == 1 and
           swc[0].status == e.IBV_WC_SUCCESS,
           'recv %s, send %s' % ([(w.wr_id, w.status, w.byte_len)
                                  for w in wcs],
                                 [(w.wr_id, w.status) for w in swc]))
v, p = rc4
p.recv(3)
wcs, rwc = v.poll(1), p.poll(1)
result('RC: the outstanding SEND completes once its peer posts a receive, '
       'byte for byte',
       len(wcs) == 1 and wcs[0].wr_id == 10 and
       wcs[0].status == e.IBV_WC_SUCCESS and len(rwc) == 1 and
       rwc[0].status == e.IBV_WC_SUCCESS and
       rwc[0].byte_len == len(rc_data) and
       p.mr.read(len(rc_data), 0) == rc_data,
       'send %s, recv %s' % ([(w.wr_id, w.status) for w in wcs],
                             [(w.wr_id, w.status, w.byte_len) for w in rwc]))
# the XRC initiator's SEND lands in the SRQ's receive
xdata = os.urandom(48)
xsrc = MR(pd, 4096, ACC)
xsrc.write(xdata, len(xdata))
wr = SendWR(wr_id=31, opcode=e.IBV_WR_SEND, num_sge=1,
            sg=[SGE(xsrc.buf, len(xdata), xsrc.lkey)])
wr.set_qp_type_xrc(xsrqn)
xini.post_send(wr)
swc, rwc = [], []
end = time.time() + WAIT
while (not swc or not rwc) and time.time() < end:
    k, w = xini_cq.poll(num_entries=1)
    swc += w[:k]
    k, w = xcq.poll(num_entries=1)
    rwc += w[:k]
    time.sleep(0.005)
result('XRC: the initiator\'s SEND lands in the SRQ\'s receive byte for '
       'byte',
       len(swc) == 1 and swc[0].status == e.IBV_WC_SUCCESS and
       len(rwc) == 1 and rwc[0].wr_id == 30 and
       rwc[0].status == e.IBV_WC_SUCCESS and
       rwc[0].byte_len == len(xdata) and rwc[0].qp_num == xtgt.qp_num and
       xmr.read(len(xdata), 0) == xdata and
       xmr.read(4096 - len(xdata), len(xdata)) == FILL * (4096 -
                                                          len(xdata)),
       'send %s, recv %s' % ([(w.wr_id, w.status) for w in swc],
                             [(w.wr_id, w.status, w.byte_len, w.qp_num)
                              for w in rwc]))

# the TM peer's eager message for TAG matches the posted tag
tdata = os.urandom(40)
tp.send(43, struct.pack('!B3xIQ', TMH_EAGER, 0x77, TAG) + tdata)
wcs, swc = poll_tm(1), tp.poll(1)
result('TM: the peer\'s eager message consumes the posted tag, byte for '
       'byte',
       len(wcs) == 1 and wcs[0] == (42, e.IBV_WC_SUCCESS, e.IBV_WC_TM_RECV,
                                    e.IBV_WC_TM_MATCH |
                                    e.IBV_WC_TM_DATA_VALID,
                                    len(tdata), TAG) and
       tmr.read(len(tdata), 0) == tdata and
       tmr.read(4096 - len(tdata), len(tdata)) == FILL * (4096 -
                                                          len(tdata)) and
       len(swc) == 1 and swc[0].status == e.IBV_WC_SUCCESS,
       'recv %s, send %s' % (wcs, [(w.wr_id, w.status) for w in swc]))
sys.exit(1 if TAP.fails else 0)
