// SPDX-License-Identifier: GPL-2.0

//! Trampolines for completion queues, user and kernel.

use super::*;

/// An `ib_cq` with its slot.
pub(super) type CqObject<T> = Object<bindings::ib_cq, CqSlot<T>>;

/// A CQ's data behind its `ib_cq`: the driver's, and the notifier.
pub(super) struct CqSlot<T: Driver> {
    pub(super) notifier: Arc<CqNotifier>,
    pub(super) data: T::Cq,
}

impl<T: Driver> Adapter<T> {
    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an object of our devices.
    pub(super) unsafe extern "C" fn create_cq(
        cq: *mut bindings::ib_cq,
        attr: *const bindings::ib_cq_init_attr,
        attrs: *mut bindings::uverbs_attr_bundle,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: ib_core passes a zeroed CQ of `size_ib_cq` bytes whose
            // `device` is ours, valid attributes, and for userspace callers
            // a bundle with the user context and the driver's udata.
            unsafe {
                let a = CqAttr {
                    cqe: (*attr).cqe,
                    flags: (*attr).flags,
                };
                let uctx = bindings::rroce_attrs_ucontext(attrs).cast::<UserContext>();
                let udata = UData::from_raw(bindings::rroce_attrs_udata(attrs));
                let user = uctx.as_ref().map(|u| (u, &udata));
                // The CQ lives until `destroy_cq` forgets it.
                let notifier = CqNotifier::new(cq, (*attr).comp_vector)?;
                let dev = Self::device((*cq).device);
                let (data, cqe) = T::create_cq(dev, &a, notifier.clone(), user)?;
                (*cq).cqe = cqe.try_into().map_err(|_| EINVAL)?;
                CqObject::<T>::write(cq, CqSlot { notifier, data });
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an object of our devices.
    pub(super) unsafe extern "C" fn destroy_cq(
        cq: *mut bindings::ib_cq,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        // SAFETY: ib_core destroys a CQ once, after a successful create.
        let slot = unsafe { CqObject::<T>::take(cq) };
        slot.notifier.forget();
        0
    }

    /// Called by `ib_free_cq` for a kernel CQ before it cancels the CQ's
    /// poll work: no completion handler call, queued on another CPU or not,
    /// may queue that work again after it is cancelled.
    ///
    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an object of our devices.
    pub(super) unsafe extern "C" fn pre_destroy_cq(cq: *mut bindings::ib_cq) -> ffi::c_int {
        // SAFETY: The CQ was created by us and lives until `destroy_cq`.
        unsafe { CqObject::<T>::data(cq) }.notifier.forget();
        0
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an object of our devices.
    pub(super) unsafe extern "C" fn req_notify_cq(
        cq: *mut bindings::ib_cq,
        flags: bindings::ib_cq_notify_flags,
    ) -> ffi::c_int {
        let solicited = flags & bindings::ib_cq_notify_flags_IB_CQ_SOLICITED_MASK
            == bindings::ib_cq_notify_flags_IB_CQ_SOLICITED;
        let report = flags & bindings::ib_cq_notify_flags_IB_CQ_REPORT_MISSED_EVENTS != 0;
        from_result(|| {
            // SAFETY: The CQ was created by us and is alive during the call.
            let waiting = T::req_notify_cq(&unsafe { CqObject::<T>::data(cq) }.data, solicited)?;
            Ok((report && waiting).into())
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for a CQ of ours.
    pub(super) unsafe extern "C" fn resize_cq(
        cq: *mut bindings::ib_cq,
        cqe: ffi::c_int,
        udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            let cqe = u32::try_from(cqe).map_err(|_| EINVAL)?;
            // SAFETY: The CQ is ours and alive during the call; ib_core
            // serialises resizing with the CQ's other commands.
            unsafe {
                let uctx = bindings::rroce_udata_ucontext(udata).cast::<UserContext>();
                let uctx = uctx
                    .as_ref()
                    .ok_or_else(crate::kernel_ext::errno::eopnotsupp)?;
                let udata = UData::from_raw(udata);
                let now = T::resize_cq(&CqObject::<T>::data(cq).data, cqe, uctx, &udata)?;
                (*cq).cqe = now.try_into().map_err(|_| EINVAL)?;
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core or a kernel consumer, in any context, for a CQ of
    /// ours, with room for `num` completions at `wc`.
    pub(super) unsafe extern "C" fn poll_cq(
        cq: *mut bindings::ib_cq,
        num: ffi::c_int,
        wc: *mut bindings::ib_wc,
    ) -> ffi::c_int {
        let max = usize::try_from(num).unwrap_or(0);
        let mut done = 0;
        // SAFETY: The CQ is ours and alive during the call.
        let cq = &unsafe { CqObject::<T>::data(cq) }.data;
        T::poll_cq(cq, max, |c| {
            // Written straight into the caller's array: no buffer to fill
            // on each of ib_core's many polls that find one or none.
            if done < max {
                // SAFETY: The caller gave room for `num` completions.
                kverbs::write_wc(c, unsafe { &mut *wc.add(done) });
                done += 1;
            }
        });
        done as ffi::c_int
    }
}
