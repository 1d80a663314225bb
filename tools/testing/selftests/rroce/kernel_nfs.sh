#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NFS over RDMA, kernel RDMA users on both ends, over rroce: knfsd in VM 1
# exports a tmpfs on the NFS/RDMA port 20049 (svcrdma: RDMA READ and WRITE
# of the client's memory); the client in VM 2 mounts it with proto=rdma
# (xprtrdma: fast-registered memory, LOCAL_INV).  The client writes files
# of several sizes, mounts again so that nothing is served from its cache,
# and reads them back; both sides checksum what they hold.  Then the client
# deletes its device under the live mount and the server removes the
# module, each in bounded time, and each adds a fresh device, over which
# the mount reads on.

. "$(dirname "$0")/lib.sh"
VM_TIMEOUT=${VM_TIMEOUT:-900}
vm_main 2

require_cmd rpc.nfsd rpc.mountd rpcbind exportfs mount.nfs sha256sum rdma
ktap_plan $((RROCE_VM == 1 ? 6 : 8))

EXPORT=/srv/rroce
MNT=/mnt/rroce
SIZES="4096 65536 1048576 16777216"

# renew_device WHO: take rroce0 away under the live mount (within 60 s) by
# deleting it, or for the server by removing the module; add a fresh one.
renew_device() {
	local t=$SECONDS
	if [ "$1" = server ]; then
		timeout $((60 * SLOWDOWN)) rmmod rroce
		ktap_result $? "$1: rmmod rroce under the live mount, in $((SECONDS - t)) s"
		load_rroce
	else
		timeout $((60 * SLOWDOWN)) rdma link delete rroce0
		ktap_result $? "$1: rroce0 deleted under the live mount, in $((SECONDS - t)) s"
	fi
	rdma link add rroce0 type rroce netdev eth0
}

# read_on: read the 1 MiB file back past the page cache; the mount
# reconnects over the fresh device.
read_on() {
	local sum
	sum=$(timeout $((180 * SLOWDOWN)) dd if=$MNT/file.1048576 iflag=direct bs=64k status=none | sha256sum) &&
		[ "${sum%% *}" = "$(grep file.1048576 "$RROCE_SHARED/client.sums" | cut -d' ' -f1)" ]
}

load_rroce && rdma link add rroce0 type rroce netdev eth0
ktap_result $? "rroce0 on eth0"

if [ "$RROCE_VM" = 1 ]; then
	mkdir -p $EXPORT /var/lib/nfs/v4recovery &&
		mount -t tmpfs tmpfs $EXPORT &&
		modprobe nfsd && mount -t nfsd nfsd /proc/fs/nfsd &&
		rpcbind -w && rpc.mountd &&
		exportfs -o rw,no_root_squash,insecure,no_subtree_check,fsid=0 "*:$EXPORT" &&
		rpc.nfsd --rdma=20049 2 && grep -q "rdma 20049" /proc/fs/nfsd/portlist
	ktap_result $? "server: $EXPORT exported over RDMA on port 20049"
	vm_signal exported
	vm_wait written
	(cd $EXPORT && sha256sum file.*) >/tmp/server.sums &&
		cmp /tmp/server.sums "$RROCE_SHARED/client.sums"
	ktap_result $? "server: the files it holds are the ones the client wrote"
	vm_signal checked
	vm_wait client-back 300 && renew_device server
	vm_signal server-back
	vm_wait unmounted 300
	rpc.nfsd 0 && exportfs -ua && umount /proc/fs/nfsd $EXPORT
	ktap_result $? "server: stopped"
else
	modprobe rpcrdma
	vm_wait exported &&
		mkdir -p $MNT && run mount -t nfs4 -o proto=rdma,port=20049 "$(peer_ip4):/" $MNT
	ktap_result $? "client: mounted over RDMA"
	ok=0
	for size in $SIZES; do
		head -c $size /dev/urandom >/tmp/file.$size &&
			dd if=/tmp/file.$size of=$MNT/file.$size bs=1M conv=fsync status=none || ok=1
	done
	(cd /tmp && sha256sum file.*) >"$RROCE_SHARED/client.sums"
	# Again from a fresh mount: the data comes back over the wire.
	umount $MNT && mount -t nfs4 -o proto=rdma,port=20049 "$(peer_ip4):/" $MNT &&
		(cd $MNT && sha256sum file.*) >/tmp/read.sums &&
		cmp /tmp/read.sums "$RROCE_SHARED/client.sums" || ok=1
	ktap_result $ok "client: files of 4 KiB to 16 MiB written, read back from a new mount, equal"
	vm_signal written
	vm_wait checked && renew_device client && read_on
	ktap_result $? "client: the mount reads on over the fresh rroce0"
	vm_signal client-back
	vm_wait server-back 300 && read_on
	ktap_result $? "client: the mount reads on over the server's fresh rroce0"
	umount $MNT
	ktap_result $? "client: unmounted"
	vm_signal unmounted
fi
show_link_stats rroce0
rdma link delete rroce0 && rmmod rroce
ktap_result $? "delete the device and unload"
ktap_finish
