// SPDX-License-Identifier: GPL-2.0

//! The device's receive path: a packet from the receive work (or a doorbell)
//! to its QP, with the ACK owed at the end of a burst.

use super::{
    burst::{ACK_HOLD_JIFFIES, NO_QP},
    RroceDevice,
};
use crate::counters::Counter;
use crate::kernel_ext::{jiffies, jiffies_to_usecs, net::SkBuff, rdma::Device};
use crate::mcast::{Members, MULTICAST_QPN};
use crate::proto::ip;
use crate::trace;
use crate::udp::{self, Received};
use core::sync::atomic::Ordering;

impl RroceDevice {
    /// Hands a packet to the QP it is for, or to each QP of its multicast
    /// group, or counts why it went to none.
    pub(super) fn receive_packet(dev: &Device<Self>, skb: &mut SkBuff) {
        let data = dev.data();
        // The IP datagram: its header, then from the UDP header on. A QP
        // counts its own; the port what goes to none.
        let udp_len = skb.len();
        let datagram_len = |ip: &[u8]| (ip.len() + udp_len) as u64;
        let count_for_port = |bytes| {
            data.count(Counter::RcvdPkts);
            data.counters.add(None, Counter::RcvdBytes, bytes);
        };
        let (pkt, ip) = match udp::parse(&data.crc, skb) {
            Ok(Received::Packet(pkt, ip)) => (pkt, ip),
            Ok(Received::Cnp(qpn, ip)) => {
                match data.qps().get(qpn) {
                    Some(qp) => qp.congestion_notified(dev, datagram_len(ip), ip),
                    None => {
                        count_for_port(datagram_len(ip));
                        data.count(Counter::DropUnknownQp);
                    }
                }
                return;
            }
            Err(drop) => {
                data.count(Counter::RcvdPkts);
                return data.count(drop);
            }
        };
        let bytes = datagram_len(ip);
        let bth = &pkt.headers.bth;
        let dest_qpn = bth.dest_qpn;
        trace::recv(
            dest_qpn,
            bth.opcode as u8,
            bth.psn.get(),
            pkt.payload.len() as u32,
            pkt.headers.syndrome(),
            || jiffies_to_usecs(jiffies().saturating_sub(dev.rx_clock())),
        );
        if dest_qpn == MULTICAST_QPN {
            count_for_port(bytes);
            data.count(Counter::RcvdMcastPkts);
            // Every QP attached to the group gets the datagram; each checks
            // it as its own (type, Q_Key).
            let members = ip::destination_gid(ip).map(|gid| data.mcast.members(&gid));
            let qpns = members.as_ref().map_or(&[][..], Members::qpns);
            if qpns.is_empty() {
                data.count(Counter::DropUnknownQp);
            }
            for qp in qpns.iter().filter_map(|qpn| data.qps().get(qpn.get())) {
                qp.receive(dev, &pkt, ip, None);
            }
            return;
        }
        let Some(qp) = data.qps().get(dest_qpn) else {
            count_for_port(bytes);
            return data.count(Counter::DropUnknownQp);
        };
        // One QP owes an ACK at a time: another's is sent first, as is one
        // owed for too long. The clock is read only while an ACK is held.
        let burst = &data.burst;
        if burst.ack_owed.load(Ordering::Relaxed) != dest_qpn
            || jiffies().wrapping_sub(burst.ack_owed_since.load(Ordering::Relaxed))
                >= ACK_HOLD_JIFFIES
        {
            Self::send_owed_ack(dev);
        }
        if qp.receive(dev, &pkt, ip, Some(bytes))
            && burst.ack_owed.swap(dest_qpn, Ordering::Relaxed) == NO_QP
        {
            burst.ack_owed_since.store(jiffies(), Ordering::Relaxed);
        }
    }

    /// Sends the ACK a QP owes, if one does.
    pub(super) fn send_owed_ack(dev: &Device<Self>) {
        let data = dev.data();
        let owed = data.burst.ack_owed.swap(NO_QP, Ordering::Relaxed);
        if owed != NO_QP {
            if let Some(qp) = data.qps().get(owed) {
                qp.send_owed_ack(dev);
            }
        }
    }
}
