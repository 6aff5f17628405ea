//! The two checksums of a record: the body CRC (RocketMQ's) and the whole-record CRC held in
//! the trailing `__CRC32#` property (RocketMQ's property, with our coverage).

use super::layout::{PHYSICAL_OFFSET_LEN, RecordLayout, STORE_TIMESTAMP_LEN};
use super::properties::RECORD_CRC_DIGITS;

/// Both CRCs keep 31 bits, so they read as a non-negative Java `int` (RocketMQ's `UtilAll.crc32`).
pub const CRC_MASK: u32 = 0x7FFF_FFFF;

/// CRC32 (IEEE, via `crc32fast`) of `body`, masked with [`CRC_MASK`]: the value of the body
/// CRC field (RocketMQ's `UtilAll.crc32(body)`).
///
/// # Examples
/// ```
/// // CRC32 of "123456789" is 0xCBF43926; the mask clears the top bit.
/// assert_eq!(abslock_store::codec::body_crc(b"123456789"), 0x4BF4_3926);
/// ```
#[inline]
pub fn body_crc(body: &[u8]) -> u32 {
    crc32fast::hash(body) & CRC_MASK
}

/// The whole-record CRC of `rec`: CRC32 over `rec[..digits_at]` with the physical offset and
/// store timestamp fields read as zero, masked with [`CRC_MASK`] (ours; see `docs/format.md`).
///
/// Callers guarantee `physical_offset_at + 8 <= store_timestamp_at` and
/// `store_timestamp_at + 8 <= digits_at <= rec.len()`.
#[inline]
pub(crate) fn record_crc(
    rec: &[u8],
    physical_offset_at: usize,
    store_timestamp_at: usize,
    digits_at: usize,
) -> u32 {
    const ZEROS: [u8; 8] = [0; 8];
    let mut h = crc32fast::Hasher::new();
    h.update(&rec[..physical_offset_at]);
    h.update(&ZEROS[..PHYSICAL_OFFSET_LEN]);
    h.update(&rec[physical_offset_at + PHYSICAL_OFFSET_LEN..store_timestamp_at]);
    h.update(&ZEROS[..STORE_TIMESTAMP_LEN]);
    h.update(&rec[store_timestamp_at + STORE_TIMESTAMP_LEN..digits_at]);
    h.finalize() & CRC_MASK
}

/// Writes `value` as 10 zero-padded ASCII decimal digits, most significant first.
#[inline]
pub(crate) fn write_digits(out: &mut [u8; RECORD_CRC_DIGITS], mut value: u32) {
    for d in out.iter_mut().rev() {
        *d = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

/// Reads 10 ASCII decimal digits; `None` unless every byte is a digit and the value fits
/// in 31 bits.
#[inline]
pub(crate) fn parse_digits(digits: &[u8]) -> Option<u32> {
    if digits.len() != RECORD_CRC_DIGITS {
        return None;
    }
    let mut value: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        value = value * 10 + u64::from(d - b'0');
    }
    u32::try_from(value).ok().filter(|v| v & !CRC_MASK == 0)
}

/// Fills the `__CRC32#` property value of an encoded record with its whole-record CRC.
///
/// The CRC covers every byte of the record before the 10 digits, with the physical offset
/// and store timestamp fields taken as zero, so it can be sealed outside the put-message
/// lock once the queue offset is set, while those two fields are patched inside the lock.
/// The physical offset is instead checked against the record's position when decoding.
/// This is a deviation from RocketMQ (`CommitLog.DefaultAppendMessageCallback` computes its
/// CRC inside the lock over every byte before the property); see `docs/format.md`.
///
/// Call it after [`set_queue_offset`](super::set_queue_offset) and after any other change
/// to the covered bytes. Does nothing when `layout.record_crc_at` is `None`.
///
/// # Panics
/// Never. If `rec` is shorter than `layout.total_size` (not the buffer
/// [`encode_into`](super::encode_into) filled), nothing is written and debug builds assert.
///
/// # Examples
/// ```
/// use abslock_store::{Message, codec};
/// let mut rec = Vec::new();
/// let layout = codec::encode_into(&Message::new("orders", b"hi".to_vec()), &codec::EncodeOptions::default(), &mut rec)?;
/// codec::set_queue_offset(&mut rec, &layout, 7);
/// codec::seal_record_crc(&mut rec, &layout);
/// codec::set_physical_offset(&mut rec, &layout, 4096); // not covered: may come later
/// let decoded = codec::decode(&rec, Some(4096))?;
/// assert!(matches!(decoded, codec::Decoded::Message(m) if m.record_crc().is_some()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn seal_record_crc(rec: &mut [u8], layout: &RecordLayout) {
    let Some(digits_at) = layout.record_crc_at else {
        return;
    };
    let fits = rec.len() >= layout.total_size
        && digits_at + RECORD_CRC_DIGITS <= layout.total_size
        && layout.physical_offset_at + PHYSICAL_OFFSET_LEN <= layout.store_timestamp_at
        && layout.store_timestamp_at + STORE_TIMESTAMP_LEN <= digits_at;
    debug_assert!(fits, "seal_record_crc: buffer or layout does not match encode_into's record");
    if !fits {
        return;
    }
    let crc = record_crc(rec, layout.physical_offset_at, layout.store_timestamp_at, digits_at);
    let mut digits = [0u8; RECORD_CRC_DIGITS];
    write_digits(&mut digits, crc);
    rec[digits_at..digits_at + RECORD_CRC_DIGITS].copy_from_slice(&digits);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_round_trip_and_reject() {
        let mut d = [0u8; RECORD_CRC_DIGITS];
        for v in [0, 1, 9, 10, 1_234_567_890, CRC_MASK] {
            write_digits(&mut d, v);
            assert_eq!(parse_digits(&d), Some(v));
        }
        write_digits(&mut d, 42);
        assert_eq!(&d, b"0000000042");
        assert_eq!(parse_digits(b"2147483648"), None, "over 31 bits");
        assert_eq!(parse_digits(b"000000004x"), None);
        assert_eq!(parse_digits(b"42"), None);
    }
}
