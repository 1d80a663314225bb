#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Packets between two QPs of one device never reach the netdev, so tcpdump
# on it sees none of them, until the module's capture_loopback parameter is
# on: then it sees every one the device sent, as RoCEv2 on UDP 4791 between
# the two QPs, with the ICRC that seals it.

. "$(dirname "$0")/lib.sh"
vm_main 1

require_cmd ibv_rc_pingpong tcpdump python3 rdma
load_rroce || ktap_skip_all "rroce.ko does not load"
rdma link add rroce0 type rroce netdev eth0 || ktap_skip_all "no rroce0"
gid=$(gid_index rroce0 "$RROCE_IP4")
PARAM=/sys/module/rroce/parameters/capture_loopback
ktap_plan 4

# capture: a 20-round pingpong between two QPs of rroce0 under tcpdump on
# eth0, into /tmp/cap; sets $sent, the packets the device counted.
capture() {
	local before
	before=$(link_counter rroce0 sent_pkts)
	tcpdump -i eth0 -U -w /tmp/cap udp port 4791 2>/tmp/tcpdump &
	local dump=$!
	wait_output /tmp/tcpdump "listening on eth0" 30 $dump
	timeout 120 ibv_rc_pingpong -d rroce0 -g "$gid" -p 18932 -n 20 -s 2048 >/tmp/server 2>&1 &
	local server=$!
	wait_listen 18932 && timeout 120 ibv_rc_pingpong -d rroce0 -g "$gid" -p 18932 -n 20 -s 2048 \
		127.0.0.1 >/tmp/client 2>&1 && wait $server
	local ok=$?
	sent=$(($(link_counter rroce0 sent_pkts) - before))
	sleep 1
	kill -INT $dump && wait $dump
	return $ok
}
# captured: how many packets /tmp/cap holds.
captured() { tcpdump -r /tmp/cap 2>/dev/null | wc -l; }

[ "$(cat $PARAM)" = N ] && capture && [ "$(captured)" = 0 ]
ktap_result $? "capture_loopback off: tcpdump on eth0 sees none of the $sent packets"

echo 1 >$PARAM && capture && [ "$(captured)" = "$sent" ] && [ "$sent" -ge 40 ]
ktap_result $? "capture_loopback on: tcpdump sees all $sent"

qpn() { printf '%u' "0x$(sed -n "s/.*$1 address: .*QPN 0x\([0-9a-f]*\).*/\1/p" /tmp/client | head -1)"; }
qpns=$(python3 - /tmp/cap <<'EOF'
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
at, qpns, bad = 24, set(), 0
while at < len(data):
    n = struct.unpack_from('<I', data, at + 8)[0]
    frame = data[at + 16:at + 16 + n]
    at += 16 + n
    ip = frame[14:]
    ip = ip[:struct.unpack('>H', ip[2:4])[0]]
    ihl = (ip[0] & 15) * 4
    udp, bth = ip[ihl:ihl + 8], ip[ihl + 8:]
    if struct.unpack('>H', udp[2:4])[0] != 4791:
        bad += 1
        continue
    qpns.add(int.from_bytes(bth[5:8], 'big'))
    # The ICRC (IBA A17.8): over the IP header, UDP header and the BTH on,
    # the fields routers change masked, after 8 bytes of ones.
    masked = bytearray(ip[:ihl]) + bytearray(udp) + bytearray(bth[:-4])
    masked[1] = 0xff                      # TOS
    masked[8] = 0xff                      # TTL
    masked[10:12] = b'\xff\xff'           # header checksum
    masked[ihl + 6:ihl + 8] = b'\xff\xff' # UDP checksum
    masked[ihl + 8 + 4] = 0xff            # BTH resv8a
    icrc = zlib.crc32(b'\xff' * 8 + masked) & 0xffffffff
    if struct.pack('<I', icrc) != bth[-4:]:
        bad += 1
print(' '.join(map(str, sorted(qpns))), 'bad', bad)
EOF
)
echo "# destination QPs and bad packets: $qpns"
want=$(printf '%s\n' "$(qpn local)" "$(qpn remote)" | sort -n | tr '\n' ' ')
[ "$qpns" = "${want}bad 0" ]
ktap_result $? "each is RoCEv2 on UDP 4791 to one of the two QPs, its ICRC right"

echo 0 >$PARAM && capture && [ "$(captured)" = 0 ]
ktap_result $? "off again: none"

rdma link delete rroce0 && rmmod rroce
ktap_finish
