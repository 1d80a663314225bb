#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# ce_inject.py DST SRC QPN PSN COUNT: sends COUNT RoCEv2 RC ACKs, marked
# Congestion Experienced as a switch would mark them, from SRC to QP QPN at
# DST over IPv4, through a raw socket so that the ICRC covers exactly what
# goes on the wire. Their PSN is 2^23 - 2^20 away from PSN, the QP's first
# expected one, so the QP's requester takes them for stale ACKs and ignores
# them; only their ECN bits matter.

import socket
import struct
import sys
import time
import zlib

dst, src = sys.argv[1], sys.argv[2]
qpn, psn, count = int(sys.argv[3], 0), int(sys.argv[4], 0), int(sys.argv[5])
RC_ACK, ROCE_PORT, CE = 0x11, 4791, 0x03

bth = struct.pack(">BBHII", RC_ACK, 0, 0xFFFF, qpn, (psn + 0x700000) & 0xFFFFFF)
aeth = struct.pack(">I", 0)
udp_len = 8 + len(bth) + len(aeth) + 4
ip = struct.pack(">BBHHHBBH4s4s", 0x45, CE, 20 + udp_len, 0x1234, 0x4000, 64,
                 socket.IPPROTO_UDP, 0, socket.inet_aton(src), socket.inet_aton(dst))
udp = struct.pack(">HHHH", 0xC001, ROCE_PORT, udp_len, 0)
# The ICRC (IBA A17.8): the fields routers change masked, after 8 bytes of
# ones standing in for the LRH.
masked = bytearray(ip + udp)
masked[1] = masked[8] = 0xFF
masked[10:12] = masked[26:28] = b"\xff\xff"
masked += bth
masked[28 + 4] = 0xFF  # BTH resv8a
icrc = zlib.crc32(b"\xff" * 8 + bytes(masked) + aeth)
packet = ip + udp + bth + aeth + struct.pack("<I", icrc)

sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
for _ in range(count):
    sock.sendto(packet, (dst, 0))
    time.sleep(0.001)
print(f"sent {count}")
