// SPDX-License-Identifier: GPL-2.0

//! Calls to an object's owner: a CQ's completion handler, on its
//! completion vector's CPU, and the asynchronous events of QPs and SRQs,
//! for as long as the object exists.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use crate::bindings;
use core::mem::offset_of;
use kernel::{
    ffi, new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
    types::Opaque,
};

/// Calls the owner of the `ib_cq`, `ib_qp` or `ib_srq` `O` back until the
/// object is destroyed; the driver keeps it in the object's data.
///
/// # Invariants
///
/// `obj` points to the live object until it is destroyed, and is null after.
#[pin_data]
pub(crate) struct Notifier<O> {
    #[pin]
    obj: Mutex<Raw<O>>,
}

/// A pointer to the object of a [`Notifier`].
struct Raw<O>(*mut O);

// SAFETY: The pointer is only used under the mutex, while the object lives.
unsafe impl<O> Send for Raw<O> {}

/// Raises a QP's asynchronous events.
pub(crate) type QpNotifier = Notifier<bindings::ib_qp>;
/// Raises an SRQ's limit event.
pub(crate) type SrqNotifier = Notifier<bindings::ib_srq>;

impl<O> Notifier<O> {
    /// A notifier for `obj`.
    ///
    /// # Safety
    ///
    /// `obj` stays valid until [`Notifier::forget`] is called, before the
    /// object is freed.
    pub(super) unsafe fn new(obj: *mut O) -> Result<Arc<Self>> {
        // SAFETY: As the caller guarantees.
        Arc::pin_init(unsafe { Self::init(obj) }, GFP_KERNEL)
    }

    /// As [`Notifier::new`], in place.
    ///
    /// # Safety
    ///
    /// As for [`Notifier::new`].
    unsafe fn init(obj: *mut O) -> impl PinInit<Self> {
        // INVARIANT: The caller keeps `obj` alive until `forget`.
        pin_init!(Self { obj <- new_mutex!(Raw(obj)) })
    }

    /// The object is about to be freed: no more calls.
    pub(super) fn forget(&self) {
        // INVARIANT: Null from now on.
        self.obj.lock().0 = core::ptr::null_mut();
    }

    /// Calls `f` with the object, unless it is gone; it cannot go meanwhile.
    fn with(&self, f: impl FnOnce(*mut O)) {
        let obj = self.obj.lock();
        if !obj.0.is_null() {
            f(obj.0);
        }
    }
}

/// An event of type `event` on `device`, for the handler of the object it
/// is about; the caller sets `element`.
fn event(device: *mut bindings::ib_device, event: u32) -> bindings::ib_event {
    bindings::ib_event {
        device,
        event,
        ..Default::default()
    }
}

/// Calls an object's event handler, if it has one, with `ev`.
///
/// # Safety
///
/// `handler` and `context` are those of a live object that `ev` names.
unsafe fn deliver(
    mut ev: bindings::ib_event,
    handler: Option<unsafe extern "C" fn(*mut bindings::ib_event, *mut ffi::c_void)>,
    context: *mut ffi::c_void,
) {
    if let Some(handler) = handler {
        // SAFETY: As the caller guarantees.
        unsafe { handler(&mut ev, context) };
    }
}

/// Signals a CQ's completion event (to a completion channel, or a kernel
/// consumer's handler) on the CPU of the CQ's completion vector, as a
/// NIC's interrupt for that vector would.
///
/// # Invariants
///
/// `work` is initialised, runs [`CqNotifier::run`], and is idle once
/// [`CqNotifier::forget`] returns.
#[pin_data]
pub(crate) struct CqNotifier {
    #[pin]
    cq: Notifier<bindings::ib_cq>,
    /// The vector's CPU.
    cpu: i32,
    /// Calls the handler on `cpu` when the completion came on another.
    #[pin]
    work: Opaque<bindings::work_struct>,
}

// SAFETY: The work item is only queued and cancelled through the kernel's
// workqueue calls, which any thread may make.
unsafe impl Send for CqNotifier {}
// SAFETY: As for `Send`; the CQ pointer is used under the notifier's lock.
unsafe impl Sync for CqNotifier {}

/// The completion vectors a device offers: one per online CPU.
pub(super) fn comp_vectors() -> u32 {
    // SAFETY: Reads a count.
    unsafe { bindings::rroce_num_online_cpus() }
}

impl CqNotifier {
    /// A notifier for `cq`, on the CPU of completion vector `vector`.
    ///
    /// # Safety
    ///
    /// `cq` stays valid until [`CqNotifier::forget`] is called, before the
    /// CQ is freed.
    pub(super) unsafe fn new(cq: *mut bindings::ib_cq, vector: u32) -> Result<Arc<Self>> {
        // SAFETY: Any vector maps to an online CPU.
        let cpu = unsafe { bindings::rroce_vector_cpu(vector) };
        Arc::pin_init(
            pin_init!(Self {
                // SAFETY: As the caller guarantees.
                cq <- unsafe { Notifier::init(cq) },
                cpu,
                // SAFETY: `INIT_WORK` initialises the memory it is given.
                work <- Opaque::ffi_init(|w| unsafe {
                    bindings::rroce_init_work(w, Some(Self::run))
                }),
            }),
            GFP_KERNEL,
        )
    }

    /// Calls the CQ's completion handler: here when this is its vector's
    /// CPU, else soon on that CPU. Completions that come while it waits to
    /// run share one call, as with an interrupt.
    pub(crate) fn notify(&self) {
        // SAFETY: Pins the thread to the CPU it runs on, if that is `cpu`.
        if unsafe { bindings::rroce_pin_to_cpu(self.cpu) } {
            self.call_handler();
            // SAFETY: Pinned above.
            unsafe { bindings::rroce_unpin_cpu() };
            return;
        }
        // Queued only while the CQ lives: `forget` then waits for it.
        self.cq.with(|_| {
            // SAFETY: `work` is initialised (type invariant) and lives as
            // long as `self`, which `forget` makes outlast the work.
            unsafe { bindings::rroce_queue_work_on(self.cpu, self.work.get()) };
        });
    }

    fn call_handler(&self) {
        self.cq.with(|cq| {
            // SAFETY: `with` passes the live CQ, which stays alive during
            // the call.
            unsafe { bindings::rroce_cq_comp_handler(cq) }
        });
    }

    /// # Safety
    ///
    /// Called by the workqueue with the `work` of a [`CqNotifier`].
    unsafe extern "C" fn run(work: *mut bindings::work_struct) {
        // SAFETY: `work` is the `work` field of a notifier, which `forget`
        // keeps alive until the work has run.
        let this = unsafe { &*work.byte_sub(offset_of!(Self, work)).cast::<Self>() };
        this.call_handler();
    }

    /// The CQ is about to be freed: no more calls, queued or not.
    pub(super) fn forget(&self) {
        self.cq.forget();
        // INVARIANT: `notify` queues the work only while the CQ is known,
        // so once it is idle here it stays idle.
        // SAFETY: `work` is initialised.
        unsafe { bindings::cancel_work_sync(self.work.get()) };
    }

    /// Tells the CQ's owner that a completion found it full
    /// (`IB_EVENT_CQ_ERR`).
    pub(crate) fn overflowed(&self) {
        // SAFETY: `with` passes the live CQ, which stays alive during the
        // call; the event names it.
        self.cq.with(|cq| unsafe {
            let mut ev = event((*cq).device, bindings::ib_event_type_IB_EVENT_CQ_ERR);
            ev.element.cq = cq;
            deliver(ev, (*cq).event_handler, (*cq).cq_context);
        });
    }
}

impl SrqNotifier {
    /// Tells the SRQ's owner that fewer work requests than its limit are
    /// left (`IB_EVENT_SRQ_LIMIT_REACHED`).
    pub(crate) fn limit_reached(&self) {
        // SAFETY: `with` passes the live SRQ, which stays alive during the
        // call; the event names it.
        self.with(|srq| unsafe {
            let mut ev = event(
                (*srq).device,
                bindings::ib_event_type_IB_EVENT_SRQ_LIMIT_REACHED,
            );
            ev.element.srq = srq;
            deliver(ev, (*srq).event_handler, (*srq).srq_context);
        });
    }
}

/// An asynchronous event of a QP (`enum ib_event_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum QpEvent {
    /// The first packet arrived while the QP was ready to receive.
    CommEstablished = bindings::ib_event_type_IB_EVENT_COMM_EST,
    /// A QP on an SRQ entered the error state: it takes no more receive
    /// requests from the SRQ.
    LastWqeReached = bindings::ib_event_type_IB_EVENT_QP_LAST_WQE_REACHED,
    /// The QP failed for a reason no completion reports, e.g. a full CQ.
    Fatal = bindings::ib_event_type_IB_EVENT_QP_FATAL,
}

impl QpNotifier {
    /// Raises `what` to the QP's owner.
    pub(crate) fn raise(&self, what: QpEvent) {
        // SAFETY: `with` passes the live QP, which stays alive during the
        // call; the event names it.
        self.with(|qp| unsafe {
            let mut ev = event((*qp).device, what as u32);
            ev.element.qp = qp;
            deliver(ev, (*qp).event_handler, (*qp).qp_context);
        });
    }
}
