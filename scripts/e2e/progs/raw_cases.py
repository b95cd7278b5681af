#!/usr/bin/python3
"""RAW_PACKET QPs and flow steering on one device.  Runs inside the VM, as
root, on one shca device whose netdev (--ifname) is one end of a veth
pair; the other end (--peer) stands for the wire: an AF_PACKET socket on
it injects frames and captures what the device sends.

Checks the statements of ibv_create_qp(3) and ibv_create_flow(3) for raw
QPs and rules, with rdma-core's test scaffolding staged by
pyverbs-run.py, and prints TAP-like lines:
  - caps: IBV_DEVICE_MANAGED_FLOW_STEERING, IBV_RAW_PACKET_CAP_IP_CSUM,
    IBV_RAW_PACKET_CAP_DELAY_DROP and IBV_DEVICE_RAW_IP_CSUM,
    RSS on RAW_PACKET QPs with Toeplitz over the IPv4/IPv6/TCP/UDP fields;
  - a raw QP: caps written back at least as asked, RESET after creation,
    INIT with the port alone, then RTR and RTS; without CAP_NET_RAW
    creation fails with EPERM (an RC QP still works);
  - sends: only IBV_WR_SEND (others EINVAL at post time); the frame in
    SGEs or inline leaves on the wire byte for byte; IBV_SEND_IP_CSUM
    fills in the IPv4 and UDP checksums; a frame shorter than an
    Ethernet header or longer than MTU + header completes with
    IBV_WC_LOC_LEN_ERR, counted in raw_tx_errs, and nothing leaves;
  - receives: a rule's frames land whole (byte_len, bytes over two SGEs,
    qp_num, IBV_WC_RECV, no GRH, IBV_WC_IP_CSUM_OK for a good IPv4/UDP
    frame) counted in flow_rx_frames; a frame sent by a raw QP reaches the
    rules of other QPs on the same port (loopback), never its sender;
    ETH, IPv4, IPv6, TCP and UDP specs with full and partial masks, each
    QP getting exactly its frames; a lower priority value wins; a
    DONT_TRAP rule copies the frame and lets later rules and the kernel
    stack (a UDP socket) have it, a trapping rule keeps it from both;
    destroying a rule gives the frames back to the stack; without a
    posted receive the frame is dropped and counted
    (flow_rx_no_recv_wqe); a receive too small completes with
    IBV_WC_LOC_LEN_ERR; frames in INIT are dropped (flow_rx_dropped);
  - bad input: rules on RC and UD QPs, on port 0 or 2, of type
    ALL_DEFAULT/MC_DEFAULT/SNIFFER, with EGRESS or unknown flags, with an
    IPv4 and an IPv6 spec, a TCP and a UDP spec or two ETH specs, with a
    VLAN mask: each a clear errno; hand-made CREATE_FLOW commands
    (written to the uverbs fd, past libibverbs) with specs that are cut
    short, of unknown or unsupported types (ESP, GRE, MPLS, VXLAN, inner
    headers, tag and drop actions), with sizes that lie, reserved bytes
    set or too many: each refused, nothing else changes; frames cut short
    in their IPv4/IPv6/UDP/TCP headers match only the rules on what is
    there and count in flow_rx_malformed; on a bridge port, trapping
    rules fail with EBUSY while DONT_TRAP rules work, and a netdev whose
    frames a rule traps cannot be enslaved.
  - ibv_create_wq(3) through libibverbs itself (ctypes): max_wr and
    max_sge written back, at least as asked and within the caps; too
    many WRs or SGEs, another WQ type, each creation flag but
    CVLAN_STRIPPING (accepted), unknown bits: refused; a WQ in a table
    and a table an RSS QP uses cannot be destroyed (EBUSY); an RSS QP
    whose PD is not its WQs', a table of WQs of two PDs, above
    max_rwq_indirection_table_size, or of another context's WQ: refused;
    destroy returns 0.
Every case checks the deltas of the raw/flow counters of
`rdma statistic show link DEV/1` that it moves.

    raw_cases.py --dev shca8 --ifname raw0 --peer raw0p [--hostile]
"""
import ctypes
import errno
import os
import select
import socket
import struct
import subprocess
import sys
import time

import caselib

POLL_TIMEOUT = 60       # seconds; TCG is slow, a lost completion must not hang
QUIET = 0.5             # seconds to look for something that must not come
SLOT = 2048             # receive buffer
NSLOT = 32
COUNTERS = ('raw_tx_frames', 'raw_tx_errs', 'flow_rx_frames',
            'flow_rx_no_recv_wqe', 'flow_rx_dropped', 'flow_rx_malformed')
IFNAME = PEER = None
UDP_PORT = 47011

# uverbs write ABI (rdma/ib_user_verbs.h)
CMD_FLAG_EXTENDED = 0x80000000
EX_CMD_CREATE_FLOW = 50
EX_CMD_DESTROY_FLOW = 51


def mac_of(ifname):
    with open(f'/sys/class/net/{ifname}/address') as f:
        return bytes.fromhex(f.read().strip().replace(':', ''))


def mac_str(b):
    return ':'.join(f'{x:02x}' for x in b)


def ipv4(src, dst, proto, l4, fix=True):
    h = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(l4), 0x1234, 0x4000,
                    64, proto, 0, socket.inet_aton(src), socket.inet_aton(dst))
    if fix:
        h = h[:10] + struct.pack('!H', caselib.csum(h)) + h[12:]
    return h + l4


def udp(sport, dport, payload, src=None, dst=None):
    u = struct.pack('!HHHH', sport, dport, 8 + len(payload), 0) + payload
    if src:
        ph = socket.inet_aton(src) + socket.inet_aton(dst) + \
            struct.pack('!BBH', 0, socket.IPPROTO_UDP, len(u))
        c = caselib.csum(ph + u) or 0xffff
        u = u[:6] + struct.pack('!H', c) + u[8:]
    return u


def tcp(sport, dport, payload):
    return struct.pack('!HHIIHHHH', sport, dport, 1, 0, 5 << 12 | 0x10,
                       65535, 0, 0) + payload


def ipv6(src, dst, nh, l4):
    return struct.pack('!IHBB16s16s', 6 << 28, len(l4), nh, 64,
                       socket.inet_pton(socket.AF_INET6, src),
                       socket.inet_pton(socket.AF_INET6, dst)) + l4


def eth(dmac, smac, etype, body):
    return dmac + smac + struct.pack('!H', etype) + body


def payload(n, seed):
    return bytes((seed * 31 + i * 7 + 1) & 0xff for i in range(n))


class Wire:
    """The peer end: inject frames, capture what arrives from the device."""

    def __init__(self, peer):
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                               socket.htons(0x0003))
        self.s.bind((peer, 0))
        self.s.setblocking(False)

    def send(self, frame):
        self.s.send(frame)

    def drain(self):
        while select.select([self.s], [], [], 0)[0]:
            try:
                self.s.recvfrom(65536)
            except BlockingIOError:
                break

    def capture(self, match, timeout):
        """Frames that arrived on the peer (not sent by it) and satisfy
        @match, for @timeout seconds or until the first one."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None
            if not select.select([self.s], [], [], left)[0]:
                continue
            try:
                data, addr = self.s.recvfrom(65536)
            except BlockingIOError:
                continue
            if addr[2] != socket.PACKET_OUTGOING and match(data):
                return data

    def close(self):
        self.s.close()


def uverbs_write(fd, words):
    try:
        os.write(fd, words)
        return 0
    except OSError as ex:
        return ex.errno


def flow_cmd(qp_handle, specs, num=None, ftype=0, prio=0, port=1, flags=0,
             size=None, reserved=b'\0\0', resp=None):
    """An extended CREATE_FLOW command (ib_uverbs_create_flow + specs)."""
    body = b''.join(specs)
    # struct ib_uverbs_flow_attr: type u32, size u16, priority u16,
    # num_of_specs u8, reserved u8[2], port u8, flags u32
    hdr_fa = struct.pack('<IHHB2sBI', ftype,
                         len(body) if size is None else size, prio,
                         len(specs) if num is None else num, reserved, port,
                         flags)
    core = struct.pack('<II', 0, qp_handle) + hdr_fa + body
    pad = (-len(core)) % 8
    core += b'\0' * pad
    rbuf = resp if resp is not None else ctypes.create_string_buffer(8)
    out_words = len(rbuf) // 8
    h = struct.pack('<IHH', CMD_FLAG_EXTENDED | EX_CMD_CREATE_FLOW,
                    len(core) // 8, out_words)
    ex = struct.pack('<QHHI', ctypes.addressof(rbuf), 0, 0, 0)
    return h + ex + core, rbuf


def destroy_cmd(handle):
    core = struct.pack('<II', 0, handle)
    h = struct.pack('<IHH', CMD_FLAG_EXTENDED | EX_CMD_DESTROY_FLOW,
                    len(core) // 8, 0)
    ex = struct.pack('<QHHI', 0, 0, 0, 0)
    return h + ex + core


def kspec_eth(dmac, mask=b'\xff' * 6, stype=0x20, size=None):
    """ib_uverbs_flow_spec_eth: hdr (type u32, size u16, reserved u16),
    val and mask of ib_uverbs_flow_eth_filter (dmac, smac, ether_type,
    vlan_tag)."""
    filt = dmac + b'\0' * 6 + b'\0\0\0\0'
    mfilt = mask + b'\0' * 6 + b'\0\0\0\0'
    body = filt + mfilt
    return struct.pack('<IHH', stype, 8 + len(body) if size is None else size,
                       0) + body


def kspec_raw(stype, nbytes, size=None):
    return struct.pack('<IHH', stype, 8 + nbytes if size is None else size,
                       0) + b'\0' * nbytes


class WqInit(ctypes.Structure):
    _fields_ = [('wq_context', ctypes.c_void_p), ('wq_type', ctypes.c_uint),
                ('max_wr', ctypes.c_uint32), ('max_sge', ctypes.c_uint32),
                ('pd', ctypes.c_void_p), ('cq', ctypes.c_void_p),
                ('comp_mask', ctypes.c_uint32),
                ('create_flags', ctypes.c_uint32)]


class TblInit(ctypes.Structure):
    _fields_ = [('log_ind_tbl_size', ctypes.c_uint32),
                ('ind_tbl', ctypes.POINTER(ctypes.c_void_p)),
                ('comp_mask', ctypes.c_uint32)]


class QpCap(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint32) for n in
                ('max_send_wr', 'max_recv_wr', 'max_send_sge',
                 'max_recv_sge', 'max_inline_data')]


class HashConf(ctypes.Structure):
    _fields_ = [('rx_hash_function', ctypes.c_uint8),
                ('rx_hash_key_len', ctypes.c_uint8),
                ('rx_hash_key', ctypes.c_void_p),
                ('rx_hash_fields_mask', ctypes.c_uint64)]


class QpInitEx(ctypes.Structure):
    _fields_ = [('qp_context', ctypes.c_void_p), ('send_cq', ctypes.c_void_p),
                ('recv_cq', ctypes.c_void_p), ('srq', ctypes.c_void_p),
                ('cap', QpCap), ('qp_type', ctypes.c_uint),
                ('sq_sig_all', ctypes.c_int), ('comp_mask', ctypes.c_uint32),
                ('pd', ctypes.c_void_p), ('xrcd', ctypes.c_void_p),
                ('create_flags', ctypes.c_uint32),
                ('max_tso_header', ctypes.c_uint16),
                ('rwq_ind_tbl', ctypes.c_void_p), ('rx_hash_conf', HashConf),
                ('source_qpn', ctypes.c_uint32),
                ('send_ops_flags', ctypes.c_uint64)]


class Verbs:
    """libibverbs through ctypes, for what pyverbs cannot show: the caps
    ibv_create_wq writes back, and destroying a WQ or a table that is in
    use (pyverbs closes the users first).  ibv_create_wq and friends are
    inline in verbs.h: they call the provider through struct
    verbs_context, whose tail (the ops up to struct ibv_context) is part
    of libibverbs' ABI; these are their offsets from the ibv_context."""
    OFF = {'create_qp_ex': 56, 'create_wq': 136, 'destroy_wq': 152,
           'create_rwq_ind_table': 160, 'destroy_rwq_ind_table': 168}

    def __init__(self, dev):
        self.lib = lib = ctypes.CDLL('libibverbs.so.1', use_errno=True)
        for name, res, args in (
                ('ibv_get_device_list', ctypes.c_void_p,
                 [ctypes.POINTER(ctypes.c_int)]),
                ('ibv_free_device_list', None, [ctypes.c_void_p]),
                ('ibv_get_device_name', ctypes.c_char_p, [ctypes.c_void_p]),
                ('ibv_open_device', ctypes.c_void_p, [ctypes.c_void_p]),
                ('ibv_close_device', ctypes.c_int, [ctypes.c_void_p]),
                ('ibv_alloc_pd', ctypes.c_void_p, [ctypes.c_void_p]),
                ('ibv_dealloc_pd', ctypes.c_int, [ctypes.c_void_p]),
                ('ibv_create_cq', ctypes.c_void_p,
                 [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
                  ctypes.c_void_p, ctypes.c_int]),
                ('ibv_destroy_cq', ctypes.c_int, [ctypes.c_void_p]),
                ('ibv_destroy_qp', ctypes.c_int, [ctypes.c_void_p])):
            f = getattr(lib, name)
            f.restype = res
            f.argtypes = args
        n = ctypes.c_int()
        lst = lib.ibv_get_device_list(ctypes.byref(n))
        devs = ctypes.cast(lst, ctypes.POINTER(ctypes.c_void_p))
        self.ctx = None
        for i in range(n.value):
            if lib.ibv_get_device_name(devs[i]).decode() == dev:
                self.ctx = lib.ibv_open_device(devs[i])
        lib.ibv_free_device_list(lst)
        if not self.ctx:
            raise OSError(errno.ENODEV, dev)
        self.ops = {}
        for name, off in self.OFF.items():
            addr = ctypes.c_void_p.from_address(self.ctx - off).value
            if not addr:
                raise OSError(errno.EOPNOTSUPP, name)
            self.ops[name] = addr

    def op(self, name, res, *args):
        f = ctypes.CFUNCTYPE(res, *[type(a) for a in args],
                             use_errno=True)(self.ops[name])
        ctypes.set_errno(0)
        r = f(*args)
        return r, ctypes.get_errno()

    def create_wq(self, attr):
        return self.op('create_wq', ctypes.c_void_p, ctypes.c_void_p(self.ctx),
                       ctypes.pointer(attr))

    def destroy_wq(self, wq):
        return self.op('destroy_wq', ctypes.c_int, ctypes.c_void_p(wq))[0]

    def create_tbl(self, log, wqs):
        arr = (ctypes.c_void_p * len(wqs))(*wqs)
        attr = TblInit(log, ctypes.cast(arr, ctypes.POINTER(ctypes.c_void_p)),
                       0)
        return self.op('create_rwq_ind_table', ctypes.c_void_p,
                       ctypes.c_void_p(self.ctx), ctypes.pointer(attr))

    def destroy_tbl(self, tbl):
        return self.op('destroy_rwq_ind_table', ctypes.c_int,
                       ctypes.c_void_p(tbl))[0]

    def create_rss_qp(self, pd, tbl, key, fields):
        keybuf = ctypes.create_string_buffer(bytes(key), len(key))
        attr = QpInitEx()
        attr.qp_type = 8        # IBV_QPT_RAW_PACKET
        # IBV_QP_INIT_ATTR_PD | _IND_TABLE | _RX_HASH
        attr.comp_mask = 1 | (1 << 4) | (1 << 5)
        attr.pd = pd
        attr.rwq_ind_tbl = tbl
        attr.rx_hash_conf = HashConf(1, len(key),
                                     ctypes.addressof(keybuf), fields)
        return self.op('create_qp_ex', ctypes.c_void_p,
                       ctypes.c_void_p(self.ctx), ctypes.pointer(attr))

    def close(self):
        self.lib.ibv_close_device(ctypes.c_void_p(self.ctx))


def define_tests():
    import pyverbs.enums as e
    from pyverbs.cq import CQ
    from pyverbs.device import Context
    from pyverbs.flow import Flow, FlowAttr
    from pyverbs.mr import MR
    from pyverbs.pd import PD
    from pyverbs.pyverbs_error import PyverbsRDMAError
    from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
    from pyverbs.spec import EthSpec, Ipv4ExtSpec, Ipv6Spec, TcpUdpSpec
    from pyverbs.wr import RecvWR, SendWR, SGE
    from tests.base import RDMATestCase

    FULL = 'ff:ff:ff:ff:ff:ff'
    V6FULL = 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'

    class RawTest(RDMATestCase):
        """One context, PD and CQ a test; raw QPs made by raw_qp()."""

        def setUp(self):
            super().setUp()
            self.ctx, self.pd, self.cq = caselib.ctx_pd_cq(self.dev_name, 256)
            self.mr = MR(self.pd, 2 * NSLOT * SLOT,
                         e.IBV_ACCESS_LOCAL_WRITE)
            self.qps = []
            self.flows = []
            self.wire = Wire(PEER)
            self.my_mac = mac_of(IFNAME)
            self.peer_mac = mac_of(PEER)
            self.slot = 0

        def tearDown(self):
            for f in self.flows:
                f.close()
            for q in self.qps:
                q.close()
            self.wire.close()
            self.mr.close()
            self.cq.close()
            self.pd.close()
            self.ctx.close()
            super().tearDown()

        # --- helpers ---------------------------------------------------

        def raw_qp(self, state=e.IBV_QPS_RTS, cap=None):
            cap = cap or QPCap(max_send_wr=64, max_recv_wr=NSLOT,
                               max_send_sge=2, max_recv_sge=2,
                               max_inline_data=128)
            qp = QP(self.pd, QPInitAttr(qp_type=e.IBV_QPT_RAW_PACKET,
                                        scq=self.cq, rcq=self.cq, cap=cap))
            self.qps.append(qp)
            if state == e.IBV_QPS_RESET:
                return qp
            qp.modify(QPAttr(qp_state=e.IBV_QPS_INIT, port_num=1),
                      e.IBV_QP_STATE | e.IBV_QP_PORT)
            if state == e.IBV_QPS_INIT:
                return qp
            qp.modify(QPAttr(qp_state=e.IBV_QPS_RTR), e.IBV_QP_STATE)
            if state == e.IBV_QPS_RTR:
                return qp
            qp.modify(QPAttr(qp_state=e.IBV_QPS_RTS), e.IBV_QP_STATE)
            return qp

        def flow(self, qp, specs, prio=0, flags=0, ftype=0, port=1):
            fa = FlowAttr(num_of_specs=len(specs), flow_type=ftype,
                          priority=prio, port=port, flags=flags)
            for s in specs:
                fa.specs.append(s)
            f = Flow(qp, fa)
            self.flows.append(f)
            return f

        def flow_err(self, qp, specs, **kw):
            try:
                self.flow(qp, specs, **kw)
            except PyverbsRDMAError as ex:
                return ex.error_code
            return 0

        def post_recv(self, qp, n=1, size=SLOT, two=True):
            """Post @n receives, each over two SGEs (size/2 each) when
            @two; wr_id is the slot index."""
            ids = []
            for _ in range(n):
                k = self.slot % NSLOT
                self.slot += 1
                base = self.mr.buf + k * SLOT
                self.mr.write(b'\xee' * SLOT, SLOT, k * SLOT)
                if two:
                    sg = [SGE(base, size // 2, self.mr.lkey),
                          SGE(base + size // 2, size - size // 2,
                              self.mr.lkey)]
                else:
                    sg = [SGE(base, size, self.mr.lkey)]
                qp.post_recv(RecvWR(wr_id=k, num_sge=len(sg), sg=sg))
                ids.append(k)
            return ids

        def send(self, qp, frame, wr_id=0x5e, flags=e.IBV_SEND_SIGNALED,
                 inline=False, opcode=e.IBV_WR_SEND):
            off = NSLOT * SLOT
            self.mr.write(frame, len(frame), off)
            if inline or len(frame) < 2:
                sg = [SGE(self.mr.buf + off, len(frame), self.mr.lkey)]
            else:
                h = len(frame) // 2
                sg = [SGE(self.mr.buf + off, h, self.mr.lkey),
                      SGE(self.mr.buf + off + h, len(frame) - h,
                          self.mr.lkey)]
            if inline:
                flags |= e.IBV_SEND_INLINE
            qp.post_send(SendWR(wr_id=wr_id, opcode=opcode,
                                num_sge=len(sg), sg=sg, send_flags=flags))

        def poll(self, n=1, timeout=POLL_TIMEOUT):
            return caselib.poll(self.cq, n, timeout, nap=0.005)

        def nothing(self):
            more = self.poll(1, QUIET)
            self.assertEqual(more, [], f'unexpected completion: '
                             f'{[(w.wr_id, w.status, w.qp_num) for w in more]}')

        def send_ok(self, qp, frame, **kw):
            self.send(qp, frame, **kw)
            wcs = self.poll(1)
            self.assertEqual(len(wcs), 1, 'no send completion')
            self.assertEqual((wcs[0].status, wcs[0].opcode,
                              wcs[0].wr_id), (e.IBV_WC_SUCCESS,
                                              e.IBV_WC_SEND,
                                              kw.get('wr_id', 0x5e)))

        def recv_of(self, qps, n):
            """@n receive completions, sorted out by QP number."""
            wcs = self.poll(n)
            self.assertEqual(len(wcs), n, f'{len(wcs)} of {n} frames arrived')
            out = {}
            for w in wcs:
                out.setdefault(w.qp_num, []).append(w)
            return out

        def check_frame(self, wc, qp, frame):
            self.assertEqual((wc.status, wc.opcode, wc.qp_num, wc.byte_len),
                             (e.IBV_WC_SUCCESS, e.IBV_WC_RECV, qp.qp_num,
                              len(frame)))
            self.assertFalse(wc.wc_flags & e.IBV_WC_GRH, 'GRH flag set')
            data = self.mr.read(SLOT, wc.wr_id * SLOT)
            self.assertEqual(data[:len(frame)], frame, 'frame bytes differ')
            self.assertEqual(data[len(frame):], b'\xee' * (SLOT - len(frame)),
                             'bytes past the frame were written')

        def counting(self):
            self.c0 = caselib.counters(self.dev_name)

        def counted(self, **want):
            """Each named counter grew by exactly the given amount (None:
            by at least one); the other raw/flow counters did not move,
            unless named."""
            c1 = caselib.counters(self.dev_name)
            for name in COUNTERS:
                d = c1.get(name, 0) - self.c0.get(name, 0)
                w = want.get(name, 0)
                if w is None:
                    self.assertGreater(d, 0, f'{name} did not grow')
                elif w != 'any':
                    self.assertEqual(d, w, f'{name} grew by {d}, want {w}')

        def frame_v4(self, dmac=None, src='10.9.0.1', dst='10.9.0.2',
                     sport=1234, dport=5678, n=64, seed=1, csum_ok=False):
            body = payload(n, seed)
            return eth(dmac or bytes.fromhex('020000005e01'), self.peer_mac,
                       0x0800, ipv4(src, dst, socket.IPPROTO_UDP,
                                    udp(sport, dport, body,
                                        *((src, dst) if csum_ok
                                          else (None, None)))))

        # --- caps and creation -----------------------------------------

        def test_caps(self):
            a = self.ctx.query_device_ex()
            flags = a.orig_attr.device_cap_flags
            r = a.rss_caps
            got = {
                # ibv_create_flow(3): only for devices that have it
                'MANAGED_FLOW_STEERING':
                    bool(flags & e.IBV_DEVICE_MANAGED_FLOW_STEERING),
                'RAW_IP_CSUM': bool(flags & e.IBV_DEVICE_RAW_IP_CSUM),
                'IBV_RAW_PACKET_CAP_IP_CSUM':
                    bool(a.raw_packet_caps & e.IBV_RAW_PACKET_CAP_IP_CSUM),
                'IBV_RAW_PACKET_CAP_DELAY_DROP':
                    bool(a.raw_packet_caps &
                         e.IBV_RAW_PACKET_CAP_DELAY_DROP),
                'RSS on RAW_PACKET':
                    bool(r.supported_qpts & (1 << e.IBV_QPT_RAW_PACKET)),
                'indirection tables': r.max_rwq_indirection_tables > 0 and
                    r.max_rwq_indirection_table_size > 0,
                'Toeplitz':
                    r.rx_hash_function == e.IBV_RX_HASH_FUNC_TOEPLITZ,
                'hash fields 0xff': r.rx_hash_fields_mask == 0xff,
                'WQs': a.max_wq_type_rq > 0,
            }
            self.assertEqual([k for k, v in got.items() if not v], [],
                             'not advertised')

        def test_create_modify(self):
            want = QPCap(max_send_wr=17, max_recv_wr=9, max_send_sge=2,
                         max_recv_sge=3, max_inline_data=100)
            ia = QPInitAttr(qp_type=e.IBV_QPT_RAW_PACKET, scq=self.cq,
                            rcq=self.cq, cap=want)
            qp = QP(self.pd, ia)
            self.qps.append(qp)
            got = ia.cap
            for f in ('max_send_wr', 'max_recv_wr', 'max_send_sge',
                      'max_recv_sge', 'max_inline_data'):
                self.assertGreaterEqual(getattr(got, f), getattr(want, f), f)
            attr, init = qp.query(e.IBV_QP_STATE | e.IBV_QP_CAP)
            self.assertEqual(attr.qp_state, e.IBV_QPS_RESET)
            self.assertEqual(init.cap.max_send_wr, got.max_send_wr)
            # INIT takes the port alone; without it: EINVAL
            with self.assertRaises(PyverbsRDMAError) as cm:
                qp.modify(QPAttr(qp_state=e.IBV_QPS_INIT), e.IBV_QP_STATE)
            self.assertEqual(cm.exception.error_code, errno.EINVAL)
            qp.modify(QPAttr(qp_state=e.IBV_QPS_INIT, port_num=1),
                      e.IBV_QP_STATE | e.IBV_QP_PORT)
            qp.modify(QPAttr(qp_state=e.IBV_QPS_RTR), e.IBV_QP_STATE)
            qp.modify(QPAttr(qp_state=e.IBV_QPS_RTS), e.IBV_QP_STATE)
            attr, _ = qp.query(e.IBV_QP_STATE)
            self.assertEqual(attr.qp_state, e.IBV_QPS_RTS)

        def test_needs_cap_net_raw(self):
            code = (
                'import sys, errno\n'
                'from pyverbs.device import Context\n'
                'from pyverbs.pd import PD\n'
                'from pyverbs.cq import CQ\n'
                'from pyverbs.qp import QP, QPInitAttr, QPCap\n'
                'from pyverbs.pyverbs_error import PyverbsRDMAError\n'
                'import pyverbs.enums as e\n'
                f'ctx = Context(name="{self.dev_name}")\n'
                'pd = PD(ctx); cq = CQ(ctx, 8)\n'
                'def mk(t):\n'
                '    return QP(pd, QPInitAttr(qp_type=t, scq=cq, rcq=cq,'
                ' cap=QPCap(4, 4, 1, 1)))\n'
                'mk(e.IBV_QPT_RC).close()\n'
                'try:\n'
                '    mk(e.IBV_QPT_RAW_PACKET)\n'
                'except PyverbsRDMAError as ex:\n'
                '    sys.exit(0 if ex.error_code == errno.EPERM else 3)\n'
                'sys.exit(2)\n')
            r = subprocess.run(['setpriv', '--bounding-set', '-net_raw',
                                '--inh-caps', '-net_raw', '/usr/bin/python3',
                                '-c', code], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0,
                             f'rc {r.returncode}: {r.stderr[-300:]}')

        # --- sends -----------------------------------------------------

        def test_send_opcodes_refused(self):
            qp = self.raw_qp()
            f = self.frame_v4()
            for op in (e.IBV_WR_SEND_WITH_IMM, e.IBV_WR_RDMA_WRITE,
                       e.IBV_WR_RDMA_READ, e.IBV_WR_ATOMIC_FETCH_AND_ADD):
                with self.assertRaises(PyverbsRDMAError, msg=str(op)) as cm:
                    self.send(qp, f, opcode=op)
                self.assertEqual(cm.exception.error_code, errno.EINVAL)
            self.nothing()

        def test_egress_bytes(self):
            qp = self.raw_qp()
            self.wire.drain()
            self.counting()
            for k, inline in enumerate((False, True)):
                f = self.frame_v4(dmac=self.peer_mac, n=60 + k, seed=k)
                self.send_ok(qp, f, inline=inline)
                got = self.wire.capture(lambda d, f=f: d[12:14] ==
                                        b'\x08\x00' and d[14:] == f[14:],
                                        POLL_TIMEOUT)
                self.assertEqual(got, f, f'inline={inline}: frame on '
                                 'the wire differs or is missing')
            self.counted(raw_tx_frames=2)

        def test_ip_csum(self):
            qp = self.raw_qp()
            self.wire.drain()
            f = self.frame_v4(dmac=self.peer_mac, n=33, seed=9)
            good = self.frame_v4(dmac=self.peer_mac, n=33, seed=9,
                                 csum_ok=True)
            # the IPv4 checksum zeroed: the device fills in both
            f = f[:24] + b'\0\0' + f[26:]
            self.send_ok(qp, f, flags=e.IBV_SEND_SIGNALED |
                         e.IBV_SEND_IP_CSUM)
            got = self.wire.capture(lambda d: d[12:14] == b'\x08\x00' and
                                    d[42:] == f[42:], POLL_TIMEOUT)
            self.assertEqual(got, good, 'checksums not filled in')

        def test_short_and_long_frames(self):
            qp = self.raw_qp()
            self.wire.drain()
            self.counting()
            mtu = int(open(f'/sys/class/net/{IFNAME}/mtu').read())
            for n, inline in ((0, False), (13, False), (10, True),
                              (mtu + 14 + 4 + 1, False)):
                f = (self.peer_mac + self.peer_mac + b'\x88\xb5' +
                     bytes(mtu + 64))[:n]
                if n == 0:
                    qp.post_send(SendWR(wr_id=n, opcode=e.IBV_WR_SEND,
                                        num_sge=1,
                                        sg=[SGE(self.mr.buf, 0,
                                                self.mr.lkey)],
                                        send_flags=e.IBV_SEND_SIGNALED))
                else:
                    self.send(qp, f, wr_id=n, inline=inline)
                wcs = self.poll(1)
                self.assertEqual(len(wcs), 1, f'{n} bytes: no completion')
                self.assertEqual((wcs[0].wr_id, wcs[0].status),
                                 (n, e.IBV_WC_LOC_LEN_ERR), f'{n} bytes')
                # the QP went to the error state on hardware too; renew it
                self.qps.remove(qp)
                qp.close()
                qp = self.raw_qp()
            self.assertIsNone(self.wire.capture(
                lambda d: d[12:14] == b'\x88\xb5', QUIET),
                'a bad frame left')
            self.counted(raw_tx_errs=4)

        # --- receives --------------------------------------------------

        def test_loopback_to_rule(self):
            snd = self.raw_qp()
            rcv = self.raw_qp()
            dmac = bytes.fromhex('020000005e02')
            # the sender's own rule, first and best, never sees its frames
            self.flow(snd, [EthSpec(dst_mac=mac_str(dmac), dst_mac_mask=FULL)])
            self.flow(rcv, [EthSpec(dst_mac=mac_str(dmac), dst_mac_mask=FULL)],
                      prio=1)
            self.post_recv(rcv, 2)
            self.post_recv(snd, 1)
            self.counting()
            f = self.frame_v4(dmac=dmac, n=200, seed=3, csum_ok=True)
            self.send(snd, f)
            other = self.frame_v4(dmac=bytes.fromhex('020000005e03'), n=80)
            self.send(snd, other, wr_id=0x5f)
            wcs = self.poll(3)
            sends = [w for w in wcs if w.opcode == e.IBV_WC_SEND]
            recvs = [w for w in wcs if w.opcode != e.IBV_WC_SEND]
            self.assertEqual(sorted(w.wr_id for w in sends), [0x5e, 0x5f])
            self.assertEqual(len(recvs), 1, 'frame not looped back')
            self.check_frame(recvs[0], rcv, f)
            self.assertTrue(recvs[0].wc_flags & e.IBV_WC_IP_CSUM_OK,
                            'IBV_WC_IP_CSUM_OK missing on a good frame')
            self.nothing()
            self.counted(raw_tx_frames=2, flow_rx_frames=1)

        def test_specs_from_wire(self):
            d = bytes.fromhex('020000005e10')
            q_eth, q_v4, q_v6, q_udp, q_tcp, q_net = (
                self.raw_qp() for _ in range(6))
            self.flow(q_eth, [EthSpec(dst_mac=mac_str(d), dst_mac_mask=FULL,
                                      ether_type=0x88b5)])
            self.flow(q_v4, [Ipv4ExtSpec(src_ip='10.20.0.1',
                                         dst_ip='10.20.0.2')])
            self.flow(q_v6, [Ipv6Spec(src_ip='fd10::1', dst_ip='fd10::2',
                                      src_ip_mask=V6FULL,
                                      dst_ip_mask=V6FULL)])
            self.flow(q_udp, [EthSpec(dst_mac=mac_str(d), dst_mac_mask=FULL),
                              Ipv4ExtSpec(dst_ip='10.21.0.2',
                                          proto=socket.IPPROTO_UDP),
                              TcpUdpSpec(e.IBV_FLOW_SPEC_UDP, dst_port=4000,
                                         src_port=3000)])
            self.flow(q_tcp, [Ipv6Spec(src_ip='::', src_ip_mask='::',
                                       dst_ip='fd11::2', dst_ip_mask=V6FULL,
                                       next_hdr=socket.IPPROTO_TCP,
                                       next_hdr_mask=0xff),
                              TcpUdpSpec(e.IBV_FLOW_SPEC_TCP, dst_port=80)])
            # a partial mask: the /24 of the source
            self.flow(q_net, [Ipv4ExtSpec(src_ip='10.22.0.0',
                                          src_ip_mask='255.255.255.0')])
            for q in (q_eth, q_v4, q_v6, q_udp, q_tcp, q_net):
                self.post_recv(q, 2)
            pm = self.peer_mac
            want = {
                q_eth: [eth(d, pm, 0x88b5, payload(50, 1))],
                q_v4: [eth(d, pm, 0x0800, ipv4('10.20.0.1', '10.20.0.2', 17,
                                              udp(1, 2, payload(20, 2))))],
                q_v6: [eth(d, pm, 0x86dd, ipv6('fd10::1', 'fd10::2', 17,
                                              udp(1, 2, payload(9, 3))))],
                q_udp: [eth(d, pm, 0x0800, ipv4('10.21.0.1', '10.21.0.2', 17,
                                               udp(3000, 4000,
                                                   payload(30, 4))))],
                q_tcp: [eth(d, pm, 0x86dd, ipv6('fd11::1', 'fd11::2', 6,
                                               tcp(999, 80, payload(5, 5))))],
                q_net: [eth(d, pm, 0x0800, ipv4('10.22.0.%d' % k, '1.1.1.1',
                                               17, udp(7, 7, payload(8, k))))
                        for k in (1, 254)],
            }
            miss = [
                eth(d, pm, 0x88b6, payload(50, 1)),         # other ethertype
                eth(d, pm, 0x0800, ipv4('10.20.0.1', '10.20.0.3', 17,
                                        udp(1, 2, b'x'))),  # other dst
                eth(d, pm, 0x0800, ipv4('10.21.0.1', '10.21.0.2', 17,
                                        udp(3000, 4001, b'y'))),  # port
                eth(d, pm, 0x0800, ipv4('10.21.0.1', '10.21.0.2', 6,
                                        tcp(3000, 4000, b'z'))),  # TCP
                eth(d, pm, 0x86dd, ipv6('fd11::1', 'fd11::2', 17,
                                        udp(999, 80, b'w'))),     # UDP
                eth(d, pm, 0x0800, ipv4('10.22.1.1', '1.1.1.1', 17,
                                        udp(7, 7, b'v'))),        # /24
            ]
            self.counting()
            for f in miss:
                self.wire.send(f)
            n = 0
            for fl in want.values():
                for f in fl:
                    self.wire.send(f)
                    n += 1
            got = self.recv_of(list(want), n)
            for q, frames in want.items():
                wcs = got.get(q.qp_num, [])
                self.assertEqual(len(wcs), len(frames),
                                 f'QP {q.qp_num}: {len(wcs)} frames')
                for w, f in zip(wcs, frames):
                    self.check_frame(w, q, f)
            self.nothing()
            self.counted(flow_rx_frames=n)

        def test_priority_and_dont_trap(self):
            d = bytes.fromhex('020000005e20')
            hi, lo = self.raw_qp(), self.raw_qp()
            spec = [EthSpec(dst_mac=mac_str(d), dst_mac_mask=FULL)]
            # created low first: the priority value decides, not the order
            f_lo = self.flow(lo, spec, prio=5)
            f_hi = self.flow(hi, spec, prio=1)
            self.post_recv(hi, 4)
            self.post_recv(lo, 4)
            f = eth(d, self.peer_mac, 0x88b5, payload(40, 7))
            self.wire.send(f)
            got = self.recv_of([hi, lo], 1)
            self.assertEqual(list(got), [hi.qp_num], 'the lower value lost')
            self.nothing()
            # DONT_TRAP on the winner: both get it
            f_hi.close()
            self.flows.remove(f_hi)
            self.flow(hi, spec, prio=1,
                      flags=e.IBV_FLOW_ATTR_FLAGS_DONT_TRAP)
            self.wire.send(f)
            got = self.recv_of([hi, lo], 2)
            self.assertEqual(sorted(got), sorted([hi.qp_num, lo.qp_num]))
            self.check_frame(got[hi.qp_num][0], hi, f)
            self.check_frame(got[lo.qp_num][0], lo, f)
            f_lo.close()
            self.flows.remove(f_lo)

        def test_stack_and_dont_trap(self):
            me = '10.93.0.1'
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind((me, UDP_PORT))
            s.setblocking(False)
            qp = self.raw_qp()
            self.post_recv(qp, 8)

            def inject(k):
                body = payload(24, k)
                self.wire.send(eth(self.my_mac, self.peer_mac, 0x0800,
                                   ipv4('10.93.0.2', me, 17,
                                        udp(40000, UDP_PORT, body,
                                            '10.93.0.2', me))))
                return body

            def stack_got(body):
                end = time.monotonic() + (QUIET if body is None else 10)
                while time.monotonic() < end:
                    if select.select([s], [], [], 0.05)[0]:
                        return s.recv(2048)
                return None

            spec = [EthSpec(dst_mac=mac_str(self.my_mac), dst_mac_mask=FULL),
                    Ipv4ExtSpec(dst_ip=me), TcpUdpSpec(e.IBV_FLOW_SPEC_UDP,
                                                       dst_port=UDP_PORT)]
            try:
                # no rule: the stack has it (the test's own sanity)
                b = inject(1)
                self.assertEqual(stack_got(b), b, 'stack without a rule')
                # a trapping rule steals it
                fl = self.flow(qp, spec)
                inject(2)
                self.assertEqual(len(self.poll(1)), 1, 'rule got nothing')
                self.assertIsNone(stack_got(None), 'the stack got a trapped '
                                  'frame')
                # DONT_TRAP: both
                fl.close()
                self.flows.remove(fl)
                fl = self.flow(qp, spec,
                               flags=e.IBV_FLOW_ATTR_FLAGS_DONT_TRAP)
                b = inject(3)
                self.assertEqual(len(self.poll(1)), 1, 'DONT_TRAP rule got '
                                 'nothing')
                self.assertEqual(stack_got(b), b, 'stack with DONT_TRAP')
                # the rule gone: the stack alone
                fl.close()
                self.flows.remove(fl)
                b = inject(4)
                self.assertEqual(stack_got(b), b, 'stack after destroy')
                self.nothing()
            finally:
                s.close()

        def test_drops_counted(self):
            d = bytes.fromhex('020000005e30')
            qp = self.raw_qp()
            self.flow(qp, [EthSpec(dst_mac=mac_str(d), dst_mac_mask=FULL)])
            f = eth(d, self.peer_mac, 0x88b5, payload(300, 8))
            # no receive posted
            self.counting()
            self.wire.send(f)
            end = time.monotonic() + 20
            n0 = self.c0.get('flow_rx_no_recv_wqe', 0)
            while time.monotonic() < end and n0 == caselib.counters(
                    self.dev_name).get('flow_rx_no_recv_wqe', 0):
                time.sleep(0.1)
            self.nothing()
            self.counted(flow_rx_no_recv_wqe=1)
            # a receive too small: LOC_LEN_ERR, the frame not written
            k = self.post_recv(qp, 1, size=100)[0]
            self.wire.send(f)
            (w,) = self.poll(1)
            self.assertEqual((w.wr_id, w.status), (k, e.IBV_WC_LOC_LEN_ERR))
            # a QP in INIT takes nothing
            qi = self.raw_qp(state=e.IBV_QPS_INIT)
            self.flow(qi, [EthSpec(dst_mac='02:00:00:00:5e:31',
                                   dst_mac_mask=FULL)])
            self.post_recv(qi, 1)
            self.counting()
            self.wire.send(eth(bytes.fromhex('020000005e31'), self.peer_mac,
                               0x88b5, payload(60, 9)))
            self.nothing()
            self.counted(flow_rx_dropped=1)

        # --- bad input -------------------------------------------------

        def test_bad_rules(self):
            raw = self.raw_qp()
            rc = QP(self.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.cq,
                                        rcq=self.cq, cap=QPCap(4, 4, 1, 1)))
            ud = QP(self.pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=self.cq,
                                        rcq=self.cq, cap=QPCap(4, 4, 1, 1)))
            self.qps += [rc, ud]
            eth_s = EthSpec(dst_mac='02:00:00:00:5e:40', dst_mac_mask=FULL)
            NO = (errno.EINVAL, errno.EOPNOTSUPP)
            cases = [
                ('RC QP', rc, [eth_s], {}, (errno.EINVAL,)),
                ('UD QP', ud, [eth_s], {}, NO),
                ('port 0', raw, [eth_s], {'port': 0}, (errno.EINVAL,)),
                ('port 2', raw, [eth_s], {'port': 2}, (errno.EINVAL,)),
                ('ALL_DEFAULT', raw, [], {'ftype': 1}, NO),
                ('MC_DEFAULT', raw, [], {'ftype': 2}, NO),
                ('SNIFFER', raw, [], {'ftype': 3}, NO),
                ('EGRESS', raw, [eth_s], {'flags': 1 << 2}, NO),
                ('unknown flag', raw, [eth_s], {'flags': 1 << 5},
                 (errno.EINVAL,)),
                ('IPv4 and IPv6', raw, [Ipv4ExtSpec(dst_ip='1.2.3.4'),
                                        Ipv6Spec(src_ip='::',
                                                 src_ip_mask='::',
                                                 dst_ip='fd00::1',
                                                 dst_ip_mask=V6FULL)], {},
                 (errno.EINVAL,)),
                ('TCP and UDP', raw, [TcpUdpSpec(e.IBV_FLOW_SPEC_TCP,
                                                 dst_port=1),
                                      TcpUdpSpec(e.IBV_FLOW_SPEC_UDP,
                                                 dst_port=1)], {},
                 (errno.EINVAL,)),
                ('two ETH specs', raw, [eth_s, EthSpec(dst_mac='02:00:00:00:00:01',
                                                       dst_mac_mask=FULL)],
                 {}, (errno.EINVAL,)),
                ('inner ETH', raw, [EthSpec(dst_mac='02:00:00:00:5e:41',
                                            dst_mac_mask=FULL,
                                            is_inner=1)], {}, NO),
            ]
            bad = []
            for name, qp, specs, kw, want in cases:
                try:
                    err = self.flow_err(qp, specs, **kw)
                except Exception as ex:  # pylint: disable=broad-except
                    bad.append(f'{name}: {ex!r}')
                    continue
                if err not in want:
                    bad.append(f'{name}: errno {err}, want one of {want}')
            self.assertEqual(bad, [])
            # a VLAN mask: matched, or refused
            err = self.flow_err(raw, [EthSpec(dst_mac='02:00:00:00:5e:42',
                                              dst_mac_mask=FULL,
                                              vlan_tag=5,
                                              vlan_tag_mask=0xfff)])
            self.assertIn(err, (0,) + NO)

        def _find_qp_handle(self, fd):
            """The uverbs handle of this context's only QP: the one
            handle a valid CREATE_FLOW command is accepted with."""
            good = kspec_eth(bytes.fromhex('020000005e50'))
            for h in range(64):
                cmd, resp = flow_cmd(h, [good])
                if uverbs_write(fd, cmd) == 0:
                    fh = struct.unpack('<I', resp.raw[4:8])[0]
                    self.assertEqual(uverbs_write(fd, destroy_cmd(fh)), 0)
                    return h
            self.fail('no QP handle takes a valid rule')
            return None

        def test_hostile_commands(self):
            ctx2 = Context(name=self.dev_name)
            try:
                self._hostile(ctx2)
            finally:
                ctx2.close()

        def _hostile(self, ctx):
            pd = PD(ctx)
            cq = CQ(ctx, 8)
            qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RAW_PACKET, scq=cq,
                                   rcq=cq, cap=QPCap(4, 4, 1, 1)))
            fd = ctx.cmd_fd
            h = self._find_qp_handle(fd)
            good = kspec_eth(bytes.fromhex('020000005e51'))
            cases = [
                ('spec size 0', [kspec_eth(b'\x02' * 6, size=0)], {}),
                ('spec size short', [kspec_eth(b'\x02' * 6, size=20)], {}),
                ('spec size long', [kspec_eth(b'\x02' * 6, size=64) +
                                    b'\0' * 8], {}),
                ('attr size lies', [good], {'size': len(good) + 8}),
                ('attr size short', [good], {'size': 8}),
                ('num_of_specs 2, one spec', [good], {'num': 2}),
                ('num_of_specs 11', [good] * 11, {}),
                ('reserved set', [good], {'reserved': b'\x01\0'}),
                ('unknown spec type', [kspec_raw(0x7f, 24)], {}),
                ('ESP', [kspec_raw(0x34, 16)], {}),
                ('VXLAN', [kspec_raw(0x50, 8)], {}),
                ('GRE', [kspec_raw(0x51, 16)], {}),
                ('MPLS', [kspec_raw(0x60, 8)], {}),
                ('inner ETH', [kspec_eth(b'\x02' * 6, stype=0x120)], {}),
                ('tag action', [good, kspec_raw(0x1000, 8)], {}),
                ('drop action', [good, struct.pack('<IHH', 0x1001, 8, 0)],
                 {}),
                ('bad QP handle', [good], {'qp': h + 1000}),
            ]
            bad = []
            for name, specs, kw in cases:
                qh = kw.pop('qp', h)
                cmd, resp = flow_cmd(qh, specs, **kw)
                err = uverbs_write(fd, cmd)
                if err == 0:
                    fh = struct.unpack('<I', resp.raw[4:8])[0]
                    uverbs_write(fd, destroy_cmd(fh))
                    bad.append(f'{name}: accepted')
            # destroying what is not a rule
            for fh in (h, 1 << 20):
                if uverbs_write(fd, destroy_cmd(fh)) == 0:
                    bad.append(f'DESTROY_FLOW {fh} accepted')
            self.assertEqual(bad, [])
            # the QP still takes a valid rule (gone before the QP goes:
            # pyverbs does not know it)
            cmd, resp = flow_cmd(h, [good])
            self.assertEqual(uverbs_write(fd, cmd), 0)
            fh = struct.unpack('<I', resp.raw[4:8])[0]
            self.assertEqual(uverbs_write(fd, destroy_cmd(fh)), 0)
            qp.close()
            cq.close()
            pd.close()

        def test_cut_short_headers(self):
            d = bytes.fromhex('020000005e60')
            q_eth, q_v4, q_udp, q_v6 = (self.raw_qp() for _ in range(4))
            self.flow(q_eth, [EthSpec(dst_mac=mac_str(d), dst_mac_mask=FULL)],
                      prio=9)
            self.flow(q_v4, [EthSpec(dst_mac=mac_str(d), dst_mac_mask=FULL),
                             Ipv4ExtSpec(dst_ip='10.60.0.2')], prio=1)
            self.flow(q_udp, [EthSpec(dst_mac=mac_str(d), dst_mac_mask=FULL),
                              Ipv4ExtSpec(dst_ip='10.60.0.3'),
                              TcpUdpSpec(e.IBV_FLOW_SPEC_UDP, dst_port=9)],
                      prio=0)
            self.flow(q_v6, [EthSpec(dst_mac=mac_str(d), dst_mac_mask=FULL),
                             Ipv6Spec(src_ip='::', src_ip_mask='::',
                                      dst_ip='fd60::2', dst_ip_mask=V6FULL)],
                      prio=2)
            for q in (q_eth, q_v4, q_udp, q_v6):
                self.post_recv(q, 4)
            pm = self.peer_mac
            v4 = ipv4('10.60.0.1', '10.60.0.2', 17, udp(9, 9, b'abcd'))
            v4u = ipv4('10.60.0.1', '10.60.0.3', 17, udp(9, 9, b'abcd'))
            v6 = ipv6('fd60::1', 'fd60::2', 17, udp(9, 9, b'abcd'))
            short = [eth(d, pm, 0x0800, v4[:12]),   # IPv4 header cut
                     eth(d, pm, 0x0800, v4u[:24]),  # UDP header cut
                     eth(d, pm, 0x86dd, v6[:30])]   # IPv6 header cut
            self.counting()
            for f in short:
                self.wire.send(f)
            # IPv4 cut: only the ETH rule; UDP cut: the IPv4 rule of
            # q_udp cannot match without its ports, so ETH again; IPv6
            # cut: ETH.  A frame shorter than the spec cannot match it.
            got = self.recv_of([q_eth], 3)
            self.assertEqual(list(got), [q_eth.qp_num],
                             f'landed on {list(got)}')
            for w in got[q_eth.qp_num]:
                self.assertEqual(w.status, e.IBV_WC_SUCCESS)
            self.nothing()
            self.counted(flow_rx_frames=3, flow_rx_malformed=3)
            # shorter than an Ethernet header: veth takes 14 bytes at least,
            # so from the wire only a bare header can come, which is whole
            self.counting()
            self.wire.send(d + pm + b'\x88\xb5')
            got = self.recv_of([q_eth], 1)
            self.check_frame(got[q_eth.qp_num][0], q_eth,
                             d + pm + b'\x88\xb5')
            self.counted(flow_rx_frames=1)

        def test_bridge_port(self):
            """Another owner of the netdev's rx_handler (a bridge): rules
            that must steal frames fail with EBUSY, DONT_TRAP rules still
            get their copies; and while a trapping rule holds it, the
            netdev cannot be enslaved (EBUSY), nothing else changes."""
            def ip(*args):
                return subprocess.run(['ip', 'link'] + list(args),
                                      capture_output=True, text=True)
            d = bytes.fromhex('020000005e70')
            spec = [EthSpec(dst_mac=mac_str(d), dst_mac_mask=FULL)]
            qp = self.raw_qp()
            self.post_recv(qp, 2)
            self.assertEqual(ip('add', 'rawbr', 'type', 'bridge').returncode,
                             0)
            try:
                r = ip('set', IFNAME, 'master', 'rawbr')
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(self.flow_err(qp, spec), errno.EBUSY)
                fl = self.flow(qp, spec,
                               flags=e.IBV_FLOW_ATTR_FLAGS_DONT_TRAP)
                f = eth(d, self.peer_mac, 0x88b5, payload(64, 11))
                self.wire.send(f)
                (w,) = self.poll(1)
                self.check_frame(w, qp, f)
                fl.close()
                self.flows.remove(fl)
                r = ip('set', IFNAME, 'nomaster')
                self.assertEqual(r.returncode, 0, r.stderr)
                self.flow(qp, spec)
                r = ip('set', IFNAME, 'master', 'rawbr')
                self.assertNotEqual(r.returncode, 0,
                                    'enslaved while a rule traps its frames')
                # the rule still works
                self.wire.send(f)
                (w,) = self.poll(1)
                self.check_frame(w, qp, f)
            finally:
                ip('set', IFNAME, 'nomaster')
                ip('del', 'rawbr')

        # --- ibv_create_wq(3), tables and RSS QPs: what wq_cases.py
        # (pyverbs) cannot see ----------------------------------------

        def test_wq_caps_flags_destroy(self):
            v = Verbs(self.dev_name)
            lib = v.lib
            pd = lib.ibv_alloc_pd(ctypes.c_void_p(v.ctx))
            pd2 = lib.ibv_alloc_pd(ctypes.c_void_p(v.ctx))
            cq = lib.ibv_create_cq(ctypes.c_void_p(v.ctx), 64, None, None, 0)
            made = []
            try:
                a = self.ctx.query_device_ex()
                # caps written back, at least as asked
                mwr = a.orig_attr.max_qp_wr
                for wr, sge in ((1, 1), (5, 3), (100, 2),
                                (mwr, a.orig_attr.max_sge)):
                    attr = WqInit(None, e.IBV_WQT_RQ, wr, sge, pd, cq, 0, 0)
                    wq, err = v.create_wq(attr)
                    self.assertTrue(wq, f'max_wr {wr} max_sge {sge}: '
                                    f'errno {err}')
                    made.append(wq)
                    self.assertGreaterEqual(attr.max_wr, wr)
                    self.assertGreaterEqual(attr.max_sge, sge)
                    self.assertLessEqual(attr.max_wr, mwr)
                    self.assertLessEqual(attr.max_sge, a.orig_attr.max_sge)
                # CVLAN_STRIPPING and DELAY_DROP are implemented
                # (wq_busy.c checks them)
                for flag in (e.IBV_WQ_FLAGS_CVLAN_STRIPPING,
                             e.IBV_WQ_FLAGS_DELAY_DROP):
                    attr = WqInit(None, e.IBV_WQT_RQ, 4, 1, pd, cq,
                                  e.IBV_WQ_INIT_ATTR_FLAGS, flag)
                    wq, err = v.create_wq(attr)
                    self.assertTrue(wq, f'flag {flag:#x}: errno {err}')
                    made.append(wq)
                # refused: too big, no such type, every other creation
                # flag, unknown bits
                bad = [('max_wr', dict(max_wr=mwr + 1)),
                       ('max_wr 0', dict(max_wr=0)),
                       ('max_sge', dict(max_sge=a.orig_attr.max_sge + 1)),
                       ('wq_type 1', dict(wq_type=1))]
                for flag in (e.IBV_WQ_FLAGS_SCATTER_FCS,
                             e.IBV_WQ_FLAGS_PCI_WRITE_END_PADDING,
                             1 << 4, 1 << 31):
                    bad.append((f'flag {flag:#x}',
                                dict(comp_mask=e.IBV_WQ_INIT_ATTR_FLAGS,
                                     create_flags=flag)))
                bad.append(('comp_mask bit 5', dict(comp_mask=1 << 5)))
                why = []
                for name, kw in bad:
                    attr = WqInit(None, kw.get('wq_type', e.IBV_WQT_RQ),
                                  kw.get('max_wr', 4), kw.get('max_sge', 1),
                                  pd, cq, kw.get('comp_mask', 0),
                                  kw.get('create_flags', 0))
                    wq, err = v.create_wq(attr)
                    if wq:
                        made.append(wq)
                        why.append(f'{name}: accepted')
                    elif err not in (errno.EINVAL, errno.EOPNOTSUPP):
                        why.append(f'{name}: errno {err}')
                self.assertEqual(why, [])
                # a table keeps its WQs, an RSS QP its table: EBUSY
                tbl, err = v.create_tbl(1, made[:2])
                self.assertTrue(tbl, f'table: errno {err}')
                self.assertEqual(v.destroy_wq(made[0]), errno.EBUSY)
                qp, err = v.create_rss_qp(pd, tbl, bytes(range(40)),
                                          e.IBV_RX_HASH_SRC_IPV4 |
                                          e.IBV_RX_HASH_DST_IPV4)
                self.assertTrue(qp, f'RSS QP: errno {err}')
                self.assertEqual(v.destroy_tbl(tbl), errno.EBUSY)
                # the RSS QP's PD must be its WQs'
                qp2, err = v.create_rss_qp(pd2, tbl, bytes(range(40)),
                                           e.IBV_RX_HASH_SRC_IPV4)
                if qp2:
                    lib.ibv_destroy_qp(ctypes.c_void_p(qp2))
                self.assertFalse(qp2, 'RSS QP of another PD than its WQs')
                self.assertEqual(err, errno.EINVAL)
                self.assertEqual(lib.ibv_destroy_qp(ctypes.c_void_p(qp)), 0)
                self.assertEqual(v.destroy_tbl(tbl), 0)
                # tables: WQs of two PDs, too big, from another context
                attr = WqInit(None, e.IBV_WQT_RQ, 4, 1, pd2, cq, 0, 0)
                other, err = v.create_wq(attr)
                self.assertTrue(other, f'errno {err}')
                made.append(other)
                tbl, err = v.create_tbl(1, [made[0], other])
                if tbl:
                    v.destroy_tbl(tbl)
                self.assertEqual((bool(tbl), err), (False, errno.EINVAL),
                                 'table of two PDs\' WQs')
                big = a.rss_caps.max_rwq_indirection_table_size.bit_length()
                tbl, err = v.create_tbl(big, [made[0]] * (1 << big))
                if tbl:
                    v.destroy_tbl(tbl)
                self.assertEqual((bool(tbl), err), (False, errno.EINVAL),
                                 f'a table of {1 << big} entries')
                v2 = Verbs(self.dev_name)
                try:
                    tbl, err = v2.create_tbl(0, [made[0]])
                    if tbl:
                        v2.destroy_tbl(tbl)
                    self.assertFalse(tbl, 'a table of another context\'s WQ')
                    self.assertIn(err, (errno.EINVAL, errno.ENOENT))
                finally:
                    v2.close()
                # destroy: 0, each WQ once
                while made:
                    self.assertEqual(v.destroy_wq(made.pop()), 0)
            finally:
                for wq in made:
                    v.destroy_wq(wq)
                lib.ibv_destroy_cq(ctypes.c_void_p(cq))
                lib.ibv_dealloc_pd(ctypes.c_void_p(pd2))
                lib.ibv_dealloc_pd(ctypes.c_void_p(pd))
                v.close()

        def test_many_rules(self):
            qp = self.raw_qp()
            for k in range(200):
                self.flow(qp, [EthSpec(dst_mac=f'02:00:00:01:{k >> 8:02x}:'
                                       f'{k & 0xff:02x}', dst_mac_mask=FULL)],
                          prio=k % 7)
            self.post_recv(qp, 1)
            f = eth(bytes.fromhex('0200000100c7'), self.peer_mac, 0x88b5,
                    payload(20, 1))
            self.wire.send(f)
            (w,) = self.poll(1)
            self.check_frame(w, qp, f)
            for fl in self.flows:
                fl.close()
            self.flows = []
            # a QP with its rules gone takes nothing more
            self.post_recv(qp, 1)
            self.wire.send(f)
            self.nothing()

    return caselib.named(RawTest, 'raw_cases')


# --hostile (the debug kernel's lifecycle run): only these (not
# test_bridge_port: the trimmed debug kernel has no bridge).
HOSTILE = ('test_short_and_long_frames', 'test_drops_counted',
           'test_wq_caps_flags_destroy',
           'test_bad_rules', 'test_hostile_commands',
           'test_cut_short_headers', 'test_loopback_to_rule',
           'test_many_rules')


def main():
    global IFNAME, PEER
    argv = sys.argv[1:]
    for opt in ('--ifname', '--peer'):
        i = argv.index(opt)
        val = argv[i + 1]
        del argv[i:i + 2]
        if opt == '--ifname':
            IFNAME = val
        else:
            PEER = val
    sys.argv = [sys.argv[0]] + argv
    return caselib.run_cases(define_tests, 'raw', lean=True, hostile=HOSTILE)


if __name__ == '__main__':
    sys.exit(main())
