// SPDX-License-Identifier: GPL-2.0

//! The rroce device: what it says about itself to ib_core and userspace.
//!
//! Port state and MTU are not stored: they are read from the netdev each
//! time, so they can never disagree with it. Documentation/user-guide.rst lists
//! the attributes and why they have their values.

use crate::ah::{self, Ah, AhCore};
use crate::counters::{self, Counter, Counters, PortCounters};
use crate::cq::Cq;
use crate::kernel_ext::{
    crc32::Crc32,
    llist::AtomicQueue,
    msleep,
    net::{namespace::Net, NetDevice, SkBuff},
    rdma::{
        self, uverbs_cmd, Access, Av, CqAttr, CqNotifier, Device, DeviceAttr, DeviceChange,
        DeviceParams, Driver, Global, KernelPages, KernelRecvWr, KernelSendWr, KernelWc, LinkLayer,
        MadAnswer, MrAdvice, MrKeys, MrRange, Mtu, MwType, NewLink, OdpCaps, PhysState, PortAttr,
        PortChange, PortEvent, PortImmutable, PortState, QpChange, QpCqs, QpInit, QpNotifier,
        QpQuery, Qpn, Registry, Rkey, Setting, SrqAttr, SrqMask, SrqNotifier, UData, UserContext,
        UserRegion, MAD_SIZE,
    },
};
use crate::limits::{
    GID_TABLE_LEN, MAX_AH, MAX_CQ, MAX_CQE, MAX_FAST_REG_PAGES, MAX_MCAST_GRP, MAX_MCAST_QP_ATTACH,
    MAX_MR, MAX_MSG_SIZE, MAX_MW, MAX_PD, MAX_QP, MAX_QP_WR, MAX_RD_ATOMIC, MAX_SGE, MAX_SRQ, PORT,
};
use crate::mcast::Groups;
use crate::mr::{self, Mr, MrCore};
use crate::mw::{self, Keys, Mw, MwCore};
use crate::pool::{PdNum, Pool};
use crate::proto::pma;
use crate::qp::{self, Qp};
use crate::qp_core::QpCore;
use crate::srq::Srq;
use crate::udp::{Transport, TransportUse};
use crate::work::{RecvWqe, SendWqe};
use crate::xmit::Stamp;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use kernel::{c_str, prelude::*, sync::Arc};

/// The rxe user ABI (`include/uapi/rdma/rdma_user_rxe.h`) that rdma-core's
/// rxe provider speaks; it binds to any device with this driver id.
const UVERBS_ABI_VERSION: u32 = 2;
/// IBTA vendor id for "no vendor", as the C rxe reports.
const VENDOR_ID: u32 = 0xffffff;
/// How long a device being removed waits, at most, for its processes to
/// take their last completions: 100 × 10 ms.
const REMOVAL_DRAIN_POLLS: u32 = 100;
const REMOVAL_DRAIN_POLL_MS: u32 = 10;
/// The packets to this device a doorbell receives itself when no process
/// at the peer waits for them (WRITEs, READs, atomics), rather than
/// `RX_INLINE`: the sender's time slice is then not one the receiver needs,
/// and an 8 KiB WRITE (8 packets of MTU 1024) goes without a wake-up of
/// the receive work.
const RX_INLINE_UNAWAITED: u32 = 8;

mod burst;
mod rx;
mod services;
mod settings;

use burst::Burst;
use settings::Settings;

/// Per-device state.
#[pin_data]
pub(crate) struct RroceDevice {
    /// The live memory regions and windows by key index, QPs by number
    /// and AHs by number: where the data path finds them.
    #[pin]
    mrs: Pool<MrCore>,
    #[pin]
    mws: Pool<MwCore>,
    #[pin]
    qps: Pool<QpCore>,
    #[pin]
    ahs: Pool<AhCore>,
    /// The multicast groups its UD QPs are attached to.
    #[pin]
    mcast: Groups,
    /// The last protection domain number given.
    last_pd: AtomicU64,
    #[pin]
    counters: PortCounters,
    /// Keeps the RoCEv2 sockets open.
    _transport: TransportUse<Self>,
    /// The port state last announced with an event, so a netdev event that
    /// changes nothing announces nothing.
    port_active: AtomicBool,
    /// Node GUID, from the netdev's MAC.
    guid: [u8; 8],
    /// What `modify_device` and `modify_port` change.
    settings: Settings,
    /// Seals and checks the ICRC.
    crc: Crc32,
    /// The numbers of the kernel QPs posted to since they last ran, for
    /// the device's work.
    kicked: AtomicQueue<u32>,
    /// What the burst of packets being received owes and may still send.
    burst: Burst,
}

/// The last counter set id: a set has a QP bound to it, or is on its way.
const LAST_COUNTER_SET: u32 = MAX_QP;

/// The registry of rroce devices, reachable from `rdma link add`.
static DEVICES: Global<RroceDevice> = Global::new();

impl RroceDevice {
    /// The live MRs, by key index.
    pub(crate) fn mrs(&self) -> &Pool<MrCore> {
        &self.mrs
    }

    /// The live MWs, by key index.
    pub(crate) fn mws(&self) -> &Pool<MwCore> {
        &self.mws
    }

    /// The live QPs, by number.
    pub(crate) fn qps(&self) -> &Pool<QpCore> {
        &self.qps
    }

    /// The MRs and memory windows, where keys are looked up.
    pub(crate) fn keys(&self) -> Keys<'_> {
        Keys {
            mrs: &self.mrs,
            mws: &self.mws,
        }
    }

    /// The live AHs, by number.
    pub(crate) fn ahs(&self) -> &Pool<AhCore> {
        &self.ahs
    }

    /// Moves every QP of the device to the error state, flushing what they
    /// hold: the device is about to go. Returns the QPs it failed.
    pub(crate) fn fail_qps(dev: &Device<Self>) -> Result<KVec<Arc<QpCore>>> {
        let qps = dev.data().qps().snapshot()?;
        for qp in qps.iter() {
            qp.fail();
        }
        Ok(qps)
    }

    /// Counts one `c` of the port's own.
    pub(crate) fn count(&self, c: Counter) {
        self.counters.add(None, c, 1);
    }

    /// What goes on each packet the device sends.
    fn stamp(&self) -> Stamp<'_> {
        Stamp {
            crc: &self.crc,
            ecn_capable: self.settings.congestion_control(),
        }
    }

    /// Counts a packet sent, whose IP datagram had `sent` bytes, or one
    /// that could not be, in `set` or the port's own counters; returns
    /// whether it was sent.
    fn count_sent(&self, set: Option<&Counters>, sent: &Result<usize>) -> bool {
        match sent {
            Ok(bytes) => {
                self.counters.add(set, Counter::SentPkts, 1);
                self.counters.add(set, Counter::SentBytes, *bytes as u64);
                true
            }
            Err(_) => {
                self.counters.add(set, Counter::SendErr, 1);
                false
            }
        }
    }

    /// The port's state as the netdev dictates it.
    fn port_state(netdev: &NetDevice) -> (PortState, PhysState) {
        if netdev.is_running_with_carrier() {
            (PortState::Active, PhysState::LinkUp)
        } else if netdev.is_up() {
            (PortState::Down, PhysState::Polling)
        } else {
            (PortState::Down, PhysState::Disabled)
        }
    }

    /// Announces the port's new state if it changed.
    pub(crate) fn update_port_state(dev: &Device<Self>, netdev: &NetDevice) {
        let active = Self::port_state(netdev).0 == PortState::Active;
        if dev.data().port_active.swap(active, Ordering::AcqRel) != active {
            let event = if active {
                PortEvent::Active
            } else {
                PortEvent::Error
            };
            dev.dispatch_port_event(PORT, event);
            pr_info!(
                "{}: port {}\n",
                netdev.name(),
                if active { "active" } else { "down" }
            );
        }
    }
}

fn check_port(port: u32) -> Result {
    if port == PORT {
        Ok(())
    } else {
        Err(EINVAL)
    }
}

#[vtable]
impl Driver for RroceDevice {
    type UContext = ();
    /// A protection domain is a number that its MRs and QPs share.
    type Pd = PdNum;
    type Shared = Transport<Self>;
    type Cq = Cq;
    type Mr = Mr;
    type Mw = Mw;
    type Qp = Qp;
    type Ah = Ah;
    type Srq = Srq;

    const DRIVER_ID: u32 = rdma::DRIVER_ID_RXE;
    const UVERBS_ABI_VERSION: u32 = UVERBS_ABI_VERSION;
    // The rxe provider rings its doorbell with a zero-WR POST_SEND and arms
    // CQs with REQ_NOTIFY_CQ.
    const UVERBS_CMD_MASK: u64 = uverbs_cmd::POST_SEND | uverbs_cmd::REQ_NOTIFY_CQ;
    const LINK_LAYER: LinkLayer = LinkLayer::Ethernet;
    const COUNTER_NAMES: &'static [&'static CStr] = counters::NAMES;
    const SETTINGS: &'static [Setting] = settings::SETTINGS;
    // At 8, an 8 KiB SEND (8 packets of MTU 1024) was received in the
    // sender's system call, in a time slice shared with the polling peer:
    // 1.3 times rxe's rate, against 1.8 from the receive work's
    // high-priority workers; one-packet messages gain nothing from more.
    const RX_INLINE: u32 = 4;

    fn query_device(dev: &Device<Self>, udata: &UData<'_>) -> Result<DeviceAttr> {
        // Neither the rxe provider nor any kernel caller sends driver data.
        if udata.in_len() != 0 || udata.out_len() != 0 {
            return Err(EINVAL);
        }
        Ok(DeviceAttr {
            sys_image_guid: dev.data().settings.sys_image_guid().to_ne_bytes(),
            vendor_id: VENDOR_ID,
            device_cap_flags: rdma::DEVICE_CAP_MEM_WINDOW
                | rdma::DEVICE_CAP_MEM_MGT_EXTENSIONS
                | rdma::DEVICE_CAP_RC_RNR_NAK_GEN
                | rdma::DEVICE_CAP_PORT_ACTIVE_EVENT
                | rdma::DEVICE_CAP_SYS_IMAGE_GUID
                | rdma::DEVICE_CAP_FLUSH_GLOBAL
                | rdma::DEVICE_CAP_ATOMIC_WRITE,
            kernel_cap_flags: rdma::KERNEL_CAP_ALLOW_USER_UNREG | rdma::KERNEL_CAP_LOCAL_DMA_LKEY,
            max_mr_size: u64::MAX,
            page_size_cap: 0xffff_f000,
            max_qp: MAX_QP,
            max_qp_wr: MAX_QP_WR,
            max_qp_rd_atom: MAX_RD_ATOMIC.into(),
            max_qp_init_rd_atom: MAX_RD_ATOMIC.into(),
            max_send_sge: MAX_SGE,
            max_recv_sge: MAX_SGE,
            // An RDMA READ's local SGEs are a send's (rdma_rw sizes its
            // reads by this, and divides by it).
            max_sge_rd: MAX_SGE,
            max_cq: MAX_CQ,
            max_mr: MAX_MR,
            max_mw: MAX_MW,
            max_ah: MAX_AH,
            max_srq: MAX_SRQ,
            max_srq_wr: MAX_QP_WR,
            max_srq_sge: MAX_SGE,
            max_res_rd_atom: MAX_RD_ATOMIC.into(),
            atomic_hca: true,
            max_pd: MAX_PD,
            max_cqe: MAX_CQE,
            max_fast_reg_page_list_len: MAX_FAST_REG_PAGES,
            max_mcast_grp: MAX_MCAST_GRP,
            max_mcast_qp_attach: MAX_MCAST_QP_ATTACH,
            max_total_mcast_qp_attach: MAX_MCAST_GRP * MAX_MCAST_QP_ATTACH,
            max_pkeys: 1,
            local_ca_ack_delay: 15,
            // Every operation copies through the same MR code, which faults
            // on-demand pages in.
            odp: Some(OdpCaps {
                implicit: true,
                rc: rdma::ODP_SEND
                    | rdma::ODP_RECV
                    | rdma::ODP_WRITE
                    | rdma::ODP_READ
                    | rdma::ODP_ATOMIC
                    | rdma::ODP_SRQ_RECV,
                uc: rdma::ODP_SEND | rdma::ODP_RECV | rdma::ODP_WRITE | rdma::ODP_SRQ_RECV,
                ud: rdma::ODP_SEND | rdma::ODP_RECV | rdma::ODP_SRQ_RECV,
            }),
        })
    }

    fn query_port(dev: &Device<Self>, port: u32) -> Result<PortAttr> {
        check_port(port)?;
        // The netdev is detached first when it goes away, and ib_core may
        // still query the port until the device follows it.
        let netdev = dev.netdev(port);
        let (state, phys_state) = netdev
            .as_deref()
            .map_or((PortState::Down, PhysState::Disabled), Self::port_state);
        // A netdev too small even for 256-byte packets cannot carry RoCE.
        let active_mtu = netdev
            .and_then(|n| Mtu::for_netdev_mtu(n.mtu()))
            .unwrap_or(Mtu::Mtu256);
        Ok(PortAttr {
            state,
            phys_state,
            max_mtu: Mtu::Mtu4096,
            active_mtu,
            gid_tbl_len: GID_TABLE_LEN,
            pkey_tbl_len: 1,
            max_msg_sz: MAX_MSG_SIZE,
            port_cap_flags: dev.data().settings.port_cap_flags.load(Ordering::Relaxed),
            max_vl_num: 1,
        })
    }

    fn modify_device(dev: &Device<Self>, change: &DeviceChange) -> Result {
        // The node description is the adapter's to write.
        if let Some(guid) = change.sys_image_guid {
            let guid = u64::from_ne_bytes(guid);
            dev.data()
                .settings
                .sys_image_guid
                .store(guid, Ordering::Relaxed);
        }
        Ok(())
    }

    fn modify_port(dev: &Device<Self>, port: u32, change: &PortChange) -> Result {
        check_port(port)?;
        let flags = &dev.data().settings.port_cap_flags;
        let _ = flags.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |f| {
            Some((f | change.set_cap) & !change.clr_cap)
        });
        Ok(())
    }

    /// The port's Performance Management agent; every other MAD is the MAD
    /// layer's.
    fn process_mad(
        dev: &Device<Self>,
        port: u32,
        request: &[u8; MAD_SIZE],
        reply: &mut [u8; MAD_SIZE],
    ) -> MadAnswer {
        let counts = || dev.data().counters.port_counts();
        if port == PORT && pma::answer(request, PORT as u8, counts, reply) {
            MadAnswer::Reply
        } else {
            MadAnswer::Pass
        }
    }

    fn query_pkey(_dev: &Device<Self>, port: u32, index: u16) -> Result<u16> {
        check_port(port)?;
        if index != 0 {
            return Err(EINVAL);
        }
        Ok(rdma::DEFAULT_PKEY_FULL)
    }

    fn port_immutable(_dev: &Device<Self>, port: u32) -> Result<PortImmutable> {
        check_port(port)?;
        Ok(PortImmutable {
            pkey_tbl_len: 1,
            gid_tbl_len: GID_TABLE_LEN,
            core_cap_flags: rdma::CORE_PORT_ROCE_UDP_ENCAP,
            max_mad_size: rdma::MGMT_MAD_SIZE,
        })
    }

    fn alloc_ucontext(_dev: &Device<Self>, _udata: &UData<'_>) -> Result<()> {
        Ok(())
    }

    fn alloc_pd(dev: &Device<Self>, _udata: &UData<'_>) -> Result<PdNum> {
        let last = dev.data().last_pd.fetch_add(1, Ordering::Relaxed);
        Ok(PdNum::new(last.wrapping_add(1)))
    }

    fn create_cq(
        _dev: &Device<Self>,
        attr: &CqAttr,
        notifier: Arc<CqNotifier>,
        user: Option<(&UserContext, &UData<'_>)>,
    ) -> Result<(Cq, u32)> {
        Cq::new(attr, notifier, user)
    }

    fn resize_cq(cq: &Cq, cqe: u32, uctx: &UserContext, udata: &UData<'_>) -> Result<u32> {
        cq.resize(cqe, uctx, udata)
    }

    fn req_notify_cq(cq: &Cq, solicited_only: bool) -> Result<bool> {
        Ok(cq.request_notify(solicited_only))
    }

    fn poll_cq(cq: &Cq, max: usize, take: impl FnMut(&KernelWc)) -> usize {
        cq.poll(max, take)
    }

    fn reg_user_mr(dev: &Device<Self>, pd: &PdNum, region: &UserRegion) -> Result<(Mr, MrKeys)> {
        Mr::register(dev, dev.data().mrs(), *pd, region)
    }

    fn advise_mr(dev: &Device<Self>, pd: &PdNum, advice: MrAdvice, ranges: &[MrRange]) -> Result {
        mr::advise(dev.data().mrs(), *pd, advice, ranges)
    }

    fn get_dma_mr(_dev: &Device<Self>, _pd: &PdNum, access: Access) -> Result<(Mr, MrKeys)> {
        Mr::dma(access)
    }

    fn alloc_mr(dev: &Device<Self>, pd: &PdNum, max_pages: u32) -> Result<(Mr, MrKeys)> {
        Mr::alloc_fast(dev.data().mrs(), *pd, max_pages)
    }

    fn map_mr_sg(mr: &Mr, map: impl FnOnce(&mut KernelPages) -> Result<u32>) -> Result<u32> {
        mr.map(map)
    }

    fn rereg_user_mr(
        _dev: &Device<Self>,
        mr: &Mr,
        pd: Option<&PdNum>,
        access: Option<Access>,
    ) -> Result {
        mr.rereg(pd.copied(), access)
    }

    fn dereg_mr(dev: &Device<Self>, mr: &Mr) -> Result {
        mr.deregister(dev.data().mrs())
    }

    fn alloc_mw(dev: &Device<Self>, pd: &PdNum, mw_type: MwType) -> Result<(Mw, Rkey)> {
        Mw::alloc(dev.data().mws(), *pd, mw_type)
    }

    fn dealloc_mw(dev: &Device<Self>, mw: Mw) {
        mw.dealloc(dev.data().mws());
    }

    fn create_qp(
        dev: &Device<Self>,
        pd: &PdNum,
        init: &mut QpInit,
        cqs: QpCqs<'_, Self>,
        notifier: Arc<QpNotifier>,
        user: Option<(&UserContext, &UData<'_>)>,
    ) -> Result<(Qp, Qpn)> {
        Qp::create(dev, dev.data().qps(), *pd, init, &cqs, notifier, user)
    }

    fn destroy_qp(dev: &Device<Self>, qp: Qp) {
        // ib_core leaves detaching to the consumer; one that did not must
        // not leave a later QP of the same number attached.
        let netdev = dev.netdev(PORT);
        dev.data().mcast.detach_all(netdev.as_deref(), qp.qpn());
        qp.destroy(dev.data().qps(), dev.data().mws());
    }

    fn attach_mcast(dev: &Device<Self>, qp: &Qp, gid: &[u8; 16]) -> Result {
        let netdev = dev.netdev(PORT).ok_or(ENODEV)?;
        dev.data().mcast.attach(&netdev, gid, qp.ud_qpn()?)
    }

    fn detach_mcast(dev: &Device<Self>, qp: &Qp, gid: &[u8; 16]) -> Result {
        let netdev = dev.netdev(PORT);
        dev.data()
            .mcast
            .detach(netdev.as_deref(), gid, qp.ud_qpn()?)
    }

    fn modify_qp(dev: &Device<Self>, qp: &Qp, change: &QpChange) -> Result {
        qp.modify(dev, change)
    }

    fn query_qp(_dev: &Device<Self>, qp: &Qp) -> Result<QpQuery> {
        qp.query()
    }

    fn create_srq(
        _dev: &Device<Self>,
        _pd: &PdNum,
        attr: &SrqAttr,
        notifier: Arc<SrqNotifier>,
        user: Option<(&UserContext, &UData<'_>)>,
    ) -> Result<(Srq, SrqAttr)> {
        Srq::create(attr, notifier, user)
    }

    fn modify_srq(_dev: &Device<Self>, srq: &Srq, attr: &SrqAttr, mask: SrqMask) -> Result {
        srq.modify(attr, mask)
    }

    fn query_srq(_dev: &Device<Self>, srq: &Srq) -> Result<SrqAttr> {
        Ok(srq.query())
    }

    fn destroy_srq(_dev: &Device<Self>, srq: Srq) {
        drop(srq);
    }

    fn create_user_ah(dev: &Device<Self>, pd: &PdNum, av: &Av, udata: &UData<'_>) -> Result<Ah> {
        Ah::create(dev.data().ahs(), *pd, av, udata)
    }

    fn destroy_ah(dev: &Device<Self>, ah: Ah) {
        ah.destroy(dev.data().ahs());
    }

    fn post_kernel_send(dev: &Device<Self>, qp: &Qp, wr: KernelSendWr) -> Result {
        qp.post_kernel_send(dev, SendWqe::from_kernel(wr)?)
    }

    fn post_kernel_recv(dev: &Device<Self>, qp: &Qp, wr: KernelRecvWr) -> Result {
        qp.post_kernel_recv(dev, RecvWqe::from_kernel(wr))
    }

    fn post_kernel_srq_recv(srq: &Srq, wr: KernelRecvWr) -> Result {
        srq.post_kernel(RecvWqe::from_kernel(wr))
    }

    fn post_send(dev: &Device<Self>, qp: &Qp) -> Result {
        // Packets to a QP of this device are handled after the burst.
        let plug = dev.plug_local_rx();
        if !qp.post_send(dev)? {
            plug.hand_over_up_to(RX_INLINE_UNAWAITED);
        }
        Ok(())
    }

    fn counters(dev: &Device<Self>, values: &mut [u64]) {
        dev.data().counters.read_own(values);
    }

    fn counter_bind_qp(dev: &Device<Self>, qp: &Qp, id: Option<u32>) -> Result<u32> {
        let (id, set) = dev.data().counters.set(id)?;
        qp.count_in(Some(set));
        Ok(id)
    }

    fn counter_unbind_qp(_dev: &Device<Self>, qp: &Qp) -> Result {
        qp.count_in(None);
        Ok(())
    }

    fn counter_dealloc(dev: &Device<Self>, id: u32) {
        dev.data().counters.remove_set(id);
    }

    fn counter_values(dev: &Device<Self>, id: u32, values: &mut [u64]) -> Result {
        dev.data().counters.read_set(id, values)
    }

    fn setting(dev: &Device<Self>, index: usize) -> u32 {
        dev.data().settings.value(index)
    }

    fn set_setting(dev: &Device<Self>, index: usize, value: u32) -> Result {
        dev.data().settings.set(index, value)
    }

    /// A packet for this device: checked, then given to its QP. Anything
    /// malformed, unsealed or for no QP is dropped and counted.
    fn receive(dev: &Device<Self>, skb: &mut SkBuff) {
        Self::receive_packet(dev, skb);
    }

    fn received(dev: &Device<Self>) {
        Self::send_owed_ack(dev);
        dev.data().burst.end();
    }

    fn rx_dropped(dev: &Device<Self>) {
        dev.data().count(Counter::DropBacklog);
    }

    fn removing(dev: &Device<Self>) {
        let Ok(qps) = Self::fail_qps(dev) else {
            return;
        };
        // uverbs zaps the rings next; a process busy-polling its CQ would
        // then read an empty ring for ever. Give it a moment to take its
        // flush errors, and so learn that the device is gone.
        for _ in 0..REMOVAL_DRAIN_POLLS {
            if qps.iter().all(|qp| qp.cqs_drained()) {
                return;
            }
            msleep(REMOVAL_DRAIN_POLL_MS);
        }
    }

    fn kicked(dev: &Device<Self>) {
        // As a doorbell: what the kicked QPs send to this device is handled
        // after them, here, when it is a few packets (NVMe-oF's commands and
        // answers between two QPs of one device).
        let _plug = dev.plug_local_rx();
        let data = dev.data();
        data.kicked.drain(|qpn| {
            if let Some(qp) = data.qps().get(qpn) {
                qp.run_kicked(dev);
            }
        });
    }

    fn tick(dev: &Device<Self>) {
        // A snapshot, so no QP lock is taken under the map's lock.
        let Ok(qps) = dev.data().qps().snapshot() else {
            dev.arm_tick(1000);
            return;
        };
        let now = dev.rx_clock();
        for qp in qps.iter() {
            qp.tick(dev, now);
        }
    }
}

impl NewLink for RroceDevice {
    const TYPE: &'static CStr = c_str!("rroce");

    fn global() -> &'static Global<Self> {
        &DEVICES
    }

    fn new_link(devices: &Arc<Registry<Self>>, name: &CStr, netdev: &NetDevice) -> Result {
        if !netdev.is_ethernet() {
            pr_err!("{}: not an Ethernet device, no RoCE on it\n", netdev.name());
            return Err(EINVAL);
        }
        if netdev.is_vlan() {
            pr_err!(
                "{}: a VLAN; add the device on the real netdev\n",
                netdev.name()
            );
            return Err(EINVAL);
        }
        if Device::<Self>::exists_on(netdev) {
            pr_err!("{}: already has an rxe or rroce device\n", netdev.name());
            return Err(EEXIST);
        }
        let transport = TransportUse::new(devices, netdev)?;
        let guid = netdev.eui64();
        let (state, _) = Self::port_state(netdev);
        let settings = Settings::new(guid);
        devices.add(
            &DeviceParams {
                name,
                netdev,
                node_desc: c_str!("rroce"),
                node_guid: guid,
            },
            try_pin_init!(Self {
                mrs <- mr::new_pool(),
                mws <- mw::new_pool(),
                qps <- qp::new_pool(),
                ahs <- ah::new_pool(),
                mcast <- Groups::new(),
                last_pd: AtomicU64::new(0),
                counters <- PortCounters::new(LAST_COUNTER_SET),
                _transport: transport,
                port_active: AtomicBool::new(state == PortState::Active),
                guid,
                settings,
                crc: Crc32::new(),
                kicked: AtomicQueue::new(),
                burst: Burst::new(),
            }),
        )?;
        pr_info!("{}: added on {}\n", name, netdev.name());
        Ok(())
    }

    fn net_exit(devices: &Registry<Self>, net: &Net) {
        devices.shared().net_exit(net);
    }
}
