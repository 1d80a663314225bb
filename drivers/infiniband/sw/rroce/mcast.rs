// SPDX-License-Identifier: GPL-2.0

//! UD multicast (IBA 11.3): a datagram sent to a multicast group reaches
//! every QP attached to it. A group is an IP multicast address as a GID
//! (IPv4 ones mapped, `::ffff:a.b.c.d`); while a QP of the device is
//! attached, the device's netdev is a member of the group (IGMP or MLD, and
//! the group's MAC filter), so that its datagrams come in at all.

use crate::kernel_ext::net::NetDevice;
use crate::kernel_ext::rdma::Qpn;
use crate::limits::{MAX_MCAST_GRP, MAX_MCAST_QP_ATTACH};
use crate::proto::ip::is_multicast;
use kernel::{new_mutex, prelude::*, sync::Mutex};

/// The destination QP number of every multicast datagram.
pub(crate) const MULTICAST_QPN: u32 = 0xff_ffff;

/// The QPs attached to a group.
#[derive(Clone, Copy)]
pub(crate) struct Members {
    qpns: [Qpn; MAX_MCAST_QP_ATTACH as usize],
    len: usize,
}

impl Members {
    const NONE: Self = Self {
        qpns: [Qpn::new(0); MAX_MCAST_QP_ATTACH as usize],
        len: 0,
    };

    /// Their QP numbers.
    pub(crate) fn qpns(&self) -> &[Qpn] {
        &self.qpns[..self.len]
    }

    fn add(&mut self, qpn: Qpn) -> Result {
        let slot = self.qpns.get_mut(self.len).ok_or(ENOMEM)?;
        *slot = qpn;
        self.len += 1;
        Ok(())
    }

    /// Removes `qpn`; `EINVAL` if it is not a member.
    fn remove(&mut self, qpn: Qpn) -> Result {
        let i = self.qpns().iter().position(|&q| q == qpn).ok_or(EINVAL)?;
        self.len -= 1;
        self.qpns[i] = self.qpns[self.len];
        Ok(())
    }
}

/// A group and the QPs attached to it.
struct Group {
    gid: [u8; 16],
    members: Members,
}

/// The groups of a device, in slots that a group leaving frees.
#[pin_data]
pub(crate) struct Groups {
    #[pin]
    groups: Mutex<KVec<Option<Group>>>,
}

impl Groups {
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            groups <- new_mutex!(KVec::new()),
        })
    }

    /// Attaches QP `qpn` to the group `gid`; the first QP of a group has
    /// `netdev` join it. Attaching twice is attaching once.
    pub(crate) fn attach(&self, netdev: &NetDevice, gid: &[u8; 16], qpn: Qpn) -> Result {
        if !is_multicast(gid) {
            return Err(EINVAL);
        }
        // RTNL, which joining takes, is never held around this lock.
        let mut groups = self.groups.lock();
        if let Some(g) = find(&mut groups, gid) {
            if g.members.qpns().contains(&qpn) {
                return Ok(());
            }
            return g.members.add(qpn);
        }
        let mut members = Members::NONE;
        members.add(qpn)?;
        let at = match groups.iter().position(Option::is_none) {
            Some(at) => at,
            None if groups.len() < MAX_MCAST_GRP as usize => {
                groups.push(None, GFP_KERNEL)?;
                groups.len() - 1
            }
            None => return Err(ENOMEM),
        };
        netdev.join_group(gid)?;
        groups[at] = Some(Group { gid: *gid, members });
        Ok(())
    }

    /// Detaches QP `qpn` from the group `gid`; `netdev`, if the device
    /// still has it, leaves a group whose last QP goes. `EINVAL` if the QP
    /// was not attached.
    pub(crate) fn detach(&self, netdev: Option<&NetDevice>, gid: &[u8; 16], qpn: Qpn) -> Result {
        let mut groups = self.groups.lock();
        let slot = groups
            .iter_mut()
            .find(|s| s.as_ref().is_some_and(|g| g.gid == *gid))
            .ok_or(EINVAL)?;
        remove_member(slot, netdev, qpn)
    }

    /// Detaches QP `qpn` from every group, as it is destroyed.
    pub(crate) fn detach_all(&self, netdev: Option<&NetDevice>, qpn: Qpn) {
        let mut groups = self.groups.lock();
        for slot in groups.iter_mut() {
            // EINVAL: not a member there.
            let _ = remove_member(slot, netdev, qpn);
        }
    }

    /// The QPs attached to the group `gid`.
    pub(crate) fn members(&self, gid: &[u8; 16]) -> Members {
        let mut groups = self.groups.lock();
        find(&mut groups, gid).map_or(Members::NONE, |g| g.members)
    }
}

fn find<'a>(groups: &'a mut [Option<Group>], gid: &[u8; 16]) -> Option<&'a mut Group> {
    groups.iter_mut().flatten().find(|g| g.gid == *gid)
}

/// Removes QP `qpn` from the group in `slot`; the last QP out frees the
/// slot, and `netdev`, if the device still has it, leaves the group.
/// `EINVAL` if the slot is free or the QP not a member.
fn remove_member(slot: &mut Option<Group>, netdev: Option<&NetDevice>, qpn: Qpn) -> Result {
    let g = slot.as_mut().ok_or(EINVAL)?;
    g.members.remove(qpn)?;
    if g.members.len == 0 {
        if let Some(netdev) = netdev {
            netdev.leave_group(&g.gid);
        }
        *slot = None;
    }
    Ok(())
}
