// SPDX-License-Identifier: GPL-2.0

//! Trampolines for memory regions and memory windows.

use super::*;

impl<T: Driver> Adapter<T> {
    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an MR of ours.
    pub(super) unsafe extern "C" fn rereg_user_mr(
        mr: *mut bindings::ib_mr,
        flags: ffi::c_int,
        _start: u64,
        _length: u64,
        _virt_addr: u64,
        access: ffi::c_int,
        pd: *mut bindings::ib_pd,
        _udata: *mut bindings::ib_udata,
    ) -> *mut bindings::ib_mr {
        let flags = flags as u32;
        let result = if flags & bindings::ib_mr_rereg_flags_IB_MR_REREG_TRANS != 0 {
            Err(crate::kernel_ext::errno::eopnotsupp())
        } else {
            // SAFETY: The MR is ours and alive during the call; with
            // `IB_MR_REREG_PD`, `pd` is a live PD of this device.
            unsafe {
                let new_pd = (flags & bindings::ib_mr_rereg_flags_IB_MR_REREG_PD != 0)
                    .then(|| PdObject::<T>::data(pd));
                let new_access = (flags & bindings::ib_mr_rereg_flags_IB_MR_REREG_ACCESS != 0)
                    .then(|| Access::from_bits(access as u32));
                T::rereg_user_mr(
                    Self::device((*mr).device),
                    MrObject::<T>::data(mr),
                    new_pd,
                    new_access,
                )
            }
        };
        match result {
            // Changed in place: ib_core keeps the MR and updates its PD.
            Ok(()) => core::ptr::null_mut(),
            Err(e) => e.to_ptr(),
        }
    }

    /// A new MR's `data` boxed for ib_core, with its `keys`. Without memory
    /// for the box, the MR is deregistered again: no key of it may outlive
    /// the error.
    fn boxed_mr(dev: &Device<T>, data: T::Mr, keys: MrKeys) -> Result<*mut bindings::ib_mr> {
        let mr = MrObject::<T>::new_boxed(data).map_err(|data| {
            let _ = T::dereg_mr(dev, &data);
            ENOMEM
        })?;
        // SAFETY: Just allocated; ib_core fills in the rest on return.
        unsafe {
            (*mr).lkey = keys.lkey.get();
            (*mr).rkey = keys.rkey.get();
        }
        Ok(mr)
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for a PD of our devices.
    pub(super) unsafe extern "C" fn reg_user_mr(
        pd: *mut bindings::ib_pd,
        start: u64,
        length: u64,
        iova: u64,
        access: ffi::c_int,
        _udata: *mut bindings::ib_udata,
    ) -> *mut bindings::ib_mr {
        let region = UserRegion {
            start,
            length,
            access: Access::from_bits(access as u32),
            iova,
        };
        // SAFETY: The PD is ours, alive, with initialised data, during the call.
        let (dev, pd_data) = unsafe { (Self::device((*pd).device), PdObject::<T>::data(pd)) };
        let mr = T::reg_user_mr(dev, pd_data, &region).and_then(|(data, keys)| {
            let mr = Self::boxed_mr(dev, data, keys)?;
            // SAFETY: Just allocated; ib_core fills in the rest on return.
            unsafe {
                (*mr).iova = iova;
                (*mr).length = length;
            }
            Ok(mr)
        });
        match mr {
            Ok(mr) => mr,
            Err(e) => e.to_ptr(),
        }
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for a PD of our devices.
    pub(super) unsafe extern "C" fn get_dma_mr(
        pd: *mut bindings::ib_pd,
        access: ffi::c_int,
    ) -> *mut bindings::ib_mr {
        // SAFETY: The PD is ours, alive, with initialised data, during the call.
        let (dev, pd_data) = unsafe { (Self::device((*pd).device), PdObject::<T>::data(pd)) };
        let mr = T::get_dma_mr(dev, pd_data, Access::from_bits(access as u32))
            .and_then(|(data, keys)| Self::boxed_mr(dev, data, keys));
        match mr {
            Ok(mr) => mr,
            Err(e) => e.to_ptr(),
        }
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for a PD of our devices.
    pub(super) unsafe extern "C" fn alloc_mr(
        pd: *mut bindings::ib_pd,
        mr_type: bindings::ib_mr_type,
        max_num_sg: u32,
    ) -> *mut bindings::ib_mr {
        let mr = if mr_type == bindings::ib_mr_type_IB_MR_TYPE_MEM_REG {
            // SAFETY: The PD is ours, alive, with initialised data, during
            // the call.
            let (dev, pd_data) = unsafe { (Self::device((*pd).device), PdObject::<T>::data(pd)) };
            T::alloc_mr(dev, pd_data, max_num_sg)
                .and_then(|(data, keys)| Self::boxed_mr(dev, data, keys))
        } else {
            // Gapped and integrity MRs are not supported.
            Err(EINVAL)
        };
        match mr {
            Ok(mr) => mr,
            Err(e) => e.to_ptr(),
        }
    }

    /// # Safety
    ///
    /// Called by ib_core (`ib_map_mr_sg`) for an MR `alloc_mr` returned,
    /// with a scatterlist DMA-mapped for this device.
    pub(super) unsafe extern "C" fn map_mr_sg(
        mr: *mut bindings::ib_mr,
        sg: *mut bindings::scatterlist,
        sg_nents: ffi::c_int,
        sg_offset: *mut ffi::c_uint,
    ) -> ffi::c_int {
        // SAFETY: The MR is ours and alive during the call.
        let data = unsafe { MrObject::<T>::data(mr) };
        let mapped = T::map_mr_sg(data, |pages| {
            // SAFETY: The caller's guarantees, passed on.
            let n = unsafe { pages.map_sg(mr, sg, sg_nents, sg_offset) };
            to_result(n).map(|()| n as u32)
        });
        match mapped {
            Ok(n) => n as ffi::c_int,
            Err(e) => e.to_errno(),
        }
    }

    /// # Safety
    ///
    /// Called by ib_core, once, for an MR `reg_user_mr`, `get_dma_mr` or
    /// `alloc_mr` returned.
    pub(super) unsafe extern "C" fn dereg_mr(
        mr: *mut bindings::ib_mr,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: The MR came from `new_boxed`; once its keys are
            // withdrawn ib_core is done with it.
            unsafe {
                T::dereg_mr(Self::device((*mr).device), MrObject::<T>::data(mr))?;
                drop(MrObject::<T>::take_boxed(mr));
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for a PD of our devices:
    /// `sg_list` holds `num_sge` entries.
    pub(super) unsafe extern "C" fn advise_mr(
        pd: *mut bindings::ib_pd,
        advice: bindings::ib_uverbs_advise_mr_advice,
        _flags: u32,
        sg_list: *mut bindings::ib_sge,
        num_sge: u32,
        _attrs: *mut bindings::uverbs_attr_bundle,
    ) -> ffi::c_int {
        from_result(|| {
            let advice =
                MrAdvice::from_raw(advice).ok_or_else(crate::kernel_ext::errno::eopnotsupp)?;
            // SAFETY: The PD is ours and alive during the call; ib_core
            // copied the list in and keeps it for the call.
            unsafe {
                let ranges = MrRange::from_raw(sg_list, num_sge as usize);
                let (dev, pd) = (Self::device((*pd).device), PdObject::<T>::data(pd));
                T::advise_mr(dev, pd, advice, ranges)?;
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an MW of our devices.
    pub(super) unsafe extern "C" fn alloc_mw(
        mw: *mut bindings::ib_mw,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: ib_core passes a zeroed MW of `size_ib_mw` bytes with
            // its device, PD and type set.
            unsafe {
                let mw_type = match (*mw).type_ {
                    bindings::ib_mw_type_IB_MW_TYPE_1 => MwType::Type1,
                    bindings::ib_mw_type_IB_MW_TYPE_2 => MwType::Type2,
                    _ => return Err(EINVAL),
                };
                let pd = PdObject::<T>::data((*mw).pd);
                let (data, rkey) = T::alloc_mw(Self::device((*mw).device), pd, mw_type)?;
                MwObject::<T>::write(mw, data);
                (*mw).rkey = rkey.get();
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, once, for an MW `alloc_mw` made.
    pub(super) unsafe extern "C" fn dealloc_mw(mw: *mut bindings::ib_mw) -> ffi::c_int {
        // SAFETY: The data is initialised and never used again; the device
        // is alive during the call.
        unsafe { T::dealloc_mw(Self::device((*mw).device), MwObject::<T>::take(mw)) };
        0
    }
}
