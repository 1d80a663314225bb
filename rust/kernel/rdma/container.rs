// SPDX-License-Identifier: GPL-2.0

//! A device's memory: the `ib_device`, the driver's data right behind it,
//! and the device's receive queue and timer.
//!
//! [`Registry::add`](super::Registry::add) allocates a [`Container`] in one
//! piece, as `ib_alloc_device` does for C drivers. Packets reach the device
//! through [`Device::deliver`], in softirq context; its receive work hands
//! them to [`Driver::receive`] in process context, or a doorbell does
//! ([`Device::plug_local_rx`]). Work that cannot be done where it arises
//! goes to the kick work ([`Device::kick`]). `dealloc_driver`, the last
//! callback ib_core makes, drops the data.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::{
    device::{DeviceRef, Held},
    Device, Driver, Registry,
};
use crate::{
    bindings,
    kernel_ext::{
        fill::Fill,
        net::{NetDevice, SkBuff},
        usecs_to_jiffies,
    },
};
use core::{
    mem::{offset_of, ManuallyDrop},
    ptr::{addr_of, addr_of_mut},
    sync::atomic::{AtomicUsize, Ordering},
};
use kernel::{error::Error, sync::Arc, types::Opaque};

/// How a queued skb came ([`Container::rx_enqueue`]), in its control block.
///
/// # Safety
///
/// `skb` is valid, and its control block is ours: it is queued on, or was
/// taken from, a device's receive queue.
unsafe fn rx_cb(skb: *mut bindings::sk_buff) -> *mut bindings::rroce_rx_cb {
    // SAFETY: `skb` is valid; its control block, aligned to 8, holds a
    // `rroce_rx_cb` (a static assertion in helpers.c says so).
    unsafe { addr_of_mut!((*skb).cb).cast() }
}

/// How many times [`Driver::RX_BACKLOG`] a device's packets to itself may
/// fill its receive queue: they come in bursts (a QP's window, the answers
/// to its peer), which a backlog of the wire's size would cut.
const LOCAL_BACKLOG: u32 = 4;

/// The length of `queue`, read without its lock, as a hint
/// (`skb_queue_len_lockless`).
///
/// # Safety
///
/// `queue` is an initialised queue.
unsafe fn queue_len(queue: *const bindings::sk_buff_head) -> u32 {
    // SAFETY: Valid, by the caller; writers change it under the lock, with
    // `WRITE_ONCE`.
    unsafe { core::ptr::read_volatile(addr_of!((*queue).qlen)) }
}

/// The kernel's tick counter, `jiffies`.
fn now() -> usize {
    crate::kernel_ext::ticks()
}

/// An `ib_device` of driver `T`, followed by its data.
#[repr(C)]
pub(super) struct Container<T: Driver> {
    pub(super) ib: Opaque<bindings::ib_device>,
    pub(super) registry: Arc<Registry<T>>,
    /// Received packets waiting for `rx_work`, each stamped with the
    /// jiffies it arrived at.
    pub(super) rx_queue: Opaque<bindings::sk_buff_head>,
    /// How far `rx_queue` has been taken; under its lock.
    pub(super) rx_state: Opaque<RxState>,
    /// The stamp of the packet being handled, 0 between packets (and as
    /// the device is allocated, zeroed). Set under `rx_queue`'s lock as the
    /// packet leaves it, so that a reader under the lock finds each packet
    /// in one place; cleared without it once the queue is empty.
    pub(super) rx_handling: AtomicUsize,
    /// Packets that this device sent itself and has handled, kept to build
    /// the next ones in ([`Device::build_local`]): at most
    /// [`Driver::RX_BUDGET`], what one burst sends. Under `rx_queue`'s
    /// lock, its own unused: a burst hands them over in one go.
    pub(super) rx_spare: Opaque<bindings::sk_buff_head>,
    /// The packets of `rx_spare` to be, as they are handled: the one who
    /// has claimed `rx_queue` keeps them here, without a lock, and moves
    /// them to `rx_spare` as it gives the claim back.
    pub(super) rx_kept: Opaque<bindings::sk_buff_head>,
    pub(super) rx_work: Opaque<bindings::work_struct>,
    /// Runs [`Driver::kicked`].
    pub(super) kick_work: Opaque<bindings::work_struct>,
    /// When `kick_work` began a series of turns that each left it queued
    /// again, in jiffies; 0 after a turn that did not, and as the device
    /// is allocated (zeroed).
    pub(super) kick_since: AtomicUsize,
    /// The device's timer.
    pub(super) tick: Opaque<bindings::delayed_work>,
    /// The jiffies `tick` was last armed to fire at, 0 once it has fired
    /// (and as the device is allocated): an arm for no sooner than that
    /// needs no call into the workqueue.
    pub(super) tick_due: AtomicUsize,
    /// How many runs of `rx_work` and `kick_work` are queued or under way,
    /// for `dealloc_driver` (see `quiesce`); 0 as the device is allocated.
    pub(super) work_outstanding: AtomicUsize,
    pub(super) data: T,
}

/// How far the receive queue's packets have been taken. All zero, as the
/// device is allocated, is the state of a new device.
pub(super) struct RxState {
    /// How many [`LocalRxPlug`]s hold the receive work back from the
    /// device's packets to itself.
    plugged: usize,
    /// Whether packets are being taken from the queue, by `rx_work` or by
    /// a [`LocalRxPlug`] going. One at a time, so that they are handled in
    /// the order they arrived.
    busy: bool,
    /// When the receive work began to run without the queue emptying, in
    /// jiffies; 0 once it has.
    busy_since: usize,
}

impl<T: Driver> Container<T> {
    /// Whether `ib` is a device of driver `T`: only ours are deallocated by
    /// our `dealloc_driver`.
    ///
    /// # Safety
    ///
    /// `ib` is a valid device.
    pub(super) unsafe fn owns(ib: *mut bindings::ib_device) -> bool {
        // SAFETY: Guaranteed by the caller.
        let dealloc = unsafe { (*ib).ops.dealloc_driver };
        dealloc.map(|f| f as *const ()) == Some(Self::dealloc_driver as *const ())
    }

    /// # Safety
    ///
    /// `work` is the `rx_work` of a live `Container<T>`.
    pub(super) unsafe extern "C" fn rx_work(work: *mut bindings::work_struct) {
        // SAFETY: Guaranteed by the caller.
        let c = unsafe { &*work.byte_sub(offset_of!(Self, rx_work)).cast::<Self>() };
        // SAFETY: The device is alive while its work may run.
        let dev = unsafe { Device::<T>::from_raw(c.ib.get()) };
        // Else whoever takes packets now queues this work again if it
        // leaves any.
        if c.rx_claim(u32::MAX) {
            c.rx_handle(dev, T::RX_BUDGET);
            if c.rx_release(0) {
                // More to do: yield, and come back.
                let urgent = c.rx_still_urgent();
                dev.queue_rx(urgent);
            }
        }
        // The last touch of the device.
        c.work_outstanding.fetch_sub(1, Ordering::Release);
    }

    /// # Safety
    ///
    /// `work` is the `kick_work` of a live `Container<T>`.
    pub(super) unsafe extern "C" fn kick_work(work: *mut bindings::work_struct) {
        // SAFETY: Guaranteed by the caller.
        let c = unsafe { &*work.byte_sub(offset_of!(Self, kick_work)).cast::<Self>() };
        // A run after one that left the work due goes on with its streak.
        let _ = c
            .kick_since
            .compare_exchange(0, now(), Ordering::Relaxed, Ordering::Relaxed);
        // SAFETY: The device is alive while its work may run.
        T::kicked(unsafe { Device::<T>::from_raw(c.ib.get()) });
        // SAFETY: `work` is initialised.
        if !unsafe { bindings::rroce_work_pending(work) } {
            c.kick_since.store(0, Ordering::Relaxed);
        }
        // The last touch of the device.
        c.work_outstanding.fetch_sub(1, Ordering::Release);
    }

    /// Queues `work` (`rx_work` or `kick_work`) on the high-priority or the
    /// ordinary workers, unless it is queued already: counted in
    /// `work_outstanding` from before it can run until its run ends.
    fn queue_work(&self, work: &Opaque<bindings::work_struct>, urgent: bool) {
        self.work_outstanding.fetch_add(1, Ordering::AcqRel);
        // SAFETY: The work was initialised with the device, and is disabled
        // before it is freed.
        if !unsafe { bindings::rroce_queue_device_work(work.get(), urgent) } {
            // Queued already, and counted then; or disabled.
            self.work_outstanding.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Waits until neither `rx_work` nor `kick_work` is queued or running,
    /// and keeps them from being queued again. A run on one kind of worker
    /// may queue its work on the other, and run there at once, where
    /// `disable_work_sync` waits only for a run where the work was queued
    /// last: so each queueing is counted until its run ends, and this waits
    /// for the count to fall to 0 once neither can be queued.
    fn quiesce(&self) {
        for work in [&self.rx_work, &self.kick_work] {
            // SAFETY: Both were initialised with the device.
            if unsafe { bindings::disable_work_sync(work.get()) } {
                // It was queued: a run that will not happen.
                self.work_outstanding.fetch_sub(1, Ordering::AcqRel);
            }
        }
        while self.work_outstanding.load(Ordering::Acquire) != 0 {
            crate::kernel_ext::msleep(1);
        }
    }

    /// Whether the kick work has not yet been due for
    /// [`Driver::RX_URGENT_USECS`] without a break: the same bound as the
    /// receive work's at nice -20.
    fn kick_still_urgent(&self) -> bool {
        let since = self.kick_since.load(Ordering::Relaxed);
        since == 0 || Self::urgent_since(since, now())
    }

    /// Whether work that has gone on without a break since `since`, in
    /// jiffies, may go on at high priority at `now`.
    fn urgent_since(since: usize, now: usize) -> bool {
        now.wrapping_sub(since) < usecs_to_jiffies(T::RX_URGENT_USECS) as usize
    }

    /// # Safety
    ///
    /// `work` is the work of the `tick` of a live `Container<T>`.
    pub(super) unsafe extern "C" fn tick(work: *mut bindings::work_struct) {
        // `delayed_work` starts with its `work_struct`.
        let offset = offset_of!(Self, tick) + offset_of!(bindings::delayed_work, work);
        // SAFETY: Guaranteed by the caller.
        let c = unsafe { &*work.byte_sub(offset).cast::<Self>() };
        // Before the driver looks at its QPs: an arm that still sees the old
        // expiry was made before that look, which sees what it armed for.
        c.tick_due.store(0, Ordering::Relaxed);
        // SAFETY: The device is alive while its work may run.
        T::tick(unsafe { Device::<T>::from_raw(c.ib.get()) });
    }

    /// # Safety
    ///
    /// Called by `ib_dealloc_device`, once, for one of our devices.
    pub(super) unsafe extern "C" fn dealloc_driver(ib: *mut bindings::ib_device) {
        let container = ib.cast::<Self>();
        // SAFETY: Called once, from `ib_dealloc_device`, after which ib_core
        // never calls us for this device again: the data can be dropped.
        unsafe {
            // Unregistered: no packet is delivered any more. The timer may
            // rearm itself, which `cancel_delayed_work_sync` copes with.
            (*container).quiesce();
            bindings::cancel_delayed_work_sync((*container).tick.get());
            bindings::rroce_skb_queue_purge((*container).rx_queue.get());
            bindings::rroce_skb_queue_purge((*container).rx_spare.get());
            bindings::rroce_skb_queue_purge((*container).rx_kept.get());
            core::ptr::drop_in_place(addr_of_mut!((*container).data));
            // Delisted last: the module's exit waits for listed devices
            // only, and dropping the data runs module code (closing the
            // last device's sockets waits for an RCU grace period), as
            // ib_core erases a C driver's device only once its
            // `dealloc_driver` has returned.
            (*container).registry.delist(ib);
            core::ptr::drop_in_place(addr_of_mut!((*container).registry));
        }
    }
}

/// The receive queue. Each packet is stamped with the jiffies it arrived at,
/// and the one being handled leaves its stamp in `rx_handling`, so that
/// [`Device::rx_clock`] can tell how far handling has come.
impl<T: Driver> Container<T> {
    /// Runs `f` on the receive state and the number of packets waiting,
    /// under the queue's lock.
    fn rx_locked<R>(&self, f: impl FnOnce(&mut RxState, u32) -> R) -> R {
        let queue = self.rx_queue.get();
        // SAFETY: The queue was initialised with the device, and its state
        // is only accessed under its lock; zeroed, as allocated, it is
        // valid.
        unsafe {
            let flags = bindings::rroce_skb_queue_lock(queue);
            let queued = queue_len(queue);
            let r = f(&mut *self.rx_state.get(), queued);
            bindings::rroce_skb_queue_unlock(queue, flags);
            r
        }
    }

    /// Queues `skb`, which this device sent itself if `local`; returns
    /// whether a [`LocalRxPlug`] is held.
    fn rx_enqueue(&self, skb: SkBuff, local: bool) -> bool {
        let queue = self.rx_queue.get();
        let skb = skb.into_raw();
        // SAFETY: The queue was initialised with the device; the skb's
        // control block is ours (the UDP tunnel handed it over, or we built
        // it), and the queue takes the skb. `rx_state` is only accessed
        // under the queue's lock.
        unsafe {
            let cb = rx_cb(skb);
            (*cb).stamp = now() as _;
            (*cb).local = local;
            let flags = bindings::rroce_skb_queue_lock(queue);
            bindings::rroce___skb_queue_tail(queue, skb);
            let plugged = (*self.rx_state.get()).plugged > 0;
            bindings::rroce_skb_queue_unlock(queue, flags);
            plugged
        }
    }

    /// Adds `delta` to the plugs held; returns whether, after it, none is
    /// held, nothing takes packets and some wait.
    fn rx_plug(&self, delta: isize) -> bool {
        self.rx_locked(|rx, queued| {
            rx.plugged = rx.plugged.wrapping_add_signed(delta);
            rx.plugged == 0 && !rx.busy && queued > 0
        })
    }

    /// Takes the right to take packets, if no one has it and at most
    /// `most` wait.
    fn rx_claim(&self, most: u32) -> bool {
        self.rx_locked(|rx, queued| {
            let claimed = !rx.busy && queued <= most;
            rx.busy |= claimed;
            claimed
        })
    }

    /// Gives the right to take packets back, adding `plug` to the plugs
    /// held; returns whether packets wait. The receive work that found it
    /// taken meanwhile has gone, so they need it woken. If none wait, the
    /// receive work is urgent again.
    fn rx_release(&self, plug: isize) -> bool {
        self.rx_locked(|rx, queued| {
            // SAFETY: Both were initialised with the device; `rx_spare` is
            // under the lock held here, and `rx_kept` is the claim's, which
            // this gives back.
            unsafe {
                bindings::rroce_skb_queue_splice_tail_init(self.rx_kept.get(), self.rx_spare.get())
            };
            rx.busy = false;
            self.rx_handling.store(0, Ordering::Relaxed);
            rx.plugged = rx.plugged.wrapping_add_signed(plug);
            if queued == 0 {
                rx.busy_since = 0;
            }
            queued > 0
        })
    }

    /// Whether the receive work, which left packets waiting, has not yet
    /// been at it for [`Driver::RX_URGENT_USECS`] without a break.
    fn rx_still_urgent(&self) -> bool {
        let now = now();
        self.rx_locked(|rx, _| {
            if rx.busy_since == 0 {
                rx.busy_since = now;
            }
            Self::urgent_since(rx.busy_since, now)
        })
    }

    /// Hands up to `budget` packets to the driver, in order; the caller has
    /// claimed the queue.
    fn rx_handle(&self, dev: &Device<T>, budget: usize) {
        for _ in 0..budget {
            let Some(mut skb) = self.rx_dequeue().or_else(|| {
                // The burst is over: what the driver left for its end goes
                // now, and what that sends to this device belongs to it.
                T::received(dev);
                self.rx_dequeue()
            }) else {
                return;
            };
            // SAFETY: Dequeued, so ours, with the control block
            // `rx_enqueue` wrote.
            let local = unsafe { (*rx_cb(skb.as_raw())).local };
            if skb.linearize().is_ok() {
                T::receive(dev, &mut skb);
            }
            if local {
                self.keep_spare(skb);
            }
        }
        T::received(dev);
    }

    /// Keeps `skb`, a packet this device sent itself and has handled, to
    /// build another in, if fewer than [`Driver::RX_BUDGET`] are kept; the
    /// caller has claimed the queue.
    fn keep_spare(&self, skb: SkBuff) {
        let (spare, kept) = (self.rx_spare.get(), self.rx_kept.get());
        // SAFETY: Both were initialised with the device. `rx_spare`'s
        // length is read without its lock, as a hint; `rx_kept` is the
        // claim's, and takes the skb.
        unsafe {
            if queue_len(spare) + queue_len(kept) < T::RX_BUDGET as u32 {
                bindings::rroce___skb_queue_tail(kept, skb.into_raw());
            }
        }
    }

    /// Takes the oldest packet and, under the same lock, records its stamp
    /// as the one being handled (0 if there is none): while it is handled
    /// it is in neither place otherwise.
    fn rx_dequeue(&self) -> Option<SkBuff> {
        let queue = self.rx_queue.get();
        // An empty queue costs no lock: each burst ends on one, twice. A
        // packet queued meanwhile by another CPU is found by `rx_release`,
        // under the lock, which has the receive work woken for it.
        // SAFETY: The queue was initialised with the device; its length is
        // read without its lock, as a hint.
        if unsafe { queue_len(queue) } == 0 {
            self.rx_handling.store(0, Ordering::Relaxed);
            return None;
        }
        // SAFETY: The queue was initialised with the device.
        unsafe {
            let flags = bindings::rroce_skb_queue_lock(queue);
            let skb = bindings::rroce___skb_dequeue(queue);
            let stamp = if skb.is_null() {
                0
            } else {
                (*rx_cb(skb)).stamp
            };
            self.rx_handling.store(stamp, Ordering::Relaxed);
            bindings::rroce_skb_queue_unlock(queue, flags);
            // Dequeued, so ours.
            SkBuff::from_raw(skb)
        }
    }

    /// The stamp of the packet being handled, else of the oldest waiting,
    /// else `now`: every packet that arrived before it has been handled.
    fn rx_oldest(&self, now: usize) -> usize {
        let queue = self.rx_queue.get();
        // SAFETY: As in `rx_dequeue`; a queued skb stays valid while the
        // lock is held.
        unsafe {
            let flags = bindings::rroce_skb_queue_lock(queue);
            let handling = self.rx_handling.load(Ordering::Relaxed);
            let oldest = bindings::rroce_skb_peek(queue);
            let stamp = if handling != 0 {
                handling
            } else if !oldest.is_null() {
                (*rx_cb(oldest)).stamp
            } else {
                now
            };
            bindings::rroce_skb_queue_unlock(queue, flags);
            stamp
        }
    }
}

impl<T: Driver> Device<T> {
    pub(super) fn container(&self) -> &Container<T> {
        // SAFETY: By the type invariant the device sits at offset 0 of a
        // live, initialised `Container<T>` (`repr(C)`).
        unsafe { &*self.as_raw().cast::<Container<T>>() }
    }

    /// The driver's data.
    pub(crate) fn data(&self) -> &T {
        &self.container().data
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
        if self.backlog_full(T::RX_BACKLOG) {
            return;
        }
        self.container().rx_enqueue(skb, false);
        self.wake_rx();
    }

    /// Queues a packet for this device's receive work: one of its own, sent
    /// to itself. Its senders bound these (a window, a burst a run), but
    /// many QPs at once could still pile them up while the device's work
    /// holds them back: past [`LOCAL_BACKLOG`] times the backlog of the
    /// wire's, it is dropped and counted as one from the wire is.
    pub(crate) fn deliver_local(&self, skb: SkBuff) {
        if self.backlog_full(LOCAL_BACKLOG * T::RX_BACKLOG) {
            return;
        }
        if !self.container().rx_enqueue(skb, true) {
            self.wake_rx();
        }
    }

    /// Whether the receive queue holds `limit` packets or more: then the
    /// caller drops the packet that would join them (on return, with its
    /// last reference), and this counts it.
    fn backlog_full(&self, limit: u32) -> bool {
        // SAFETY: The queue was initialised with the device; its length is
        // read without its lock, as a hint.
        let full = unsafe { queue_len(self.container().rx_queue.get()) } >= limit;
        if full {
            T::rx_dropped(self);
        }
        full
    }

    /// Builds a packet for [`Device::deliver_local`], as [`SkBuff::build`]
    /// does, in the buffer of one this device has handled, if one is
    /// kept; else in a new one with room for `room` bytes, to be kept in
    /// turn. A packet to itself then costs no allocation.
    pub(crate) fn build_local<E: From<Error>>(
        &self,
        len: usize,
        room: usize,
        fill: impl FnOnce(&mut Fill<'_>) -> Result<(), E>,
    ) -> Result<SkBuff, E> {
        let c = self.container();
        let (queue, spare) = (c.rx_queue.get(), c.rx_spare.get());
        // SAFETY: The queues were initialised with the device. The spares'
        // length is read without a lock, as a hint; they are taken under
        // the receive queue's, and what that gives is ours. Only
        // `keep_spare` keeps them: packets as `build_in` asks.
        let kept = unsafe {
            if queue_len(spare) > 0 {
                let flags = bindings::rroce_skb_queue_lock(queue);
                let skb = bindings::rroce___skb_dequeue(spare);
                bindings::rroce_skb_queue_unlock(queue, flags);
                SkBuff::from_raw(skb)
            } else {
                None
            }
        };
        SkBuff::build_in(kept, len, room, fill)
    }

    /// Until the returned guard goes, the packets this device sends to
    /// itself wait without waking the receive work. As it goes, if they are
    /// few ([`Driver::RX_INLINE`]) and the receive work is not at it, the guard
    /// hands them to [`Driver::receive`] itself, with up to
    /// [`Driver::RX_BUDGET`] more: the answers they draw. A small doorbell
    /// whose packets stay on the device then costs no switch of context. So
    /// only take it in process context, holding no lock that
    /// [`Driver::receive`] may take.
    pub(crate) fn plug_local_rx(&self) -> LocalRxPlug<'_, T> {
        self.container().rx_plug(1);
        LocalRxPlug(self)
    }

    /// Queues the receive work on the high-priority workers, unless it is
    /// already queued.
    fn wake_rx(&self) {
        self.queue_rx(true);
    }

    fn queue_rx(&self, urgent: bool) {
        let c = self.container();
        c.queue_work(&c.rx_work, urgent);
    }

    /// The receive clock, in jiffies: the time up to which every packet
    /// received has been through [`Driver::receive`]. It is now, unless one
    /// is being handled or waits in the backlog; then it is when the oldest
    /// of those arrived. Timers that wait for a peer read it, so that an
    /// answer queued behind other packets is not taken for silence.
    pub(crate) fn rx_clock(&self) -> u64 {
        self.container().rx_oldest(now()) as u64
    }

    /// Has [`Driver::kicked`] run soon, unless it is already due. If
    /// `urgent`, on the high-priority workers, as the receive work, unless
    /// it has been due for [`Driver::RX_URGENT_USECS`] on end; else, or
    /// then, on the ordinary ones. Callable in any context.
    pub(crate) fn kick(&self, urgent: bool) {
        let c = self.container();
        let urgent = urgent && c.kick_still_urgent();
        c.queue_work(&c.kick_work, urgent);
    }

    /// Fires [`Driver::tick`] now. Callable in any context.
    pub(crate) fn tick_now(&self) {
        // SAFETY: As in `arm_tick`.
        unsafe { bindings::rroce_mod_delayed_work(self.container().tick.get(), 0) };
    }

    /// Fires [`Driver::tick`] in `usecs` microseconds, or sooner if it is
    /// already due sooner.
    pub(crate) fn arm_tick(&self, usecs: u32) {
        let c = self.container();
        let delay = usecs_to_jiffies(usecs) as usize;
        let due = now().wrapping_add(delay);
        // Each doorbell of a busy QP arms the timer: most find it armed.
        let armed = c.tick_due.load(Ordering::Relaxed);
        if armed != 0 && due.wrapping_sub(armed) as isize >= 0 {
            return;
        }
        // Recorded before it is armed: recorded after, it could outlive a
        // tick that fired in between, and keep every later arm from arming.
        c.tick_due.store(due, Ordering::Relaxed);
        // SAFETY: The timer was initialised with the device and is cancelled
        // before it is freed.
        unsafe { bindings::rroce_arm_delayed_work(c.tick.get(), delay) };
    }

    /// The device of driver `T` bound to `netdev`, if any.
    pub(crate) fn get_by_netdev(netdev: &NetDevice) -> Option<DeviceRef<T>> {
        let held = Held::by_netdev(netdev, T::DRIVER_ID)?;
        // Another driver may use the same driver id (the C rxe does): only
        // the devices that carry `T`'s ops head a `Container<T>`.
        // SAFETY: `held` keeps the device alive.
        if !unsafe { Container::<T>::owns(held.as_raw()) } {
            return None;
        }
        // SAFETY: Ours, so it heads a `Container<T>`.
        Some(unsafe { held.into_device() })
    }

    /// Whether any device of driver id `T::DRIVER_ID` is bound to `netdev`,
    /// ours or another driver's.
    pub(crate) fn exists_on(netdev: &NetDevice) -> bool {
        Held::by_netdev(netdev, T::DRIVER_ID).is_some()
    }
}

/// Holds the receive work back from a device's packets to itself; see
/// [`Device::plug_local_rx`].
pub(crate) struct LocalRxPlug<'a, T: Driver>(&'a Device<T>);

impl<T: Driver> LocalRxPlug<'_, T> {
    /// Lets the plug go, handing the packets that wait to
    /// [`Driver::receive`] itself if they are at most `most`, rather than
    /// [`Driver::RX_INLINE`].
    pub(crate) fn hand_over_up_to(self, most: u32) {
        ManuallyDrop::new(self).release(most);
    }

    fn release(&self, most: u32) {
        let c = self.0.container();
        // The plug is held while the packets are handled, so that the
        // answers to them do not wake the receive work either. Beyond the
        // packets claimed, as many as a burst of the receive work: the
        // answers they draw. A READ of 64 packets is then answered and
        // completed here, not its last packet left to the receive work,
        // whose wake-up hands the CPU to another process first.
        let waiting = if c.rx_claim(most) {
            c.rx_handle(self.0, most as usize + T::RX_BUDGET);
            c.rx_release(-1)
        } else {
            c.rx_plug(-1)
        };
        if waiting {
            self.0.wake_rx();
        }
    }
}

impl<T: Driver> Drop for LocalRxPlug<'_, T> {
    fn drop(&mut self) {
        self.release(T::RX_INLINE);
    }
}
