// SPDX-License-Identifier: GPL-2.0

//! Interrupts off on the local CPU, for a lock that any context takes.
//!
//! C header: [`include/linux/irqflags.h`](srctree/include/linux/irqflags.h)

use crate::bindings;
use core::{
    marker::PhantomData,
    ops::{Deref, DerefMut},
};
use kernel::{
    ffi::c_ulong,
    sync::{lock::Guard, SpinLock},
};

/// Hard interrupts off on this CPU while it lives (`local_irq_save`), and as
/// they were before once it goes (`local_irq_restore`). A spinlock that a
/// caller in any context may take, an interrupt handler's included, is
/// taken under one, as `spin_lock_irqsave` does.
///
/// Guards go in the reverse order of their making, as locals of nested
/// scopes do; one that outlived a later one, or a lock taken under it,
/// would turn interrupts back on too early (a deadlock risk, not a memory
/// one): [`lock_irqsave`] holds the two in the right order.
///
/// # Invariants
///
/// `flags` is what `local_irq_save` returned on this CPU; the guard is not
/// `Send`, so it is dropped on the CPU it was made on, which interrupts
/// being off keeps it on.
struct IrqsOff {
    flags: c_ulong,
    _not_send: PhantomData<*mut ()>,
}

impl IrqsOff {
    /// Turns hard interrupts off on this CPU until the guard goes.
    fn save() -> Self {
        // SAFETY: May be called in any context.
        let flags = unsafe { bindings::rroce_local_irq_save() };
        // INVARIANT: Just saved, on this CPU.
        Self {
            flags,
            _not_send: PhantomData,
        }
    }
}

impl Drop for IrqsOff {
    fn drop(&mut self) {
        // SAFETY: By the type invariant, `flags` came from
        // `local_irq_save` on this CPU.
        unsafe { bindings::rroce_local_irq_restore(self.flags) };
    }
}

/// A spinlock held with hard interrupts off on this CPU: what
/// [`lock_irqsave`] returns. The lock goes before interrupts come back on,
/// as its fields drop in order.
pub(crate) struct IrqsOffGuard<'a, T> {
    guard: Guard<'a, T, kernel::sync::lock::spinlock::SpinLockBackend>,
    _irqs: IrqsOff,
}

/// Takes `lock` with hard interrupts off on this CPU, as
/// `spin_lock_irqsave` does: a lock that any context takes, an interrupt
/// handler's included.
pub(crate) fn lock_irqsave<T>(lock: &SpinLock<T>) -> IrqsOffGuard<'_, T> {
    let irqs = IrqsOff::save();
    IrqsOffGuard {
        guard: lock.lock(),
        _irqs: irqs,
    }
}

impl<T> Deref for IrqsOffGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> DerefMut for IrqsOffGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}
