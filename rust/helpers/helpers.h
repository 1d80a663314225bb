/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C wrappers of the static inline functions and macros the Rust abstractions
 * need: Rust can only call functions that exist as symbols.
 */
#ifndef RROCE_HELPERS_H
#define RROCE_HELPERS_H

#include <linux/netdevice.h>
#include <linux/vmalloc.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

int rroce_ib_mtu_enum_to_int(enum ib_mtu mtu);
enum ib_mtu rroce_iboe_get_mtu(int netdev_mtu);

void rroce_dev_put(struct net_device *dev);
bool rroce_netif_oper_up(const struct net_device *dev);
bool rroce_is_vlan_dev(const struct net_device *dev);
void rroce_netdev_eui64(const struct net_device *dev, u8 *eui);
struct net_device *rroce_netdev_notifier_info_to_dev(void *info);

int rroce_udp_tunnel_open(bool ipv6, u16 port, udp_tunnel_encap_rcv_t rcv,
			  struct socket **sockp);
void rroce_kfree_skb(struct sk_buff *skb);

void *rroce_vmalloc_user(unsigned long size);

struct ib_ucontext *rroce_attrs_ucontext(struct uverbs_attr_bundle *attrs);
struct ib_udata *rroce_attrs_udata(struct uverbs_attr_bundle *attrs);
struct ib_ucontext *rroce_udata_ucontext(struct ib_udata *udata);

#endif
