// SPDX-License-Identifier: GPL-2.0

//! What users may change of a device: through verbs (`modify_device`,
//! `modify_port`) and through its settings in sysfs, congestion control's
//! switch and how fast a QP that CNPs slowed down recovers.

use crate::kernel_ext::{
    congestion_control,
    rdma::{self, Setting, SettingKind},
};
use crate::proto::dcqcn::Params;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use kernel::{c_str, prelude::*};

/// The device's settings in sysfs, at the indexes below;
/// Documentation/user-guide.rst describes them.
pub(super) const SETTINGS: &[Setting] = &[
    switch(c_str!("congestion_control")),
    number(c_str!("cc_alpha_period_us")),
    number(c_str!("cc_time_reset_us")),
    number(c_str!("cc_byte_reset")),
    number(c_str!("cc_ai_rate_kbps")),
    number(c_str!("cc_hai_rate_kbps")),
];
const CONGESTION_CONTROL: usize = 0;
const ALPHA_PERIOD_US: usize = 1;
const TIME_RESET_US: usize = 2;
const BYTE_RESET: usize = 3;
const AI_RATE_KBPS: usize = 4;
const HAI_RATE_KBPS: usize = 5;

const fn switch(name: &'static CStr) -> Setting {
    Setting {
        name,
        kind: SettingKind::Switch,
    }
}

const fn number(name: &'static CStr) -> Setting {
    Setting {
        name,
        kind: SettingKind::Number,
    }
}

/// The attributes of a device its users may change.
pub(super) struct Settings {
    /// The system image GUID, big-endian: the node GUID until
    /// `modify_device` sets another.
    pub(super) sys_image_guid: AtomicU64,
    /// The port's capability flags: `IB_PORT_CM_SUP`, which ib_cm sets and
    /// clears again, and what else `modify_port` set.
    pub(super) port_cap_flags: AtomicU32,
    /// The values of [`SETTINGS`], by index, in their units there: the
    /// switch 0 or 1, at first the module parameter's value.
    values: [AtomicU32; SETTINGS.len()],
}

impl Settings {
    /// A new device's, with `guid` its node GUID.
    pub(super) fn new(guid: [u8; 8]) -> Self {
        let nic = Params::NIC;
        let values = [
            congestion_control().into(),
            (nic.alpha_period_ns / 1000) as u32,
            (nic.increase_period_ns / 1000) as u32,
            nic.increase_bytes as u32,
            (nic.additive_increase / 125) as u32,
            (nic.hyper_increase / 125) as u32,
        ];
        Self {
            sys_image_guid: AtomicU64::new(u64::from_ne_bytes(guid)),
            port_cap_flags: AtomicU32::new(rdma::PORT_CAP_CM_SUP),
            values: values.map(AtomicU32::new),
        }
    }

    pub(super) fn sys_image_guid(&self) -> u64 {
        self.sys_image_guid.load(Ordering::Relaxed)
    }

    /// Whether the device does congestion control.
    pub(super) fn congestion_control(&self) -> bool {
        self.value(CONGESTION_CONTROL) != 0
    }

    /// How a QP that a CNP cuts recovers.
    pub(super) fn cc_params(&self) -> Params {
        let us = |i| u64::from(self.value(i)) * 1000;
        // kb/s in bytes per second.
        let rate = |i| u64::from(self.value(i)) * 125;
        Params {
            alpha_period_ns: us(ALPHA_PERIOD_US),
            increase_period_ns: us(TIME_RESET_US),
            increase_bytes: self.value(BYTE_RESET).into(),
            additive_increase: rate(AI_RATE_KBPS),
            hyper_increase: rate(HAI_RATE_KBPS),
        }
    }

    /// The value of setting `index` of [`SETTINGS`], 0 if there is none.
    pub(super) fn value(&self, index: usize) -> u32 {
        self.values
            .get(index)
            .map_or(0, |v| v.load(Ordering::Relaxed))
    }

    /// Sets setting `index` of [`SETTINGS`]: the switch to 0 or 1; periods
    /// and the byte count must be at least 1.
    pub(super) fn set(&self, index: usize, value: u32) -> Result {
        let value = match index {
            CONGESTION_CONTROL => u32::from(value != 0),
            ALPHA_PERIOD_US | TIME_RESET_US | BYTE_RESET if value == 0 => return Err(EINVAL),
            _ => value,
        };
        let setting = self.values.get(index).ok_or(EINVAL)?;
        setting.store(value, Ordering::Relaxed);
        Ok(())
    }
}
