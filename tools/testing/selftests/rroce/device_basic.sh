#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `rdma link add rroce0 type rroce netdev eth0` creates a device that
# unmodified rdma-core sees as a working RoCEv2 device; its port follows the
# netdev's state and MTU; bad requests fail with the right errno; the device
# goes away with `rdma link delete`, with its netdev, and with the module.

. "$(dirname "$0")/lib.sh"
vm_main 1

require_cmd rdma ibv_devices ibv_devinfo ip
ktap_plan 25
modprobe -a ib_core ib_uverbs || ktap_skip_all "the RDMA core modules do not load"
load_rroce
ktap_result $? "insmod rroce.ko"

port_field() { ibv_devinfo -d "$1" | sed -n "s/^[[:space:]]*$2:[[:space:]]*//p" | head -n 1; }

# wait_port DEV STATE: the port reaches STATE within a second.
wait_port() {
	local i
	for i in $(seq 10); do
		port_field "$1" state | grep -q "$2" && return 0
		sleep 0.1
	done
	return 1
}

# udp_port_bound: something listens on UDP port 4791 (IPv4 and IPv6).
udp_port_bound() { [ "$(ss -Huln 'sport = :4791' | wc -l)" = 2 ]; }

! udp_port_bound && run rdma link add rroce0 type rroce netdev eth0 && udp_port_bound
ktap_result $? "rdma link add rroce0 type rroce netdev eth0, which binds UDP port 4791"

run ibv_devices && grep -q 'rroce0' <<<"$RUN_OUTPUT"
ktap_result $? "ibv_devices lists rroce0"

run ibv_devinfo -v -d rroce0
info=$RUN_OUTPUT
grep -q 'state:.*PORT_ACTIVE' <<<"$info" && grep -q 'link_layer:.*Ethernet' <<<"$info" &&
	grep -q 'transport:.*InfiniBand' <<<"$info"
ktap_result $? "ibv_devinfo: port active, link layer Ethernet"

# has_caps CAP...: ibv_devinfo -v listed every CAP under device_cap_flags.
has_caps() {
	local cap
	for cap; do
		grep -A12 'device_cap_flags:' <<<"$info" | grep -qw "$cap" || return 1
	done
}
grep -Eq 'max_sge_rd:[[:space:]]+32$' <<<"$info" &&
	has_caps MEM_WINDOW MEM_MGT_EXTENSIONS RC_RNR_NAK_GEN PORT_ACTIVE_EVENT SYS_IMAGE_GUID
ktap_result $? "ibv_devinfo -v: max_sge_rd 32; MEM_WINDOW, MEM_MGT_EXTENSIONS," \
	"RC_RNR_NAK_GEN, PORT_ACTIVE_EVENT, SYS_IMAGE_GUID among the capabilities"

grep -Eq 'GID\[ *[0-9]+\]:.*::ffff:192\.0\.2\.1, RoCE v2' <<<"$info" &&
	grep -Eq 'GID\[ *[0-9]+\]:.*2001:db8::1, RoCE v2' <<<"$info"
ktap_result $? "RoCE v2 GIDs of eth0's IPv4 and IPv6 addresses"

[ "$(port_field rroce0 active_mtu)" = "1024 (3)" ]
ktap_result $? "active MTU 1024 on a 1500-byte netdev ($(port_field rroce0 active_mtu))"

ip link set eth0 mtu 9000 && [ "$(port_field rroce0 active_mtu)" = "4096 (5)" ]
ktap_result $? "active MTU 4096 on a 9000-byte netdev ($(port_field rroce0 active_mtu))"
ip link set eth0 mtu 1500

run rdma link show rroce0/1 && grep -q 'state ACTIVE physical_state LINK_UP netdev eth0' <<<"$RUN_OUTPUT"
ktap_result $? "rdma link show: the link and its netdev"

sysfs=/sys/class/infiniband/rroce0
[ "$(cat $sysfs/parent)" = eth0 ]
ktap_result $? "sysfs parent: eth0 ($(cat $sysfs/parent 2>&1))"

# modify_device: ib_core's node_desc file writes through it.
echo -n "rroce under test" >$sysfs/node_desc && [ "$(cat $sysfs/node_desc)" = "rroce under test" ]
ktap_result $? "node_desc written and read back ($(cat $sysfs/node_desc 2>&1))"

# modify_port: ib_cm sets IB_PORT_CM_SUP (0x10000) as it takes a device and
# clears it as it lets go.
cap_flags() { ibv_devinfo -v -d rroce0 | sed -n 's/^[[:space:]]*port_cap_flags:[[:space:]]*//p'; }
modprobe ib_cm && modprobe -r ib_cm && without=$(cap_flags) && modprobe ib_cm && with=$(cap_flags)
[ "$without" = 0x00000000 ] && [ "$with" = 0x00010000 ]
ktap_result $? "ib_cm clears and sets CM_SUP through modify_port (${without:-?} without, ${with:-?} with)"

# watch_events DEV: ibv_asyncwatch on DEV in the background, line-buffered
# into /tmp/events.DEV, as a user process holding the device open; returns
# once it has the device open.
watch_events() {
	stdbuf -oL ibv_asyncwatch -d "$1" >"/tmp/events.$1" 2>&1 &
	watcher=$!
	await_line "/tmp/events.$1" 'async event FD'
}

# await_line FILE PATTERN: wait up to 30 s for a line of FILE to match.
await_line() {
	local i
	for i in $(seq 300); do
		grep -q "$2" "$1" && return 0
		sleep 0.1
	done
	return 1
}

watch_events rroce0
ip link set eth0 down && wait_port rroce0 PORT_DOWN
ktap_result $? "eth0 down: port down within a second"
ip link set eth0 up && wait_port rroce0 PORT_ACTIVE
ktap_result $? "eth0 up: port active again within a second"
await_line /tmp/events.rroce0 'IBV_EVENT_PORT_ACTIVE'
kill $watcher
sed 's/^/#   /' /tmp/events.rroce0
grep -q 'IBV_EVENT_PORT_ERR' /tmp/events.rroce0 && grep -q 'IBV_EVENT_PORT_ACTIVE' /tmp/events.rroce0
ktap_result $? "ibv_asyncwatch saw the port go down and come back"

# expect_errno ERRNO CMD...: CMD fails and says ERRNO's message.
expect_errno() {
	local msg=$1
	shift
	! run "$@" && grep -q "$msg" <<<"$RUN_OUTPUT"
}
expect_errno 'File exists' rdma link add rroce9 type rroce netdev eth0
ktap_result $? "a second device on eth0: EEXIST"
expect_errno 'Invalid argument' rdma link add rroce9 type rroce netdev lo
ktap_result $? "a non-Ethernet netdev (lo): EINVAL"
! run rdma link add rroce9 type rroce netdev nosuchdev && ! [ -e /sys/class/infiniband/rroce9 ]
ktap_result $? "a missing netdev: refused, nothing created"

run rdma link delete rroce0 && ! [ -e /sys/class/infiniband/rroce0 ] && ! udp_port_bound
ktap_result $? "rdma link delete rroce0, which frees UDP port 4791"

# The C rxe binds port 4791 as soon as it is loaded.
modprobe rdma_rxe && expect_errno 'Address already in use' rdma link add rroce9 type rroce netdev eth0 &&
	! [ -e /sys/class/infiniband/rroce9 ]
ktap_result $? "UDP port 4791 taken (rdma_rxe loaded): EADDRINUSE, nothing created"
dmesg | grep -q 'rroce: UDP port 4791 is taken'
ktap_result $? "the log names the cause"
rmmod rdma_rxe

modprobe dummy numdummies=0 && ip link add rrtest0 type dummy && ip link set rrtest0 up &&
	rdma link add rroce1 type rroce netdev rrtest0 && [ -e /sys/class/infiniband/rroce1 ]
ktap_result $? "rroce1 on a dummy netdev"
# A process holds rroce1 open while its netdev goes away: the device must
# not wait for it, and the process must learn that the device is gone.
watch_events rroce1
ip link delete rrtest0
for i in $(seq 50); do [ -e /sys/class/infiniband/rroce1 ] || break; sleep 0.1; done
! [ -e /sys/class/infiniband/rroce1 ]
ktap_result $? "deleting the netdev removes its device, though a process has it open"
await_line /tmp/events.rroce1 'IBV_EVENT_DEVICE_FATAL'
status=$?
kill $watcher 2>/dev/null
sed 's/^/#   /' /tmp/events.rroce1
[ $status = 0 ]
ktap_result $? "the process got IBV_EVENT_DEVICE_FATAL"

rdma link add rroce0 type rroce netdev eth0 && rmmod rroce && ! [ -e /sys/class/infiniband/rroce0 ]
ktap_result $? "rmmod with a device present removes it"
ktap_finish
