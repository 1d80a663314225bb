// SPDX-License-Identifier: GPL-2.0

//! Driver data placed right behind a C object that ib_core allocates.
//!
//! ib_core allocates most verbs objects (`ib_ucontext`, `ib_pd`, ...) itself,
//! zeroed, with the size the driver declares in `ib_device_ops.size_ib_*`;
//! the driver's part follows the C object in the same allocation, which is
//! what C drivers get from `container_of`.

use core::{marker::PhantomData, mem::size_of, ptr::addr_of_mut};
use kernel::prelude::*;

/// The layout of a C object `C` followed by the driver's `D`.
#[repr(C)]
pub(crate) struct WithData<C, D> {
    c: C,
    data: D,
}

/// Typed access to such objects, given a pointer to their C part.
pub(crate) struct Object<C, D>(PhantomData<(C, D)>);

impl<C, D> Object<C, D> {
    /// The size to declare to ib_core for the whole object.
    pub(crate) const SIZE: usize = {
        // ib_core allocates with kzalloc, which aligns to at least 8 bytes.
        assert!(core::mem::align_of::<WithData<C, D>>() <= 8);
        size_of::<WithData<C, D>>()
    };

    /// Moves `data` into the object.
    ///
    /// # Safety
    ///
    /// `c` points to the C part of an allocation of at least `SIZE` bytes
    /// whose data part is not initialised.
    pub(crate) unsafe fn write(c: *mut C, data: D) {
        let obj = c.cast::<WithData<C, D>>();
        // SAFETY: The caller guarantees the allocation is large enough and
        // that the data part holds no value to drop.
        unsafe { addr_of_mut!((*obj).data).write(data) };
    }

    /// Borrows the data.
    ///
    /// # Safety
    ///
    /// `c` points to the C part of an object whose data part was initialised
    /// by [`Object::write`] and is not dropped during `'a`.
    pub(crate) unsafe fn data<'a>(c: *const C) -> &'a D {
        // SAFETY: Guaranteed by the caller.
        unsafe { &(*c.cast::<WithData<C, D>>()).data }
    }

    /// Drops the data in place; ib_core frees the memory afterwards.
    ///
    /// # Safety
    ///
    /// `c` points to the C part of an object whose data part is initialised
    /// and not used again.
    pub(crate) unsafe fn drop_data(c: *mut C) {
        let obj = c.cast::<WithData<C, D>>();
        // SAFETY: Guaranteed by the caller.
        unsafe { core::ptr::drop_in_place(addr_of_mut!((*obj).data)) };
    }

    /// Moves the data out; ib_core frees the memory afterwards.
    ///
    /// # Safety
    ///
    /// `c` points to the C part of an object whose data part is initialised
    /// and not used again.
    pub(crate) unsafe fn take(c: *mut C) -> D {
        // SAFETY: Guaranteed by the caller.
        unsafe { addr_of_mut!((*c.cast::<WithData<C, D>>()).data).read() }
    }

    /// Allocates an object the driver, not ib_core, allocates (an MR): a
    /// zeroed C part followed by `data`; without memory, `data` comes back,
    /// for the driver to undo what it stands for.
    pub(crate) fn new_boxed(data: D) -> Result<*mut C, D>
    where
        C: Default,
    {
        let Ok(obj) = KBox::<WithData<C, D>>::new_uninit(GFP_KERNEL) else {
            return Err(data);
        };
        let obj = obj.write(WithData {
            c: C::default(),
            data,
        });
        Ok(KBox::into_raw(obj).cast())
    }

    /// Frees an object from [`Object::new_boxed`], handing back its data.
    ///
    /// # Safety
    ///
    /// `c` comes from [`Object::new_boxed`] and is not used afterwards.
    pub(crate) unsafe fn take_boxed(c: *mut C) -> D {
        // SAFETY: Guaranteed by the caller.
        let obj = unsafe { KBox::from_raw(c.cast::<WithData<C, D>>()) };
        KBox::into_inner(obj).data
    }
}
