// SPDX-License-Identifier: GPL-2.0

//! Address handles: where a UD work request sends its datagram. The rxe
//! provider names them in work requests by the number the kernel hands out
//! on creation (`ah_num`), which the requester looks up.

use crate::kernel_ext::rdma::{rxe_abi::CreateAhResp, Av, UData};
use crate::limits::MAX_AH;
use crate::pool::{PdNum, Pool};
use kernel::{prelude::*, sync::Arc};

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
    pub(crate) pd: PdNum,
}

impl Ah {
    /// An AH among `ahs` for `av` in PD `pd`; the response tells the
    /// process its number.
    pub(crate) fn create(
        ahs: &Pool<AhCore>,
        pd: PdNum,
        av: &Av,
        udata: &UData<'_>,
    ) -> Result<Self> {
        let (num, _) = ahs.add(|_| Ok(Arc::new(AhCore { av: *av, pd }, GFP_KERNEL)?))?;
        udata
            .respond(&CreateAhResp::new(num))
            .inspect_err(|_| drop(ahs.remove(num)))?;
        Ok(Self { num })
    }

    /// Withdraws the number; requests already taken keep their copy.
    pub(crate) fn destroy(self, ahs: &Pool<AhCore>) {
        ahs.remove(self.num);
    }
}
