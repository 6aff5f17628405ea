//! The two checksums of a record: the body CRC (RocketMQ's) and the whole-record CRC held in
//! the trailing `__CRC32#` property (RocketMQ's property, with our coverage: the record
//! chains through the body CRC instead of hashing the body again).

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

/// The whole-record CRC (ours; see `docs/format.md`): CRC32 over the record's `head` (every
/// byte before the body) with the physical offset and store timestamp fields read as zero,
/// then over `tail` (the record's bytes from the end of the body up to the first digit of
/// the `__CRC32#` value), masked with [`CRC_MASK`]. The body itself is not read: it is
/// protected by the body CRC field, which lies in the head.
///
/// Callers guarantee `physical_offset_at + 8 <= store_timestamp_at` and
/// `store_timestamp_at + 8 <= head.len()`.
#[inline]
pub(crate) fn record_crc(
    head: &[u8],
    physical_offset_at: usize,
    store_timestamp_at: usize,
    tail: &[u8],
) -> u32 {
    /// Head and tail of a typical record (about 110 bytes with a few properties) are staged
    /// here and hashed in one call: each `crc32fast` call on a short slice ends in its own
    /// serial reduction, which costs more than hashing the bytes.
    const STAGE: usize = 256;
    const ZEROS: [u8; 8] = [0; 8];
    let mut stage = [0u8; STAGE];
    let mut h = crc32fast::Hasher::new();
    match stage.get_mut(..head.len()) {
        Some(staged) => {
            staged.copy_from_slice(head);
            staged[physical_offset_at..physical_offset_at + PHYSICAL_OFFSET_LEN].fill(0);
            staged[store_timestamp_at..store_timestamp_at + STORE_TIMESTAMP_LEN].fill(0);
            let joined = head.len() + tail.len();
            match stage.get_mut(head.len()..joined) {
                Some(staged) => {
                    staged.copy_from_slice(tail);
                    h.update(&stage[..joined]);
                }
                None => {
                    h.update(&stage[..head.len()]);
                    h.update(tail);
                }
            }
        }
        // Longer than any head `encode_into` writes (at most 112 bytes): field by field.
        None => {
            h.update(&head[..physical_offset_at]);
            h.update(&ZEROS[..PHYSICAL_OFFSET_LEN]);
            h.update(&head[physical_offset_at + PHYSICAL_OFFSET_LEN..store_timestamp_at]);
            h.update(&ZEROS[..STORE_TIMESTAMP_LEN]);
            h.update(&head[store_timestamp_at + STORE_TIMESTAMP_LEN..]);
            h.update(tail);
        }
    }
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

/// Whether `layout` is shaped as [`encode_into`](super::encode_into) makes it, with a
/// record CRC: the patched fields in the head, the digits in the tail. Returns the digits'
/// offset in the record.
#[inline]
fn sealable(layout: &RecordLayout) -> Option<usize> {
    let digits_at = layout.record_crc_at?;
    let fits = layout.physical_offset_at + PHYSICAL_OFFSET_LEN <= layout.store_timestamp_at
        && layout.store_timestamp_at + STORE_TIMESTAMP_LEN <= layout.body_at
        && layout.body_at.checked_add(layout.body_len).is_some_and(|end| end <= digits_at)
        && digits_at.checked_add(RECORD_CRC_DIGITS).is_some_and(|end| end <= layout.total_size);
    debug_assert!(fits, "seal_record_crc: layout does not match encode_into's record");
    fits.then_some(digits_at)
}

/// Writes `crc` as the 10 digits at `digits`.
#[inline]
fn put_digits(digits: &mut [u8], crc: u32) {
    let mut d = [0u8; RECORD_CRC_DIGITS];
    write_digits(&mut d, crc);
    digits.copy_from_slice(&d);
}

/// Fills the `__CRC32#` property value of an encoded record with its whole-record CRC.
///
/// The CRC covers every byte of the record before the 10 digits except three fields: the
/// body, the physical offset and the store timestamp (ours; see `docs/format.md`). The body
/// is protected by the body CRC field, which the record CRC covers, so the body is hashed
/// once per put rather than twice; the physical offset and store timestamp are read as
/// zero, so they can be patched inside the put-message lock after sealing, and the physical
/// offset is instead checked against the record's position when decoding. This is a
/// deviation from RocketMQ (`CommitLog.DefaultAppendMessageCallback` computes its CRC
/// inside the lock over every byte before the property).
///
/// Call it after [`set_queue_offset`](super::set_queue_offset) and after any other change
/// to the covered bytes. Does nothing when `layout.record_crc_at` is `None`. For a buffer
/// from [`encode_parts_into`](super::encode_parts_into), use [`seal_record_crc_parts`].
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
    let Some(digits_at) = sealable(layout) else {
        return;
    };
    if rec.len() < layout.total_size {
        debug_assert!(false, "seal_record_crc: buffer shorter than the record");
        return;
    }
    let head = &rec[..layout.body_at];
    let tail = &rec[layout.body_at + layout.body_len..digits_at];
    let crc = record_crc(head, layout.physical_offset_at, layout.store_timestamp_at, tail);
    put_digits(&mut rec[digits_at..digits_at + RECORD_CRC_DIGITS], crc);
}

/// [`seal_record_crc`] for a record encoded without its body by
/// [`encode_parts_into`](super::encode_parts_into): `parts` is the head then the tail. The
/// value is the same as for the whole record, since the record CRC does not read the body.
///
/// # Panics
/// Never. If `parts` is shorter than `layout.parts_len()`, nothing is written and debug
/// builds assert.
pub fn seal_record_crc_parts(parts: &mut [u8], layout: &RecordLayout) {
    let Some(digits_at) = sealable(layout) else {
        return;
    };
    if parts.len() < layout.parts_len() {
        debug_assert!(false, "seal_record_crc_parts: buffer shorter than the record's parts");
        return;
    }
    // `sealable` checked `body_at + body_len <= digits_at`.
    let digits_at = digits_at - layout.body_len;
    let head = &parts[..layout.body_at];
    let tail = &parts[layout.body_at..digits_at];
    let crc = record_crc(head, layout.physical_offset_at, layout.store_timestamp_at, tail);
    put_digits(&mut parts[digits_at..digits_at + RECORD_CRC_DIGITS], crc);
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
