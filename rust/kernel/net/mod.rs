// SPDX-License-Identifier: GPL-2.0

//! Networking: network devices and their notifier chain, namespaces, socket
//! buffers, routes, UDP tunnel sockets.
//!
//! C headers: [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h),
//! [`include/linux/skbuff.h`](srctree/include/linux/skbuff.h)

mod device;
mod multicast;
pub(crate) mod namespace;
pub(crate) mod route;
mod skb;
pub(crate) mod udp_tunnel;

pub(crate) use self::{
    device::{with_rtnl, NetDevice, NetdevEvent, NetdevNotifier, NotifierRegistration},
    route::Route,
    skb::{Datagram, SkBuff},
};
