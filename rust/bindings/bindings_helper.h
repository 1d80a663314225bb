/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What bindgen reads to generate rroce's bindings: the RDMA and networking
 * headers the abstractions in rust/ wrap, and the C helpers.
 */

#include <linux/if_arp.h>
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <linux/vmalloc.h>
#include <linux/random.h>
#include <linux/crc32.h>
#include <linux/delay.h>
#include <linux/workqueue.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_umem_odp.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_netlink.h>
#include <rdma/rdma_user_rxe.h>
#include <net/addrconf.h>

#include "helpers.h"
#include "../trace/trace.h"

/* Macros bindgen cannot evaluate, as constants it can. */
const u32 RROCE_CORE_PORT_IBA_ROCE_UDP_ENCAP = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
/*
 * Room in front of a RoCEv2 packet for the link, IP and UDP headers; 12
 * more than a multiple of 16, so that in a head aligned to 16 (kmalloc's,
 * or a page fragment's behind NET_SKB_PAD) an IPv4 header,
 * 28 bytes before the BTH, starts 16-byte aligned, as the CPU's carry-less
 * multiply CRC takes its input: the ICRC then starts there, not with a
 * table walk up to the next 16 bytes.
 */
const u32 RROCE_SKB_HEADROOM =
	ALIGN(LL_MAX_HEADER + sizeof(struct ipv6hdr) + sizeof(struct udphdr), 16) + 12;
