// SPDX-License-Identifier: GPL-2.0
/*
 * C wrappers of static inline functions, linked into rroce.ko.
 */

#include <linux/if_vlan.h>
#include <net/addrconf.h>

#include "helpers.h"

int rroce_ib_mtu_enum_to_int(enum ib_mtu mtu)
{
	return ib_mtu_enum_to_int(mtu);
}

enum ib_mtu rroce_iboe_get_mtu(int netdev_mtu)
{
	return iboe_get_mtu(netdev_mtu);
}

void rroce_dev_put(struct net_device *dev)
{
	dev_put(dev);
}

bool rroce_netif_oper_up(const struct net_device *dev)
{
	return netif_running(dev) && netif_carrier_ok(dev);
}

bool rroce_is_vlan_dev(const struct net_device *dev)
{
	return is_vlan_dev(dev);
}

void rroce_netdev_eui64(const struct net_device *dev, u8 *eui)
{
	addrconf_addr_eui48(eui, dev->dev_addr);
}

struct net_device *rroce_netdev_notifier_info_to_dev(void *info)
{
	return netdev_notifier_info_to_dev(info);
}

/*
 * A kernel UDP socket on @port of the initial network namespace whose
 * datagrams go to @rcv (udp_sock_create() is static inline, and its
 * configuration has bitfields Rust cannot set).
 */
int rroce_udp_tunnel_open(bool ipv6, u16 port, udp_tunnel_encap_rcv_t rcv,
			  struct socket **sockp)
{
	struct udp_port_cfg udp_cfg = {
		.family = ipv6 ? AF_INET6 : AF_INET,
		.ipv6_v6only = ipv6,
		.local_udp_port = htons(port),
	};
	struct udp_tunnel_sock_cfg tnl_cfg = {
		.encap_type = 1,
		.encap_rcv = rcv,
	};
	int err;

	err = udp_sock_create(&init_net, &udp_cfg, sockp);
	if (err)
		return err;
	setup_udp_tunnel_sock(&init_net, *sockp, &tnl_cfg);
	return 0;
}

void rroce_kfree_skb(struct sk_buff *skb)
{
	kfree_skb(skb);
}

/* The user context and driver data of a uverbs command; none for kernel callers. */
struct ib_ucontext *rroce_attrs_ucontext(struct uverbs_attr_bundle *attrs)
{
	return attrs ? attrs->context : NULL;
}

struct ib_udata *rroce_attrs_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}

/* A macro, so that memory allocation profiling charges the caller. */
void *rroce_vmalloc_user(unsigned long size)
{
	return vmalloc_user(size);
}

/* The user context of a command's driver udata (rdma_udata_to_drv_context). */
struct ib_ucontext *rroce_udata_ucontext(struct ib_udata *udata)
{
	return udata ? container_of(udata, struct uverbs_attr_bundle, driver_udata)->context :
		       NULL;
}
