// SPDX-License-Identifier: GPL-2.0

//! Socket buffers: the packets rroce builds, routes, sends and receives.
//!
//! C header: [`include/linux/skbuff.h`](srctree/include/linux/skbuff.h)

use super::{device::NetDevice, route::Dst};
use crate::{bindings, kernel_ext::fill::Fill};
use core::{
    mem::{ManuallyDrop, MaybeUninit},
    ptr::NonNull,
};
use kernel::{error::to_result, ffi, prelude::*, types::ARef};

/// A socket buffer (`struct sk_buff`) that we own; freed on drop.
///
/// # Invariants
///
/// The pointer is a valid skb that nobody else frees, whose linear data is
/// initialised.
pub(crate) struct SkBuff(NonNull<bindings::sk_buff>);

// SAFETY: An owned skb may be processed and freed on any thread.
unsafe impl Send for SkBuff {}

impl SkBuff {
    /// Takes ownership of `skb`.
    ///
    /// # Safety
    ///
    /// `skb` is null or a valid skb whose ownership the caller hands over.
    pub(crate) unsafe fn from_raw(skb: *mut bindings::sk_buff) -> Option<Self> {
        // INVARIANT: Guaranteed by the caller.
        NonNull::new(skb).map(Self)
    }

    /// A buffer of `len` bytes, which `fill` writes, every one of them
    /// (`EINVAL` if it does not), with room in front for the link, IP and
    /// UDP headers. The bytes are not zeroed first.
    pub(crate) fn build<E: From<Error>>(
        len: usize,
        fill: impl FnOnce(&mut Fill<'_>) -> Result<(), E>,
    ) -> Result<Self, E> {
        Self::build_in(None, len, 0, fill)
    }

    /// As [`SkBuff::build`], in `spare` if it has the room (freeing it if
    /// not), else in a new buffer with room for `room` bytes if that is
    /// more than `len`. `spare` is a packet that this device built with
    /// `build_in`, sent to itself and has handled: it never met the IP
    /// layer, so it is an empty buffer again once its data is.
    pub(crate) fn build_in<E: From<Error>>(
        spare: Option<SkBuff>,
        len: usize,
        room: usize,
        fill: impl FnOnce(&mut Fill<'_>) -> Result<(), E>,
    ) -> Result<Self, E> {
        let len32 = u32::try_from(len).map_err(|_| EINVAL)?;
        let mut data = core::ptr::null_mut();
        let reused = spare.and_then(|spare| {
            // SAFETY: The skb is ours, by the type invariant; the helper
            // leaves it as it was if the data does not fit.
            data = unsafe { bindings::rroce_skb_reuse(spare.0.as_ptr(), len32) };
            (!data.is_null()).then(|| spare.into_raw())
        });
        let skb = match reused {
            Some(skb) => skb,
            None => {
                let room32 = u32::try_from(room).map_err(|_| EINVAL)?;
                // SAFETY: Any size may be asked for; failure is a null
                // pointer.
                unsafe { bindings::rroce_alloc_skb(len32, room32, &mut data) }
            }
        };
        let raw = NonNull::new(skb).ok_or(ENOMEM)?;
        // SAFETY: The skb is ours, with `len` bytes of data at `data`,
        // uninitialised, behind room for the headers.
        let data = unsafe { core::slice::from_raw_parts_mut(data.cast::<MaybeUninit<u8>>(), len) };
        let mut f = Fill::new(data);
        let filled = fill(&mut f).and_then(|()| {
            if f.is_full() {
                Ok(())
            } else {
                Err(EINVAL.into())
            }
        });
        if let Err(e) = filled {
            // SAFETY: Ours, and never handed out.
            unsafe { bindings::rroce_kfree_skb(raw.as_ptr()) };
            return Err(e);
        }
        // INVARIANT: An skb ours alone, its data all written.
        Ok(Self(raw))
    }

    /// The bytes from `skb->data` on (`skb->len`), linear or not.
    pub(crate) fn len(&self) -> usize {
        // SAFETY: The skb is valid and ours; a field read.
        unsafe { (*self.0.as_ptr()).len as usize }
    }

    /// The linear data, writable; `None` if a clone shares it (as a packet
    /// capture's may).
    pub(crate) fn data_mut(&mut self) -> Option<&mut [u8]> {
        let mut len = 0;
        // SAFETY: The skb is valid and ours; the helper reports the linear
        // length, or null if the data is shared.
        let ptr = unsafe { bindings::rroce_skb_own_data(self.0.as_ptr(), &mut len) };
        // SAFETY: `len` bytes at `ptr` belong to the skb and no clone
        // shares them; `&mut self` makes the access exclusive.
        (!ptr.is_null()).then(|| unsafe { core::slice::from_raw_parts_mut(ptr, len as usize) })
    }

    /// Makes the whole packet linear, so [`SkBuff::data`] holds all of it.
    pub(crate) fn linearize(&mut self) -> Result {
        // SAFETY: The skb is valid and ours.
        to_result(unsafe { bindings::rroce_skb_linearize(self.0.as_ptr()) })
    }

    /// A received packet from its IP header to its end, and the IP
    /// header's length; `None` unless its data is linear and starts at its
    /// UDP header, as the UDP layer and a device's receive queue hand it
    /// over. Writable if no clone shares it (as a packet capture's may).
    pub(crate) fn datagram(&mut self) -> Option<(Datagram<'_>, usize)> {
        let (mut len, mut ip_len, mut own) = (0, 0, false);
        let skb = self.0.as_ptr();
        // SAFETY: The skb is valid and ours; the helper checks the rest.
        let ptr = unsafe { bindings::rroce_skb_datagram(skb, &mut len, &mut ip_len, &mut own) };
        if ptr.is_null() {
            return None;
        }
        let datagram = if own {
            // SAFETY: `len` bytes at `ptr`, from the network header to the
            // tail, are the skb's linear data, which no clone shares;
            // `&mut self` makes the access exclusive.
            Datagram::Own(unsafe { core::slice::from_raw_parts_mut(ptr, len as usize) })
        } else {
            // SAFETY: As above, but a clone shares them: read only.
            Datagram::Shared(unsafe { core::slice::from_raw_parts(ptr, len as usize) })
        };
        Some((datagram, ip_len as usize))
    }

    /// The device it arrived on, if any.
    pub(crate) fn dev(&self) -> Option<&NetDevice> {
        // SAFETY: The skb is valid; its device is alive while we own it.
        let dev = unsafe { bindings::rroce_skb_dev(self.0.as_ptr()) };
        // SAFETY: As above, for as long as the skb is borrowed.
        (!dev.is_null()).then(|| unsafe { NetDevice::from_raw(dev) })
    }

    /// Attaches `dst`, the route out of this host that the packet takes.
    pub(crate) fn set_route(&mut self, dst: Dst) {
        // SAFETY: The skb is ours; it takes over the reference `dst` holds.
        unsafe { bindings::rroce_skb_set_route(self.0.as_ptr(), dst.into_raw()) };
    }

    /// Puts an IP header of `ip_len` bytes (IPv4 if `v4`) and a UDP header
    /// in front of the data, which is the UDP payload; `write` fills them
    /// in. Afterwards `data` starts at the IP header.
    pub(crate) fn push_ip_udp(
        &mut self,
        ip_len: usize,
        v4: bool,
        write: impl FnOnce(&mut [u8]) -> Result,
    ) -> Result {
        if ip_len > MAX_IP_HEADER_LEN {
            return Err(EINVAL);
        }
        let len = ip_len + UDP_HEADER_LEN;
        let skb = self.0.as_ptr();
        // SAFETY: `build` left room in front of the data for the headers,
        // room for `len`; the pushed bytes are ours until the skb goes.
        let hdr = unsafe {
            core::slice::from_raw_parts_mut(bindings::rroce_skb_push(skb, len as u32), len)
        };
        write(hdr)?;
        // SAFETY: The headers are in place at the data: the network header
        // is there, the transport header `ip_len` bytes on.
        unsafe { bindings::rroce_skb_set_ip_udp(skb, ip_len as ffi::c_int, v4) };
        Ok(())
    }

    /// Moves `data` back from the IP header to the UDP header, where the
    /// UDP layer delivers packets: for one `route` found to be local.
    pub(crate) fn pull_to_transport(&mut self) {
        // SAFETY: The skb is ours; `route` set its transport header.
        unsafe { bindings::rroce_skb_pull_to_transport(self.0.as_ptr()) };
    }

    /// Shows the packet, whose data starts at its IP header, to the packet
    /// taps of the device `netdev` returns, as if it left through it, if
    /// the module's `capture_loopback` parameter is on and a tap listens.
    pub(crate) fn show_to_taps(&self, netdev: impl FnOnce() -> Option<ARef<NetDevice>>) {
        // SAFETY: A `bool` module parameter that sysfs may change at any
        // time; a racing read sees either value.
        let on = unsafe {
            core::ptr::read_volatile(core::ptr::addr_of!(bindings::rroce_capture_loopback))
        };
        if let Some(netdev) = on.then(netdev).flatten() {
            // SAFETY: The skb and the netdev are alive during the call, which
            // leaves the skb as it was.
            unsafe { bindings::rroce_skb_tap(self.0.as_ptr(), netdev.as_raw()) };
        }
    }

    /// Sends a packet `route` prepared.
    pub(crate) fn ip_output(self) -> Result {
        let v4 = self.protocol() == ETH_P_IP;
        let skb = ManuallyDrop::new(self).0.as_ptr();
        // SAFETY: The skb is routed, its device set to the route's, with its
        // headers in place; the IP layer takes it. Ours have no socket.
        let ret = unsafe {
            let net = bindings::rroce_dev_net(bindings::rroce_skb_dev(skb));
            if v4 {
                bindings::ip_local_out(net, core::ptr::null_mut(), skb)
            } else {
                bindings::ip6_local_out(net, core::ptr::null_mut(), skb)
            }
        };
        // A positive `NET_XMIT_*` (congestion, a drop by a queue discipline)
        // is not an error of ours: the packet counts as sent, and the
        // transport recovers as from any loss.
        to_result(ret)
    }

    /// The link-layer protocol, `ETH_P_*`, as [`SkBuff::push_ip_udp`] set it.
    fn protocol(&self) -> u16 {
        // SAFETY: The skb is valid.
        u16::from_be(unsafe { bindings::rroce_skb_protocol(self.0.as_ptr()) })
    }

    /// The skb, which stays ours.
    pub(crate) fn as_raw(&self) -> *mut bindings::sk_buff {
        self.0.as_ptr()
    }

    /// Hands the skb over to C code that frees it.
    pub(crate) fn into_raw(self) -> *mut bindings::sk_buff {
        ManuallyDrop::new(self).0.as_ptr()
    }
}

/// `ETH_P_IP` (`include/uapi/linux/if_ether.h`).
const ETH_P_IP: u16 = 0x0800;
/// The longest IP header `push_ip_udp` takes (IPv6 without extensions),
/// and the UDP header: within the headroom `build` leaves.
const MAX_IP_HEADER_LEN: usize = 40;
const UDP_HEADER_LEN: usize = 8;

/// A received packet's bytes, from its IP header on ([`SkBuff::datagram`]).
pub(crate) enum Datagram<'a> {
    /// Its own: they may be written, and put back.
    Own(&'a mut [u8]),
    /// Shared with a clone.
    Shared(&'a [u8]),
}

impl Datagram<'_> {
    /// The number of bytes.
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Own(d) => d.len(),
            Self::Shared(d) => d.len(),
        }
    }
}

impl Drop for SkBuff {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we own the skb.
        unsafe { bindings::rroce_kfree_skb(self.0.as_ptr()) };
    }
}
