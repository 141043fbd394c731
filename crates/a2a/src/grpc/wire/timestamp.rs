//! `google.protobuf.Timestamp` as the crate's [`Timestamp`].

use agentproto_codec::{DecodeError, DecodeErrorKind};

use super::{put_tag, put_varint, tag_len, varint_len, At, Proto, Reader, VARINT};
use crate::Timestamp;

/// Seconds in `0001-01-01T00:00:00Z..=9999-12-31T23:59:59Z`, the range the spec allows.
pub(super) const MIN_SECS: i64 = -62_135_596_800;
pub(super) const MAX_SECS: i64 = 253_402_300_799;

impl Proto for Timestamp {
    fn encoded_len(&self) -> usize {
        let secs = if self.secs != 0 { tag_len(1) + varint_len(self.secs as u64) } else { 0 };
        let nanos = if self.nanos != 0 { tag_len(2) + varint_len(u64::from(self.nanos)) } else { 0 };
        secs + nanos
    }

    fn encode_raw(&self, buf: &mut Vec<u8>) {
        if self.secs != 0 {
            put_tag(buf, 1, VARINT);
            put_varint(buf, self.secs as u64);
        }
        if self.nanos != 0 {
            put_tag(buf, 2, VARINT);
            put_varint(buf, u64::from(self.nanos));
        }
    }

    fn decode_at(buf: &[u8], at: &At<'_>) -> Result<Self, DecodeError> {
        let (mut secs, mut nanos) = (0i64, 0i32);
        let mut r = Reader::new(buf);
        while let Some((field, wt)) = r.tag(at)? {
            match field {
                1 => secs = r.int64(wt, at)?,
                2 => nanos = r.int32(wt, at)?,
                _ => r.skip(field, wt, at)?,
            }
        }
        if !(MIN_SECS..=MAX_SECS).contains(&secs) || !(0..1_000_000_000).contains(&nanos) {
            return Err(at.error(
                DecodeErrorKind::WrongFormat,
                "a timestamp from 0001-01-01 to 9999-12-31 (nanos below 1e9)",
                format!("{secs} seconds and {nanos} nanoseconds"),
            ));
        }
        Ok(Timestamp { secs, nanos: nanos as u32 })
    }
}
