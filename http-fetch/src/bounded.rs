//! A response body read within its size limit, plain or inflated.

use bytes::{Bytes, BytesMut};

/// A body read so far, refusing bytes past its limit: never buffered past
/// it, inflated or not.
pub(crate) struct BoundedBody {
    bytes: BytesMut,
    limit: usize,
}

/// More bytes than the limit allows.
#[derive(Debug, thiserror::Error)]
#[error("more bytes than the limit allows")]
pub(crate) struct Overflow;

impl BoundedBody {
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            bytes: BytesMut::new(),
            limit,
        }
    }

    pub(crate) fn extend(&mut self, chunk: &[u8]) -> Result<(), Overflow> {
        if self.bytes.len() + chunk.len() > self.limit {
            return Err(Overflow);
        }
        self.bytes.extend_from_slice(chunk);
        Ok(())
    }

    pub(crate) fn freeze(self) -> Bytes {
        self.bytes.freeze()
    }
}

/// What an inflating decoder writes into.
impl std::io::Write for BoundedBody {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.extend(buf).map_err(std::io::Error::other)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
