# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""roce_pkt: RoCE v2 packets built by hand, with a valid ICRC, for the
test programs that forge them (rc_resp_fuzz.py from a raw socket,
forge4791.py from a plain UDP socket).  No device, no pyverbs.

The ICRC (IBTA annex A17) is the CRC-32 of eight 0xff bytes standing for
the LRH, then the IP header with the fields a router may change set to
ones (IPv4: TOS, TTL, header checksum; IPv6: traffic class, flow label,
hop limit), the UDP header with its checksum set to ones, the BTH with
its resv8a byte set to ones, and the rest of the packet; it follows the
packet least significant byte first."""
import socket
import struct
import zlib

ROCE_PORT = 4791


def bth(opcode, qpn, psn, pad=0, se=0, ackreq=0):
    """A BTH (P_Key 0xffff), the start of what follows the UDP header."""
    return struct.pack('!BBHII', opcode, (se << 7) | (pad << 4), 0xffff,
                       qpn & 0xffffff, (ackreq << 31) | (psn & 0xffffff))


def aeth(syndrome, msn=0):
    """An AETH: syndrome (0x60 | code for a NAK) and MSN."""
    return struct.pack('!I', (syndrome & 0xff) << 24 | (msn & 0xffffff))


def ipv4_hdr(src, dst, udp_len, ip_id=1):
    """An IPv4 header (DF, TTL 64, no checksum) for a UDP datagram of
    udp_len bytes from src to dst (dotted quads)."""
    return struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + udp_len, ip_id, 0x4000,
                       64, 17, 0, socket.inet_aton(src), socket.inet_aton(dst))


def ipv6_hdr(src, dst, udp_len):
    """An IPv6 header (hop limit 64) for a UDP datagram of udp_len bytes."""
    return struct.pack('!IHBB16s16s', 0x60000000, udp_len, 17, 64,
                       socket.inet_pton(socket.AF_INET6, src),
                       socket.inet_pton(socket.AF_INET6, dst))


def udp_hdr(sport, udp_len):
    """A UDP header to port 4791, no checksum."""
    return struct.pack('!HHHH', sport, ROCE_PORT, udp_len, 0)


def icrc(ip, udp, rest):
    """The ICRC of a packet with these IP and UDP headers, whose BTH and
    everything after it, up to the ICRC, is rest."""
    pip = bytearray(ip)
    if pip[0] >> 4 == 4:
        pip[1] = 0xff
        pip[8] = 0xff
        pip[10:12] = b'\xff\xff'
    else:
        pip[0] |= 0x0f
        pip[1:4] = b'\xff\xff\xff'
        pip[7] = 0xff
    pudp = bytearray(udp)
    pudp[6:8] = b'\xff\xff'
    prest = bytearray(rest)
    prest[4] = 0xff
    return zlib.crc32(b'\xff' * 8 + bytes(pip) + bytes(pudp) +
                      bytes(prest)) & 0xffffffff


def ipv4_packet(src, dst, rest, ip_id=1, sport=0xc000, badicrc=False):
    """A whole IPv4 datagram for a raw socket (IPPROTO_RAW): headers, rest
    (the BTH onward) and its ICRC (spoiled if badicrc)."""
    udp_len = 8 + len(rest) + 4
    ip, udp = ipv4_hdr(src, dst, udp_len, ip_id), udp_hdr(sport, udp_len)
    crc = icrc(ip, udp, rest)
    if badicrc:
        crc ^= 0x5a5a5a5a
    return ip + udp + rest + struct.pack('<I', crc)


def udp_payload(src, dst, sport, rest):
    """What a plain UDP socket bound to (src, sport) sends to dst:4791 for
    a packet whose BTH onward is rest: rest and its ICRC, computed over the
    headers the kernel will put in front.  IPv6 if src has a colon, else
    IPv4, where the socket must set DF (IP_MTU_DISCOVER, IP_PMTUDISC_DO)
    and stay unconnected: the kernel then gives the datagram IP ID 0."""
    udp_len = 8 + len(rest) + 4
    if ':' in src:
        ip = ipv6_hdr(src, dst, udp_len)
    else:
        ip = ipv4_hdr(src, dst, udp_len, ip_id=0)
    return rest + struct.pack('<I', icrc(ip, udp_hdr(sport, udp_len), rest))
