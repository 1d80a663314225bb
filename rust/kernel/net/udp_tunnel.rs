// SPDX-License-Identifier: GPL-2.0

//! Kernel UDP sockets whose datagrams are handed to a driver, not queued
//! (`udp_tunnel`): how RoCEv2 receives on UDP port 4791.
//!
//! C header: [`include/net/udp_tunnel.h`](srctree/include/net/udp_tunnel.h)

use super::{namespace::Net, SkBuff};
use crate::bindings;
use core::{marker::PhantomData, ptr::NonNull};
use kernel::{error::to_result, ffi, prelude::*};

/// `AF_INET` and `AF_INET6` (`include/linux/socket.h`).
const AF_INET: u8 = 2;
const AF_INET6: u8 = 10;

/// Receives the datagrams of a [`UdpTunnel`].
pub(crate) trait EncapReceiver {
    /// Called in softirq context for each datagram, which starts at its UDP
    /// header; the receiver owns it from here on.
    fn receive(skb: SkBuff);
}

/// The address family of a socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    /// IPv4.
    V4,
    /// IPv6, only (`IPV6_V6ONLY`), so that an IPv4 socket can share the port.
    V6,
}

/// A UDP tunnel socket; closed on drop, which must come before its network
/// namespace ends (the socket holds no reference on it).
///
/// # Invariants
///
/// `sock` is a socket created by `udp_sock_create` and set up as a tunnel
/// whose `encap_rcv` is `Self::encap_rcv`, owned by this object.
pub(crate) struct UdpTunnel<T: EncapReceiver> {
    sock: NonNull<bindings::socket>,
    _p: PhantomData<T>,
}

// SAFETY: The socket may be released from any thread.
unsafe impl<T: EncapReceiver> Send for UdpTunnel<T> {}
// SAFETY: No method uses `&self`.
unsafe impl<T: EncapReceiver> Sync for UdpTunnel<T> {}

impl<T: EncapReceiver> UdpTunnel<T> {
    /// Binds `port` on every address of `family` in `net`; `EADDRINUSE` if
    /// another socket has it.
    pub(crate) fn open(net: &Net, family: Family, port: u16) -> Result<Self> {
        let mut cfg = bindings::udp_port_cfg {
            family: match family {
                Family::V4 => AF_INET,
                Family::V6 => AF_INET6,
            },
            local_udp_port: port.to_be(),
            ..Default::default()
        };
        cfg.set_ipv6_v6only((family == Family::V6).into());
        let net = net.as_raw();
        let mut sock = core::ptr::null_mut();
        // SAFETY: `net` is alive (by `Net`'s invariant); `cfg` and `sock` are
        // valid for the call, which writes the new socket to `sock`.
        to_result(unsafe {
            match family {
                Family::V4 => bindings::udp_sock_create4(net, &mut cfg, &mut sock),
                Family::V6 => bindings::udp_sock_create6(net, &mut cfg, &mut sock),
            }
        })?;
        let sock = NonNull::new(sock).ok_or(ENOMEM)?;
        let mut tunnel = bindings::udp_tunnel_sock_cfg {
            // Any nonzero type turns on `encap_rcv`; 1 is what rxe uses.
            encap_type: 1,
            encap_rcv: Some(Self::encap_rcv),
            ..Default::default()
        };
        // SAFETY: `sock` is a new, unused UDP socket of `net`; `tunnel` is
        // read during the call only.
        unsafe { bindings::setup_udp_tunnel_sock(net, sock.as_ptr(), &mut tunnel) };
        // INVARIANT: Created and set up as a tunnel just above.
        Ok(Self {
            sock,
            _p: PhantomData,
        })
    }

    /// # Safety
    ///
    /// Called by the UDP layer with a datagram it hands over.
    unsafe extern "C" fn encap_rcv(
        _sk: *mut bindings::sock,
        skb: *mut bindings::sk_buff,
    ) -> ffi::c_int {
        // SAFETY: Returning 0 tells the UDP layer that we consumed `skb`.
        if let Some(skb) = unsafe { SkBuff::from_raw(skb) } {
            T::receive(skb);
        }
        0
    }
}

impl<T: EncapReceiver> Drop for UdpTunnel<T> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we own the socket. Release waits for
        // receivers running under RCU, so no `encap_rcv` outlives it.
        unsafe { bindings::udp_tunnel_sock_release(self.sock.as_ptr()) };
    }
}
