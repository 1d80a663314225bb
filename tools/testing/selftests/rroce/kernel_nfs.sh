#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NFS over RDMA, kernel RDMA users on both ends, over rroce: knfsd in VM 1
# exports a tmpfs on the NFS/RDMA port 20049 (svcrdma: RDMA READ and WRITE
# of the client's memory); the client in VM 2 mounts it with proto=rdma
# (xprtrdma: fast-registered memory, LOCAL_INV).  The client writes files
# of several sizes, mounts again so that nothing is served from its cache,
# and reads them back; both sides checksum what they hold.

. "$(dirname "$0")/lib.sh"
VM_TIMEOUT=${VM_TIMEOUT:-900}
vm_main 2

require_cmd rpc.nfsd rpc.mountd rpcbind exportfs mount.nfs sha256sum rdma
ktap_plan 5

EXPORT=/srv/rroce
MNT=/mnt/rroce
SIZES="4096 65536 1048576 16777216"

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
	vm_wait unmounted
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
	vm_wait checked
	umount $MNT
	ktap_result $? "client: unmounted"
	vm_signal unmounted
fi
show_link_stats rroce0
rdma link delete rroce0 && rmmod rroce
ktap_result $? "delete the device and unload"
ktap_finish
