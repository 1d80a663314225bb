// SPDX-License-Identifier: GPL-2.0

//! Address handles: where a UD work request sends its datagram. The rxe
//! provider names them in work requests by the number the kernel hands out
//! on creation (`ah_num`), which the requester looks up.

use crate::device::RroceDevice;
use crate::index::Pool;
use crate::kernel_ext::rdma::{rxe_abi::CreateAhResp, Av, Device, UData};
use kernel::{prelude::*, sync::Arc};

/// The most AHs a device holds; number 0 means "none" to the provider.
pub(crate) const MAX_AH: u32 = (1 << 16) - 1;

/// The AHs of a device, numbered from 1.
pub(crate) fn new_pool() -> impl PinInit<Pool<AhCore>, Error> {
    Pool::new(1, MAX_AH)
}

/// An address handle, as ib_core holds it.
pub(crate) struct Ah {
    num: u32,
}

/// What the requester uses of an AH.
pub(crate) struct AhCore {
    pub(crate) av: Av,
    /// The protection domain, which the QPs using it must share.
    pub(crate) pd: u32,
}

impl Ah {
    /// An AH for `av` in PD `pd`; the response tells the process its number.
    pub(crate) fn create(
        dev: &Device<RroceDevice>,
        pd: u32,
        av: &Av,
        udata: &UData<'_>,
    ) -> Result<Self> {
        let ahs = dev.data().ahs();
        let (num, _) = ahs.add(|_| Ok(Arc::new(AhCore { av: *av, pd }, GFP_KERNEL)?))?;
        udata
            .respond(&CreateAhResp::new(num))
            .inspect_err(|_| drop(ahs.remove(num)))?;
        Ok(Self { num })
    }

    /// Withdraws the number; requests already taken keep their copy.
    pub(crate) fn destroy(self, dev: &Device<RroceDevice>) {
        dev.data().ahs().remove(self.num);
    }
}
