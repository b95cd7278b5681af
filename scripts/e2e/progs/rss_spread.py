#!/usr/bin/python3
"""RSS placement: many flows through an RSS QP, each on the WQ its hash
names.  Runs inside the VM, as root, on one shca device whose netdev is
one end of a veth pair; the frames come from the wire (an AF_PACKET
socket on the peer).

The oracle is an independent Toeplitz implementation (checked first
against the verification vectors of Microsoft's RSS specification): the
hash of a frame is Toeplitz(key, input), input being the fields the QP
hashes on in the order source address, destination address, source port,
destination port (network byte order); the frame lands on
table[hash mod table size] (ibv_create_rwq_ind_table(3)), and its receive
completion names that WQ (wc.qp_num = its wq_num).

Two rounds, each with its own RSS QP, indirection table and ETH steering
rule (a private destination MAC per round):
  - IPv4/UDP hashing addresses and ports: 512 flows (source address and
    port vary), 8 WQs behind a table of 16 entries (each WQ twice);
  - IPv6/TCP hashing addresses only: 256 flows, 4 WQs behind a table of 8.
Each round asserts that every frame completed, on exactly the WQ the
oracle names, whole (byte_len, bytes), and that no WQ got more than twice
its fair share (the flows are fixed, so the counts are exact and the
bound cannot flake; it guards against a hash that ignores the input).

    rss_spread.py --dev shca8 --ifname raw0 --peer raw0p
"""
import argparse
import socket
import struct
import sys
import time

import caselib

POLL_TIMEOUT = 120

# Microsoft's RSS verification key and vectors (IPv4: addresses only, and
# addresses + TCP ports; IPv6 likewise).
MS_KEY = caselib.MS_RSS_KEY
MS_V4 = [('66.9.149.187', 2794, '161.142.100.80', 1766, 0x323e8fc2,
          0x51ccc178),
         ('199.92.111.2', 14230, '65.69.140.83', 4739, 0xd718262a,
          0xc626b0ea),
         ('24.19.198.95', 12898, '12.22.207.184', 38024, 0xd2d0a5de,
          0x5c2b394a),
         ('38.27.205.30', 48228, '209.142.163.6', 2217, 0x82989176,
          0xafc7327f),
         ('153.39.163.191', 44251, '202.188.127.2', 1303, 0x5d1809c5,
          0x10e828a2)]
MS_V6 = [('3ffe:2501:200:1fff::7', 2794, '3ffe:2501:200:3::1', 1766,
          0x2cc18cd5, 0x40207d3d),
         ('3ffe:501:8::260:97ff:fe40:efab', 14230, 'ff02::1', 4739,
          0x0f0c461c, 0xdde51bbf),
         ('3ffe:1900:4545:3:200:f8ff:fe21:67cf', 44251,
          'fe80::200:f8ff:fe21:67cf', 38024, 0x4b61e985, 0x02d1feef)]

# The key rdma-core's test_rss_traffic uses.
KEY = bytes([0x2c, 0xc6, 0x81, 0xd1, 0x5b, 0xdb, 0xf4, 0xf7,
             0xfc, 0xa2, 0x83, 0x19, 0xdb, 0x1a, 0x3e, 0x94,
             0x6b, 0x9e, 0x38, 0xd9, 0x2c, 0x9c, 0x03, 0xd1,
             0xad, 0x99, 0x44, 0xa7, 0xd9, 0x56, 0x3d, 0x59,
             0x06, 0x3c, 0x25, 0xf3, 0xfc, 0x1f, 0xdc, 0x2a])

TAP = caselib.Tap()
ok, not_ok = TAP.ok, TAP.not_ok


def check_oracle():
    bad = []
    for fam, vecs in ((socket.AF_INET, MS_V4), (socket.AF_INET6, MS_V6)):
        for src, sp, dst, dp, h_ip, h_tcp in vecs:
            ips = socket.inet_pton(fam, src) + socket.inet_pton(fam, dst)
            ports = struct.pack('!HH', sp, dp)
            if caselib.toeplitz(MS_KEY, ips) != h_ip or \
                    caselib.toeplitz(MS_KEY, ips + ports) != h_tcp:
                bad.append(src)
    if bad:
        not_ok('the Toeplitz oracle reproduces Microsoft\'s vectors', bad)
        return False
    ok('the Toeplitz oracle reproduces Microsoft\'s vectors')
    return True


def frame_v4_udp(dmac, smac, src, dst, sport, dport, tag):
    payload = struct.pack('!I', tag) + bytes(range(28))
    udp = struct.pack('!HHHH', sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 0, 0x4000,
                     64, socket.IPPROTO_UDP, 0, socket.inet_aton(src),
                     socket.inet_aton(dst))
    ip = ip[:10] + struct.pack('!H', caselib.csum(ip)) + ip[12:]
    return dmac + smac + b'\x08\x00' + ip + udp


def frame_v6_tcp(dmac, smac, src, dst, sport, dport, tag):
    payload = struct.pack('!I', tag) + bytes(range(12))
    tcp = struct.pack('!HHIIHHHH', sport, dport, 1, 0, 5 << 12 | 0x10,
                      65535, 0, 0) + payload
    ip = struct.pack('!IHBB16s16s', 6 << 28, len(tcp), socket.IPPROTO_TCP,
                     64, socket.inet_pton(socket.AF_INET6, src),
                     socket.inet_pton(socket.AF_INET6, dst))
    return dmac + smac + b'\x86\xdd' + ip + tcp


def mac_bytes(text):
    return bytes.fromhex(text.replace(':', ''))


class Round:
    """One RSS QP with its WQs, table and steering rule."""

    def __init__(self, ctx, pd, nwq, log_tbl, fields, dmac, nflows, bufsz):
        import pyverbs.enums as e
        from pyverbs.cq import CQ
        from pyverbs.flow import Flow, FlowAttr
        from pyverbs.mr import MR
        from pyverbs.qp import QPEx, QPInitAttrEx
        from pyverbs.spec import EthSpec
        from pyverbs.wq import (WQ, RwqIndTable, RwqIndTableInitAttr,
                                RxHashConf, WQAttr, WQInitAttr)
        from pyverbs.wr import RecvWR, SGE
        self.e = e
        self.bufsz = bufsz
        self.nwq = nwq
        self.cqs, self.wqs, self.mrs = [], [], []
        for _ in range(nwq):
            cq = CQ(ctx, nflows + 1)
            wq = WQ(ctx, WQInitAttr(wq_pd=pd, wq_cq=cq, wq_type=e.IBV_WQT_RQ,
                                    max_wr=nflows, max_sge=1))
            wq.modify(WQAttr(attr_mask=e.IBV_WQ_ATTR_STATE,
                             wq_state=e.IBV_WQS_RDY))
            mr = MR(pd, nflows * bufsz, e.IBV_ACCESS_LOCAL_WRITE)
            for k in range(nflows):
                wq.post_recv(RecvWR(wr_id=k, num_sge=1,
                                    sg=[SGE(mr.buf + k * bufsz, bufsz,
                                            mr.lkey)]), None)
            self.cqs.append(cq)
            self.wqs.append(wq)
            self.mrs.append(mr)
        size = 1 << log_tbl
        self.table = [self.wqs[i % nwq] for i in range(size)]
        self.ind = RwqIndTable(ctx, RwqIndTableInitAttr(log_tbl, self.table))
        conf = RxHashConf(rx_hash_function=e.IBV_RX_HASH_FUNC_TOEPLITZ,
                          rx_hash_key_len=len(KEY), rx_hash_key=list(KEY),
                          rx_hash_fields_mask=fields)
        mask = e.IBV_QP_INIT_ATTR_PD | e.IBV_QP_INIT_ATTR_RX_HASH | \
            e.IBV_QP_INIT_ATTR_IND_TABLE
        self.qp = QPEx(ctx, QPInitAttrEx(qp_type=e.IBV_QPT_RAW_PACKET,
                                         comp_mask=mask, pd=pd,
                                         hash_conf=conf, ind_table=self.ind))
        fa = FlowAttr(num_of_specs=1, port=1)
        fa.specs.append(EthSpec(dst_mac=dmac, dst_mac_mask='ff:ff:ff:ff:ff:ff'))
        self.flow = Flow(self.qp, fa)

    def close(self):
        for o in [self.flow, self.qp, self.ind] + self.wqs + self.mrs + \
                self.cqs:
            o.close()

    def collect(self, n):
        """Up to @n completions from all the WQs' CQs: (wq index, wc)."""
        got = []
        end = time.monotonic() + POLL_TIMEOUT
        while len(got) < n and time.monotonic() < end:
            idle = True
            for i, cq in enumerate(self.cqs):
                k, wcs = cq.poll(16)
                for wc in wcs[:k]:
                    got.append((i, wc))
                    idle = False
            if idle:
                time.sleep(0.01)
        # anything more (a frame delivered twice) shows up here
        time.sleep(0.5)
        for i, cq in enumerate(self.cqs):
            k, wcs = cq.poll(16)
            got += [(i, wc) for wc in wcs[:k]]
        return got


def run_round(name, rnd, frames, hashes, tx):
    """@frames[k] carries tag k; @hashes[k] is its oracle hash."""
    e = rnd.e
    want = [rnd.wqs.index(rnd.table[h % len(rnd.table)]) for h in hashes]
    for f in frames:
        tx.send(f)
    got = rnd.collect(len(frames))
    wqn = [wq.wqn for wq in rnd.wqs]
    seen = {}
    why = []
    for i, wc in got:
        if wc.status != e.IBV_WC_SUCCESS or wc.opcode != e.IBV_WC_RECV:
            why.append(f'WQ {i}: status {wc.status} opcode {wc.opcode}')
            continue
        if wc.qp_num != wqn[i]:
            why.append(f'WQ {i}: qp_num {wc.qp_num}, want its wqn {wqn[i]}')
        data = rnd.mrs[i].read(wc.byte_len, wc.wr_id * rnd.bufsz)
        off = 14 + (20 if frames[0][12:14] == b'\x08\x00' else 40) + \
            (8 if frames[0][12:14] == b'\x08\x00' else 20)
        tag = struct.unpack('!I', data[off:off + 4])[0] \
            if len(data) >= off + 4 else -1
        if tag < 0 or tag >= len(frames) or data != frames[tag]:
            why.append(f'WQ {i} wr_id {wc.wr_id}: {wc.byte_len} bytes that '
                       'are no frame sent')
            continue
        if tag in seen:
            why.append(f'flow {tag} delivered twice')
        seen[tag] = i
    missing = [k for k in range(len(frames)) if k not in seen]
    if missing:
        why.append(f'{len(missing)} of {len(frames)} frames never '
                   f'completed (first: {missing[:5]})')
    if why:
        not_ok(f'{name}: every frame completed once, whole, on a WQ',
               '; '.join(why[:6]))
    else:
        ok(f'{name}: every frame completed once, whole, on a WQ')
    wrong = [(k, seen[k], want[k]) for k in seen if seen[k] != want[k]]
    if wrong:
        not_ok(f'{name}: each frame on the WQ its Toeplitz hash names',
               f'{len(wrong)} misplaced (flow, got WQ, want WQ): '
               f'{wrong[:6]}')
    else:
        ok(f'{name}: each frame on the WQ its Toeplitz hash names')
    counts = [want.count(i) for i in range(rnd.nwq)]
    fair = len(frames) / rnd.nwq
    print(f'# {name}: expected frames per WQ {counts} (fair share {fair:g})')
    if max(counts) > 2 * fair or min(counts) == 0:
        not_ok(f'{name}: no WQ gets more than twice its fair share, none '
               'nothing', f'{counts}')
    else:
        ok(f'{name}: no WQ gets more than twice its fair share, none nothing')


def one_round(proto, shape, name, ctx, pd, frames, hashes, tx):
    """A Round of shape (nwq, log_tbl, fields, dmac, nflows; 128-byte
    buffers) for proto, then run_round(name, ...) on it, timed."""
    nwq, log_tbl = shape[:2]
    setup = f'{proto}: RSS QP, {nwq} WQs, table of {1 << log_tbl}'
    t0 = time.monotonic()
    try:
        rnd = Round(ctx, pd, *shape, 128)
    except Exception as ex:  # pylint: disable=broad-except
        not_ok(setup, repr(ex))
    else:
        ok(setup)
        run_round(name, rnd, frames, hashes, tx)
        rnd.close()
    print(f'# {proto} round: {time.monotonic() - t0:.1f} s')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--dev', required=True)
    ap.add_argument('--ifname', required=True)
    ap.add_argument('--peer', required=True)
    args = ap.parse_args()
    if not check_oracle():
        return 1

    import pyverbs.enums as e
    from pyverbs.device import Context
    from pyverbs.pd import PD

    ctx = Context(name=args.dev)
    pd = PD(ctx)
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    tx.bind((args.peer, 0))
    smac = mac_bytes(open(f'/sys/class/net/{args.peer}/address').read())

    # IPv4/UDP, addresses and ports
    dmac = '02:00:00:00:5e:41'
    fields = e.IBV_RX_HASH_SRC_IPV4 | e.IBV_RX_HASH_DST_IPV4 | \
        e.IBV_RX_HASH_SRC_PORT_UDP | e.IBV_RX_HASH_DST_PORT_UDP
    n = 512
    flows = [(f'10.{k % 7}.{k // 7 % 256}.{(k * 37) % 251 + 1}',
              1024 + k * 13, '192.0.2.7', 4791) for k in range(n)]
    frames = [frame_v4_udp(mac_bytes(dmac), smac, s, d, sp, dp, k)
              for k, (s, sp, d, dp) in enumerate(flows)]
    hashes = [caselib.toeplitz(KEY, socket.inet_aton(s) +
                               socket.inet_aton(d) +
                               struct.pack('!HH', sp, dp))
              for s, sp, d, dp in flows]
    one_round('IPv4/UDP', (8, 4, fields, dmac, n), 'IPv4/UDP 512 flows',
              ctx, pd, frames, hashes, tx)

    # IPv6/TCP, addresses only (the ports must not matter)
    dmac = '02:00:00:00:5e:61'
    fields = e.IBV_RX_HASH_SRC_IPV6 | e.IBV_RX_HASH_DST_IPV6
    n = 256
    flows = [(f'fd00:{k % 5:x}::{k * 977 % 65521:x}:{k:x}', 2000 + k % 3,
              'fd00:ffff::7', 80 + k % 2) for k in range(n)]
    frames = [frame_v6_tcp(mac_bytes(dmac), smac, s, d, sp, dp, k)
              for k, (s, sp, d, dp) in enumerate(flows)]
    hashes = [caselib.toeplitz(KEY, socket.inet_pton(socket.AF_INET6, s) +
                               socket.inet_pton(socket.AF_INET6, d))
              for s, sp, d, dp in flows]
    one_round('IPv6/TCP', (4, 3, fields, dmac, n),
              'IPv6/TCP 256 flows (addresses only)', ctx, pd, frames, hashes,
              tx)
    tx.close()
    pd.close()
    ctx.close()
    return 1 if TAP.fails else 0


if __name__ == '__main__':
    sys.exit(main())
