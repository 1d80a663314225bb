// SPDX-License-Identifier: GPL-2.0

//! What users may change of a device: through verbs (`modify_device`,
//! `modify_port`) and through its settings in sysfs, congestion control's
//! switch and how fast a QP that CNPs slowed down recovers.

use crate::kernel_ext::{
    congestion_control,
    rdma::{self, Setting, SettingKind},
};
use crate::proto::dcqcn::Params;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
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
    /// Whether the device does congestion control, at first the module
    /// parameter's value.
    congestion_control: AtomicBool,
    /// The numbers of [`SETTINGS`], by index (the first slot unused), in
    /// their units there.
    cc: [AtomicU32; SETTINGS.len()],
}

impl Settings {
    /// A new device's, with `guid` its node GUID.
    pub(super) fn new(guid: [u8; 8]) -> Self {
        let nic = Params::NIC;
        let cc = [
            0,
            (nic.alpha_period_ns / 1000) as u32,
            (nic.increase_period_ns / 1000) as u32,
            nic.increase_bytes as u32,
            (nic.additive_increase / 125) as u32,
            (nic.hyper_increase / 125) as u32,
        ];
        Self {
            sys_image_guid: AtomicU64::new(u64::from_ne_bytes(guid)),
            port_cap_flags: AtomicU32::new(rdma::PORT_CAP_CM_SUP),
            congestion_control: AtomicBool::new(congestion_control()),
            cc: cc.map(AtomicU32::new),
        }
    }

    pub(super) fn sys_image_guid(&self) -> u64 {
        self.sys_image_guid.load(Ordering::Relaxed)
    }

    /// Whether the device does congestion control.
    pub(super) fn congestion_control(&self) -> bool {
        self.congestion_control.load(Ordering::Relaxed)
    }

    /// How a QP that a CNP cuts recovers.
    pub(super) fn cc_params(&self) -> Params {
        let us = |i: usize| u64::from(self.cc[i].load(Ordering::Relaxed)) * 1000;
        // kb/s in bytes per second.
        let rate = |i: usize| u64::from(self.cc[i].load(Ordering::Relaxed)) * 125;
        Params {
            alpha_period_ns: us(ALPHA_PERIOD_US),
            increase_period_ns: us(TIME_RESET_US),
            increase_bytes: self.cc[BYTE_RESET].load(Ordering::Relaxed).into(),
            additive_increase: rate(AI_RATE_KBPS),
            hyper_increase: rate(HAI_RATE_KBPS),
        }
    }

    /// The value of setting `index` of [`SETTINGS`].
    pub(super) fn get(&self, index: usize) -> u32 {
        match index {
            CONGESTION_CONTROL => self.congestion_control().into(),
            _ => self.cc.get(index).map_or(0, |v| v.load(Ordering::Relaxed)),
        }
    }

    /// Sets setting `index` of [`SETTINGS`]: periods and the byte count
    /// must be at least 1.
    pub(super) fn set(&self, index: usize, value: u32) -> Result {
        match index {
            CONGESTION_CONTROL => self.congestion_control.store(value != 0, Ordering::Relaxed),
            ALPHA_PERIOD_US | TIME_RESET_US | BYTE_RESET if value == 0 => return Err(EINVAL),
            _ => self
                .cc
                .get(index)
                .ok_or(EINVAL)?
                .store(value, Ordering::Relaxed),
        }
        Ok(())
    }
}
