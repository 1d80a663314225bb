// SPDX-License-Identifier: GPL-2.0

//! Trampolines for shared receive queues.

use super::*;

/// An `ib_srq` with its slot.
pub(super) type SrqObject<T> = Object<bindings::ib_srq, SrqSlot<T>>;

/// An SRQ's data behind its `ib_srq`: the driver's, and the notifier.
pub(super) struct SrqSlot<T: Driver> {
    pub(super) notifier: Arc<SrqNotifier>,
    pub(super) data: T::Srq,
}

impl<T: Driver> Adapter<T> {
    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an SRQ of our devices.
    pub(super) unsafe extern "C" fn create_srq(
        srq: *mut bindings::ib_srq,
        init: *mut bindings::ib_srq_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: ib_core passes a zeroed SRQ of `size_ib_srq` bytes with
            // its device and PD set, valid attributes, and for userspace the
            // driver udata of the command's bundle, which names the context.
            unsafe {
                if (*init).srq_type != bindings::ib_srq_type_IB_SRQT_BASIC {
                    return Err(crate::kernel_ext::errno::eopnotsupp());
                }
                let dev = Self::device((*srq).device);
                let pd = PdObject::<T>::data((*srq).pd);
                let attr = SrqAttr::from_raw(&(*init).attr);
                // The SRQ lives until `destroy_srq` forgets it.
                let notifier = SrqNotifier::new(srq)?;
                let uctx = bindings::rroce_udata_ucontext(udata).cast::<UserContext>();
                let udata = UData::from_raw(udata);
                let user = uctx.as_ref().map(|u| (u, &udata));
                let (data, actual) = T::create_srq(dev, pd, &attr, notifier.clone(), user)?;
                actual.write_to(&mut (*init).attr);
                SrqObject::<T>::write(srq, SrqSlot { notifier, data });
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an SRQ of ours.
    pub(super) unsafe extern "C" fn modify_srq(
        srq: *mut bindings::ib_srq,
        attr: *mut bindings::ib_srq_attr,
        mask: bindings::ib_srq_attr_mask,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: The SRQ is ours and alive, `attr` valid, during the call.
            unsafe {
                let dev = Self::device((*srq).device);
                let a = SrqAttr::from_raw(&*attr);
                T::modify_srq(dev, &SrqObject::<T>::data(srq).data, &a, SrqMask(mask))?;
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an SRQ of ours.
    pub(super) unsafe extern "C" fn query_srq(
        srq: *mut bindings::ib_srq,
        attr: *mut bindings::ib_srq_attr,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: The SRQ is ours and alive, `attr` writable, during the call.
            unsafe {
                let dev = Self::device((*srq).device);
                T::query_srq(dev, &SrqObject::<T>::data(srq).data)?.write_to(&mut *attr);
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, once, for an SRQ `create_srq` made.
    pub(super) unsafe extern "C" fn destroy_srq(
        srq: *mut bindings::ib_srq,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        // SAFETY: The data is initialised and never used again; ib_core
        // frees the SRQ after this returns.
        let slot = unsafe { SrqObject::<T>::take(srq) };
        slot.notifier.forget();
        // SAFETY: As above.
        T::destroy_srq(unsafe { Self::device((*srq).device) }, slot.data);
        0
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an SRQ of ours.
    pub(super) unsafe extern "C" fn post_srq_recv(
        srq: *mut bindings::ib_srq,
        mut wr: *const bindings::ib_recv_wr,
        bad_wr: *mut *const bindings::ib_recv_wr,
    ) -> ffi::c_int {
        // SAFETY: The SRQ is ours and alive during the call. The rxe
        // provider posts to a process's SRQ through its ring, never here.
        let (data, user) = unsafe { (&SrqObject::<T>::data(srq).data, !(*srq).uobject.is_null()) };
        while !wr.is_null() {
            let posted = if user {
                Err(crate::kernel_ext::errno::eopnotsupp())
            } else {
                // SAFETY: A kernel consumer's valid receive work request.
                unsafe { kverbs::recv_wr(wr) }.and_then(|wqe| T::post_kernel_srq_recv(data, wqe))
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
