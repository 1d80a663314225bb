// SPDX-License-Identifier: GPL-2.0
/*
 * C wrappers of static inline functions, linked into rroce.ko.
 */

#include "helpers.h"

int rroce_ib_mtu_enum_to_int(enum ib_mtu mtu)
{
	return ib_mtu_enum_to_int(mtu);
}

enum ib_mtu rroce_iboe_get_mtu(int netdev_mtu)
{
	return iboe_get_mtu(netdev_mtu);
}
