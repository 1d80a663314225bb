// SPDX-License-Identifier: GPL-2.0

//! Trampolines for queue pairs: their life, and the posts of user and
//! kernel consumers.

use super::{ah::AhObject, cq::CqObject, srq::SrqObject, *};

/// An `ib_qp` with its slot.
pub(super) type QpObject<T> = Object<bindings::ib_qp, QpSlot<T>>;

/// A QP's data behind its `ib_qp`: the driver's, and the notifier.
pub(super) struct QpSlot<T: Driver> {
    pub(super) notifier: Arc<QpNotifier>,
    pub(super) data: T::Qp,
}

impl<T: Driver> Adapter<T> {
    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an object of our devices.
    pub(super) unsafe extern "C" fn create_qp(
        qp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: ib_core passes a zeroed QP of `size_ib_qp` bytes with
            // its device and PD set, valid attributes, and for userspace the
            // driver udata of the command's bundle, which names the context.
            unsafe {
                let dev = Self::device((*qp).device);
                let pd = PdObject::<T>::data((*qp).pd);
                let mut init = QpInit::from_raw(attr);
                let uctx = bindings::rroce_udata_ucontext(udata).cast::<UserContext>();
                let udata = UData::from_raw(udata);
                let user = uctx.as_ref().map(|u| (u, &udata));
                let cqs = QpCqs {
                    send: &CqObject::<T>::data((*attr).send_cq).data,
                    recv: &CqObject::<T>::data((*attr).recv_cq).data,
                    srq: (!(*attr).srq.is_null()).then(|| &SrqObject::<T>::data((*attr).srq).data),
                    handle: QpHandle(qp as usize),
                };
                // The QP lives until `destroy_qp` forgets it.
                let notifier = QpNotifier::new(qp)?;
                let (data, qpn) = T::create_qp(dev, pd, &mut init, cqs, notifier.clone(), user)?;
                QpInit::write_caps(&init.caps, attr);
                (*qp).qp_num = qpn.get();
                QpObject::<T>::write(qp, QpSlot { notifier, data });
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, once, for a QP `create_qp` made.
    pub(super) unsafe extern "C" fn destroy_qp(
        qp: *mut bindings::ib_qp,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        // SAFETY: The QP's data is initialised; ib_core frees the memory
        // after this returns and never uses the data again.
        let slot = unsafe { QpObject::<T>::take(qp) };
        slot.notifier.forget();
        // SAFETY: As above.
        T::destroy_qp(unsafe { Self::device((*qp).device) }, slot.data);
        0
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for a QP of ours.
    pub(super) unsafe extern "C" fn modify_qp(
        qp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_attr,
        mask: ffi::c_int,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: The QP is ours and alive, `attr` valid, during the call.
            unsafe {
                let change = QpChange::from_raw(attr, mask as u32)?;
                T::modify_qp(
                    Self::device((*qp).device),
                    &QpObject::<T>::data(qp).data,
                    &change,
                )?;
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for a QP of ours.
    pub(super) unsafe extern "C" fn attach_mcast(
        qp: *mut bindings::ib_qp,
        gid: *mut bindings::ib_gid,
        _lid: u16,
    ) -> ffi::c_int {
        // SAFETY: As this function's.
        unsafe { Self::mcast(qp, gid, T::attach_mcast) }
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for a QP of ours.
    pub(super) unsafe extern "C" fn detach_mcast(
        qp: *mut bindings::ib_qp,
        gid: *mut bindings::ib_gid,
        _lid: u16,
    ) -> ffi::c_int {
        // SAFETY: As this function's.
        unsafe { Self::mcast(qp, gid, T::detach_mcast) }
    }

    /// Attaches or detaches (`op`) a QP and a multicast group.
    ///
    /// # Safety
    ///
    /// `qp` is a live QP of ours and `gid` valid, during the call.
    unsafe fn mcast(
        qp: *mut bindings::ib_qp,
        gid: *mut bindings::ib_gid,
        op: fn(&Device<T>, &T::Qp, &[u8; 16]) -> Result,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: As the caller guarantees.
            unsafe {
                op(
                    Self::device((*qp).device),
                    &QpObject::<T>::data(qp).data,
                    &(*gid).raw,
                )?
            };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for a QP of ours.
    pub(super) unsafe extern "C" fn query_qp(
        qp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_attr,
        _mask: ffi::c_int,
        init: *mut bindings::ib_qp_init_attr,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: The QP is ours and alive, `attr` and `init` valid and
            // writable, during the call.
            unsafe {
                let q = T::query_qp(Self::device((*qp).device), &QpObject::<T>::data(qp).data)?;
                // uverbs takes both from kmalloc and copies to the process
                // fields rroce has no use for (the alternate path, the SQ
                // drain): none may be left as the allocator's.
                core::ptr::write_bytes(attr, 0, 1);
                core::ptr::write_bytes(init, 0, 1);
                q.attr.write_to(&mut *attr);
                q.av.write_to(&mut (*attr).ah_attr, q.attr.port);
                write_cap(&q.caps, &mut (*attr).cap);
                write_cap(&q.caps, &mut (*init).cap);
                (*init).qp_type = (*qp).qp_type;
                (*init).port_num = q.attr.port;
                (*init).sq_sig_type = if q.sq_sig_all {
                    bindings::ib_sig_type_IB_SIGNAL_ALL_WR
                } else {
                    bindings::ib_sig_type_IB_SIGNAL_REQ_WR
                };
                (*init).send_cq = (*qp).send_cq;
                (*init).recv_cq = (*qp).recv_cq;
                (*init).srq = (*qp).srq;
                (*init).qp_context = (*qp).qp_context;
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for a QP of ours.
    pub(super) unsafe extern "C" fn post_send(
        qp: *mut bindings::ib_qp,
        wr: *const bindings::ib_send_wr,
        bad_wr: *mut *const bindings::ib_send_wr,
    ) -> ffi::c_int {
        // SAFETY: The QP is ours and alive during the call.
        let user = !unsafe { (*qp).uobject }.is_null();
        if !user {
            // SAFETY: A kernel consumer's valid chain of work requests for a
            // QP of ours, whose type decides the work request type.
            return unsafe { Self::post_kernel_sends(qp, wr, bad_wr) };
        }
        from_result(|| {
            // SAFETY: The QP is ours and alive, during the call. A user QP's
            // work requests are in its send ring, not in `wr`.
            unsafe { T::post_send(Self::device((*qp).device), &QpObject::<T>::data(qp).data)? };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// `wr` is a valid chain of send work requests of a kernel consumer for
    /// the kernel QP `qp` of ours, and `bad_wr` valid for writes.
    unsafe fn post_kernel_sends(
        qp: *mut bindings::ib_qp,
        mut wr: *const bindings::ib_send_wr,
        bad_wr: *mut *const bindings::ib_send_wr,
    ) -> ffi::c_int {
        // SAFETY: The QP is ours and alive during the call.
        let (dev, data, ud) = unsafe {
            let t = (*qp).qp_type;
            (
                Self::device((*qp).device),
                &QpObject::<T>::data(qp).data,
                t == bindings::ib_qp_type_IB_QPT_UD || t == bindings::ib_qp_type_IB_QPT_GSI,
            )
        };
        while !wr.is_null() {
            // SAFETY: Guaranteed by the caller; a UD request's AH is a live
            // AH of this device.
            let posted = unsafe {
                kverbs::send_wr(wr, ud, |ah| {
                    (!ah.is_null()).then(|| AhObject::<T>::data(ah).av)
                })
            }
            .and_then(|wqe| T::post_kernel_send(dev, data, wqe));
            if let Err(e) = posted {
                // SAFETY: `bad_wr` is valid for writes.
                unsafe { *bad_wr = wr };
                return e.to_errno();
            }
            // SAFETY: A valid chain.
            wr = unsafe { (*wr).next };
        }
        0
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for a QP of ours.
    pub(super) unsafe extern "C" fn post_recv(
        qp: *mut bindings::ib_qp,
        mut wr: *const bindings::ib_recv_wr,
        bad_wr: *mut *const bindings::ib_recv_wr,
    ) -> ffi::c_int {
        // SAFETY: The QP is ours and alive during the call. The rxe
        // provider posts receives through the ring, never through here.
        let (dev, data, user) = unsafe {
            (
                Self::device((*qp).device),
                &QpObject::<T>::data(qp).data,
                !(*qp).uobject.is_null(),
            )
        };
        while !wr.is_null() {
            let posted = if user {
                Err(crate::kernel_ext::errno::eopnotsupp())
            } else {
                // SAFETY: A kernel consumer's valid receive work request.
                unsafe { kverbs::recv_wr(wr) }.and_then(|wqe| T::post_kernel_recv(dev, data, wqe))
            };
            if let Err(e) = posted {
                // SAFETY: `bad_wr` is valid for writes.
                unsafe { *bad_wr = wr };
                return e.to_errno();
            }
            // SAFETY: A valid chain.
            wr = unsafe { (*wr).next };
        }
        0
    }
}
