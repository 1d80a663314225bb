// SPDX-License-Identifier: GPL-2.0

//! Big-endian field cursors over byte slices.
//!
//! Headers read and write their fields in wire order through these cursors,
//! so a header's layout is the sequence of its fields and no code carries
//! byte offsets. Running off the end is an error, never a panic.

/// Why a header could not be parsed or written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HeaderError {
    /// The bytes, or the buffer, end before the header does.
    Truncated,
    /// The BTH opcode is not one rroce supports.
    UnknownOpcode(u8),
    /// The BTH transport header version is not 0.
    Version(u8),
    /// The AETH syndrome is reserved by IBA.
    Syndrome(u8),
    /// A value to be written does not fit its field.
    Range,
}

/// `bytes.split_at_checked(at)`, which the kernel's minimum rustc (1.78)
/// lacks: the first `at` bytes and the rest, or `None` if there are fewer.
pub(super) fn split(bytes: &[u8], at: usize) -> Option<(&[u8], &[u8])> {
    (at <= bytes.len()).then(|| bytes.split_at(at))
}

/// [`split`] for a mutable slice.
pub(super) fn split_mut(bytes: &mut [u8], at: usize) -> Option<(&mut [u8], &mut [u8])> {
    (at <= bytes.len()).then(|| bytes.split_at_mut(at))
}

/// Reads big-endian fields from the front of a byte slice.
pub(super) struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// Starts reading at the first byte of `bytes`.
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Self { rest: bytes }
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], HeaderError> {
        let (head, rest) = self
            .rest
            .split_first_chunk::<N>()
            .ok_or(HeaderError::Truncated)?;
        self.rest = rest;
        Ok(*head)
    }

    /// Reads one byte.
    pub(super) fn u8(&mut self) -> Result<u8, HeaderError> {
        self.take().map(u8::from_be_bytes)
    }

    /// Reads a big-endian `u16`.
    pub(super) fn u16(&mut self) -> Result<u16, HeaderError> {
        self.take().map(u16::from_be_bytes)
    }

    /// Reads a big-endian `u32`.
    pub(super) fn u32(&mut self) -> Result<u32, HeaderError> {
        self.take().map(u32::from_be_bytes)
    }

    /// Reads a big-endian `u64`.
    pub(super) fn u64(&mut self) -> Result<u64, HeaderError> {
        self.take().map(u64::from_be_bytes)
    }
}

/// Writes big-endian fields to the front of a byte slice.
pub(super) struct Writer<'a> {
    rest: &'a mut [u8],
}

impl<'a> Writer<'a> {
    /// Starts writing a header of `len` bytes at the front of `buf`.
    ///
    /// The length is checked up front so that a short buffer is left
    /// untouched rather than half written.
    pub(super) fn new(buf: &'a mut [u8], len: usize) -> Result<Self, HeaderError> {
        let (head, _) = split_mut(buf, len).ok_or(HeaderError::Truncated)?;
        Ok(Self { rest: head })
    }

    fn put<const N: usize>(&mut self, bytes: [u8; N]) -> Result<(), HeaderError> {
        let (head, rest) = core::mem::take(&mut self.rest)
            .split_first_chunk_mut::<N>()
            .ok_or(HeaderError::Truncated)?;
        *head = bytes;
        self.rest = rest;
        Ok(())
    }

    /// Writes one byte.
    pub(super) fn u8(&mut self, value: u8) -> Result<(), HeaderError> {
        self.put(value.to_be_bytes())
    }

    /// Writes a big-endian `u16`.
    pub(super) fn u16(&mut self, value: u16) -> Result<(), HeaderError> {
        self.put(value.to_be_bytes())
    }

    /// Writes a big-endian `u32`.
    pub(super) fn u32(&mut self, value: u32) -> Result<(), HeaderError> {
        self.put(value.to_be_bytes())
    }

    /// Writes a big-endian `u64`.
    pub(super) fn u64(&mut self, value: u64) -> Result<(), HeaderError> {
        self.put(value.to_be_bytes())
    }

    /// Writes bytes as they are (addresses).
    pub(super) fn bytes(&mut self, value: &[u8]) -> Result<(), HeaderError> {
        if self.rest.len() < value.len() {
            return Err(HeaderError::Truncated);
        }
        let (head, rest) = core::mem::take(&mut self.rest).split_at_mut(value.len());
        head.copy_from_slice(value);
        self.rest = rest;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_big_endian_in_order() {
        let bytes = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
        let mut r = Reader::new(&bytes);
        assert_eq!(r.u8(), Ok(0x01));
        assert_eq!(r.u16(), Ok(0x0203));
        assert_eq!(r.u32(), Ok(0x0405_0607));
        assert_eq!(r.u64(), Ok(0x0809_0a0b_0c0d_0e0f));
        assert_eq!(r.u8(), Err(HeaderError::Truncated));
    }

    #[test]
    fn short_read_consumes_nothing() {
        let bytes = [0xaa, 0xbb, 0xcc];
        let mut r = Reader::new(&bytes);
        assert_eq!(r.u32(), Err(HeaderError::Truncated));
        assert_eq!(r.u16(), Ok(0xaabb));
    }

    #[test]
    fn writer_refuses_short_buffer_untouched() {
        let mut buf = [0x55; 3];
        assert!(Writer::new(&mut buf, 4).is_err());
        assert_eq!(buf, [0x55; 3]);
    }

    #[test]
    fn writer_stays_within_its_length() {
        let mut buf = [0u8; 8];
        let mut w = Writer::new(&mut buf, 6).unwrap();
        assert_eq!(w.u16(0x0102), Ok(()));
        assert_eq!(w.u32(0x0304_0506), Ok(()));
        assert_eq!(w.u8(0xff), Err(HeaderError::Truncated));
        assert_eq!(buf, [1, 2, 3, 4, 5, 6, 0, 0]);
    }
}
