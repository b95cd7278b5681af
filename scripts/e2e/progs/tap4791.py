#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""tap4791: a packet tap (an AF_PACKET socket, as tcpdump opens) on one
interface that counts the RoCE v2 packets (UDP port 4791, IPv4 or IPv6)
crossing it, in both directions.

    tap4791.py IFACE [SECS]

Prints "tap4791: ready on IFACE" once the socket is bound (from then on
the interface has a tap), then runs for SECS seconds (default: until
SIGTERM or SIGINT) and prints
"tap4791: IFACE: N RoCE v2 packets (UDP 4791) of M frames".
"""
import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
ROCE_PORT = 4791


def roce_port(frame):
    """True when FRAME (Ethernet) carries UDP to or from port 4791."""
    if len(frame) < 14:
        return False
    etype = struct.unpack_from("!H", frame, 12)[0]
    off = 14
    if etype == 0x8100 and len(frame) >= 18:
        etype = struct.unpack_from("!H", frame, 16)[0]
        off = 18
    if etype == 0x0800 and len(frame) >= off + 20:
        ihl = (frame[off] & 0xF) * 4
        if frame[off + 9] != 17:
            return False
        udp = off + ihl
    elif etype == 0x86DD and len(frame) >= off + 40:
        if frame[off + 6] != 17:
            return False
        udp = off + 40
    else:
        return False
    if len(frame) < udp + 4:
        return False
    sport, dport = struct.unpack_from("!HH", frame, udp)
    return ROCE_PORT in (sport, dport)


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    iface = sys.argv[1]
    secs = float(sys.argv[2]) if len(sys.argv) == 3 else None
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    s.settimeout(0.2)
    print(f"tap4791: ready on {iface}", flush=True)
    end = time.monotonic() + secs if secs is not None else None
    frames = roce = 0
    while not stop and (end is None or time.monotonic() < end):
        try:
            frame = s.recv(65536)
        except socket.timeout:
            continue
        except InterruptedError:
            continue
        frames += 1
        if roce_port(frame):
            roce += 1
    s.close()
    print(f"tap4791: {iface}: {roce} RoCE v2 packets (UDP 4791) of {frames} frames", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
