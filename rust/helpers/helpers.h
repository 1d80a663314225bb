/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C wrappers of the static inline functions and macros the Rust abstractions
 * need: Rust can only call functions that exist as symbols.
 */
#ifndef RROCE_HELPERS_H
#define RROCE_HELPERS_H

#include <rdma/ib_addr.h>
#include <rdma/ib_verbs.h>

int rroce_ib_mtu_enum_to_int(enum ib_mtu mtu);
enum ib_mtu rroce_iboe_get_mtu(int netdev_mtu);

#endif
