#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# read_requests.py IFACE SECONDS [IDLE]: print "capturing", then the PSN and
# DMA length of each RoCEv2 RDMA READ request (IPv4) that leaves IFACE, one
# per line, so that a test can see what a requester asks again after
# timeouts. Stops after SECONDS, or once no packet has left for IDLE
# seconds (default 5) after a request.

import ctypes
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
PACKET_OUTGOING = 4
SO_ATTACH_FILTER = 26
SKF_AD_PKTTYPE = 0xFFFFF000 + 4
ROCE_PORT = 4791
RC_RDMA_READ_REQUEST = 0x0C
iface, seconds = sys.argv[1], float(sys.argv[2])
IDLE = float(sys.argv[3]) if len(sys.argv) > 3 else 5.0
# Outgoing packets reach only taps of every protocol; a classic BPF filter
# keeps the incoming ones (every read response) out of the socket, which a
# slow VM would otherwise overflow, losing requests.
sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
program = [
    (0x20, 0, 0, SKF_AD_PKTTYPE),  # ld [pkttype]
    (0x15, 0, 1, PACKET_OUTGOING),  # jeq #PACKET_OUTGOING
    (0x06, 0, 0, 0xFFFF),  # ret #65535
    (0x06, 0, 0, 0),  # ret #0
]
code = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *i) for i in program))
sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER,
                struct.pack("HL", len(program), ctypes.addressof(code)))
sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
sock.bind((iface, 0))
print("capturing", flush=True)
end = time.monotonic() + seconds
seen = False
while (left := end - time.monotonic()) > 0:
    sock.settimeout(min(left, IDLE) if seen else left)
    try:
        frame, addr = sock.recvfrom(65536)
    except socket.timeout:
        if seen:
            break
        continue
    if addr[2] != PACKET_OUTGOING or addr[1] != ETH_P_IP:
        continue
    ip = frame[14:]
    ihl = (ip[0] & 15) * 4
    if len(ip) < ihl + 8 + 12 + 16 or ip[9] != socket.IPPROTO_UDP:
        continue
    udp = ip[ihl:]
    if struct.unpack("!H", udp[2:4])[0] != ROCE_PORT:
        continue
    bth = udp[8:]
    if bth[0] != RC_RDMA_READ_REQUEST:
        continue
    psn = struct.unpack("!I", bth[8:12])[0] & 0xFFFFFF
    dma_len = struct.unpack("!I", bth[24:28])[0]
    print(psn, dma_len, flush=True)
    seen = True
