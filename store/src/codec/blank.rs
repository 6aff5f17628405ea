//! The end-of-segment blank record (RocketMQ's `BLANK_MAGIC_CODE` record, written by
//! `CommitLog.DefaultAppendMessageCallback` when a record does not fit).

use super::layout::{BLANK_MIN, MAGIC_BLANK, MAGIC_OFFSET, TOTAL_SIZE_OFFSET};

/// Fills the start of `space`, the unused tail of a segment, with a blank record: total
/// size = `space.len()` and the blank magic `0xCBD43194` (8 bytes, big-endian). The rest of
/// `space` is left as it is; readers skip `space.len()` bytes to the next segment.
///
/// Write it when a record of `len` bytes does not fit: `len + BLANK_MIN > space left`.
///
/// # Panics
/// If `space.len() < BLANK_MIN` (8) or `space.len() > u32::MAX`: the caller's bookkeeping
/// is wrong, since every record leaves room for a blank and segments are at most 4 GiB.
///
/// # Examples
/// ```
/// use abslock_store::codec::{self, Decoded};
/// let mut tail = [0u8; 100];
/// codec::write_blank(&mut tail);
/// assert!(matches!(codec::decode(&tail, None)?, Decoded::Blank { size: 100 }));
/// # Ok::<(), codec::DecodeError>(())
/// ```
pub fn write_blank(space: &mut [u8]) {
    assert!(space.len() >= BLANK_MIN, "write_blank needs at least {BLANK_MIN} bytes, got {}", space.len());
    let size = u32::try_from(space.len()).expect("write_blank: space longer than u32::MAX bytes");
    space[TOTAL_SIZE_OFFSET..TOTAL_SIZE_OFFSET + 4].copy_from_slice(&size.to_be_bytes());
    space[MAGIC_OFFSET..MAGIC_OFFSET + 4].copy_from_slice(&MAGIC_BLANK.to_be_bytes());
}
