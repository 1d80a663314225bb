// SPDX-License-Identifier: GPL-2.0

//! Following the netdevs under rroce devices: link state becomes port state,
//! and a netdev that goes away takes its rroce device with it.

use crate::device::RroceDevice;
use crate::kernel_ext::{
    net::{NetDevice, NetdevEvent, NetdevNotifier},
    rdma::Device,
};

/// The netdevice notifier of rroce.
pub(crate) struct NetdevEvents;

impl NetdevNotifier for NetdevEvents {
    fn notify(event: NetdevEvent, netdev: &NetDevice) {
        let Some(dev) = Device::<RroceDevice>::get_by_netdev(netdev) else {
            return;
        };
        match event {
            NetdevEvent::Up | NetdevEvent::Down | NetdevEvent::Change => {
                RroceDevice::update_port_state(&dev, netdev)
            }
            NetdevEvent::Unregister => {
                // Fail the QPs now, while their processes still see their
                // CQs: a process busy-polling for requests the vanished
                // link will never carry gets flush errors, not silence.
                let _ = RroceDevice::fail_qps(&dev);
                // RTNL is held here, and unregistering needs it: defer.
                dev.unregister_queued()
            }
            // The port MTU is read from the netdev on every query.
            NetdevEvent::ChangeMtu | NetdevEvent::Other => {}
        }
    }
}
