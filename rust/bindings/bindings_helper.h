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
const u32 RROCE_HZ = HZ;
