// SPDX-License-Identifier: GPL-2.0

//! A registered RDMA device: the `ib_device`, the driver's data behind it,
//! its receive queue and its timer.
//!
//! [`Registry::add`](super::Registry::add) allocates the `ib_device` with the
//! driver's data right behind it (one allocation, as `ib_alloc_device` does
//! for C drivers). Packets reach the device through [`Device::deliver`], in
//! softirq context; its receive work hands them to [`Driver::receive`] in
//! process context.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::{adapter::Adapter, Driver, PortEvent, Registry};
use crate::{
    bindings,
    kernel_ext::net::{NetDevice, SkBuff},
};
use core::{marker::PhantomData, mem::ManuallyDrop, ptr::NonNull};
use kernel::{
    sync::Arc,
    types::{ARef, AlwaysRefCounted, Opaque},
};

/// An `ib_device` of driver `T`, followed by its data.
#[repr(C)]
pub(super) struct Container<T: Driver> {
    pub(super) ib: Opaque<bindings::ib_device>,
    pub(super) registry: Arc<Registry<T>>,
    /// Received packets waiting for `rx_work`, each stamped with the
    /// jiffies it arrived at.
    pub(super) rx_queue: Opaque<bindings::sk_buff_head>,
    /// The stamp of the packet `rx_work` is handling, 0 between packets;
    /// under `rx_queue`'s lock.
    pub(super) rx_handling: Opaque<usize>,
    pub(super) rx_work: Opaque<bindings::work_struct>,
    /// The device's timer.
    pub(super) tick: Opaque<bindings::delayed_work>,
    pub(super) data: T,
}

/// A registered RDMA device of driver `T`.
///
/// # Invariants
///
/// Wraps the `ib_device` at the start of a `Container<T>` whose `registry`
/// and `data` are initialised; a `&Device<T>` is only handed out while
/// ib_core guarantees the device is not deallocated (during a callback, or
/// while a reference is held: an `ARef<Device<T>>`).
#[repr(transparent)]
pub(crate) struct Device<T: Driver>(Opaque<bindings::ib_device>, PhantomData<T>);

impl<T: Driver> Device<T> {
    /// # Safety
    ///
    /// `ptr` is the `ib_device` of a live `Container<T>` for `'a`.
    pub(super) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_device) -> &'a Self {
        // SAFETY: `Device<T>` is a transparent wrapper of `ib_device`.
        unsafe { &*ptr.cast() }
    }

    pub(super) fn as_raw(&self) -> *mut bindings::ib_device {
        self.0.get()
    }

    pub(super) fn container(&self) -> &Container<T> {
        // SAFETY: By the type invariant the device sits at offset 0 of a
        // live, initialised `Container<T>` (`repr(C)`).
        unsafe { &*self.as_raw().cast::<Container<T>>() }
    }

    /// The driver's data.
    pub(crate) fn data(&self) -> &T {
        &self.container().data
    }

    /// The netdev of `port`, if it is still associated.
    pub(crate) fn netdev(&self, port: u32) -> Option<ARef<NetDevice>> {
        // SAFETY: The device is alive by the type invariant; the core returns
        // a held reference (or null), which `from_held` takes over.
        unsafe { NetDevice::from_held(bindings::ib_device_get_netdev(self.as_raw(), port)) }
    }

    /// Tells ib_core's clients (and through uverbs, userspace) about `port`.
    pub(crate) fn dispatch_port_event(&self, port: u32, event: PortEvent) {
        let mut ev = bindings::ib_event {
            device: self.as_raw(),
            event: event as bindings::ib_event_type,
            ..Default::default()
        };
        ev.element.port_num = port;
        // SAFETY: `ev` is a valid event for a live device.
        unsafe { bindings::ib_dispatch_event(&ev) };
    }

    /// Unregisters the device from a work item, so callers that hold locks
    /// ib_core needs (e.g. RTNL in a netdev notifier) do not deadlock.
    pub(crate) fn unregister_queued(&self) {
        // SAFETY: The device is alive by the type invariant.
        unsafe { bindings::ib_unregister_device_queued(self.as_raw()) };
    }

    /// Queues a received packet for the device it arrived on, if that is
    /// one of ours; otherwise drops it. Callable in softirq context.
    pub(crate) fn deliver(skb: SkBuff) {
        if let Some(dev) = skb.dev().and_then(Self::get_by_netdev) {
            dev.deliver_bounded(skb);
        }
    }

    /// Queues a packet from the wire, unless the backlog is full.
    fn deliver_bounded(&self, skb: SkBuff) {
        let queue = self.container().rx_queue.get();
        // SAFETY: The queue was initialised with the device; its length is
        // read without its lock, as a hint.
        let queued = unsafe { bindings::rroce_skb_queue_len_lockless(queue) };
        if queued >= T::RX_BACKLOG {
            drop(skb);
            T::rx_dropped(self);
        } else {
            self.deliver_local(skb);
        }
    }

    /// Queues a packet for this device's receive work: one of its own, sent
    /// to itself, which its senders' windows bound.
    pub(crate) fn deliver_local(&self, skb: SkBuff) {
        let c = self.container();
        // SAFETY: The queue and work were initialised with the device and
        // are cancelled before it is freed; the queue takes the skb.
        unsafe {
            bindings::rroce_skb_queue_stamped(c.rx_queue.get(), skb.into_raw());
            bindings::rroce_queue_work(c.rx_work.get());
        }
    }

    /// The receive clock, in jiffies: the time up to which every packet
    /// received has been through [`Driver::receive`]. It is now, unless one
    /// is being handled or waits in the backlog; then it is when the oldest
    /// of those arrived. Timers that wait for a peer read it, so that an
    /// answer queued behind other packets is not taken for silence.
    pub(crate) fn rx_clock(&self) -> u64 {
        // SAFETY: The queue was initialised with the device, and
        // `rx_handling` is only read under its lock; reading `jiffies` has
        // no precondition.
        unsafe {
            let c = self.container();
            let now = bindings::rroce_jiffies();
            bindings::rroce_skb_queue_oldest(c.rx_queue.get(), c.rx_handling.get(), now) as u64
        }
    }

    /// Fires [`Driver::tick`] now: work was posted from a context where it
    /// could not be run. Callable in any context.
    pub(crate) fn kick(&self) {
        // SAFETY: As in `arm_tick`.
        unsafe { bindings::rroce_mod_delayed_work(self.container().tick.get(), 0) };
    }

    /// Fires [`Driver::tick`] in `usecs` microseconds, unless it is already
    /// due sooner.
    pub(crate) fn arm_tick(&self, usecs: u32) {
        // SAFETY: The timer was initialised with the device and is cancelled
        // before it is freed.
        unsafe {
            let delay = bindings::rroce_usecs_to_jiffies(usecs);
            bindings::rroce_queue_delayed_work(self.container().tick.get(), delay);
        }
    }

    /// The device of driver `T` bound to `netdev`, if any.
    pub(crate) fn get_by_netdev(netdev: &NetDevice) -> Option<ARef<Self>> {
        let held = Held::by_netdev(netdev, T::DRIVER_ID)?;
        // Another driver may use the same driver id (the C rxe does): only
        // the devices that carry `T`'s ops head a `Container<T>`.
        // SAFETY: `held` keeps the device alive.
        if !unsafe { Adapter::<T>::owns(held.0.as_ptr()) } {
            return None;
        }
        let ib = ManuallyDrop::new(held).0;
        // SAFETY: Ours, and the reference `held` owned passes on; `Device<T>`
        // is a transparent wrapper of `ib_device`.
        Some(unsafe { ARef::from_raw(ib.cast()) })
    }

    /// Whether any device of driver id `T::DRIVER_ID` is bound to `netdev`,
    /// ours or another driver's.
    pub(crate) fn exists_on(netdev: &NetDevice) -> bool {
        Held::by_netdev(netdev, T::DRIVER_ID).is_some()
    }
}

// SAFETY: `ib_device`s are counted by their `refcount`, which
// `ib_device_put` drops; the device is not freed before it reaches zero.
unsafe impl<T: Driver> AlwaysRefCounted for Device<T> {
    fn inc_ref(&self) {
        // SAFETY: The device is alive while `self` is borrowed, so its count
        // is not zero.
        unsafe { bindings::rroce_ib_device_hold(self.as_raw()) };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: The caller owns a reference.
        unsafe { bindings::ib_device_put(obj.cast().as_ptr()) };
    }
}

/// A reference on a device from `ib_device_get_by_netdev`, whichever
/// driver's it is.
///
/// # Invariants
///
/// Owns one reference on a registered `ib_device`.
struct Held(NonNull<bindings::ib_device>);

impl Held {
    /// The device of driver id `driver_id` bound to `netdev`, if any.
    fn by_netdev(netdev: &NetDevice, driver_id: u32) -> Option<Self> {
        // SAFETY: `netdev` is alive; a returned device comes with a reference.
        let ib = unsafe { bindings::ib_device_get_by_netdev(netdev.as_raw(), driver_id) };
        // INVARIANT: The reference is ours.
        NonNull::new(ib).map(Self)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we own a reference.
        unsafe { bindings::ib_device_put(self.0.as_ptr()) };
    }
}
