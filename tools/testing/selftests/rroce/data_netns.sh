#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Network namespaces, in one VM: two rroce devices in two namespaces, on the
# two ends of a veth pair, carry RC traffic to each other. Each namespace has
# its own RoCEv2 sockets, for as long as it has a device, and a namespace
# that ends takes its sockets with it.

. "$(dirname "$0")/lib.sh"
vm_main 1

require_cmd ip rdma ss ibv_rc_pingpong
ktap_plan 12

# in_ns NS CMD: the shell command CMD, which may use this file's helpers,
# run in namespace NS.
in_ns() {
	ip netns exec "$1" bash -c "$(declare -f gid_index gid_wait wait_listen link_stats stat_value link_counter); $2"
}

# roce_sockets NS: how many UDP sockets are bound to port 4791 in NS.
roce_sockets() { ip netns exec "$1" ss -Huan "sport = :4791" | wc -l; }

# within CMD...: retry CMD for up to 30 s (times the slowdown).
within() {
	local i
	for i in $(seq $((300 * SLOWDOWN))); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# gone DEV: whether RDMA device DEV has gone, from whichever namespace it was
# in (the uverbs class, unlike the infiniband one, shows them all).
gone() { ! grep -qx "$1" /sys/class/infiniband_verbs/uverbs*/ibdev 2>/dev/null; }

# Exclusive mode must be set while the initial namespace is the only one.
rdma system set netns exclusive && rdma system show | grep -q "netns exclusive"
ktap_result $? "RDMA devices are exclusive to their namespaces"

ip netns add a && ip netns add b &&
	ip link add va type veth peer name vb && ip link set va netns a && ip link set vb netns b &&
	ip -n a addr add 10.9.0.1/24 dev va && ip -n b addr add 10.9.0.2/24 dev vb &&
	ip -n a link set va up && ip -n b link set vb up &&
	ip -n a link set lo up && ip -n b link set lo up
ktap_result $? "namespaces a and b, joined by a veth pair"

# rdma_rxe takes any device with its driver id, which rroce shares, for its
# own: the two must never be loaded together, in whatever namespaces their
# devices are. rxe binds port 4791 of the initial namespace as it loads, and
# rroce holds it while it has a device anywhere, which keeps them apart.
modprobe rdma_rxe && load_rroce
run ip netns exec a rdma link add rroce_a type rroce netdev va
[ $? != 0 ] && grep -q "Address already in use" <<<"$RUN_OUTPUT" && rmmod rdma_rxe
ktap_result $? "no rroce device while rdma_rxe is loaded"

ip netns exec a rdma link add rroce_a type rroce netdev va && rdma dev set rroce_a netns a &&
	ip netns exec b rdma link add rroce_b type rroce netdev vb && rdma dev set rroce_b netns b &&
	! modprobe rdma_rxe 2>/dev/null
ktap_result $? "rroce_a in a, rroce_b in b; rdma_rxe cannot load meanwhile"

[ "$(ip netns exec a rdma dev show | grep -o 'rroce_[ab]')" = rroce_a ] &&
	[ "$(ip netns exec b rdma dev show | grep -o 'rroce_[ab]')" = rroce_b ] &&
	! rdma dev show | grep -q rroce_
ktap_result $? "each namespace sees its own device only"

[ "$(roce_sockets a)" = 2 ] && [ "$(roce_sockets b)" = 2 ] && [ "$(ss -Huan "sport = :4791" | wc -l)" = 2 ]
ktap_result $? "port 4791 is open in a, b and the initial namespace, on IPv4 and IPv6"

ga=$(in_ns a "gid_index rroce_a 10.9.0.1") && gb=$(in_ns b "gid_index rroce_b 10.9.0.2")
ip netns exec a timeout $((120 * SLOWDOWN)) ibv_rc_pingpong -d rroce_a -g "$ga" -p 18950 \
	-n 500 -s 4096 -c >/tmp/server.out 2>&1 &
server=$!
in_ns a "wait_listen 18950" &&
	run ip netns exec b timeout $((120 * SLOWDOWN)) ibv_rc_pingpong -d rroce_b -g "$gb" -p 18950 \
		-n 500 -s 4096 -c 10.9.0.1 && grep -q "iters in" <<<"$RUN_OUTPUT" &&
	wait $server && grep -q "iters in" /tmp/server.out
ktap_result $? "RC pingpong from b to a, 500 checked messages of 4 KiB"

sent_a=$(in_ns a "link_counter rroce_a sent_pkts")
rcvd_b=$(in_ns b "link_counter rroce_b rcvd_pkts")
[ "$sent_a" -ge 500 ] && [ "$rcvd_b" -ge 500 ]
ktap_result $? "the traffic went through rroce: a sent $sent_a packets, b received $rcvd_b"

ip netns exec b rdma link delete rroce_b && [ "$(roce_sockets b)" = 0 ] && [ "$(roce_sockets a)" = 2 ]
ktap_result $? "deleting rroce_b closes b's sockets, not a's"

ip netns add c && ip link set eth0 netns c && ip -n c link set eth0 up &&
	ip netns exec c rdma link add rroce_c type rroce netdev eth0 && [ "$(roce_sockets c)" = 2 ]
ktap_result $? "rroce_c on eth0, a real device, in namespace c"

# When c ends, eth0 goes back to the initial namespace, and rroce_c goes.
# A process there holds rroce_c open, with a QP whose flushed receives it
# does not take, so rroce_c lingers for a second: c's sockets must not wait
# for it, as they would then outlive their namespace.
timeout $((60 * SLOWDOWN)) ibv_rc_pingpong -d rroce_c -g 0 -p 18951 >/tmp/holder.out 2>&1 &
holder=$!
wait_listen 18951 && ip netns del c && within gone rroce_c && within ip link show eth0 >/dev/null
ktap_result $? "namespace c ends under a process that holds rroce_c: eth0 comes back, rroce_c goes"
kill $holder 2>/dev/null
wait $holder

# Ending a deletes the veth pair, and with it rroce_a; then nothing is left.
ip netns del a && within gone rroce_a && ip netns del b && rmmod rroce &&
	[ "$(ss -Huan "sport = :4791" | wc -l)" = 0 ]
ktap_result $? "namespace a ends and takes rroce_a; unload, and port 4791 is free"
ktap_finish
