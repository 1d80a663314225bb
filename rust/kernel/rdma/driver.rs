// SPDX-License-Identifier: GPL-2.0

//! The [`Driver`] trait: what an RDMA driver implements for its per-device
//! data, and the types its methods take and return.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::{
    srq::{SrqAttr, SrqMask},
    work::{KernelRecvWr, KernelSendWr, KernelWc, QpHandle},
    Access, Av, CqNotifier, Device, DeviceAttr, DeviceChange, KernelPages, LinkLayer, Lkey,
    MadAnswer, MrAdvice, MrRange, MwType, PortAttr, PortChange, PortImmutable, QpChange, QpInit,
    QpNotifier, QpQuery, Qpn, Rkey, SrqNotifier, UData, UserContext, UserRegion, MAD_SIZE,
};
use crate::kernel_ext::{errno::eopnotsupp, net::SkBuff};
use kernel::{prelude::*, sync::Arc};

/// The callbacks of an RDMA device whose per-device data is `Self`.
///
/// The methods without a default are what ib_core requires of every device
/// (`ib_device_check_mandatory`) and what the device's own receive path and
/// timer need. A driver leaves out what it does not offer: its op is then
/// NULL in the device's `ib_device_ops` (`#[vtable]`'s `HAS_*` constants),
/// so ib_core and uverbs answer EOPNOTSUPP themselves. The defaults answer
/// EOPNOTSUPP too, and those that are handed an object back drop it.
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
    /// The device's settings, at most 8: sysfs attributes of each device
    /// (`/sys/class/infiniband/<device>/<name>`) that root writes, read with
    /// [`Driver::setting`] and set with [`Driver::set_setting`].
    const SETTINGS: &'static [Setting] = &[];
    /// The most received packets a device holds for [`Driver::receive`];
    /// more are dropped, so that a flood costs bounded memory.
    const RX_BACKLOG: u32 = 4096;
    /// How many packets the receive work hands to [`Driver::receive`]
    /// before it yields the CPU (as NAPI's weight).
    const RX_BUDGET: usize = 64;
    /// How long, in microseconds, the receive work may go on without
    /// emptying its queue on the high-priority workers; then it goes on on
    /// the ordinary ones, as softirq hands over to ksoftirqd after 2 ms. On
    /// one CPU, a device that sends to itself keeps its receive work busy
    /// for as long as the traffic lasts: at nice -20 throughout, it left an
    /// RCU grace-period kthread starved for 65 s on the debug kernel. The
    /// kick work ([`Device::kick`]) has the same bound.
    const RX_URGENT_USECS: u32 = 2000;
    /// How many waiting packets a doorbell may find when it lets its plug
    /// ([`Device::plug_local_rx`]) go and still hand them to
    /// [`Driver::receive`] itself, in the caller's context; a longer burst
    /// is the receive work's.
    const RX_INLINE: u32 = 0;

    /// Device attributes and limits (`query_device`).
    fn query_device(dev: &Device<Self>, udata: &UData<'_>) -> Result<DeviceAttr>;
    /// Port attributes (`query_port`); active speed and width are filled in
    /// from the netdev by ib_core's `ib_get_eth_speed` on Ethernet ports.
    fn query_port(dev: &Device<Self>, port: u32) -> Result<PortAttr>;
    /// Changes the system image GUID or the node description
    /// (`modify_device`; sysfs's `node_desc` writes the latter). On success
    /// the adapter writes the node description into the device.
    fn modify_device(_dev: &Device<Self>, _change: &DeviceChange) -> Result {
        Err(eopnotsupp())
    }
    /// Changes `port`'s capability flags (`modify_port`).
    fn modify_port(_dev: &Device<Self>, _port: u32, _change: &PortChange) -> Result {
        Err(eopnotsupp())
    }
    /// Answers the management datagram `request` for `port` into `reply`
    /// (`process_mad`). ib_core's sysfs asks for each file of
    /// `ports/N/counters/` with a Performance Management `Get`, and with
    /// this op the directory exists; the MAD layer also offers the driver
    /// every MAD its GSI QP receives before its agents see it.
    fn process_mad(
        _dev: &Device<Self>,
        _port: u32,
        _request: &[u8; MAD_SIZE],
        _reply: &mut [u8; MAD_SIZE],
    ) -> MadAnswer {
        MadAnswer::Pass
    }
    /// The P_Key at `index` of `port`.
    fn query_pkey(_dev: &Device<Self>, _port: u32, _index: u16) -> Result<u16> {
        Err(eopnotsupp())
    }
    /// What never changes about `port` (`get_port_immutable`).
    fn port_immutable(dev: &Device<Self>, port: u32) -> Result<PortImmutable>;
    /// A new user context (one per open of the uverbs device). Without it,
    /// the device has no uverbs device: no user context, ring or mmap.
    fn alloc_ucontext(_dev: &Device<Self>, _udata: &UData<'_>) -> Result<Self::UContext> {
        Err(eopnotsupp())
    }
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
    fn resize_cq(
        _cq: &Self::Cq,
        _cqe: u32,
        _uctx: &UserContext,
        _udata: &UData<'_>,
    ) -> Result<u32> {
        Err(eopnotsupp())
    }
    /// Arms the CQ to signal its next completion (`solicited_only`: only
    /// the next solicited one); returns whether completions are waiting.
    fn req_notify_cq(cq: &Self::Cq, solicited_only: bool) -> Result<bool>;
    /// Hands up to `max` of a kernel CQ's completions to `take`, oldest
    /// first; returns how many. Callable in any context.
    fn poll_cq(cq: &Self::Cq, max: usize, take: impl FnMut(&KernelWc)) -> usize;
    /// Registers user memory; returns the MR's data and its keys.
    fn reg_user_mr(
        dev: &Device<Self>,
        pd: &Self::Pd,
        region: &UserRegion,
    ) -> Result<(Self::Mr, MrKeys)>;
    /// An MR for kernel consumers that covers all kernel memory, with local
    /// rights `access` (ib_core requires the op of a kernel verbs provider).
    fn get_dma_mr(dev: &Device<Self>, pd: &Self::Pd, access: Access) -> Result<(Self::Mr, MrKeys)>;
    /// A fast-registration MR (`IB_MR_TYPE_MEM_REG`) in PD `pd` for a
    /// kernel consumer, of at most `max_pages` pages. It grants nothing
    /// until [`Driver::map_mr_sg`] gives it pages and an `IB_WR_REG_MR`
    /// work request its key and rights.
    fn alloc_mr(
        _dev: &Device<Self>,
        _pd: &Self::Pd,
        _max_pages: u32,
    ) -> Result<(Self::Mr, MrKeys)> {
        Err(eopnotsupp())
    }
    /// Lends `map` the page list of a fast-registration MR to fill, as
    /// `ib_map_mr_sg` asks; returns what `map` returns, the number of
    /// scatterlist entries mapped. Callable in any context but hard IRQ.
    fn map_mr_sg(
        _mr: &Self::Mr,
        _map: impl FnOnce(&mut KernelPages) -> Result<u32>,
    ) -> Result<u32> {
        Err(eopnotsupp())
    }
    /// Changes an MR's PD (`pd`) or access rights (`access`) in place.
    fn rereg_user_mr(
        _dev: &Device<Self>,
        _mr: &Self::Mr,
        _pd: Option<&Self::Pd>,
        _access: Option<Access>,
    ) -> Result {
        Err(eopnotsupp())
    }
    /// Acts on `advice` for MR ranges in PD `pd` (`ibv_advise_mr`) before
    /// returning: what `IB_UVERBS_ADVISE_MR_FLAG_FLUSH` asks, and its absence
    /// allows.
    fn advise_mr(
        _dev: &Device<Self>,
        _pd: &Self::Pd,
        _advice: MrAdvice,
        _ranges: &[MrRange],
    ) -> Result {
        Err(eopnotsupp())
    }
    /// Withdraws an MR's keys; its data is dropped on success. An error
    /// (memory windows still bound) leaves the MR registered.
    fn dereg_mr(dev: &Device<Self>, mr: &Self::Mr) -> Result;
    /// A new memory window of `mw_type` in PD `pd`; returns its data and
    /// its first rkey. Its op and `dealloc_mw`'s are set together.
    fn alloc_mw(_dev: &Device<Self>, _pd: &Self::Pd, _mw_type: MwType) -> Result<(Self::Mw, Rkey)> {
        Err(eopnotsupp())
    }
    /// Deallocates a memory window; its data is handed back to be dropped.
    fn dealloc_mw(_dev: &Device<Self>, _mw: Self::Mw) {}
    /// A new queue pair, whose events go through `notifier`; `init.caps`
    /// is updated to what it really holds. Returns its data and QP number.
    fn create_qp(
        dev: &Device<Self>,
        pd: &Self::Pd,
        init: &mut QpInit,
        cqs: QpCqs<'_, Self>,
        notifier: Arc<QpNotifier>,
        user: Option<(&UserContext, &UData<'_>)>,
    ) -> Result<(Self::Qp, Qpn)>;
    /// Destroys a queue pair; its data is handed back to be dropped.
    fn destroy_qp(dev: &Device<Self>, qp: Self::Qp);
    /// Changes a QP's state and attributes.
    fn modify_qp(dev: &Device<Self>, qp: &Self::Qp, change: &QpChange) -> Result;
    /// Attaches a QP to the multicast group `gid` (IBA 11.3.1).
    fn attach_mcast(_dev: &Device<Self>, _qp: &Self::Qp, _gid: &[u8; 16]) -> Result {
        Err(eopnotsupp())
    }
    /// Detaches a QP from the multicast group `gid` (IBA 11.3.2).
    fn detach_mcast(_dev: &Device<Self>, _qp: &Self::Qp, _gid: &[u8; 16]) -> Result {
        Err(eopnotsupp())
    }
    /// What a query reports of a QP.
    fn query_qp(_dev: &Device<Self>, _qp: &Self::Qp) -> Result<QpQuery> {
        Err(eopnotsupp())
    }
    /// A new shared receive queue, for the process `user` or for a kernel
    /// consumer (`None`); returns its data and what it really holds. Its
    /// op, `destroy_srq`'s and `post_srq_recv`'s are set together.
    fn create_srq(
        _dev: &Device<Self>,
        _pd: &Self::Pd,
        _attr: &SrqAttr,
        _notifier: Arc<SrqNotifier>,
        _user: Option<(&UserContext, &UData<'_>)>,
    ) -> Result<(Self::Srq, SrqAttr)> {
        Err(eopnotsupp())
    }
    /// Changes what `mask` names of an SRQ.
    fn modify_srq(
        _dev: &Device<Self>,
        _srq: &Self::Srq,
        _attr: &SrqAttr,
        _mask: SrqMask,
    ) -> Result {
        Err(eopnotsupp())
    }
    /// An SRQ's attributes.
    fn query_srq(_dev: &Device<Self>, _srq: &Self::Srq) -> Result<SrqAttr> {
        Err(eopnotsupp())
    }
    /// Destroys an SRQ; its data is handed back to be dropped.
    fn destroy_srq(_dev: &Device<Self>, _srq: Self::Srq) {}
    /// A new address handle for userspace, whose response `udata` carries.
    /// (A kernel consumer's AH needs nothing of the driver.)
    fn create_user_ah(
        _dev: &Device<Self>,
        _pd: &Self::Pd,
        _av: &Av,
        _udata: &UData<'_>,
    ) -> Result<Self::Ah> {
        Err(eopnotsupp())
    }
    /// Destroys an address handle; its data is handed back to be dropped.
    fn destroy_ah(_dev: &Device<Self>, _ah: Self::Ah) {}
    /// Posts a kernel consumer's send work request. Callable in any context.
    fn post_kernel_send(dev: &Device<Self>, qp: &Self::Qp, wr: KernelSendWr) -> Result;
    /// Posts a kernel consumer's receive work request. Callable in any
    /// context.
    fn post_kernel_recv(dev: &Device<Self>, qp: &Self::Qp, wr: KernelRecvWr) -> Result;
    /// Posts a kernel consumer's receive work request to an SRQ. Callable
    /// in any context.
    fn post_kernel_srq_recv(_srq: &Self::Srq, _wr: KernelRecvWr) -> Result {
        Err(eopnotsupp())
    }
    /// Runs a user QP's send queue: the rxe provider's doorbell, a
    /// POST_SEND command without work requests.
    fn post_send(dev: &Device<Self>, qp: &Self::Qp) -> Result;
    /// The values of the counters named by [`Driver::COUNTER_NAMES`]; the
    /// device has hw_counters only with both.
    fn counters(_dev: &Device<Self>, _values: &mut [u64]) {}
    /// Binds `qp` to the counter set `id` of `rdma statistic qp`, or to a
    /// new set if `id` is none; returns the set's id, never 0. A set has
    /// the port's counters, [`Driver::COUNTER_NAMES`]: what a QP bound to
    /// it counts goes there instead of to the port's own values, since
    /// `rdma statistic show link` adds the sets to those.
    fn counter_bind_qp(_dev: &Device<Self>, _qp: &Self::Qp, _id: Option<u32>) -> Result<u32> {
        Err(eopnotsupp())
    }
    /// Unbinds `qp` from its counter set: it counts to the port again.
    fn counter_unbind_qp(_dev: &Device<Self>, _qp: &Self::Qp) -> Result {
        Err(eopnotsupp())
    }
    /// The counter set `id`, with no QP bound to it any more, goes.
    fn counter_dealloc(_dev: &Device<Self>, _id: u32) {}
    /// The values of the counter set `id`, in the order of
    /// [`Driver::COUNTER_NAMES`].
    fn counter_values(_dev: &Device<Self>, _id: u32, _values: &mut [u64]) -> Result {
        Err(eopnotsupp())
    }
    /// The value of the setting of [`Driver::SETTINGS`] at `index` (0 or
    /// 1 for a switch).
    fn setting(_dev: &Device<Self>, _index: usize) -> u32 {
        0
    }
    /// Sets the setting of [`Driver::SETTINGS`] at `index` to `value`, as
    /// parsed for its kind; an error (`EINVAL`) if the driver refuses it.
    fn set_setting(_dev: &Device<Self>, _index: usize, _value: u32) -> Result {
        Err(eopnotsupp())
    }
    /// Handles a RoCEv2 packet for the device, in process context (the
    /// receive work, or a doorbell, see [`Device::plug_local_rx`]); `skb`
    /// is linear and its data starts at the UDP header. The device keeps
    /// it afterwards, if it sent it to itself, to build another in.
    fn receive(dev: &Device<Self>, skb: &mut SkBuff);
    /// The burst of packets handed to [`Driver::receive`] one after another
    /// ended: what it left for the end goes now.
    fn received(_dev: &Device<Self>) {}
    /// A received packet was dropped because [`Driver::RX_BACKLOG`] were
    /// waiting (four times as many, for a packet the device sent itself).
    /// Called in softirq context, or where the device sends.
    fn rx_dropped(_dev: &Device<Self>) {}
    /// The device is being removed; its users' rings are still mapped, and
    /// uverbs takes them away when this returns.
    fn removing(_dev: &Device<Self>) {}
    /// The device's work, queued by [`Device::kick`], runs, in process
    /// context.
    fn kicked(dev: &Device<Self>);
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

/// The keys of a memory region, as work requests (`lkey`) and peers
/// (`rkey`) name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MrKeys {
    /// The local key.
    pub(crate) lkey: Lkey,
    /// The remote key.
    pub(crate) rkey: Rkey,
}

/// What a CQ is created with.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CqAttr {
    /// The number of completions asked for.
    pub(crate) cqe: u32,
    /// `IB_UVERBS_CQ_FLAGS_*`.
    pub(crate) flags: u32,
}

/// A setting of a driver's devices in sysfs.
pub(crate) struct Setting {
    /// The attribute's name.
    pub(crate) name: &'static CStr,
    pub(crate) kind: SettingKind,
}

/// What a setting holds, and so how sysfs shows and parses it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum SettingKind {
    /// On or off, 1 or 0: what `kstrtobool` takes.
    Switch,
    /// A `u32`: what `kstrtouint` takes, in base 10 or with `0x`.
    Number,
}
