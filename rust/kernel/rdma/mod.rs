// SPDX-License-Identifier: GPL-2.0

//! The RDMA core (`ib_core`): devices, their attributes, and link types.
//!
//! A driver implements [`Driver`] for its per-device data, with `#[vtable]`:
//! the verbs ib_core requires are methods without a default, and the ops of
//! the methods it leaves out stay NULL. [`NewLink`] lets
//! `rdma link add NAME type TYPE netdev NETDEV` create its devices, and the
//! module holds a [`Registration`], whose drop removes them all. Packets
//! reach a device through [`Device::deliver`], and its [`Driver::receive`]
//! handles them in process context, in order, as its receive constants
//! (`RX_*`) pace them. Kernel consumers' work requests reach the driver as
//! [`KernelSendWr`] and [`KernelRecvWr`], and its kernel CQs hand back
//! [`KernelWc`]s: the verbs' own values, which the driver maps to its own.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! # Examples
//!
//! The skeleton of a driver without SRQs, memory windows, multicast or
//! counters (out of tree, the example is not compiled):
//!
//! ```ignore
//! static DEVICES: Global<Dev> = Global::new();
//!
//! struct Dev {
//!     // Per-device state, pinned in the `ib_device`'s allocation.
//! }
//!
//! #[vtable]
//! impl Driver for Dev {
//!     type UContext = ();
//!     type Pd = u32;
//! #   type Shared = (); type Cq = (); type Mr = (); type Mw = ();
//! #   type Qp = (); type Ah = (); type Srq = ();
//!     // ...
//!     const DRIVER_ID: u32 = DRIVER_ID_RXE;
//!     const UVERBS_ABI_VERSION: u32 = 2;
//!     const LINK_LAYER: LinkLayer = LinkLayer::Ethernet;
//!
//!     fn query_device(dev: &Device<Self>, udata: &UData<'_>) -> Result<DeviceAttr> {
//!         // ...
//!     }
//!     // The other required methods: query_port, port_immutable,
//!     // alloc_ucontext, alloc_pd, create_cq, req_notify_cq, poll_cq,
//!     // reg_user_mr, get_dma_mr, dereg_mr, create_qp, destroy_qp,
//!     // modify_qp, post_kernel_send, post_kernel_recv, post_send,
//!     // receive, kicked and tick.
//! }
//!
//! impl NewLink for Dev {
//!     const TYPE: &'static CStr = c_str!("dev");
//!
//!     fn global() -> &'static Global<Self> {
//!         &DEVICES
//!     }
//!
//!     fn new_link(devices: &Arc<Registry<Self>>, name: &CStr, netdev: &NetDevice) -> Result {
//!         let params = DeviceParams {
//!             name,
//!             netdev,
//!             node_desc: c_str!("dev"),
//!             node_guid: netdev.eui64(),
//!         };
//!         devices.add(&params, try_pin_init!(Dev {}))
//!     }
//!
//!     fn net_exit(_devices: &Registry<Self>, _net: &Net) {}
//! }
//!
//! struct DevModule {
//!     _devices: Registration<Dev>,
//! }
//!
//! impl kernel::Module for DevModule {
//!     fn init(module: &'static ThisModule) -> Result<Self> {
//!         Ok(Self {
//!             _devices: Registration::new(module, ())?,
//!         })
//!     }
//! }
//! ```

mod adapter;
mod container;
mod device;
mod driver;
mod implicit_odp;
mod kernel_segs;
mod kverbs;
mod link;
mod mmap;
mod mr;
mod notifier;
mod object;
mod odp;
mod pages;
mod qp;
mod registry;
mod removal;
pub(crate) mod rxe_abi;
mod srq;
mod stats;
mod sysfs;
mod ucontext;
mod udata;
mod work;

pub(crate) use device::Device;
pub(crate) use driver::{CqAttr, Driver, MrKeys, QpCqs, Setting, SettingKind};
pub(crate) use kernel_segs::{KernelSegs, LOCAL_DMA_LKEY};
pub(crate) use link::{Global, NewLink, Registration};
pub(crate) use mmap::{SharedMem, UserMapping};
pub(crate) use mr::{Access, KernelPages, Lkey, MrAdvice, MrRange, Rkey, Umem, UserRegion};
pub(crate) use notifier::{CqNotifier, QpEvent, QpNotifier, SrqNotifier};
pub(crate) use pages::AtomicOp;
pub(crate) use qp::{Av, QpAttr, QpCaps, QpChange, QpInit, QpMask, QpQuery, QpState, QpType, Qpn};
pub(crate) use registry::{DeviceParams, Registry};
pub(crate) use srq::{SrqAttr, SrqMask};
pub(crate) use ucontext::UserContext;
pub(crate) use udata::UData;
pub(crate) use work::{
    send_flags, wc_flags, wc_opcode, wc_status, wr_opcode, KernelOperands, KernelRecvWr,
    KernelSendData, KernelSendWr, KernelWc, QpHandle,
};

use crate::bindings;

/// The driver id rdma-core's rxe provider binds to (`RDMA_DRIVER_RXE`).
pub(crate) const DRIVER_ID_RXE: u32 = bindings::rdma_driver_id_RDMA_DRIVER_RXE;

/// An InfiniBand path MTU (`enum ib_mtu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Mtu {
    /// 256 bytes.
    Mtu256 = bindings::ib_mtu_IB_MTU_256,
    /// 512 bytes.
    Mtu512 = bindings::ib_mtu_IB_MTU_512,
    /// 1024 bytes.
    Mtu1024 = bindings::ib_mtu_IB_MTU_1024,
    /// 2048 bytes.
    Mtu2048 = bindings::ib_mtu_IB_MTU_2048,
    /// 4096 bytes.
    Mtu4096 = bindings::ib_mtu_IB_MTU_4096,
}

impl Mtu {
    /// The MTU of a C `enum ib_mtu` value, if it is one.
    pub(crate) fn from_raw(mtu: u32) -> Option<Mtu> {
        [
            Mtu::Mtu256,
            Mtu::Mtu512,
            Mtu::Mtu1024,
            Mtu::Mtu2048,
            Mtu::Mtu4096,
        ]
        .into_iter()
        .find(|m| *m as u32 == mtu)
    }

    /// The largest path MTU whose packets, with all RoCEv2 headers, fit in a
    /// netdev MTU of `netdev_mtu` bytes (ib_core's `iboe_get_mtu`), or `None`
    /// if not even 256 bytes fit.
    pub(crate) fn for_netdev_mtu(netdev_mtu: u32) -> Option<Mtu> {
        let netdev_mtu = i32::try_from(netdev_mtu).unwrap_or(i32::MAX);
        // SAFETY: `iboe_get_mtu` is a pure function of its argument.
        let mtu = unsafe { bindings::rroce_iboe_get_mtu(netdev_mtu) };
        Self::from_raw(mtu)
    }

    /// The MTU in bytes, as ib_core's `ib_mtu_enum_to_int` computes it: a
    /// match here, not a call into C for every packet.
    pub(crate) const fn bytes(self) -> u32 {
        match self {
            Mtu::Mtu256 => 256,
            Mtu::Mtu512 => 512,
            Mtu::Mtu1024 => 1024,
            Mtu::Mtu2048 => 2048,
            Mtu::Mtu4096 => 4096,
        }
    }
}

/// The link layer of a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum LinkLayer {
    /// Ethernet: RoCE.
    Ethernet = bindings::rdma_link_layer_IB_LINK_LAYER_ETHERNET,
}

/// A port's logical state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum PortState {
    /// Down.
    Down = bindings::ib_port_state_IB_PORT_DOWN,
    /// Active: can pass traffic.
    Active = bindings::ib_port_state_IB_PORT_ACTIVE,
}

/// A port's physical state (`enum ib_port_phys_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum PhysState {
    /// Administratively down.
    Disabled = bindings::ib_port_phys_state_IB_PORT_PHYS_STATE_DISABLED as u8,
    /// Up, but no link yet.
    Polling = bindings::ib_port_phys_state_IB_PORT_PHYS_STATE_POLLING as u8,
    /// Link up.
    LinkUp = bindings::ib_port_phys_state_IB_PORT_PHYS_STATE_LINK_UP as u8,
}

/// Asynchronous port events (`enum ib_event_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum PortEvent {
    /// The port became active.
    Active = bindings::ib_event_type_IB_EVENT_PORT_ACTIVE,
    /// The port left the active state.
    Error = bindings::ib_event_type_IB_EVENT_PORT_ERR,
}

/// Converts a limit to the C `int` of the attribute structures.
fn c_int(v: u32) -> kernel::ffi::c_int {
    v.try_into().unwrap_or(kernel::ffi::c_int::MAX)
}

/// Device attributes and limits, as `ibv_devinfo -v` shows them.
#[derive(Clone, Debug, Default)]
pub(crate) struct DeviceAttr {
    pub(crate) sys_image_guid: [u8; 8],
    pub(crate) vendor_id: u32,
    pub(crate) max_mr_size: u64,
    pub(crate) page_size_cap: u64,
    pub(crate) device_cap_flags: u64,
    pub(crate) kernel_cap_flags: u64,
    pub(crate) max_qp: u32,
    pub(crate) max_qp_wr: u32,
    pub(crate) max_send_sge: u32,
    pub(crate) max_recv_sge: u32,
    pub(crate) max_sge_rd: u32,
    pub(crate) max_cq: u32,
    pub(crate) max_cqe: u32,
    pub(crate) max_mr: u32,
    pub(crate) max_mw: u32,
    pub(crate) max_pd: u32,
    pub(crate) max_qp_rd_atom: u32,
    pub(crate) max_qp_init_rd_atom: u32,
    pub(crate) max_res_rd_atom: u32,
    pub(crate) atomic_hca: bool,
    pub(crate) max_ah: u32,
    pub(crate) max_srq: u32,
    pub(crate) max_srq_wr: u32,
    pub(crate) max_srq_sge: u32,
    pub(crate) max_fast_reg_page_list_len: u32,
    pub(crate) max_mcast_grp: u32,
    pub(crate) max_mcast_qp_attach: u32,
    pub(crate) max_total_mcast_qp_attach: u32,
    pub(crate) max_pkeys: u16,
    pub(crate) local_ca_ack_delay: u8,
    /// On-demand paging: the operations of each transport that may use
    /// MRs registered with [`Access::ON_DEMAND`]; `None` without it, and
    /// ignored in a kernel without it (`CONFIG_INFINIBAND_ON_DEMAND_PAGING`).
    pub(crate) odp: Option<OdpCaps>,
}

/// The operations that may use on-demand MRs on each transport
/// (`struct ib_odp_caps`), as sets of the `ODP_*` bits.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct OdpCaps {
    /// MRs of the whole address space (`IB_ODP_SUPPORT_IMPLICIT`).
    pub(crate) implicit: bool,
    pub(crate) rc: u32,
    pub(crate) uc: u32,
    pub(crate) ud: u32,
}

/// Sends may gather from on-demand MRs.
pub(crate) const ODP_SEND: u32 = bindings::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_SEND;
/// Receives may scatter to them.
pub(crate) const ODP_RECV: u32 = bindings::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_RECV;
/// RDMA WRITEs may target them, and be sent from them.
pub(crate) const ODP_WRITE: u32 = bindings::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_WRITE;
/// RDMA READs may target them, and land in them.
pub(crate) const ODP_READ: u32 = bindings::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_READ;
/// Atomics may target them.
pub(crate) const ODP_ATOMIC: u32 = bindings::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_ATOMIC;
/// Receives posted to an SRQ may scatter to them.
pub(crate) const ODP_SRQ_RECV: u32 = bindings::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_SRQ_RECV;

impl DeviceAttr {
    fn write_to(&self, a: &mut bindings::ib_device_attr) {
        a.sys_image_guid = u64::from_ne_bytes(self.sys_image_guid);
        a.vendor_id = self.vendor_id;
        a.max_mr_size = self.max_mr_size;
        a.page_size_cap = self.page_size_cap;
        a.device_cap_flags = self.device_cap_flags;
        a.kernel_cap_flags = self.kernel_cap_flags;
        a.max_qp = c_int(self.max_qp);
        a.max_qp_wr = c_int(self.max_qp_wr);
        a.max_send_sge = c_int(self.max_send_sge);
        a.max_recv_sge = c_int(self.max_recv_sge);
        a.max_sge_rd = c_int(self.max_sge_rd);
        a.max_cq = c_int(self.max_cq);
        a.max_cqe = c_int(self.max_cqe);
        a.max_mr = c_int(self.max_mr);
        a.max_mw = c_int(self.max_mw);
        a.max_pd = c_int(self.max_pd);
        a.max_qp_rd_atom = c_int(self.max_qp_rd_atom);
        a.max_qp_init_rd_atom = c_int(self.max_qp_init_rd_atom);
        a.max_res_rd_atom = c_int(self.max_res_rd_atom);
        a.atomic_cap = if self.atomic_hca {
            bindings::ib_atomic_cap_IB_ATOMIC_HCA
        } else {
            bindings::ib_atomic_cap_IB_ATOMIC_NONE
        };
        a.max_ah = c_int(self.max_ah);
        a.max_srq = c_int(self.max_srq);
        a.max_srq_wr = c_int(self.max_srq_wr);
        a.max_srq_sge = c_int(self.max_srq_sge);
        a.max_fast_reg_page_list_len = self.max_fast_reg_page_list_len;
        a.max_mcast_grp = c_int(self.max_mcast_grp);
        a.max_mcast_qp_attach = c_int(self.max_mcast_qp_attach);
        a.max_total_mcast_qp_attach = c_int(self.max_total_mcast_qp_attach);
        a.max_pkeys = self.max_pkeys;
        a.local_ca_ack_delay = self.local_ca_ack_delay;
        if let Some(odp) = self.odp.filter(|_| odp::supported()) {
            a.kernel_cap_flags |= bindings::ib_kernel_cap_flags_IBK_ON_DEMAND_PAGING as u64;
            a.odp_caps.general_caps = bindings::ib_odp_general_cap_bits_IB_ODP_SUPPORT as u64;
            if odp.implicit {
                a.odp_caps.general_caps |=
                    bindings::ib_odp_general_cap_bits_IB_ODP_SUPPORT_IMPLICIT as u64;
            }
            a.odp_caps.per_transport_caps.rc_odp_caps = odp.rc;
            a.odp_caps.per_transport_caps.uc_odp_caps = odp.uc;
            a.odp_caps.per_transport_caps.ud_odp_caps = odp.ud;
        }
    }
}

/// `IBK_LOCAL_DMA_LKEY`: kernel consumers name their memory by the
/// device's `local_dma_lkey`, which needs no MR.
pub(crate) const KERNEL_CAP_LOCAL_DMA_LKEY: u64 =
    bindings::ib_kernel_cap_flags_IBK_LOCAL_DMA_LKEY as u64;
/// The type of a memory window (`enum ib_mw_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MwType {
    /// Bound by `ibv_bind_mw`, to the PD; an unbind is a bind of length 0.
    Type1,
    /// Bound by a work request, to the QP that posted it, and invalidated.
    Type2,
}

/// `IB_DEVICE_MEM_WINDOW` and `IB_DEVICE_MEM_WINDOW_TYPE_2B`: type 1 and
/// type 2B memory windows.
pub(crate) const DEVICE_CAP_MEM_WINDOW: u64 = (bindings::ib_device_cap_flags_IB_DEVICE_MEM_WINDOW
    | bindings::ib_device_cap_flags_IB_DEVICE_MEM_WINDOW_TYPE_2B)
    as u64;
/// `IB_DEVICE_MEM_MGT_EXTENSIONS`: fast registration (`IB_WR_REG_MR`,
/// `IB_WR_LOCAL_INV`, SEND with Invalidate), which kernel ULPs require.
pub(crate) const DEVICE_CAP_MEM_MGT_EXTENSIONS: u64 =
    bindings::ib_device_cap_flags_IB_DEVICE_MEM_MGT_EXTENSIONS as u64;
/// `IB_DEVICE_RC_RNR_NAK_GEN`: RC responders send RNR NAKs when no receive
/// request is posted.
pub(crate) const DEVICE_CAP_RC_RNR_NAK_GEN: u64 =
    bindings::ib_device_cap_flags_IB_DEVICE_RC_RNR_NAK_GEN as u64;
/// `IB_DEVICE_PORT_ACTIVE_EVENT`: port state changes are announced.
pub(crate) const DEVICE_CAP_PORT_ACTIVE_EVENT: u64 =
    bindings::ib_device_cap_flags_IB_DEVICE_PORT_ACTIVE_EVENT as u64;
/// `IB_DEVICE_SYS_IMAGE_GUID`: `sys_image_guid` is meaningful.
pub(crate) const DEVICE_CAP_SYS_IMAGE_GUID: u64 =
    bindings::ib_device_cap_flags_IB_DEVICE_SYS_IMAGE_GUID as u64;
/// `IB_DEVICE_FLUSH_GLOBAL`: FLUSH to global visibility.
pub(crate) const DEVICE_CAP_FLUSH_GLOBAL: u64 =
    bindings::ib_device_cap_flags_IB_DEVICE_FLUSH_GLOBAL as u64;
/// `IB_DEVICE_ATOMIC_WRITE`: ATOMIC WRITE.
pub(crate) const DEVICE_CAP_ATOMIC_WRITE: u64 =
    bindings::ib_device_cap_flags_IB_DEVICE_ATOMIC_WRITE as u64;
/// `IBK_ALLOW_USER_UNREG`: `rdma link delete` may remove the device.
pub(crate) const KERNEL_CAP_ALLOW_USER_UNREG: u64 =
    bindings::ib_kernel_cap_flags_IBK_ALLOW_USER_UNREG as u64;

/// Port attributes; the link speed and width come from the netdev.
#[derive(Clone, Debug)]
pub(crate) struct PortAttr {
    pub(crate) state: PortState,
    pub(crate) phys_state: PhysState,
    pub(crate) max_mtu: Mtu,
    pub(crate) active_mtu: Mtu,
    pub(crate) gid_tbl_len: u32,
    pub(crate) pkey_tbl_len: u16,
    pub(crate) max_msg_sz: u32,
    pub(crate) port_cap_flags: u32,
    pub(crate) max_vl_num: u8,
}

impl PortAttr {
    fn write_to(&self, a: &mut bindings::ib_port_attr) {
        a.state = self.state as bindings::ib_port_state;
        a.phys_state = self.phys_state as u8;
        a.max_mtu = self.max_mtu as bindings::ib_mtu;
        a.active_mtu = self.active_mtu as bindings::ib_mtu;
        a.phys_mtu = self.max_mtu.bytes();
        a.gid_tbl_len = c_int(self.gid_tbl_len);
        a.pkey_tbl_len = self.pkey_tbl_len;
        a.max_msg_sz = self.max_msg_sz;
        a.port_cap_flags = self.port_cap_flags;
        a.max_vl_num = self.max_vl_num;
    }
}

/// `IB_PORT_CM_SUP`: the port supports connection management (rdma_cm).
pub(crate) const PORT_CAP_CM_SUP: u32 = bindings::ib_port_capability_mask_bits_IB_PORT_CM_SUP;

/// What `modify_device` asks to change (`struct ib_device_modify`, by its
/// mask); also how sysfs's `node_desc` is written.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DeviceChange {
    /// A new system image GUID, big-endian, for `query_device` to report.
    pub(crate) sys_image_guid: Option<[u8; 8]>,
    /// A new node description, which the adapter writes into the device
    /// once the driver has taken the change.
    pub(crate) node_desc: Option<[u8; 64]>,
}

/// What `modify_port` asks to change (`struct ib_port_modify`, by its mask).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PortChange {
    /// Capability bits (`IB_PORT_*_SUP`) to set, then to clear: ib_cm sets
    /// and clears `IB_PORT_CM_SUP`.
    pub(crate) set_cap: u32,
    pub(crate) clr_cap: u32,
}

/// A management datagram's size (`struct ib_mad`): the common header and
/// the class's data.
pub(crate) const MAD_SIZE: usize = 256;

/// What a driver did with a management datagram ([`Driver::process_mad`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MadAnswer {
    /// Not the driver's: the MAD layer hands it to its agents.
    Pass,
    /// The reply is written; it goes back to whoever asked.
    Reply,
}

/// What never changes about a port.
#[derive(Clone, Debug)]
pub(crate) struct PortImmutable {
    pub(crate) pkey_tbl_len: u32,
    pub(crate) gid_tbl_len: u32,
    /// `RDMA_CORE_PORT_*`: which protocols the port speaks.
    pub(crate) core_cap_flags: u32,
    pub(crate) max_mad_size: u32,
}

impl PortImmutable {
    fn write_to(&self, p: &mut bindings::ib_port_immutable) {
        p.pkey_tbl_len = c_int(self.pkey_tbl_len);
        p.gid_tbl_len = c_int(self.gid_tbl_len);
        p.core_cap_flags = self.core_cap_flags;
        p.max_mad_size = self.max_mad_size;
    }
}

/// `RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP`: RoCEv2, RDMA over UDP.
pub(crate) const CORE_PORT_ROCE_UDP_ENCAP: u32 = bindings::RROCE_CORE_PORT_IBA_ROCE_UDP_ENCAP;
/// `IB_MGMT_MAD_SIZE`.
pub(crate) const MGMT_MAD_SIZE: u32 = bindings::IB_MGMT_MAD_SIZE;
/// `IB_DEFAULT_PKEY_FULL`: the one P_Key of a RoCE port.
pub(crate) const DEFAULT_PKEY_FULL: u16 = bindings::IB_DEFAULT_PKEY_FULL as u16;

/// The uverbs "write" commands a device may enable on top of those ib_core
/// infers (`enum ib_uverbs_write_cmds`), as bits of `uverbs_cmd_mask`.
pub(crate) mod uverbs_cmd {
    use crate::bindings;
    /// `IB_USER_VERBS_CMD_POST_SEND`: the rxe provider's doorbell.
    pub(crate) const POST_SEND: u64 =
        1 << bindings::ib_uverbs_write_cmds_IB_USER_VERBS_CMD_POST_SEND;
    /// `IB_USER_VERBS_CMD_REQ_NOTIFY_CQ`.
    pub(crate) const REQ_NOTIFY_CQ: u64 =
        1 << bindings::ib_uverbs_write_cmds_IB_USER_VERBS_CMD_REQ_NOTIFY_CQ;
}
