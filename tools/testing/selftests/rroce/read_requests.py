#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# read_requests.py IFACE SECONDS: print "capturing", then for SECONDS the PSN
# and DMA length of each RoCEv2 RDMA READ request (IPv4) that leaves IFACE,
# one per line, so that a test can see what a requester asks again after
# timeouts.

import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
PACKET_OUTGOING = 4
ROCE_PORT = 4791
RC_RDMA_READ_REQUEST = 0x0C

iface, seconds = sys.argv[1], float(sys.argv[2])
# Outgoing packets reach only taps of every protocol.
sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
sock.bind((iface, 0))
print("capturing", flush=True)
end = time.monotonic() + seconds
while (left := end - time.monotonic()) > 0:
    sock.settimeout(left)
    try:
        frame, addr = sock.recvfrom(65536)
    except socket.timeout:
        break
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
