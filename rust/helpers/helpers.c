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
