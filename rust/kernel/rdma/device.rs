// SPDX-License-Identifier: GPL-2.0

//! RDMA devices: allocation, registration, and the verbs callbacks.
//!
//! A driver implements [`Driver`] for its per-device data. [`Registry::add`]
//! allocates an `ib_device` with that data right behind it (one allocation,
//! as `ib_alloc_device` does for C drivers), fills in the ops table from the
//! trait, and registers it. From then on ib_core owns the device: it is
//! removed by `rdma link delete`, by [`Device::unregister_queued`], or when
//! the [`Registry`] is torn down at module unload, and in each case ib_core
//! calls `dealloc_driver`, where the data is dropped.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::{
    kverbs,
    object::Object,
    qp::write_cap,
    srq::{RawSrq, SrqAttr, SrqMask, SrqNotifier},
    stats::{self, StatDescs},
    work::{QpHandle, RecvWqe, SendWqe},
    Access, Av, DeviceAttr, LinkLayer, MwType, PortAttr, PortEvent, PortImmutable, QpAttr, QpCaps,
    QpChange, QpInit, UData,
};
use crate::{
    bindings,
    kernel_ext::net::{NetDevice, NetDeviceRef, SkBuff},
    proto::cqe::KERNEL_WC_SIZE,
};
use core::{marker::PhantomData, mem::offset_of, ptr::addr_of_mut};
use kernel::{
    error::{from_result, to_result},
    ffi, new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
    types::Opaque,
};

/// The callbacks of an RDMA device whose per-device data is `Self`.
#[vtable]
pub(crate) trait Driver: Sized + Send + Sync + 'static {
    /// Per-user-context data.
    type UContext: Send + Sync;
    /// Per-protection-domain data.
    type Pd: Send + Sync;
    /// State all devices of the driver share, e.g. their sockets.
    type Shared: Send + Sync;
    /// Per-completion-queue data.
    type Cq: Send + Sync;
    /// Per-memory-region data.
    type Mr: Send + Sync;
    /// Per-memory-window data.
    type Mw: Send + Sync;
    /// Per-queue-pair data.
    type Qp: Send + Sync;
    /// Per-address-handle data.
    type Ah: Send + Sync;
    /// Per-shared-receive-queue data.
    type Srq: Send + Sync;

    /// `enum rdma_driver_id` reported to userspace; rdma-core picks its
    /// provider library by it.
    const DRIVER_ID: u32;
    /// The uverbs ABI version of that provider.
    const UVERBS_ABI_VERSION: u32;
    /// uverbs commands to enable beyond those ib_core infers from the ops.
    const UVERBS_CMD_MASK: u64 = 0;
    /// The link layer of every port.
    const LINK_LAYER: LinkLayer;
    /// The names of the port counters [`Driver::counters`] reports.
    const COUNTER_NAMES: &'static [&'static CStr] = &[];
    /// The most received packets a device holds for [`Driver::receive`];
    /// more are dropped, so that a flood costs bounded memory.
    const RX_BACKLOG: u32 = 4096;

    /// Device attributes and limits (`query_device`).
    fn query_device(dev: &Device<Self>, udata: &UData<'_>) -> Result<DeviceAttr>;
    /// Port attributes (`query_port`); active speed and width are filled in
    /// from the netdev by ib_core's `ib_get_eth_speed` on Ethernet ports.
    fn query_port(dev: &Device<Self>, port: u32) -> Result<PortAttr>;
    /// The P_Key at `index` of `port`.
    fn query_pkey(dev: &Device<Self>, port: u32, index: u16) -> Result<u16>;
    /// What never changes about `port` (`get_port_immutable`).
    fn port_immutable(dev: &Device<Self>, port: u32) -> Result<PortImmutable>;
    /// A new user context (one per open of the uverbs device).
    fn alloc_ucontext(dev: &Device<Self>, udata: &UData<'_>) -> Result<Self::UContext>;
    /// A new protection domain.
    fn alloc_pd(dev: &Device<Self>, udata: &UData<'_>) -> Result<Self::Pd>;
    /// A new completion queue, for userspace (`user`) or for the kernel;
    /// also returns how many completions it actually holds (`ib_cq.cqe`).
    fn create_cq(
        dev: &Device<Self>,
        attr: &CqAttr,
        notifier: Arc<CqNotifier>,
        user: Option<(&UserContext, &UData<'_>)>,
    ) -> Result<(Self::Cq, u32)>;
    /// Gives a user CQ room for at least `cqe` completions, keeping those it
    /// holds; returns how many it holds now.
    fn resize_cq(cq: &Self::Cq, cqe: u32, uctx: &UserContext, udata: &UData<'_>) -> Result<u32>;
    /// Arms the CQ to signal its next completion (`solicited_only`: only
    /// the next solicited one); returns whether completions are waiting.
    fn req_notify_cq(cq: &Self::Cq, solicited_only: bool) -> Result<bool>;
    /// A kernel CQ's completions, into `out`, as kernel ring elements;
    /// returns how many. Callable in any context.
    fn poll_cq(cq: &Self::Cq, out: &mut [[u8; KERNEL_WC_SIZE as usize]]) -> usize;
    /// Registers user memory; returns the MR's data and its keys.
    fn reg_user_mr(
        dev: &Device<Self>,
        pd: &Self::Pd,
        region: &UserRegion,
    ) -> Result<(Self::Mr, MrKeys)>;
    /// An MR for kernel consumers that covers all kernel memory, with local
    /// rights `access` (ib_core requires the op of a kernel verbs provider).
    fn get_dma_mr(dev: &Device<Self>, pd: &Self::Pd, access: Access) -> Result<(Self::Mr, MrKeys)>;
    /// Changes an MR's PD (`pd`) or access rights (`access`) in place.
    fn rereg_user_mr(
        dev: &Device<Self>,
        mr: &Self::Mr,
        pd: Option<&Self::Pd>,
        access: Option<Access>,
    ) -> Result;
    /// Withdraws an MR's keys; its data is dropped on success. An error
    /// (memory windows still bound) leaves the MR registered.
    fn dereg_mr(dev: &Device<Self>, mr: &Self::Mr) -> Result;
    /// A new memory window of `mw_type` in PD `pd`; returns its data and
    /// its first rkey.
    fn alloc_mw(dev: &Device<Self>, pd: &Self::Pd, mw_type: MwType) -> Result<(Self::Mw, u32)>;
    /// Deallocates a memory window; its data is handed back to be dropped.
    fn dealloc_mw(dev: &Device<Self>, mw: Self::Mw);
    /// A new queue pair; `init.caps` is updated to what it really holds.
    /// Returns its data and QP number.
    fn create_qp(
        dev: &Device<Self>,
        pd: &Self::Pd,
        init: &mut QpInit,
        cqs: QpCqs<'_, Self>,
        user: Option<(&UserContext, &UData<'_>)>,
    ) -> Result<(Self::Qp, u32)>;
    /// Destroys a queue pair; its data is handed back to be dropped.
    fn destroy_qp(dev: &Device<Self>, qp: Self::Qp);
    /// Changes a QP's state and attributes.
    fn modify_qp(dev: &Device<Self>, qp: &Self::Qp, change: &QpChange) -> Result;
    /// A QP's attributes and capacities.
    fn query_qp(dev: &Device<Self>, qp: &Self::Qp) -> Result<(QpAttr, QpCaps)>;
    /// A new shared receive queue for the process `user`; returns its data
    /// and what it really holds.
    fn create_srq(
        dev: &Device<Self>,
        pd: &Self::Pd,
        attr: &SrqAttr,
        notifier: Arc<SrqNotifier>,
        user: Option<(&UserContext, &UData<'_>)>,
    ) -> Result<(Self::Srq, SrqAttr)>;
    /// Changes what `mask` names of an SRQ.
    fn modify_srq(dev: &Device<Self>, srq: &Self::Srq, attr: &SrqAttr, mask: SrqMask) -> Result;
    /// An SRQ's attributes.
    fn query_srq(dev: &Device<Self>, srq: &Self::Srq) -> Result<SrqAttr>;
    /// Destroys an SRQ; its data is handed back to be dropped.
    fn destroy_srq(dev: &Device<Self>, srq: Self::Srq);
    /// A new address handle for userspace, whose response `udata` carries.
    fn create_user_ah(
        dev: &Device<Self>,
        pd: &Self::Pd,
        av: &Av,
        udata: &UData<'_>,
    ) -> Result<Self::Ah>;
    /// Destroys an address handle; its data is handed back to be dropped.
    fn destroy_ah(dev: &Device<Self>, ah: Self::Ah);
    /// Posts a kernel consumer's send work request. Callable in any context.
    fn post_kernel_send(dev: &Device<Self>, qp: &Self::Qp, wqe: SendWqe) -> Result;
    /// Posts a kernel consumer's receive work request. Callable in any
    /// context.
    fn post_kernel_recv(dev: &Device<Self>, qp: &Self::Qp, wqe: RecvWqe) -> Result;
    /// Runs a user QP's send queue: the rxe provider's doorbell, a
    /// POST_SEND command without work requests.
    fn post_send(dev: &Device<Self>, qp: &Self::Qp) -> Result;
    /// The values of the counters named by [`Driver::COUNTER_NAMES`].
    fn counters(dev: &Device<Self>, values: &mut [u64]);
    /// Handles a RoCEv2 packet for the device, from a work item; `skb`
    /// is linear and its data starts at the UDP header.
    fn receive(dev: &Device<Self>, skb: SkBuff);
    /// A received packet was dropped because [`Driver::RX_BACKLOG`] were
    /// waiting. Called in softirq context.
    fn rx_dropped(_dev: &Device<Self>) {}
    /// The device is being removed; its users' rings are still mapped, and
    /// uverbs takes them away when this returns.
    fn removing(_dev: &Device<Self>) {}
    /// The device's timer, armed by [`Device::arm_tick`], fired.
    fn tick(dev: &Device<Self>);
}

/// The completion queues of a new QP.
pub(crate) struct QpCqs<'a, T: Driver> {
    /// Where send completions go.
    pub(crate) send: &'a T::Cq,
    /// Where receive completions go.
    pub(crate) recv: &'a T::Cq,
    /// Where receive requests come from, if not from the QP's own queue.
    pub(crate) srq: Option<&'a T::Srq>,
    /// The QP's `ib_qp`, for kernel CQs' completions.
    pub(crate) handle: QpHandle,
}

/// Signals a CQ's completion event (its `comp_handler`, e.g. to a
/// completion channel) for as long as the CQ exists.
///
/// # Invariants
///
/// `cq` is the CQ's `ib_cq` until the CQ is destroyed, and null after.
#[pin_data]
pub(crate) struct CqNotifier {
    #[pin]
    cq: Mutex<RawCq>,
}

struct RawCq(*mut bindings::ib_cq);

// SAFETY: The pointer is only used under the mutex, while the CQ lives.
unsafe impl Send for RawCq {}

impl CqNotifier {
    /// Calls the CQ's completion handler, unless the CQ is gone.
    pub(crate) fn notify(&self) {
        let cq = self.cq.lock();
        if !cq.0.is_null() {
            // SAFETY: Not null, so the CQ is alive by the type invariant,
            // and cannot be destroyed while we hold the lock.
            unsafe { bindings::rroce_cq_comp_handler(cq.0) };
        }
    }
}

/// A CQ's data behind its `ib_cq`: the driver's, and the notifier.
struct CqSlot<T: Driver> {
    notifier: Arc<CqNotifier>,
    data: T::Cq,
}

/// The user memory a `reg_user_mr` asks for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UserRegion {
    /// The start of the memory in the calling process.
    pub(crate) start: u64,
    /// Its length in bytes.
    pub(crate) length: u64,
    /// The access rights asked for.
    pub(crate) access: Access,
    /// The address work requests and peers will use for `start`.
    pub(crate) iova: u64,
}

/// The keys of a memory region, as work requests (`lkey`) and peers
/// (`rkey`) name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MrKeys {
    /// The local key.
    pub(crate) lkey: u32,
    /// The remote key.
    pub(crate) rkey: u32,
}

/// What a CQ is created with.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CqAttr {
    /// The number of completions asked for.
    pub(crate) cqe: u32,
    /// `IB_UVERBS_CQ_FLAGS_*`.
    pub(crate) flags: u32,
}

/// The user context a uverbs command runs in (`struct ib_ucontext`).
///
/// # Invariants
///
/// Wraps a live `ib_ucontext` for the duration of the borrow.
#[repr(transparent)]
pub(crate) struct UserContext(Opaque<bindings::ib_ucontext>);

impl UserContext {
    /// The C pointer, for the abstractions that pass it on.
    pub(crate) fn as_raw(&self) -> *mut bindings::ib_ucontext {
        self.0.get()
    }
}

/// An `ib_device` of driver `T`, followed by its data.
#[repr(C)]
struct Container<T: Driver> {
    ib: Opaque<bindings::ib_device>,
    registry: Arc<Registry<T>>,
    /// Received packets waiting for `rx_work`, each stamped with the
    /// jiffies it arrived at.
    rx_queue: Opaque<bindings::sk_buff_head>,
    /// The stamp of the packet `rx_work` is handling, 0 between packets;
    /// under `rx_queue`'s lock.
    rx_handling: Opaque<usize>,
    rx_work: Opaque<bindings::work_struct>,
    /// The device's timer.
    tick: Opaque<bindings::delayed_work>,
    data: T,
}

/// How many packets the receive work handles before it yields the CPU.
const RX_BUDGET: usize = 64;

/// A registered RDMA device of driver `T`.
///
/// # Invariants
///
/// Wraps the `ib_device` at the start of a `Container<T>` whose `registry`
/// and `data` are initialised; a `&Device<T>` is only handed out while
/// ib_core guarantees the device is not deallocated (during a callback, or
/// while a reference from `ib_device_get_by_netdev` is held).
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

    fn container(&self) -> &Container<T> {
        // SAFETY: By the type invariant the device sits at offset 0 of a
        // live, initialised `Container<T>` (`repr(C)`).
        unsafe { &*self.as_raw().cast::<Container<T>>() }
    }

    /// The driver's data.
    pub(crate) fn data(&self) -> &T {
        &self.container().data
    }

    /// The netdev of `port`, if it is still associated.
    pub(crate) fn netdev(&self, port: u32) -> Option<NetDeviceRef> {
        // SAFETY: The device is alive by the type invariant; the core returns
        // a held reference (or null), which `from_held` takes over.
        unsafe { NetDeviceRef::from_held(bindings::ib_device_get_netdev(self.as_raw(), port)) }
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
        // SAFETY: The skb's device is alive while we own the skb; a returned
        // device is held until the put.
        let ib = unsafe { bindings::ib_device_get_by_netdev(skb.dev_raw(), T::DRIVER_ID) };
        if ib.is_null() {
            return;
        }
        // Another driver may use the same driver id (the C rxe does): only
        // the devices this module registered carry a `Container<T>`, and a
        // module has at most one `Driver` type.
        // SAFETY: `ib` is held, so its ops can be read.
        if unsafe { (*ib).ops.owner } == crate::THIS_MODULE.as_ptr().cast() {
            // SAFETY: Ours and held, so it heads a live `Container<T>`.
            unsafe { Self::from_raw(ib) }.deliver_bounded(skb);
        }
        // SAFETY: Releases the reference taken above.
        unsafe { bindings::ib_device_put(ib) };
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

    /// Whether any device of driver id `T::DRIVER_ID` is bound to `netdev`,
    /// ours or another driver's.
    pub(crate) fn exists_on(netdev: &NetDevice) -> bool {
        // SAFETY: `netdev` is alive; a returned device comes with a reference
        // that is put right away.
        unsafe {
            let ib = bindings::ib_device_get_by_netdev(netdev.as_raw(), T::DRIVER_ID);
            if ib.is_null() {
                return false;
            }
            bindings::ib_device_put(ib);
        }
        true
    }

    /// Runs `f` on the device of driver `T` in `module` bound to `netdev`,
    /// if any. A module has at most one `Driver` type.
    pub(crate) fn with_netdev<R>(
        module: &'static ThisModule,
        netdev: &NetDevice,
        f: impl FnOnce(&Self) -> R,
    ) -> Option<R> {
        // SAFETY: `netdev` is alive; a returned device is held until the put.
        let ib = unsafe { bindings::ib_device_get_by_netdev(netdev.as_raw(), T::DRIVER_ID) };
        if ib.is_null() {
            return None;
        }
        // Another driver may use the same driver id (the C rxe does): only
        // the devices `module` registered carry a `Container<T>`.
        // SAFETY: `ib` is held, so its ops can be read.
        let ours = unsafe { (*ib).ops.owner } == module.as_ptr().cast();
        // SAFETY: If ours, `ib` heads a live `Container<T>` while held.
        let result = ours.then(|| f(unsafe { Self::from_raw(ib) }));
        // SAFETY: Releases the reference taken above.
        unsafe { bindings::ib_device_put(ib) };
        result
    }
}

/// What a new device is told about itself besides its data.
pub(crate) struct DeviceParams<'a> {
    /// The device name, e.g. `rroce0`.
    pub(crate) name: &'a CStr,
    /// The netdev of port 1.
    pub(crate) netdev: &'a NetDevice,
    /// `node_desc`, shown by `ibv_devinfo -v`.
    pub(crate) node_desc: &'a CStr,
    /// The node GUID, big-endian.
    pub(crate) node_guid: [u8; 8],
}

/// A `*mut ib_device` kept in a [`Registry`].
struct RawDevice(*mut bindings::ib_device);
// SAFETY: The pointer is only dereferenced under the rules of `Registry`.
unsafe impl Send for RawDevice {}

/// The devices of driver `T`, so that unloading the driver removes them all.
///
/// A device is listed from just before its registration until its
/// `dealloc_driver`, which delists it under the same lock; so a device found
/// in the list under the lock is still allocated.
#[pin_data]
pub(crate) struct Registry<T: Driver> {
    #[pin]
    devices: Mutex<KVec<RawDevice>>,
    #[pin]
    shared: T::Shared,
    module: &'static ThisModule,
    stat_descs: StatDescs,
}

impl<T: Driver> Registry<T> {
    /// An empty registry for the devices of `module`.
    pub(crate) fn new(
        module: &'static ThisModule,
        shared: impl PinInit<T::Shared, Error>,
    ) -> Result<Arc<Self>> {
        Arc::pin_init(
            try_pin_init!(Self {
                devices <- new_mutex!(KVec::new()),
                shared <- shared,
                module,
                stat_descs: StatDescs::new(T::COUNTER_NAMES)?,
            }),
            GFP_KERNEL,
        )
    }

    /// The state all devices share.
    pub(crate) fn shared(&self) -> &T::Shared {
        &self.shared
    }

    /// Creates and registers a device with data `init`.
    pub(crate) fn add(
        self: &Arc<Self>,
        params: &DeviceParams<'_>,
        init: impl PinInit<T, Error>,
    ) -> Result {
        let size = core::mem::size_of::<Container<T>>();
        const { assert!(core::mem::align_of::<Container<T>>() <= 8) };
        // SAFETY: Allocates a zeroed `ib_device` at the start of `size` bytes.
        let ib = unsafe { bindings::_ib_alloc_device(size) };
        if ib.is_null() {
            return Err(ENOMEM);
        }
        let container = ib.cast::<Container<T>>();
        // SAFETY: The fields lie inside the allocation; the work items'
        // functions find the container from them.
        unsafe {
            bindings::rroce_skb_queue_head_init((*container).rx_queue.get());
            bindings::rroce_init_work((*container).rx_work.get(), Some(Adapter::<T>::rx_work));
            bindings::rroce_init_delayed_work((*container).tick.get(), Some(Adapter::<T>::tick));
        }
        // SAFETY: `data` lies inside the allocation and is uninitialised.
        if let Err(e) = unsafe { init.__pinned_init(addr_of_mut!((*container).data)) } {
            // SAFETY: No ops are set yet, so this frees without calling back.
            unsafe { bindings::ib_dealloc_device(ib) };
            return Err(e);
        }
        // SAFETY: `registry` lies inside the allocation and is uninitialised.
        unsafe { addr_of_mut!((*container).registry).write(self.clone()) };

        // From here on, `ib_dealloc_device` runs `dealloc_driver`, which
        // drops `registry` and `data` and delists the device.
        // SAFETY: `ib` is a valid, unregistered device that we own.
        unsafe {
            let mut ops = Adapter::<T>::OPS;
            ops.owner = self.module.as_ptr().cast();
            bindings::ib_set_device_ops(ib, &ops);
            (*ib).node_type = bindings::RDMA_NODE_IB_CA as _;
            (*ib).phys_port_cnt = 1;
            (*ib).num_comp_vectors = 1;
            (*ib).local_dma_lkey = 0;
            (*ib).node_guid = u64::from_ne_bytes(params.node_guid);
            (*ib).uverbs_cmd_mask |= T::UVERBS_CMD_MASK;
            let desc = params.node_desc.as_bytes();
            let n = desc.len().min((*ib).node_desc.len() - 1);
            for (dst, src) in (*ib).node_desc.iter_mut().zip(&desc[..n]) {
                *dst = *src as ffi::c_char;
            }
        }
        self.devices
            .lock()
            .push(RawDevice(ib), GFP_KERNEL)
            .inspect_err(|_| {
                // SAFETY: Not registered; `dealloc_driver` drops the data.
                unsafe { bindings::ib_dealloc_device(ib) };
            })?;

        // SAFETY: `ib` is valid and `netdev` is alive; on failure nothing
        // has been registered, so the device is ours to free.
        let err = unsafe {
            let mut err = bindings::ib_device_set_netdev(ib, params.netdev.as_raw(), 1);
            if err == 0 {
                err = bindings::ib_register_device(
                    ib,
                    params.name.as_char_ptr(),
                    core::ptr::null_mut(),
                );
            }
            if err != 0 {
                bindings::ib_dealloc_device(ib);
            }
            err
        };
        to_result(err)
    }

    /// Unregisters every device, waiting for each to be gone.
    pub(crate) fn remove_all(&self) {
        loop {
            let ib = {
                let devices = self.devices.lock();
                let Some(dev) = devices.first() else { break };
                // Keep the memory alive past the lock: `dealloc_driver` may
                // run concurrently (e.g. from a queued unregistration).
                // SAFETY: Listed under the lock, so still allocated.
                unsafe { bindings::get_device(addr_of_mut!((*dev.0).__bindgen_anon_1.dev)) };
                dev.0
            };
            // SAFETY: We hold a reference on `ib`. Unregistering an already
            // unregistered device is a no-op; either way it is delisted
            // once its `dealloc_driver` has run, which this waits for.
            unsafe {
                bindings::ib_unregister_device(ib);
                bindings::put_device(addr_of_mut!((*ib).__bindgen_anon_1.dev));
            }
        }
    }

    fn delist(&self, ib: *mut bindings::ib_device) {
        let mut devices = self.devices.lock();
        if let Some(i) = devices.iter().position(|d| d.0 == ib) {
            let last = devices.len() - 1;
            devices.as_mut_slice().swap(i, last);
            // SAFETY: Shrinking by one forgets the last element, the device
            // just delisted; `RawDevice` has nothing to drop.
            unsafe { devices.set_len(last) };
        }
    }
}

/// The `ib_device_ops` trampolines of driver `T`.
pub(super) struct Adapter<T: Driver>(PhantomData<T>);

type UContextObject<T> = Object<bindings::ib_ucontext, <T as Driver>::UContext>;
type PdObject<T> = Object<bindings::ib_pd, <T as Driver>::Pd>;
type CqObject<T> = Object<bindings::ib_cq, CqSlot<T>>;
type MrObject<T> = Object<bindings::ib_mr, <T as Driver>::Mr>;
type MwObject<T> = Object<bindings::ib_mw, <T as Driver>::Mw>;
type QpObject<T> = Object<bindings::ib_qp, <T as Driver>::Qp>;
type AhObject<T> = Object<bindings::ib_ah, AhSlot<T>>;

/// An AH's data behind its `ib_ah`: its address vector, which kernel UD
/// work requests read, and for a user AH the driver's data.
struct AhSlot<T: Driver> {
    av: Av,
    data: Option<T::Ah>,
}
type SrqObject<T> = Object<bindings::ib_srq, SrqSlot<T>>;

/// An SRQ's data behind its `ib_srq`: the driver's, and the notifier.
struct SrqSlot<T: Driver> {
    notifier: Arc<SrqNotifier>,
    data: T::Srq,
}

impl<T: Driver> Adapter<T> {
    const OPS: bindings::ib_device_ops = bindings::ib_device_ops {
        driver_id: T::DRIVER_ID,
        uverbs_abi_ver: T::UVERBS_ABI_VERSION,
        dealloc_driver: Some(Self::dealloc_driver),
        query_device: Some(Self::query_device),
        query_port: Some(Self::query_port),
        query_pkey: Some(Self::query_pkey),
        get_port_immutable: Some(Self::get_port_immutable),
        get_link_layer: Some(Self::get_link_layer),
        alloc_ucontext: Some(Self::alloc_ucontext),
        dealloc_ucontext: Some(Self::dealloc_ucontext),
        disassociate_ucontext: Some(Self::disassociate_ucontext),
        alloc_pd: Some(Self::alloc_pd),
        dealloc_pd: Some(Self::dealloc_pd),
        create_cq: Some(Self::create_cq),
        destroy_cq: Some(Self::destroy_cq),
        req_notify_cq: Some(Self::req_notify_cq),
        resize_cq: Some(Self::resize_cq),
        rereg_user_mr: Some(Self::rereg_user_mr),
        get_dma_mr: Some(Self::get_dma_mr),
        reg_user_mr: Some(Self::reg_user_mr),
        dereg_mr: Some(Self::dereg_mr),
        alloc_mw: Some(Self::alloc_mw),
        dealloc_mw: Some(Self::dealloc_mw),
        create_qp: Some(Self::create_qp),
        destroy_qp: Some(Self::destroy_qp),
        modify_qp: Some(Self::modify_qp),
        query_qp: Some(Self::query_qp),
        post_send: Some(Self::post_send),
        create_user_ah: Some(Self::create_user_ah),
        create_ah: Some(Self::create_ah),
        post_recv: Some(Self::post_recv),
        poll_cq: Some(Self::poll_cq),
        alloc_hw_port_stats: if T::COUNTER_NAMES.is_empty() {
            None
        } else {
            Some(Self::alloc_hw_port_stats)
        },
        get_hw_stats: Some(Self::get_hw_stats),
        destroy_ah: Some(Self::destroy_ah),
        create_srq: Some(Self::create_srq),
        modify_srq: Some(Self::modify_srq),
        query_srq: Some(Self::query_srq),
        destroy_srq: Some(Self::destroy_srq),
        mmap: Some(super::mmap::mmap),
        mmap_free: Some(super::mmap::mmap_free),
        size_ib_ucontext: UContextObject::<T>::SIZE,
        size_ib_pd: PdObject::<T>::SIZE,
        size_ib_cq: CqObject::<T>::SIZE,
        size_ib_qp: QpObject::<T>::SIZE,
        size_ib_ah: AhObject::<T>::SIZE,
        size_ib_srq: SrqObject::<T>::SIZE,
        size_ib_mw: MwObject::<T>::SIZE,
        // SAFETY: All-zero is a valid `ib_device_ops`: no callbacks.
        ..unsafe { core::mem::zeroed() }
    };

    /// Whether `ib` is a device of driver `T`: only ours carry our ops.
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
    /// `ib` is a device of ours during one of its callbacks.
    unsafe fn device<'a>(ib: *mut bindings::ib_device) -> &'a Device<T> {
        // SAFETY: ib_core keeps the device alive during its callbacks, and
        // only our devices carry these ops.
        unsafe { Device::from_raw(ib) }
    }

    /// # Safety
    ///
    /// `work` is the `rx_work` of a live `Container<T>`.
    unsafe extern "C" fn rx_work(work: *mut bindings::work_struct) {
        // SAFETY: Guaranteed by the caller.
        let c = unsafe {
            &*work
                .byte_sub(offset_of!(Container<T>, rx_work))
                .cast::<Container<T>>()
        };
        // SAFETY: The device is alive while its work may run.
        let dev = unsafe { Device::<T>::from_raw(c.ib.get()) };
        for _ in 0..RX_BUDGET {
            // SAFETY: The queue is initialised; `rx_handling`, zeroed with
            // the device, is written under its lock.
            let skb = unsafe {
                bindings::rroce_skb_dequeue_stamped(c.rx_queue.get(), c.rx_handling.get())
            };
            // SAFETY: Dequeued, so ours.
            let Some(mut skb) = (unsafe { SkBuff::from_raw(skb) }) else {
                return;
            };
            if skb.linearize().is_ok() {
                T::receive(dev, skb);
            }
        }
        // More to do: yield, and come back.
        // SAFETY: As above.
        unsafe { bindings::rroce_queue_work(c.rx_work.get()) };
    }

    /// # Safety
    ///
    /// `work` is the work of the `tick` of a live `Container<T>`.
    unsafe extern "C" fn tick(work: *mut bindings::work_struct) {
        // `delayed_work` starts with its `work_struct`.
        let offset = offset_of!(Container<T>, tick) + offset_of!(bindings::delayed_work, work);
        // SAFETY: Guaranteed by the caller.
        let c = unsafe { &*work.byte_sub(offset).cast::<Container<T>>() };
        // SAFETY: The device is alive while its work may run.
        T::tick(unsafe { Device::<T>::from_raw(c.ib.get()) });
    }

    /// # Safety
    ///
    /// Called by `ib_dealloc_device`, once, for one of our devices.
    unsafe extern "C" fn dealloc_driver(ib: *mut bindings::ib_device) {
        let container = ib.cast::<Container<T>>();
        // SAFETY: Called once, from `ib_dealloc_device`, after which ib_core
        // never calls us for this device again: the data can be dropped.
        unsafe {
            // Unregistered: no packet is delivered any more. The timer may
            // rearm itself, which `cancel_delayed_work_sync` copes with.
            bindings::cancel_work_sync((*container).rx_work.get());
            bindings::cancel_delayed_work_sync((*container).tick.get());
            bindings::rroce_skb_queue_purge((*container).rx_queue.get());
            (*container).registry.delist(ib);
            core::ptr::drop_in_place(addr_of_mut!((*container).data));
            core::ptr::drop_in_place(addr_of_mut!((*container).registry));
        }
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for one of our devices.
    unsafe extern "C" fn query_device(
        ib: *mut bindings::ib_device,
        attr: *mut bindings::ib_device_attr,
        udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: A callback of ours with a valid (or null) udata.
            let (dev, udata) = unsafe { (Self::device(ib), UData::from_raw(udata)) };
            let a = T::query_device(dev, &udata)?;
            // SAFETY: `attr` is valid for writes during the callback.
            unsafe { a.write_to(&mut *attr) };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for one of our devices.
    unsafe extern "C" fn query_port(
        ib: *mut bindings::ib_device,
        port: u32,
        attr: *mut bindings::ib_port_attr,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: A callback of ours.
            let dev = unsafe { Self::device(ib) };
            let a = T::query_port(dev, port)?;
            // SAFETY: `attr` is valid for writes during the callback.
            let attr = unsafe { &mut *attr };
            a.write_to(attr);
            if matches!(T::LINK_LAYER, LinkLayer::Ethernet) {
                // Fails once the netdev is gone; a port without one has no
                // speed to report, and the driver has said it is down.
                // SAFETY: The device is ours and alive; the outputs are fields of `attr`.
                let _ = unsafe {
                    bindings::ib_get_eth_speed(
                        ib,
                        port,
                        &mut attr.active_speed,
                        &mut attr.active_width,
                    )
                };
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for one of our devices.
    unsafe extern "C" fn query_pkey(
        ib: *mut bindings::ib_device,
        port: u32,
        index: u16,
        pkey: *mut u16,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: A callback of ours; `pkey` is valid for writes.
            unsafe { *pkey = T::query_pkey(Self::device(ib), port, index)? };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for one of our devices.
    unsafe extern "C" fn get_port_immutable(
        ib: *mut bindings::ib_device,
        port: u32,
        imm: *mut bindings::ib_port_immutable,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: A callback of ours.
            let p = T::port_immutable(unsafe { Self::device(ib) }, port)?;
            // SAFETY: `imm` is valid for writes during the callback.
            unsafe { p.write_to(&mut *imm) };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for one of our devices.
    unsafe extern "C" fn get_link_layer(
        _ib: *mut bindings::ib_device,
        _port: u32,
    ) -> bindings::rdma_link_layer {
        T::LINK_LAYER as bindings::rdma_link_layer
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an object of our devices.
    unsafe extern "C" fn alloc_ucontext(
        uctx: *mut bindings::ib_ucontext,
        udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: ib_core passes a zeroed context of `size_ib_ucontext`
            // bytes whose `device` is ours, and a valid udata.
            unsafe {
                let data =
                    T::alloc_ucontext(Self::device((*uctx).device), &UData::from_raw(udata))?;
                UContextObject::<T>::write(uctx, data);
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an object of our devices.
    unsafe extern "C" fn dealloc_ucontext(uctx: *mut bindings::ib_ucontext) {
        // SAFETY: ib_core deallocates a context once, after a successful alloc.
        unsafe { UContextObject::<T>::drop_data(uctx) };
    }

    /// With this op, unregistering a device does not wait for its users to
    /// close it: uverbs sends them `IB_EVENT_DEVICE_FATAL` and cuts them off.
    /// ib_core itself revokes what was mapped through `rdma_user_mmap_*`, so
    /// there is nothing left for the driver to do.
    ///
    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an object of our devices.
    unsafe extern "C" fn disassociate_ucontext(_uctx: *mut bindings::ib_ucontext) {}

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an object of our devices.
    unsafe extern "C" fn alloc_pd(
        pd: *mut bindings::ib_pd,
        udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: As for `alloc_ucontext`, with `size_ib_pd`.
            unsafe {
                let data = T::alloc_pd(Self::device((*pd).device), &UData::from_raw(udata))?;
                PdObject::<T>::write(pd, data);
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an object of our devices.
    unsafe extern "C" fn dealloc_pd(
        pd: *mut bindings::ib_pd,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        // SAFETY: ib_core deallocates a PD once, after a successful alloc.
        unsafe { PdObject::<T>::drop_data(pd) };
        0
    }
}

impl<T: Driver> Adapter<T> {
    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an object of our devices.
    unsafe extern "C" fn create_cq(
        cq: *mut bindings::ib_cq,
        attr: *const bindings::ib_cq_init_attr,
        attrs: *mut bindings::uverbs_attr_bundle,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: ib_core passes a zeroed CQ of `size_ib_cq` bytes whose
            // `device` is ours, valid attributes, and for userspace callers
            // a bundle with the user context and the driver's udata.
            unsafe {
                let a = CqAttr {
                    cqe: (*attr).cqe,
                    flags: (*attr).flags,
                };
                let uctx = bindings::rroce_attrs_ucontext(attrs).cast::<UserContext>();
                let udata = UData::from_raw(bindings::rroce_attrs_udata(attrs));
                let user = uctx.as_ref().map(|u| (u, &udata));
                let notifier = Arc::pin_init(
                    pin_init!(CqNotifier {
                        cq <- new_mutex!(RawCq(cq)),
                    }),
                    GFP_KERNEL,
                )?;
                let dev = Self::device((*cq).device);
                let (data, cqe) = T::create_cq(dev, &a, notifier.clone(), user)?;
                (*cq).cqe = cqe.try_into().map_err(|_| EINVAL)?;
                CqObject::<T>::write(cq, CqSlot { notifier, data });
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an object of our devices.
    unsafe extern "C" fn destroy_cq(
        cq: *mut bindings::ib_cq,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        // SAFETY: ib_core destroys a CQ once, after a successful create.
        let slot = unsafe { CqObject::<T>::take(cq) };
        // INVARIANT: The CQ is about to be freed.
        slot.notifier.cq.lock().0 = core::ptr::null_mut();
        0
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an object of our devices.
    unsafe extern "C" fn req_notify_cq(
        cq: *mut bindings::ib_cq,
        flags: bindings::ib_cq_notify_flags,
    ) -> ffi::c_int {
        let solicited = flags & bindings::ib_cq_notify_flags_IB_CQ_SOLICITED_MASK
            == bindings::ib_cq_notify_flags_IB_CQ_SOLICITED;
        let report = flags & bindings::ib_cq_notify_flags_IB_CQ_REPORT_MISSED_EVENTS != 0;
        from_result(|| {
            // SAFETY: The CQ was created by us and is alive during the call.
            let waiting = T::req_notify_cq(&unsafe { CqObject::<T>::data(cq) }.data, solicited)?;
            Ok((report && waiting).into())
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for a CQ of ours.
    unsafe extern "C" fn resize_cq(
        cq: *mut bindings::ib_cq,
        cqe: ffi::c_int,
        udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            let cqe = u32::try_from(cqe).map_err(|_| EINVAL)?;
            // SAFETY: The CQ is ours and alive during the call; ib_core
            // serialises resizing with the CQ's other commands.
            unsafe {
                let uctx = bindings::rroce_udata_ucontext(udata).cast::<UserContext>();
                let uctx = uctx
                    .as_ref()
                    .ok_or_else(crate::kernel_ext::errno::eopnotsupp)?;
                let udata = UData::from_raw(udata);
                let now = T::resize_cq(&CqObject::<T>::data(cq).data, cqe, uctx, &udata)?;
                (*cq).cqe = now.try_into().map_err(|_| EINVAL)?;
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an MR of ours.
    unsafe extern "C" fn rereg_user_mr(
        mr: *mut bindings::ib_mr,
        flags: ffi::c_int,
        _start: u64,
        _length: u64,
        _virt_addr: u64,
        access: ffi::c_int,
        pd: *mut bindings::ib_pd,
        _udata: *mut bindings::ib_udata,
    ) -> *mut bindings::ib_mr {
        let flags = flags as u32;
        let result = if flags & bindings::ib_mr_rereg_flags_IB_MR_REREG_TRANS != 0 {
            Err(crate::kernel_ext::errno::eopnotsupp())
        } else {
            // SAFETY: The MR is ours and alive during the call; with
            // `IB_MR_REREG_PD`, `pd` is a live PD of this device.
            unsafe {
                let new_pd = (flags & bindings::ib_mr_rereg_flags_IB_MR_REREG_PD != 0)
                    .then(|| PdObject::<T>::data(pd));
                let new_access = (flags & bindings::ib_mr_rereg_flags_IB_MR_REREG_ACCESS != 0)
                    .then(|| Access::from_bits(access as u32));
                T::rereg_user_mr(
                    Self::device((*mr).device),
                    MrObject::<T>::data(mr),
                    new_pd,
                    new_access,
                )
            }
        };
        match result {
            // Changed in place: ib_core keeps the MR and updates its PD.
            Ok(()) => core::ptr::null_mut(),
            Err(e) => e.to_ptr(),
        }
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for a PD of our devices.
    unsafe extern "C" fn reg_user_mr(
        pd: *mut bindings::ib_pd,
        start: u64,
        length: u64,
        iova: u64,
        access: ffi::c_int,
        _udata: *mut bindings::ib_udata,
    ) -> *mut bindings::ib_mr {
        let region = UserRegion {
            start,
            length,
            access: Access::from_bits(access as u32),
            iova,
        };
        // SAFETY: The PD is ours, alive, with initialised data, during the call.
        let (dev, pd_data) = unsafe { (Self::device((*pd).device), PdObject::<T>::data(pd)) };
        let mr = T::reg_user_mr(dev, pd_data, &region).and_then(|(data, keys)| {
            let mr = MrObject::<T>::new_boxed(data)?;
            // SAFETY: Just allocated; ib_core fills in the rest on return.
            unsafe {
                (*mr).lkey = keys.lkey;
                (*mr).rkey = keys.rkey;
                (*mr).iova = iova;
                (*mr).length = length;
            }
            Ok(mr)
        });
        match mr {
            Ok(mr) => mr,
            Err(e) => e.to_ptr(),
        }
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for a PD of our devices.
    unsafe extern "C" fn get_dma_mr(
        pd: *mut bindings::ib_pd,
        access: ffi::c_int,
    ) -> *mut bindings::ib_mr {
        // SAFETY: The PD is ours, alive, with initialised data, during the call.
        let (dev, pd_data) = unsafe { (Self::device((*pd).device), PdObject::<T>::data(pd)) };
        let mr = T::get_dma_mr(dev, pd_data, Access::from_bits(access as u32)).and_then(
            |(data, keys)| {
                let mr = MrObject::<T>::new_boxed(data)?;
                // SAFETY: Just allocated; ib_core fills in the rest on return.
                unsafe {
                    (*mr).lkey = keys.lkey;
                    (*mr).rkey = keys.rkey;
                }
                Ok(mr)
            },
        );
        match mr {
            Ok(mr) => mr,
            Err(e) => e.to_ptr(),
        }
    }

    /// # Safety
    ///
    /// Called by ib_core, once, for an MR `reg_user_mr` returned.
    unsafe extern "C" fn dereg_mr(
        mr: *mut bindings::ib_mr,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: The MR came from `new_boxed`; once its keys are
            // withdrawn ib_core is done with it.
            unsafe {
                T::dereg_mr(Self::device((*mr).device), MrObject::<T>::data(mr))?;
                drop(MrObject::<T>::take_boxed(mr));
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an MW of our devices.
    unsafe extern "C" fn alloc_mw(
        mw: *mut bindings::ib_mw,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: ib_core passes a zeroed MW of `size_ib_mw` bytes with
            // its device, PD and type set.
            unsafe {
                let mw_type = match (*mw).type_ {
                    bindings::ib_mw_type_IB_MW_TYPE_1 => MwType::Type1,
                    bindings::ib_mw_type_IB_MW_TYPE_2 => MwType::Type2,
                    _ => return Err(EINVAL),
                };
                let pd = PdObject::<T>::data((*mw).pd);
                let (data, rkey) = T::alloc_mw(Self::device((*mw).device), pd, mw_type)?;
                MwObject::<T>::write(mw, data);
                (*mw).rkey = rkey;
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, once, for an MW `alloc_mw` made.
    unsafe extern "C" fn dealloc_mw(mw: *mut bindings::ib_mw) -> ffi::c_int {
        // SAFETY: The data is initialised and never used again; the device
        // is alive during the call.
        unsafe { T::dealloc_mw(Self::device((*mw).device), MwObject::<T>::take(mw)) };
        0
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an object of our devices.
    unsafe extern "C" fn create_qp(
        qp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: ib_core passes a zeroed QP of `size_ib_qp` bytes with
            // its device and PD set, valid attributes, and for userspace the
            // driver udata of the command's bundle, which names the context.
            unsafe {
                let dev = Self::device((*qp).device);
                let pd = PdObject::<T>::data((*qp).pd);
                let mut init = QpInit::from_raw(attr);
                let uctx = bindings::rroce_udata_ucontext(udata).cast::<UserContext>();
                let udata = UData::from_raw(udata);
                let user = uctx.as_ref().map(|u| (u, &udata));
                let cqs = QpCqs {
                    send: &CqObject::<T>::data((*attr).send_cq).data,
                    recv: &CqObject::<T>::data((*attr).recv_cq).data,
                    srq: (!(*attr).srq.is_null()).then(|| &SrqObject::<T>::data((*attr).srq).data),
                    handle: QpHandle(qp as usize),
                };
                let (data, qpn) = T::create_qp(dev, pd, &mut init, cqs, user)?;
                QpInit::write_caps(&init.caps, attr);
                (*qp).qp_num = qpn;
                QpObject::<T>::write(qp, data);
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, once, for a QP `create_qp` made.
    unsafe extern "C" fn destroy_qp(
        qp: *mut bindings::ib_qp,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        // SAFETY: The QP's data is initialised; ib_core frees the memory
        // after this returns and never uses the data again.
        unsafe { T::destroy_qp(Self::device((*qp).device), QpObject::<T>::take(qp)) };
        0
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for a QP of ours.
    unsafe extern "C" fn modify_qp(
        qp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_attr,
        mask: ffi::c_int,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: The QP is ours and alive, `attr` valid, during the call.
            unsafe {
                let change = QpChange::from_raw(attr, mask as u32)?;
                T::modify_qp(Self::device((*qp).device), QpObject::<T>::data(qp), &change)?;
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for a QP of ours.
    unsafe extern "C" fn query_qp(
        qp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_attr,
        _mask: ffi::c_int,
        init: *mut bindings::ib_qp_init_attr,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: The QP is ours and alive, `attr` and `init` valid and
            // writable, during the call.
            unsafe {
                let (a, caps) = T::query_qp(Self::device((*qp).device), QpObject::<T>::data(qp))?;
                a.write_to(&mut *attr);
                write_cap(&caps, &mut (*attr).cap);
                write_cap(&caps, &mut (*init).cap);
                (*init).qp_type = (*qp).qp_type;
                (*init).port_num = a.port;
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for a QP of ours.
    unsafe extern "C" fn post_send(
        qp: *mut bindings::ib_qp,
        wr: *const bindings::ib_send_wr,
        bad_wr: *mut *const bindings::ib_send_wr,
    ) -> ffi::c_int {
        // SAFETY: The QP is ours and alive during the call.
        let user = !unsafe { (*qp).uobject }.is_null();
        if !user {
            // SAFETY: A kernel consumer's valid chain of work requests for a
            // QP of ours, whose type decides the work request type.
            return unsafe { Self::post_kernel_sends(qp, wr, bad_wr) };
        }
        from_result(|| {
            // SAFETY: The QP is ours and alive, during the call. A user QP's
            // work requests are in its send ring, not in `wr`.
            unsafe { T::post_send(Self::device((*qp).device), QpObject::<T>::data(qp))? };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an AH of our devices.
    unsafe extern "C" fn create_user_ah(
        ah: *mut bindings::ib_ah,
        init: *mut bindings::rdma_ah_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: ib_core passes a zeroed AH of `size_ib_ah` bytes with
            // its device and PD set, and attributes whose source GID it
            // resolved.
            unsafe {
                let dev = Self::device((*ah).device);
                let pd = PdObject::<T>::data((*ah).pd);
                let av = Av::from_raw(&*(*init).ah_attr)?;
                let udata = UData::from_raw(udata);
                let data = T::create_user_ah(dev, pd, &av, &udata)?;
                AhObject::<T>::write(
                    ah,
                    AhSlot {
                        av,
                        data: Some(data),
                    },
                );
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, once, for an AH `create_user_ah` made.
    unsafe extern "C" fn destroy_ah(ah: *mut bindings::ib_ah, _flags: u32) -> ffi::c_int {
        // SAFETY: The data is initialised and never used again.
        let slot = unsafe { AhObject::<T>::take(ah) };
        if let Some(data) = slot.data {
            // SAFETY: The device is alive during the call.
            T::destroy_ah(unsafe { Self::device((*ah).device) }, data);
        }
        0
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for a kernel AH of our
    /// devices, possibly in atomic context: nothing here sleeps or
    /// allocates.
    unsafe extern "C" fn create_ah(
        ah: *mut bindings::ib_ah,
        init: *mut bindings::rdma_ah_init_attr,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: ib_core passes a zeroed AH of `size_ib_ah` bytes and
            // attributes whose source GID it resolved.
            unsafe {
                let av = Av::from_raw(&*(*init).ah_attr)?;
                AhObject::<T>::write(ah, AhSlot { av, data: None });
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an SRQ of our devices.
    unsafe extern "C" fn create_srq(
        srq: *mut bindings::ib_srq,
        init: *mut bindings::ib_srq_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: ib_core passes a zeroed SRQ of `size_ib_srq` bytes with
            // its device and PD set, valid attributes, and for userspace the
            // driver udata of the command's bundle, which names the context.
            unsafe {
                if (*init).srq_type != bindings::ib_srq_type_IB_SRQT_BASIC {
                    return Err(crate::kernel_ext::errno::eopnotsupp());
                }
                let dev = Self::device((*srq).device);
                let pd = PdObject::<T>::data((*srq).pd);
                let attr = SrqAttr::from_raw(&(*init).attr);
                let notifier = Arc::pin_init(
                    pin_init!(SrqNotifier {
                        srq <- new_mutex!(RawSrq(srq)),
                    }),
                    GFP_KERNEL,
                )?;
                let uctx = bindings::rroce_udata_ucontext(udata).cast::<UserContext>();
                let udata = UData::from_raw(udata);
                let user = uctx.as_ref().map(|u| (u, &udata));
                let (data, actual) = T::create_srq(dev, pd, &attr, notifier.clone(), user)?;
                actual.write_to(&mut (*init).attr);
                SrqObject::<T>::write(srq, SrqSlot { notifier, data });
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an SRQ of ours.
    unsafe extern "C" fn modify_srq(
        srq: *mut bindings::ib_srq,
        attr: *mut bindings::ib_srq_attr,
        mask: bindings::ib_srq_attr_mask,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: The SRQ is ours and alive, `attr` valid, during the call.
            unsafe {
                let dev = Self::device((*srq).device);
                let a = SrqAttr::from_raw(&*attr);
                T::modify_srq(dev, &SrqObject::<T>::data(srq).data, &a, SrqMask(mask))?;
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an SRQ of ours.
    unsafe extern "C" fn query_srq(
        srq: *mut bindings::ib_srq,
        attr: *mut bindings::ib_srq_attr,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: The SRQ is ours and alive, `attr` writable, during the call.
            unsafe {
                let dev = Self::device((*srq).device);
                T::query_srq(dev, &SrqObject::<T>::data(srq).data)?.write_to(&mut *attr);
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, once, for an SRQ `create_srq` made.
    unsafe extern "C" fn destroy_srq(
        srq: *mut bindings::ib_srq,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        // SAFETY: The data is initialised and never used again; ib_core
        // frees the SRQ after this returns.
        let slot = unsafe { SrqObject::<T>::take(srq) };
        // INVARIANT: The SRQ is about to be freed.
        slot.notifier.srq.lock().0 = core::ptr::null_mut();
        // SAFETY: As above.
        T::destroy_srq(unsafe { Self::device((*srq).device) }, slot.data);
        0
    }

    /// # Safety
    ///
    /// Called by ib_core for a port of one of our devices.
    unsafe extern "C" fn alloc_hw_port_stats(
        ib: *mut bindings::ib_device,
        _port: u32,
    ) -> *mut bindings::rdma_hw_stats {
        // SAFETY: The device is ours and alive during the call.
        unsafe { Self::device(ib) }
            .container()
            .registry
            .stat_descs
            .alloc_port_stats()
    }

    /// # Safety
    ///
    /// Called by ib_core, under the stats' lock, with stats from
    /// `alloc_hw_port_stats`.
    unsafe extern "C" fn get_hw_stats(
        ib: *mut bindings::ib_device,
        stats: *mut bindings::rdma_hw_stats,
        _port: u32,
        _index: ffi::c_int,
    ) -> ffi::c_int {
        // SAFETY: The device is ours and alive, and ib_core holds the
        // stats' lock, during the call.
        let (dev, values) = unsafe { (Self::device(ib), stats::values(stats)) };
        T::counters(dev, values);
        values.len() as ffi::c_int
    }
    /// # Safety
    ///
    /// `wr` is a valid chain of send work requests of a kernel consumer for
    /// the kernel QP `qp` of ours, and `bad_wr` valid for writes.
    unsafe fn post_kernel_sends(
        qp: *mut bindings::ib_qp,
        mut wr: *const bindings::ib_send_wr,
        bad_wr: *mut *const bindings::ib_send_wr,
    ) -> ffi::c_int {
        // SAFETY: The QP is ours and alive during the call.
        let (dev, data, ud) = unsafe {
            let t = (*qp).qp_type;
            (
                Self::device((*qp).device),
                QpObject::<T>::data(qp),
                t == bindings::ib_qp_type_IB_QPT_UD || t == bindings::ib_qp_type_IB_QPT_GSI,
            )
        };
        while !wr.is_null() {
            // SAFETY: Guaranteed by the caller; a UD request's AH is a live
            // AH of this device.
            let posted = unsafe {
                kverbs::send_wqe(wr, ud, |ah| {
                    (!ah.is_null()).then(|| AhObject::<T>::data(ah).av)
                })
            }
            .and_then(|wqe| T::post_kernel_send(dev, data, wqe));
            if let Err(e) = posted {
                // SAFETY: `bad_wr` is valid for writes.
                unsafe { *bad_wr = wr };
                return e.to_errno();
            }
            // SAFETY: A valid chain.
            wr = unsafe { (*wr).next };
        }
        0
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for a QP of ours.
    unsafe extern "C" fn post_recv(
        qp: *mut bindings::ib_qp,
        mut wr: *const bindings::ib_recv_wr,
        bad_wr: *mut *const bindings::ib_recv_wr,
    ) -> ffi::c_int {
        // SAFETY: The QP is ours and alive during the call. The rxe
        // provider posts receives through the ring, never through here.
        let (dev, data, user) = unsafe {
            (
                Self::device((*qp).device),
                QpObject::<T>::data(qp),
                !(*qp).uobject.is_null(),
            )
        };
        while !wr.is_null() {
            let posted = if user {
                Err(crate::kernel_ext::errno::eopnotsupp())
            } else {
                // SAFETY: A kernel consumer's valid receive work request.
                unsafe { kverbs::recv_wqe(wr) }.and_then(|wqe| T::post_kernel_recv(dev, data, wqe))
            };
            if let Err(e) = posted {
                // SAFETY: `bad_wr` is valid for writes.
                unsafe { *bad_wr = wr };
                return e.to_errno();
            }
            // SAFETY: A valid chain.
            wr = unsafe { (*wr).next };
        }
        0
    }

    /// # Safety
    ///
    /// Called by ib_core or a kernel consumer, in any context, for a CQ of
    /// ours, with room for `num` completions at `wc`.
    unsafe extern "C" fn poll_cq(
        cq: *mut bindings::ib_cq,
        num: ffi::c_int,
        wc: *mut bindings::ib_wc,
    ) -> ffi::c_int {
        const BATCH: usize = 16;
        let want = usize::try_from(num).unwrap_or(0);
        let mut done = 0;
        let mut buf = [[0u8; KERNEL_WC_SIZE as usize]; BATCH];
        while done < want {
            let n = (want - done).min(BATCH);
            // SAFETY: The CQ is ours and alive during the call.
            let got = T::poll_cq(&unsafe { CqObject::<T>::data(cq) }.data, &mut buf[..n]);
            for b in &buf[..got] {
                // SAFETY: The caller gave room for `num` completions.
                kverbs::write_wc(b, unsafe { &mut *wc.add(done) });
                done += 1;
            }
            if got < n {
                break;
            }
        }
        done as ffi::c_int
    }
}
