// SPDX-License-Identifier: GPL-2.0

//! What the QPs' engines get of the device ([`Services`]).

use super::RroceDevice;
use crate::ah::AhCore;
use crate::counters::{Counter, Counters};
use crate::device_services::Services;
use crate::kernel_ext::{
    fill::Fill,
    net::NetDevice,
    rdma::{Av, Device, Qpn},
};
use crate::limits::PORT;
use crate::mw::Keys;
use crate::pool::Pool;
use crate::proto::{dcqcn::Params, ip, packet::Headers};
use crate::xmit::{self, Flow};
use kernel::{prelude::*, types::ARef};

impl Services for Device<RroceDevice> {
    fn count(&self, set: Option<&Counters>, counter: Counter, n: u64) {
        self.data().counters.add(set, counter, n);
    }

    fn keys(&self) -> Keys<'_> {
        self.data().keys()
    }

    fn ahs(&self) -> &Pool<AhCore> {
        self.data().ahs()
    }

    fn netdev(&self) -> Option<ARef<NetDevice>> {
        Device::netdev(self, PORT)
    }

    fn transmit(
        &self,
        set: Option<&Counters>,
        av: &Av,
        flow: &Flow,
        headers: Headers,
        payload_len: usize,
        fill: impl FnOnce(&mut Fill<'_>) -> Result,
    ) -> Result {
        let data = self.data();
        let sent = xmit::send(self, data.stamp(), av, flow, headers, payload_len, fill);
        if data.count_sent(set, &sent) && ip::is_multicast(&av.dgid) {
            data.counters.add(set, Counter::SentMcastPkts, 1);
        }
        sent.map(|_| ())
    }

    fn transmit_cnp(&self, set: Option<&Counters>, av: &Av, flow: &Flow, dest_qpn: Qpn) {
        let data = self.data();
        let sent = xmit::send_cnp(self, data.stamp(), av, flow, dest_qpn);
        if data.count_sent(set, &sent) {
            data.counters.add(set, Counter::NpCnpSent, 1);
        }
    }

    fn congestion_control(&self) -> bool {
        self.data().settings.congestion_control()
    }

    fn cc_params(&self) -> Params {
        self.data().settings.cc_params()
    }

    fn kick(&self, qpn: Qpn, urgent: bool) -> Result {
        let listed = self.data().kicked.push(qpn.get(), GFP_ATOMIC);
        if listed.is_ok() {
            Device::kick(self, urgent);
        } else {
            // The timer runs every kernel QP.
            self.tick_now();
        }
        listed
    }

    fn take_inline_answers(&self, want: u32) -> u32 {
        self.data().burst.take_answers(want)
    }

    fn arm_tick(&self, usecs: u32) {
        Device::arm_tick(self, usecs);
    }
}
