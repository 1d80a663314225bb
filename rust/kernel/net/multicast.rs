// SPDX-License-Identifier: GPL-2.0

//! Membership of IP multicast groups on a network device, as a socket's
//! `IP_ADD_MEMBERSHIP` gives it: the device reports it (IGMP or MLD), lets
//! the group's MAC address in, and the IP layer takes the group's packets.
//!
//! C headers: [`include/linux/igmp.h`](srctree/include/linux/igmp.h),
//! [`include/net/addrconf.h`](srctree/include/net/addrconf.h)

use super::{route::ipv4_mapped, with_rtnl, NetDevice};
use crate::bindings;
use kernel::prelude::*;

impl NetDevice {
    /// Joins the multicast group `group`, an IPv6 address or an IPv4 one
    /// mapped as `::ffff:a.b.c.d`. Each join counts: the device leaves the
    /// group after as many [`NetDevice::leave_group`] calls.
    ///
    /// Takes the RTNL lock, so the caller must not hold it.
    pub(crate) fn join_group(&self, group: &[u8; 16]) -> Result {
        match ipv4_mapped(group) {
            Some(v4) => self.with_in_dev(|in_dev| {
                // SAFETY: `in_dev` is the device's, and RTNL is held.
                unsafe { bindings::ip_mc_inc_group(in_dev, u32::from_ne_bytes(v4)) }
            }),
            // SAFETY: The device is alive (type invariant); the address is
            // a valid `in6_addr`, which the call copies.
            None => kernel::error::to_result(unsafe {
                bindings::ipv6_dev_mc_inc(self.as_raw(), group.as_ptr().cast())
            }),
        }
    }

    /// Leaves the multicast group `group` once, as [`NetDevice::join_group`]
    /// joined it.
    pub(crate) fn leave_group(&self, group: &[u8; 16]) {
        match ipv4_mapped(group) {
            Some(v4) => {
                let _ = self.with_in_dev(|in_dev| {
                    // SAFETY: As in `join_group`.
                    unsafe { bindings::rroce_ip_mc_dec_group(in_dev, u32::from_ne_bytes(v4)) }
                });
            }
            None => {
                // SAFETY: As in `join_group`.
                unsafe { bindings::ipv6_dev_mc_dec(self.as_raw(), group.as_ptr().cast()) };
            }
        }
    }

    /// Calls `f` with the device's IPv4 state under the RTNL lock;
    /// `ENODEV` if the device has none (no IPv4 on it).
    fn with_in_dev(&self, f: impl FnOnce(*mut bindings::in_device)) -> Result {
        with_rtnl(|| {
            // SAFETY: The device is alive (type invariant), and RTNL is held.
            let in_dev = unsafe { bindings::rroce_in_dev_get_rtnl(self.as_raw()) };
            if in_dev.is_null() {
                return Err(ENODEV);
            }
            f(in_dev);
            Ok(())
        })
    }
}
