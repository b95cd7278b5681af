#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""flow_fuzz: a seeded fuzz of Ethernet frames aimed at installed flow
rules, injected from the wire (an AF_PACKET socket on the peer end of the
device's veth), each frame's fate predicted by an oracle of its own and
checked.

    flow_fuzz.py --dev shca8 --ifname raw0 --peer raw0p  (scripts/e2e/raw.sh)

    SHCA_FLOW_FUZZ_N     frames (default 3000; raw.sh full: 100000)
    SHCA_FLOW_FUZZ_SEED  the seed (default 1)
The frames depend on these two and nothing else.

Rules on raw QPs of DEV, all on one destination MAC (M): a DONT_TRAP rule
on an IPv4 source, one on VLAN ID 100, IPv4/UDP and IPv6/TCP port rules,
an ether type whose QP stays in INIT and one whose QP never gets a
receive, an IPv4 /24 rule and, last, a rule on M alone.  The frames
match those rules but are broken in the ways the generator knows: IPv4
and IPv6 headers and TCP/UDP headers cut short, IHL below 5 or past the
frame, options, a wrong version, total lengths that lie, fragments (first
and later), extension headers, one or two VLAN (802.1Q, 802.1ad) tags,
other ether types, frames longer than the receive that takes them (up to
MTU + header), a bare Ethernet header; some go to another MAC (the
kernel stack's, dropped there as another host's).

The oracle parses each frame as the device is documented to
(drivers/infiniband/sw/shca/flow_logic.h: one tag at most, IPv4 with
options, IPv6 without extension headers, a header cut short makes its
layer absent and the frame malformed) and walks the rules in priority
order: each frame goes to the QPs of the rules it matches up to the
first trapping one, or to the stack.  In batches, each QP gets exactly
the receives its predicted frames need; asserted per batch: every
predicted copy completes on its QP, in order, IBV_WC_SUCCESS with the
frame's length and bytes (nothing past them written) or, longer than the
receive, IBV_WC_LOC_LEN_ERR with nothing written; flow_rx_frames,
flow_rx_malformed, flow_rx_dropped (the INIT QP) and flow_rx_no_recv_wqe
grew by exactly the oracle's numbers; so frames in == copies delivered
+ counted drops + frames the stack got.  Then a good frame still lands
and a raw QP's send still leaves on the wire byte for byte.

Prints TAP lines ("ok - flow fuzz: ...") and one count line,
"# fuzz(packets): N packets (seed S): ..."; exit status 1 if a case
failed.
"""
import argparse
import os
import random
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import caselib  # noqa: E402
from raw_cases import Wire, eth, ipv4, ipv6, mac_of, tcp, udp  # noqa: E402

from pyverbs.cq import CQ  # noqa: E402
from pyverbs.device import Context  # noqa: E402
from pyverbs.flow import Flow, FlowAttr  # noqa: E402
from pyverbs.mr import MR  # noqa: E402
from pyverbs.pd import PD  # noqa: E402
from pyverbs.pyverbs_error import PyverbsRDMAError  # noqa: E402
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr  # noqa: E402
from pyverbs.spec import EthSpec, Ipv4ExtSpec, Ipv6Spec, TcpUdpSpec  # noqa
from pyverbs.wr import RecvWR, SendWR, SGE  # noqa: E402
import pyverbs.enums as e  # noqa: E402

N = int(os.environ.get('SHCA_FLOW_FUZZ_N', '3000'))
SEED = int(os.environ.get('SHCA_FLOW_FUZZ_SEED', '1'), 0)
BATCH = 48              # frames per batch (each QP's RQ holds 128)
WAIT = 120              # seconds a batch may take before it is a failure
SLOT = 2048             # receive buffer; a raw QP's frames fit in it
SMALL = 512             # receives of the /24 rule's QP: longer frames fail
NSLOT = 128
HDR_MAX = 14 + 4 + 60 + 20      # SHCA_FLOW_HDR_MAX: what the parser sees
FILL = b'\xee'
COUNTERS = ('flow_rx_frames', 'flow_rx_malformed', 'flow_rx_dropped',
            'flow_rx_no_recv_wqe')
M = bytes.fromhex('020000005f01')       # the rules' destination MAC
OTHER = bytes.fromhex('020000005f02')   # nobody's: the stack drops it
TAGS = (0x8100, 0x88a8)
TAP = caselib.Tap('flow fuzz: ')
result = TAP.result


# --- the oracle -------------------------------------------------------

def parse(f):
    """The frame as shca_flow_parse() sees it (its first HDR_MAX bytes):
    a dict, or None when shorter than its Ethernet header and tag."""
    d = f[:HDR_MAX]
    n = len(d)
    if n < 14:
        return None
    p = {'dmac': d[:6], 'vlan': False, 'tci': 0, 'l3': 0, 'l4': 0,
         'malformed': False}
    off = 14
    t = struct.unpack('!H', d[12:14])[0]
    if t in TAGS:
        if n < 18:
            return None
        p['vlan'] = True
        p['tci'] = struct.unpack('!H', d[14:16])[0]
        t = struct.unpack('!H', d[16:18])[0]
        off = 18
    p['etype'] = t

    def l4(proto, off):
        need = {6: 20, 17: 8}.get(proto)
        if need is None:
            return
        if n < off or n - off < need:
            p['malformed'] = True
            return
        p['l4'] = proto
        p['dport'] = struct.unpack('!H', d[off + 2:off + 4])[0]

    if t == 0x0800:
        hlen = (d[off] & 15) * 4 if n > off else 0
        if n - off < 20 or d[off] >> 4 != 4 or hlen < 20 or n - off < hlen:
            p['malformed'] = True
            return p
        p['l3'] = 4
        p['v4src'] = d[off + 12:off + 16]
        p['v4dst'] = d[off + 16:off + 20]
        if not struct.unpack('!H', d[off + 6:off + 8])[0] & 0x1fff:
            l4(d[off + 9], off + hlen)
    elif t == 0x86dd:
        if n - off < 40 or d[off] >> 4 != 6:
            p['malformed'] = True
            return p
        p['l3'] = 6
        p['v6dst'] = d[off + 24:off + 40]
        l4(d[off + 6], off + 40)
    return p


class Rule:
    """A rule as the oracle sees it, and its QP."""

    def __init__(self, name, prio, trap=True, etype=None, vlan=None,
                 v4src=None, v4dst=None, v6dst=None, l4=None, dport=None,
                 state=e.IBV_QPS_RTS, recv=SLOT):
        self.name, self.prio, self.trap = name, prio, trap
        self.etype, self.vlan, self.l4, self.dport = etype, vlan, l4, dport
        self.v4src, self.v4dst, self.v6dst = v4src, v4dst, v6dst
        self.state, self.recv = state, recv
        self.qp = self.flow = None
        self.region = 0         # its receive slots in the MR
        self.slot = 0

    def specs(self):
        z4, z6, zm = '0.0.0.0', '::', '00:00:00:00:00:00'
        s = [EthSpec(dst_mac=':'.join('%02x' % b for b in M),
                     dst_mac_mask='ff:ff:ff:ff:ff:ff', src_mac=zm,
                     src_mac_mask=zm, ether_type=self.etype or 0,
                     ether_type_mask=0xffff if self.etype else 0,
                     vlan_tag=self.vlan[0] if self.vlan else 0,
                     vlan_tag_mask=self.vlan[1] if self.vlan else 0)]
        if self.v4src or self.v4dst:
            src, smask = self.v4src or (z4, z4)
            dst, dmask = self.v4dst or (z4, z4)
            s.append(Ipv4ExtSpec(src_ip=src, src_ip_mask=smask, dst_ip=dst,
                                 dst_ip_mask=dmask, proto=0, proto_mask=0,
                                 tos=0, tos_mask=0, ttl=0, ttl_mask=0,
                                 flags=0, flags_mask=0))
        if self.v6dst:
            s.append(Ipv6Spec(src_ip=z6, src_ip_mask=z6, dst_ip=self.v6dst,
                              dst_ip_mask='ffff:ffff:ffff:ffff:ffff:ffff:'
                              'ffff:ffff', flow_label=0, flow_label_mask=0,
                              next_hdr=0, next_hdr_mask=0, traffic_class=0,
                              traffic_class_mask=0, hop_limit=0,
                              hop_limit_mask=0))
        if self.l4:
            s.append(TcpUdpSpec(e.IBV_FLOW_SPEC_TCP if self.l4 == 6 else
                                e.IBV_FLOW_SPEC_UDP, dst_port=self.dport,
                                dst_port_mask=0xffff, src_port=0,
                                src_port_mask=0))
        return s

    def matches(self, p):
        def masked(addr, net):
            a, m = (socket.inet_aton(x) for x in net)
            return bytes(x & y for x, y in zip(addr, m)) == \
                bytes(x & y for x, y in zip(a, m))

        if p['dmac'] != M:
            return False
        if self.etype is not None and p['etype'] != self.etype:
            return False
        if self.vlan and (not p['vlan'] or
                          p['tci'] & self.vlan[1] != self.vlan[0]):
            return False
        if self.v4src or self.v4dst:
            if p['l3'] != 4:
                return False
            if self.v4src and not masked(p['v4src'], self.v4src):
                return False
            if self.v4dst and not masked(p['v4dst'], self.v4dst):
                return False
        if self.v6dst and (p['l3'] != 6 or p['v6dst'] !=
                           socket.inet_pton(socket.AF_INET6, self.v6dst)):
            return False
        if self.l4 and (p['l4'] != self.l4 or p['dport'] != self.dport):
            return False
        return True


ONE = ('255.255.255.255',)
RULES = [   # in creation order; the device sorts them by (priority, age)
    Rule('dont-trap v4 src', 0, trap=False, v4src=('10.61.0.9',) + ONE),
    Rule('vlan 100', 0, vlan=(100, 0x0fff)),
    Rule('v4 udp 4000', 0, v4dst=('10.61.0.2',) + ONE, l4=17, dport=4000),
    Rule('v6 tcp 4001', 0, v6dst='fd61::2', l4=6, dport=4001),
    Rule('init qp', 0, etype=0x88b6, state=e.IBV_QPS_INIT),
    Rule('no receive', 0, etype=0x88b7, recv=0),
    Rule('v4 /24', 1, v4dst=('10.61.0.0', '255.255.255.0'), recv=SMALL),
    Rule('mac', 9),
]


def fate(f, rules):
    """(parsed, [rules that get a copy]) of frame f; parsed None: the
    frame is too short to parse."""
    p = parse(f)
    if p is None:
        return None, []
    got = []
    for r in sorted(rules, key=lambda r: r.prio):    # stable: by age
        if r.matches(p):
            got.append(r)
            if r.trap:
                break
    return p, got


# --- the generator ----------------------------------------------------

# mostly what the rules name, so that the port rules see their share
SRC4 = ('10.61.0.1', '10.61.0.1', '10.61.0.9', '10.62.0.1')
DST4 = ('10.61.0.2', '10.61.0.2', '10.61.0.2', '10.61.0.7', '10.62.0.2')
DST6 = ('fd61::2', 'fd61::2', 'fd61::3')


def l4_of(rnd, proto, n):
    body = rnd.randbytes(n)
    port = rnd.choice((4000 if proto == 17 else 4001,) * 3 +
                      (4000, rnd.randrange(65536)))
    if proto == 17:
        return udp(rnd.randrange(65536), port, body)
    if proto == 6:
        return tcp(rnd.randrange(65536), port, body)
    return body


def v4_frame(rnd, kind, plen):
    proto = rnd.choice((17, 17, 17, 6, 1, 50))
    l4 = l4_of(rnd, proto, plen)
    src, dst = rnd.choice(SRC4), rnd.choice(DST4)
    h = bytearray(ipv4(src, dst, proto, l4, fix=rnd.random() < 0.5))
    if kind == 'options':
        k = rnd.randrange(1, 11)
        h = bytearray([0x45 + k]) + h[1:20] + rnd.randbytes(4 * k) + h[20:]
    elif kind == 'ihl':
        h[0] = 0x40 | rnd.choice((0, 1, 4, 6, 9, 15))
    elif kind == 'version':
        h[0] = rnd.choice((0x05, 0x65, 0xf5))
    elif kind == 'totlen':
        struct.pack_into('!H', h, 2, rnd.choice((0, 1, 19, 20, 21, 0xffff,
                                                 len(h) + 100)))
    elif kind == 'frag':
        struct.pack_into('!H', h, 6, rnd.choice((0x2000, 0x0001, 0x20b9,
                                                 0x1fff, 0x4000 | 185)))
    elif kind == 'cut-l4':
        ihl = (h[0] & 15) * 4
        h = h[:ihl + rnd.randrange(0, 8 if proto == 17 else 20)]
    return bytes(h)


def v6_frame(rnd, kind, plen):
    nh = rnd.choice((6, 6, 6, 17, 58, 0, 44))
    l4 = l4_of(rnd, nh if nh in (6, 17) else 0, plen)
    h = bytearray(ipv6(rnd.choice(('fd61::1', 'fd62::1')),
                       rnd.choice(DST6), nh, l4))
    if kind == 'version':
        h[0] = (h[0] & 15) | rnd.choice((0x40, 0x00, 0x70))
    elif kind == 'totlen':
        struct.pack_into('!H', h, 4, rnd.randrange(65536))
    elif kind == 'cut-l4':
        h = h[:40 + rnd.randrange(0, 20)]
    return bytes(h)


KINDS = ('good',) * 4 + ('v6',) * 2 + (
         'options', 'ihl', 'version', 'totlen', 'frag',
         'cut-l3', 'cut-l4', 'v6-cut', 'v6-version', 'v6-totlen',
         'v6-cut-l4', 'other-type', 'init', 'norecv', 'bare', 'long',
         'other-mac')


def gen(rnd, smac):
    """One frame and the name of its kind."""
    kind = rnd.choice(KINDS)
    plen = rnd.choice((0, 1, 7, 8, 30, 64, 200, rnd.randrange(1400)))
    dmac = OTHER if kind == 'other-mac' else M
    if kind == 'bare':
        body, etype = b'', rnd.choice((0x0800, 0x86dd, 0x88b5))
    elif kind in ('other-type', 'init', 'norecv'):
        etype = {'init': 0x88b6, 'norecv': 0x88b7}.get(
            kind, rnd.choice((0x88b5, 0x0806, 0x8847, 0x9000)))
        body = rnd.randbytes(plen)
    elif kind.startswith('v6'):
        etype = 0x86dd
        body = v6_frame(rnd, kind[3:], plen)
        if kind == 'v6-cut':
            body = body[:rnd.randrange(0, 40)]
    else:
        etype = 0x0800
        body = v4_frame(rnd, kind, 1400 if kind == 'long' else plen)
        if kind == 'cut-l3':
            body = body[:rnd.randrange(0, (body[0] & 15) * 4 or 20)]
    tags = b''
    ntag = rnd.choice((0,) * 6 + (1, 1, 2))
    for _ in range(ntag):
        vid = rnd.choice((100, 101, rnd.randrange(1, 4095)))
        tags += struct.pack('!HH', rnd.choice(TAGS),
                            rnd.randrange(8) << 13 | vid)
    f = dmac + smac + tags + struct.pack('!H', etype) + body
    if ntag and len(f) < 22:
        # the kernel frees a tagged frame with less than a tag and two
        # bytes after its Ethernet header (skb_vlan_untag()): never seen
        f += bytes(22 - len(f))
    return f[:1514 + 4 * min(ntag, 1)], kind


# --- the device -------------------------------------------------------

ap = argparse.ArgumentParser()
ap.add_argument('--dev', required=True)
ap.add_argument('--ifname', required=True)
ap.add_argument('--peer', required=True)
args = ap.parse_args()
HWC = '/sys/class/infiniband/%s/ports/1/hw_counters' % args.dev


def stats():
    out = {}
    for c in COUNTERS:
        with open('%s/%s' % (HWC, c)) as f:
            out[c] = int(f.read())
    return out


ctx = Context(name=args.dev)
pd = PD(ctx)
cq = CQ(ctx, 1024)
mr = MR(pd, len(RULES) * NSLOT * SLOT + SLOT, e.IBV_ACCESS_LOCAL_WRITE)
mr.write(FILL * mr.length, mr.length)
# A veth hands each sent frame to the sending CPU's backlog; frames sent
# from two CPUs (the scheduler moving this process mid-batch) may arrive
# in either order.  One CPU keeps the injected order, which the per-QP
# comparison below relies on.
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
wire = Wire(args.peer)
peer_mac = mac_of(args.peer)
rules = []
for i, r in enumerate(RULES):
    r.region = i * NSLOT * SLOT
    r.qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RAW_PACKET, scq=cq, rcq=cq,
                             cap=QPCap(max_send_wr=4, max_recv_wr=NSLOT,
                                       max_send_sge=1, max_recv_sge=1)))
    r.qp.modify(QPAttr(qp_state=e.IBV_QPS_INIT, port_num=1),
                e.IBV_QP_STATE | e.IBV_QP_PORT)
    if r.state == e.IBV_QPS_RTS:
        r.qp.modify(QPAttr(qp_state=e.IBV_QPS_RTR), e.IBV_QP_STATE)
        r.qp.modify(QPAttr(qp_state=e.IBV_QPS_RTS), e.IBV_QP_STATE)
    specs = r.specs()
    fa = FlowAttr(num_of_specs=len(specs), priority=r.prio,
                  flags=0 if r.trap else e.IBV_FLOW_ATTR_FLAGS_DONT_TRAP)
    for s in specs:
        fa.specs.append(s)
    try:
        r.flow = Flow(r.qp, fa)
    except PyverbsRDMAError as ex:
        if r.vlan:      # a VLAN mask may be refused (raw_cases.py)
            print('# flow fuzz: rule %r refused (%s): left out' %
                  (r.name, ex))
            r.qp.close()
            continue
        raise
    rules.append(r)
byqpn = {r.qp.qp_num: r for r in rules}
result('%d rules installed' % len(rules), len(rules) >= len(RULES) - 1)


def post(r, k):
    """k receives on r's QP, one SGE of r.recv bytes each; their slots."""
    out = []
    for _ in range(k):
        s = r.slot % NSLOT
        r.slot += 1
        off = r.region + s * SLOT
        mr.write(FILL * SLOT, SLOT, off)
        r.qp.post_recv(RecvWR(wr_id=s, num_sge=1,
                              sg=[SGE(mr.buf + off, r.recv, mr.lkey)]))
        out.append(s)
    return out


def poll(n, secs=WAIT):
    """Up to n completions within secs seconds (one look at least)."""
    got, end = [], time.monotonic() + secs
    while True:
        k, wcs = cq.poll(num_entries=max(1, min(64, n - len(got))))
        got += wcs[:k]
        if len(got) >= n or time.monotonic() >= end:
            return got
        if not k:
            time.sleep(0.002)


def inject(f):
    """Send frame f from the peer end, again while its socket is full."""
    end = time.monotonic() + WAIT
    while True:
        try:
            wire.send(f)
            return
        except BlockingIOError:
            if time.monotonic() > end:
                raise
            time.sleep(0.01)


# --- the fuzz ---------------------------------------------------------

rnd = random.Random(SEED)
print('# flow fuzz: seed %#x, %d frames in batches of %d' % (SEED, N, BATCH),
      flush=True)
tally = {'frames': 0, 'copies': 0, 'len_err': 0, 'stack': 0,
         'malformed': 0, 'dropped': 0, 'no_wqe': 0}
kinds = {}
reached = {}
start = stats()
sent = 0
bi = 0
while sent < N and not TAP.fails:
    frames = []
    while len(frames) < min(BATCH, N - sent):
        frames.append(gen(rnd, peer_mac))
    sent += len(frames)
    want = {c: 0 for c in COUNTERS}
    per = {r.qp.qp_num: [] for r in rules}
    for f, kind in frames:
        p, got = fate(f, rules)
        kinds[kind] = kinds.get(kind, 0) + 1
        if p is None or p['malformed']:
            want['flow_rx_malformed'] += 1
        if not any(r.trap for r in got):
            tally['stack'] += 1
        for r in got:
            reached[r.name] = reached.get(r.name, 0) + 1
            if r.state != e.IBV_QPS_RTS:
                want['flow_rx_dropped'] += 1
            elif not r.recv:
                want['flow_rx_no_recv_wqe'] += 1
            else:
                per[r.qp.qp_num].append(f)
                if len(f) <= r.recv:
                    want['flow_rx_frames'] += 1
    slots = {}
    for r in rules:
        if r.recv:
            slots[r.qp.qp_num] = post(r, len(per[r.qp.qp_num]))
    s0 = stats()
    for f, _ in frames:
        inject(f)
    ncopies = sum(len(v) for v in per.values())
    wcs = poll(ncopies)
    end = time.monotonic() + WAIT
    while time.monotonic() < end:
        s1 = stats()
        if all(s1[c] - s0[c] >= want[c] for c in COUNTERS):
            break
        time.sleep(0.02)
    time.sleep(0.02)    # sysfs keeps a read for 10 ms
    s1 = stats()
    wcs += poll(64, secs=0)     # one more look: nothing beyond them
    d = {c: s1[c] - s0[c] for c in COUNTERS}
    bad = []
    if d != want:
        bad.append('counters grew %s, want %s' % (d, want))
    if len(wcs) != ncopies:
        bad.append('%d completions, want %d' % (len(wcs), ncopies))
    seen = {q: [] for q in per}
    for w in wcs:
        seen.setdefault(w.qp_num, []).append(w)
    for q, fl in per.items():
        r = byqpn[q]
        for i, (w, f) in enumerate(zip(seen[q], fl)):
            off = r.region + w.wr_id * SLOT
            buf = mr.read(SLOT, off)
            if w.wr_id != slots[q][i] or w.opcode != e.IBV_WC_RECV:
                bad.append('%s: completion %d: wr_id %d opcode %d, want '
                           'slot %d' % (r.name, i, w.wr_id, w.opcode,
                                        slots[q][i]))
            elif len(f) > r.recv:
                if w.status != e.IBV_WC_LOC_LEN_ERR or buf != FILL * SLOT:
                    bad.append('%s: %d-byte frame into %d bytes: status '
                               '%d, buffer %s' % (r.name, len(f), r.recv,
                                                  w.status,
                                                  'untouched' if buf ==
                                                  FILL * SLOT else
                                                  'written'))
                else:
                    tally['len_err'] += 1
            elif (w.status, w.byte_len) != (e.IBV_WC_SUCCESS, len(f)) or \
                    buf != f + FILL * (SLOT - len(f)):
                bad.append('%s: frame %s (%d bytes): status %d byte_len %d, '
                           'bytes %s' % (r.name, f[:48].hex(), len(f),
                                         w.status, w.byte_len,
                                         'equal' if buf[:len(f)] == f else
                                         'differ'))
    tally['frames'] += len(frames)
    tally['copies'] += ncopies
    tally['malformed'] += d['flow_rx_malformed']
    tally['dropped'] += d['flow_rx_dropped']
    tally['no_wqe'] += d['flow_rx_no_recv_wqe']
    if bad:
        result('batch %d: every frame delivered or counted as predicted' %
               bi, False, '; '.join(bad[:4]))
        for f, kind in frames:
            print('# batch %d: %s %s' % (bi, kind, f[:64].hex()))
    bi += 1
end_s = stats()
if not TAP.fails:
    result('%d frames in %d batches: each delivered whole to the QPs the '
           'oracle names, or counted' % (N, bi), True)
more = poll(1, secs=0.5)
result('nothing more completes',
       not more, str([(w.qp_num, w.wr_id, w.status) for w in more]))
tot = {c: end_s[c] - start[c] for c in COUNTERS}
# frames in == copies delivered (or too long) + counted drops + stack
result('accounting: %d frames -> %d copies (%d delivered, %d too long), '
       '%d dropped in INIT, %d without a receive, %d to the stack' %
       (tally['frames'], tally['copies'] + tally['dropped'] +
        tally['no_wqe'], tot['flow_rx_frames'], tally['len_err'],
        tot['flow_rx_dropped'], tot['flow_rx_no_recv_wqe'], tally['stack']),
       tally['copies'] == tot['flow_rx_frames'] + tally['len_err'] and
       tally['dropped'] == tot['flow_rx_dropped'] and
       tally['no_wqe'] == tot['flow_rx_no_recv_wqe'],
       str(tot))

# afterwards: a good frame lands, a raw QP's frame leaves on the wire
r = next(x for x in rules if x.name == 'v4 udp 4000')
good = eth(M, peer_mac, 0x0800, ipv4('10.61.0.1', '10.61.0.2', 17,
                                     udp(9, 4000, b'after the fuzz')))
(s,) = post(r, 1)
inject(good)
w = poll(1)
result('afterwards: a good frame lands on its rule\'s QP byte for byte',
       len(w) == 1 and w[0].status == e.IBV_WC_SUCCESS and
       w[0].qp_num == r.qp.qp_num and w[0].byte_len == len(good) and
       mr.read(len(good), r.region + s * SLOT) == good,
       str([(x.qp_num, x.status, x.byte_len) for x in w]))
out = eth(peer_mac, mac_of(args.ifname), 0x88b5, b'raw QP, after the fuzz')
off = len(RULES) * NSLOT * SLOT
mr.write(out, len(out), off)
wire.drain()
r.qp.post_send(SendWR(wr_id=77, opcode=e.IBV_WR_SEND, num_sge=1,
                      sg=[SGE(mr.buf + off, len(out), mr.lkey)],
                      send_flags=e.IBV_SEND_SIGNALED))
w = poll(1)
cap = wire.capture(lambda x: x == out, WAIT)
result('afterwards: a raw QP\'s send leaves on the wire byte for byte',
       len(w) == 1 and w[0].status == e.IBV_WC_SUCCESS and cap == out,
       str([(x.wr_id, x.status) for x in w]))
for r in rules:
    r.flow.close()
    r.qp.close()
print('# fuzz(packets): %d packets (seed %#x): raw frames toward %d flow '
      'rules, %d kinds (%s); reached: %s; the stack %d; counters: '
      'flow_rx_frames +%d flow_rx_malformed +%d flow_rx_dropped +%d '
      'flow_rx_no_recv_wqe +%d, LOC_LEN_ERR %d' %
      (tally['frames'], SEED, len(rules), len(kinds),
       ' '.join('%s %d' % kv for kv in sorted(kinds.items())),
       ', '.join('%s %d' % kv for kv in sorted(reached.items())),
       tally['stack'], tot['flow_rx_frames'], tot['flow_rx_malformed'],
       tot['flow_rx_dropped'], tot['flow_rx_no_recv_wqe'],
       tally['len_err']), flush=True)
sys.exit(1 if TAP.fails else 0)
