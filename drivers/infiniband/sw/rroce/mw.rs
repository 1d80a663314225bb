// SPDX-License-Identifier: GPL-2.0

//! Memory windows: remote access to part of an MR, which the consumer
//! grants and takes back with work requests instead of registering memory.
//!
//! A window's rkey has the shape of an MR key, with an index from the upper
//! half of the index space. Its lowest 8 bits are the consumer's to choose
//! at each bind (`ibv_inc_rkey`), so that the rkey of an earlier binding
//! stops working when the window moves. A type 1 window belongs to its PD
//! and is unbound by a bind of length 0; a type 2 (2B) window belongs to the
//! QP that bound it and is unbound by an invalidation, local or remote.

use crate::ids::Key;
use crate::kernel_ext::{
    fill::Fill,
    random_u32,
    rdma::{Access, AtomicOp, Lkey, MwType, Qpn, Rkey},
};
use crate::limits::{FIRST_MW_INDEX, LAST_MW_INDEX};
use crate::mr::{self, MrCore, MrError, RemoteMr};
use crate::pool::{PdNum, Pool};
use crate::proto::wqe::MwBind;
use kernel::{
    new_spinlock,
    prelude::*,
    sync::{Arc, SpinLock},
};

/// The rights a window may grant.
const WINDOW_ACCESS: Access = Access::REMOTE_READ
    .with(Access::REMOTE_WRITE)
    .with(Access::REMOTE_ATOMIC)
    .with(Access::FLUSH_GLOBAL);
/// What a bind may ask for besides: local rights, which mean nothing for a
/// window (the C rxe takes them too), and zero-based addressing (type 2).
const BIND_ACCESS: Access = WINDOW_ACCESS
    .with(Access::LOCAL_WRITE)
    .with(Access::MW_BIND)
    .with(Access::ZERO_BASED);

/// The memory windows of a device, by key index.
pub(crate) fn new_pool() -> impl PinInit<Pool<MwCore>, Error> {
    Pool::new(FIRST_MW_INDEX, LAST_MW_INDEX)
}

/// Whether `rkey` names a window rather than an MR.
fn is_mw_key(rkey: Rkey) -> bool {
    Key::from(rkey).index() >= FIRST_MW_INDEX
}

/// A memory window, as ib_core holds it.
pub(crate) struct Mw {
    core: Arc<MwCore>,
}

/// What the data path uses of a window.
#[pin_data]
pub(crate) struct MwCore {
    mw_type: MwType,
    pd: PdNum,
    #[pin]
    binding: SpinLock<Binding>,
}

struct Binding {
    rkey: Key,
    window: Option<Window>,
}

/// What a bound window opens.
struct Window {
    mr: Arc<MrCore>,
    addr: u64,
    length: u64,
    access: Access,
    /// Type 2: the QP it is bound to.
    qpn: Option<Qpn>,
    /// Peers name its bytes from 0 rather than by `addr`.
    zero_based: bool,
}

impl Drop for Window {
    fn drop(&mut self) {
        self.mr.release_window();
    }
}

/// The keys of a device: its MRs and memory windows, where an rkey from a
/// peer or a bind's lkey is looked up.
#[derive(Clone, Copy)]
pub(crate) struct Keys<'a> {
    pub(crate) mrs: &'a Pool<MrCore>,
    pub(crate) mws: &'a Pool<MwCore>,
}

/// The QP a bind, an invalidation or a remote access is for: its PD, and
/// its number, which type 2 windows are bound to.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ForQp {
    pub(crate) pd: PdNum,
    pub(crate) qpn: Qpn,
}

/// Why a bind or an invalidation was refused.
#[derive(Debug)]
pub(crate) struct Refused;

impl Mw {
    /// A new unbound window among `mws`, in PD `pd`; returns it with its
    /// rkey.
    pub(crate) fn alloc(mws: &Pool<MwCore>, pd: PdNum, mw_type: MwType) -> Result<(Self, Rkey)> {
        let mut rkey = Key::new(0, 0);
        let (_, core) = mws.add(|index| {
            rkey = Key::new(index, random_u32());
            Arc::pin_init(
                try_pin_init!(MwCore {
                    mw_type,
                    pd,
                    binding <- new_spinlock!(Binding { rkey, window: None }),
                }),
                GFP_KERNEL,
            )
        })?;
        Ok((Self { core }, rkey.rkey()))
    }

    /// Withdraws the window; requests already given its MR finish.
    pub(crate) fn dealloc(self, mws: &Pool<MwCore>) {
        let index = self.core.binding.lock().rkey.index();
        mws.remove(index);
        let window = self.core.binding.lock().window.take();
        drop(window);
    }
}

/// The live window `rkey` names, by its current rkey.
fn find(mws: &Pool<MwCore>, rkey: Rkey) -> Option<Arc<MwCore>> {
    let key = Key::from(rkey);
    let mw = mws.get(key.index())?;
    let current = mw.binding.lock().rkey;
    (current == key).then_some(mw)
}

/// Binds a window for `qp` as `bind` asks (IBA 10.6.7.2, C10-72 to C10-75).
pub(crate) fn bind(keys: Keys<'_>, qp: ForQp, bind: &MwBind) -> Result<(), Refused> {
    let mw_rkey = Rkey::new(bind.mw_rkey);
    let mw = find(keys.mws, mw_rkey).ok_or(Refused)?;
    let access = Access::from_bits(bind.access);
    let zero_based = access.contains(Access::ZERO_BASED);
    // o10-36.2.2: a type 1 window is never zero based.
    if mw.pd != qp.pd
        || !BIND_ACCESS.contains(access)
        || (zero_based && mw.mw_type == MwType::Type1)
    {
        return Err(Refused);
    }
    let window = if bind.length == 0 {
        // Type 2 windows are unbound by invalidation only.
        if mw.mw_type == MwType::Type2 {
            return Err(Refused);
        }
        None
    } else {
        let mr = mr::find(keys.mrs, Lkey::new(bind.mr_lkey).into(), qp.pd).map_err(|_| Refused)?;
        let writes =
            access.contains(Access::REMOTE_WRITE) || access.contains(Access::REMOTE_ATOMIC);
        let mr_access = mr.access();
        if !mr_access.contains(Access::MW_BIND)
            || (writes && !mr_access.contains(Access::LOCAL_WRITE))
            || mr.offset_of(bind.addr, bind.length).is_none()
            || !mr.hold_window()
        {
            return Err(Refused);
        }
        Some(Window {
            mr,
            addr: bind.addr,
            length: bind.length,
            access,
            qpn: (mw.mw_type == MwType::Type2).then_some(qp.qpn),
            zero_based,
        })
    };
    let mut b = mw.binding.lock();
    // Checked again under the lock: another QP may have bound it meanwhile.
    if b.rkey != Key::from(mw_rkey) || (mw.mw_type == MwType::Type2 && b.window.is_some()) {
        return Err(Refused);
    }
    b.rkey = b.rkey.with_consumer_bits(Rkey::new(bind.new_rkey).into());
    let old = core::mem::replace(&mut b.window, window);
    // The last reference to an MR unpins its pages, which may sleep.
    drop(b);
    drop(old);
    Ok(())
}

/// Invalidates what `rkey` names for `qp`: a type 2 window, or a kernel
/// consumer's fast-registration MR; by a local work request, or by a
/// peer's SEND with Invalidate (`remote`).
pub(crate) fn invalidate(
    keys: Keys<'_>,
    qp: ForQp,
    rkey: Rkey,
    remote: bool,
) -> Result<(), Refused> {
    if is_mw_key(rkey) {
        invalidate_mw(keys.mws, qp, rkey, remote)
    } else {
        mr::invalidate(keys.mrs, qp.pd, rkey).map_err(|_| Refused)
    }
}

/// Unbinds the type 2 window `rkey` names, for `qp` (LOCAL_INV) or for a
/// peer's SEND with Invalidate to `qp` (`remote`), which must be the QP the
/// window is bound to.
fn invalidate_mw(mws: &Pool<MwCore>, qp: ForQp, rkey: Rkey, remote: bool) -> Result<(), Refused> {
    let mw = find(mws, rkey).ok_or(Refused)?;
    if mw.mw_type != MwType::Type2 || mw.pd != qp.pd {
        return Err(Refused);
    }
    let mut b = mw.binding.lock();
    let bound_qpn = b.window.as_ref().and_then(|w| w.qpn).ok_or(Refused)?;
    if b.rkey != Key::from(rkey) || (remote && bound_qpn != qp.qpn) {
        return Err(Refused);
    }
    // Dropped outside the lock, as in `bind`.
    let window = b.window.take();
    drop(b);
    drop(window);
    Ok(())
}

/// Unbinds the type 2 windows bound to QP `qpn`, which is going away, so
/// that a QP given its number later cannot use them.
pub(crate) fn qp_destroyed(mws: &Pool<MwCore>, qpn: Qpn) {
    mws.for_each(|mw| {
        let mut b = mw.binding.lock();
        if b.window.as_ref().is_some_and(|w| w.qpn == Some(qpn)) {
            let window = b.window.take();
            drop(b);
            drop(window);
        }
    });
}

/// As [`mr::lookup`], for an rkey a peer sent to `qp`: an MR's, or a
/// memory window's.
pub(crate) fn lookup_remote(
    keys: Keys<'_>,
    qp: ForQp,
    rkey: Rkey,
    access: Access,
    va: u64,
    len: u64,
) -> Result<(Arc<MrCore>, usize), MrError> {
    let (mr, _, offset) = resolve(keys, qp, rkey, access, va, len)?;
    Ok((mr, offset))
}

/// The MR an rkey names, the window it names it through if any, and the
/// offset in the MR.
type Resolved = (Arc<MrCore>, Option<Arc<MwCore>>, usize);

/// As [`lookup_remote`], with the window the rkey named, if it is a
/// window's.
fn resolve(
    keys: Keys<'_>,
    qp: ForQp,
    rkey: Rkey,
    access: Access,
    va: u64,
    len: u64,
) -> Result<Resolved, MrError> {
    if is_mw_key(rkey) {
        let mw = find(keys.mws, rkey).ok_or(MrError::Key)?;
        let (mr, offset) = lookup(&mw, qp, rkey, access, va, len)?;
        Ok((mr, Some(mw), offset))
    } else {
        let (mr, offset) = mr::lookup(keys.mrs, rkey.into(), qp.pd, access, va, len)?;
        Ok((mr, None, offset))
    }
}

/// The memory a peer's request named by an rkey, held for the request's
/// later packets (a WRITE's, a READ response's), each of which checks again
/// that the rkey names it: the MR's own checks ([`RemoteMr`]), and, through
/// a window, that the window is still bound to the MR with that rkey and
/// the right.
pub(crate) struct RemoteTarget {
    mr: RemoteMr,
    window: Option<(Arc<MwCore>, Rkey)>,
}

impl RemoteTarget {
    /// Whether the window, if any, still opens the MR to the rkey.
    fn window_holds(&self) -> Result<(), MrError> {
        let Some((mw, rkey)) = &self.window else {
            return Ok(());
        };
        let b = mw.binding.lock();
        match &b.window {
            Some(w) if b.rkey == Key::from(*rkey) && self.mr.is(&w.mr) => {
                if w.access.contains(self.mr.access()) {
                    Ok(())
                } else {
                    Err(MrError::Access)
                }
            }
            _ => Err(MrError::Key),
        }
    }

    /// Copies `src` to `offset`, which the lookup checked.
    pub(crate) fn write(&self, offset: usize, src: &[u8]) -> Result<(), MrError> {
        self.window_holds()?;
        self.mr.write(offset, src)
    }

    /// Appends `len` bytes from `offset`, which the lookup checked, to `dst`.
    pub(crate) fn read(
        &self,
        offset: usize,
        len: usize,
        dst: &mut Fill<'_>,
    ) -> Result<(), MrError> {
        self.window_holds()?;
        self.mr.read(offset, len, dst)
    }

    /// Runs an atomic on the 8 bytes at `offset`, which the lookup checked;
    /// returns the old value.
    pub(crate) fn atomic(&self, offset: usize, op: AtomicOp) -> Result<u64, MrError> {
        self.window_holds()?;
        self.mr.atomic(offset, op)
    }

    /// Faults on-demand pages in; see [`MrCore::fault_in`].
    pub(crate) fn fault_in(&self, offset: usize, len: usize, write: bool) -> Result<(), MrError> {
        self.mr.fault_in(offset, len, write)
    }
}

/// As [`lookup_remote`], held for the later packets of the request.
pub(crate) fn hold_remote(
    keys: Keys<'_>,
    qp: ForQp,
    rkey: Rkey,
    access: Access,
    va: u64,
    len: u64,
) -> Result<(RemoteTarget, usize), MrError> {
    let (mr, window, offset) = resolve(keys, qp, rkey, access, va, len)?;
    // An MR's key is the rkey that just named it; windows are bound to
    // user MRs only, whose key never changes.
    let key = if window.is_some() {
        mr.key()
    } else {
        Key::from(rkey)
    };
    let target = RemoteTarget {
        mr: RemoteMr::new(mr, key, qp.pd, access),
        window: window.map(|mw| (mw, rkey)),
    };
    Ok((target, offset))
}

/// As [`mr::lookup`], for a window's rkey sent to `qp`, in the window
/// `mw` it names.
fn lookup(
    mw: &MwCore,
    qp: ForQp,
    rkey: Rkey,
    access: Access,
    va: u64,
    len: u64,
) -> Result<(Arc<MrCore>, usize), MrError> {
    if mw.pd != qp.pd {
        return Err(MrError::Key);
    }
    let b = mw.binding.lock();
    let w = b.window.as_ref().ok_or(MrError::Key)?;
    if b.rkey != Key::from(rkey) || w.qpn.is_some_and(|n| n != qp.qpn) {
        return Err(MrError::Key);
    }
    if !w.access.contains(access) {
        return Err(MrError::Access);
    }
    let from = if w.zero_based {
        va
    } else {
        va.checked_sub(w.addr).ok_or(MrError::Range)?
    };
    if from.checked_add(len).ok_or(MrError::Range)? > w.length {
        return Err(MrError::Range);
    }
    // Inside the window, which is inside the MR; but a zero-based window
    // of an MR whose iova is near the top has addresses past 2^64.
    let va = w.addr.checked_add(from).ok_or(MrError::Range)?;
    let offset = w.mr.offset_of(va, len).ok_or(MrError::Range)?;
    Ok((w.mr.clone(), offset))
}
