// SPDX-License-Identifier: GPL-2.0

//! Routes: where an IP packet goes, found by the IPv4 or IPv6 routing
//! table for a source, a destination and an outgoing device.
//!
//! C headers: [`include/net/route.h`](srctree/include/net/route.h),
//! [`include/net/ip6_route.h`](srctree/include/net/ip6_route.h)

use super::NetDevice;
use crate::{bindings, kernel_ext::errno};
use core::ptr::NonNull;
use kernel::{
    error::{from_err_ptr, Error},
    prelude::*,
    types::ARef,
};

/// `IPPROTO_UDP` (`include/uapi/linux/in.h`).
const IPPROTO_UDP: u8 = 17;

/// A route: a counted reference on a `dst_entry`.
///
/// # Invariants
///
/// Owns one reference on a valid `dst_entry` without an error.
pub(crate) struct Dst(NonNull<bindings::dst_entry>);

// SAFETY: A held `dst_entry` may be used and released on any thread.
unsafe impl Send for Dst {}

impl Dst {
    /// The route from `saddr` to `daddr` out of `netdev`: IPv4 if both are
    /// IPv4-mapped, IPv6 if neither is.
    pub(crate) fn output(netdev: &NetDevice, saddr: &[u8; 16], daddr: &[u8; 16]) -> Result<Self> {
        match (ipv4_mapped(saddr), ipv4_mapped(daddr)) {
            (Some(s), Some(d)) => Self::output_v4(netdev, s, d),
            (None, None) => Self::output_v6(netdev, saddr, daddr),
            _ => Err(EINVAL),
        }
    }

    fn output_v4(netdev: &NetDevice, saddr: [u8; 4], daddr: [u8; 4]) -> Result<Self> {
        let mut fl = bindings::flowi4 {
            __fl_common: udp_flow_out_of(netdev),
            saddr: u32::from_ne_bytes(saddr),
            daddr: u32::from_ne_bytes(daddr),
            ..Default::default()
        };
        // SAFETY: The device is alive, so is its namespace; `fl` is a valid
        // flow. The result is a held route or an error pointer.
        let rt = from_err_ptr(unsafe {
            bindings::rroce_ip_route_output_key(bindings::rroce_dev_net(netdev.as_raw()), &mut fl)
        })?;
        // SAFETY: `rt` is a valid, held route; its `dst` is what is held.
        let dst = unsafe { bindings::rroce_rtable_dst(rt) };
        // INVARIANT: IPv4 lookups report errors as error pointers only.
        NonNull::new(dst).map(Self).ok_or(EINVAL)
    }

    fn output_v6(netdev: &NetDevice, saddr: &[u8; 16], daddr: &[u8; 16]) -> Result<Self> {
        // SAFETY: No precondition.
        if !unsafe { bindings::rroce_ipv6_mod_enabled() } {
            return Err(errno::eafnosupport());
        }
        let mut fl = bindings::flowi6 {
            __fl_common: udp_flow_out_of(netdev),
            saddr: in6_addr(saddr),
            daddr: in6_addr(daddr),
            ..Default::default()
        };
        // SAFETY: As in `output_v4`; IPv6 is enabled, so its stub is set.
        let dst = from_err_ptr(unsafe {
            bindings::rroce_ip6_dst_lookup_flow(bindings::rroce_dev_net(netdev.as_raw()), &mut fl)
        })?;
        let dst = NonNull::new(dst).ok_or(EINVAL)?;
        // SAFETY: `dst` is valid; the reference is ours to release.
        let err = unsafe { bindings::rroce_dst_error(dst.as_ptr()) };
        if err != 0 {
            // SAFETY: As above.
            unsafe { bindings::dst_release(dst.as_ptr()) };
            return Err(Error::from_errno(err));
        }
        // INVARIANT: Held, and without an error.
        Ok(Self(dst))
    }

    /// Whether the route leads back into this host, through a loopback
    /// device.
    pub(crate) fn is_local(&self) -> bool {
        // SAFETY: By the type invariant the route is valid and holds its
        // device.
        unsafe { bindings::rroce_dst_dev_is_loopback(self.0.as_ptr()) }
    }

    /// Hands the reference over to C code that releases it.
    pub(crate) fn into_raw(self) -> *mut bindings::dst_entry {
        core::mem::ManuallyDrop::new(self).0.as_ptr()
    }

    /// Another reference on the same route.
    fn another(&self) -> Self {
        // SAFETY: By the type invariant the route is valid; the new
        // reference is the returned value's.
        unsafe { bindings::rroce_dst_hold(self.0.as_ptr()) };
        // INVARIANT: Held, and without an error, as `self`.
        Self(self.0)
    }
}

/// Where a packet goes.
pub(crate) enum Route {
    /// Out of a network device, by the route.
    Out(Dst),
    /// To a local address: it never leaves this host.
    Local,
}

/// The route a sender used last, for as long as the kernel does not
/// obsolete it (when routes or devices change): a QP sends to one address,
/// so it looks its route up once, not for every packet. The C rxe keeps its
/// QPs' routes in their sockets the same way.
pub(crate) struct RouteCache(Option<CachedRoute>);

/// A route in a [`RouteCache`].
pub(crate) struct CachedRoute {
    saddr: [u8; 16],
    daddr: [u8; 16],
    /// What `dst_check` needs to know the route still holds: IPv6's
    /// serial number of the routing tree; 0 for IPv4.
    cookie: u32,
    local: bool,
    dst: Dst,
}

impl CachedRoute {
    /// Whether the kernel still uses the route (`dst_check`).
    fn still_holds(&self) -> bool {
        // SAFETY: The route is valid, by `Dst`'s invariant.
        let held = unsafe { bindings::rroce_dst_check(self.dst.0.as_ptr(), self.cookie) };
        !held.is_null()
    }

    /// Where a packet by the route goes: out, taking a reference on the
    /// route along, or into this host.
    pub(crate) fn route(&self) -> Route {
        if self.local {
            Route::Local
        } else {
            Route::Out(self.dst.another())
        }
    }
}

impl RouteCache {
    /// Nothing cached.
    pub(crate) const fn new() -> Self {
        Self(None)
    }

    /// [`Dst::output`] out of the device `netdev` returns, from the cache
    /// while it holds. A cache serves one sender, whose device does not
    /// change: the device is asked for only to look the route up again.
    pub(crate) fn output(
        &mut self,
        netdev: impl FnOnce() -> Result<ARef<NetDevice>>,
        saddr: &[u8; 16],
        daddr: &[u8; 16],
    ) -> Result<&CachedRoute> {
        let holds = self
            .0
            .as_ref()
            .is_some_and(|c| c.saddr == *saddr && c.daddr == *daddr && c.still_holds());
        if !holds {
            self.0 = None;
            let dst = Dst::output(&*netdev()?, saddr, daddr)?;
            let cookie = if ipv4_mapped(daddr).is_some() {
                0
            } else {
                // SAFETY: An IPv6 route, valid by `Dst`'s invariant.
                unsafe { bindings::rroce_rt6_get_cookie(dst.0.as_ptr()) }
            };
            self.0 = Some(CachedRoute {
                saddr: *saddr,
                daddr: *daddr,
                cookie,
                local: dst.is_local(),
                dst,
            });
        }
        self.0.as_ref().ok_or(EINVAL)
    }
}

fn ifindex(netdev: &NetDevice) -> i32 {
    // SAFETY: By the type invariant of `NetDevice` the device is alive.
    unsafe { (*netdev.as_raw()).ifindex }
}

impl Drop for Dst {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we own a reference.
        unsafe { bindings::dst_release(self.0.as_ptr()) };
    }
}

/// What an IPv4 and an IPv6 flow of ours share: UDP, out of `netdev`.
fn udp_flow_out_of(netdev: &NetDevice) -> bindings::flowi_common {
    bindings::flowi_common {
        flowic_oif: ifindex(netdev),
        flowic_proto: IPPROTO_UDP,
        ..Default::default()
    }
}

/// The IPv4 address in an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`).
pub(super) fn ipv4_mapped(addr: &[u8; 16]) -> Option<[u8; 4]> {
    let (prefix, v4) = addr.split_at(12);
    (prefix == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]).then(|| v4.try_into().ok())?
}

fn in6_addr(addr: &[u8; 16]) -> bindings::in6_addr {
    bindings::in6_addr {
        in6_u: bindings::in6_addr__bindgen_ty_1 { u6_addr8: *addr },
    }
}
