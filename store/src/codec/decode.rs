//! Decoding one record from untrusted bytes (RocketMQ's `CommitLog.checkMessageAndReturnSize`
//! and `MessageDecoder.decode`), with our extra checks. Never panics.

use super::crc::{body_crc, parse_digits, record_crc};
use super::errors::DecodeError;
use super::layout::{
    BLANK_MIN, BODY_CRC_OFFSET, HostShifts, MAGIC_BLANK, MAGIC_OFFSET, PHYSICAL_OFFSET_OFFSET,
    SYS_FLAG_BORN_HOST_V6, SYS_FLAG_OFFSET, SYS_FLAG_STORE_HOST_V6, TOTAL_SIZE_OFFSET, Version,
};
use super::properties::{PROPERTY_CRC32, RECORD_CRC_DIGITS, record_crc_digits_at};
use super::stored_message::StoredMessage;
use super::validate::is_valid_topic_byte;

/// What to check of the `__CRC32#` whole-record CRC (ours).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RecordCrcCheck {
    /// Do not verify it (reads of data verified before).
    Skip,
    /// Verify it when the record carries one (the default).
    #[default]
    IfPresent,
    /// Verify it and reject records without one. Use this for recovery when the store
    /// writes record CRCs: only then are a torn or mutated property block and a flipped
    /// byte in the header caught, since the property's own presence is not protected.
    Require,
}

/// How [`decode_with`] checks a record (ours).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DecodeOptions {
    /// The position the record was read from (bytes); the stored physical offset must
    /// equal it. `None` skips the check.
    pub expected_physical_offset: Option<u64>,
    /// Recompute and compare the body CRC. Default `true`. The record CRC covers the body
    /// only through the body CRC field, so with `false` nothing checks the body bytes.
    pub verify_body_crc: bool,
    /// What to do about the whole-record CRC. Default [`RecordCrcCheck::IfPresent`].
    pub record_crc: RecordCrcCheck,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            expected_physical_offset: None,
            verify_body_crc: true,
            record_crc: RecordCrcCheck::IfPresent,
        }
    }
}

/// What sits at the start of the bytes given to [`decode`].
#[derive(Debug, Clone, Copy)]
pub enum Decoded<'a> {
    /// A message record.
    Message(StoredMessage<'a>),
    /// The end-of-segment blank (magic `0xCBD43194`): the rest of the segment, `size`
    /// bytes from here, holds no record; continue at the next segment.
    Blank {
        /// The blank's total size field: bytes from here to the segment's end.
        size: u32,
    },
}

impl Decoded<'_> {
    /// Bytes this record occupies: where the next record starts, relative to this one.
    pub fn size(&self) -> u32 {
        match self {
            Decoded::Message(m) => m.total_size(),
            Decoded::Blank { size } => *size,
        }
    }
}

/// Decodes the record at the start of `bytes` with the default checks (body CRC, record
/// CRC when present) and, when given, the expected physical offset.
///
/// `bytes` may extend past the record (a whole segment's tail, say); the record must fit
/// in it. A blank must fit too: pass bytes up to the segment's end.
///
/// # Recovery
/// `decode` cannot tell a record whose `__CRC32#` property was torn off or mangled from
/// one written without it, and then checks only the body CRC, which misses a damaged
/// header or tail. When the store writes record CRCs (`EncodeOptions::append_record_crc`),
/// scan with [`decode_with`] and [`RecordCrcCheck::Require`].
///
/// # Errors
/// A [`DecodeError`] for anything that is not a whole, intact record; never panics, on
/// any input.
///
/// # Examples
/// ```
/// use abslock_store::{Message, codec::{self, Decoded}};
/// let mut rec = Vec::new();
/// let layout = codec::encode_into(&Message::new("orders", b"hello".to_vec()).tags("new"), &Default::default(), &mut rec)?;
/// codec::set_queue_offset(&mut rec, &layout, 3);
/// codec::seal_record_crc(&mut rec, &layout);
/// codec::set_physical_offset(&mut rec, &layout, 1024);
/// let Decoded::Message(m) = codec::decode(&rec, Some(1024))? else { panic!("not a message") };
/// assert_eq!((m.topic(), m.body(), m.tags(), m.queue_offset()), ("orders", &b"hello"[..], Some("new"), 3));
/// assert!(codec::decode(&rec[..rec.len() - 1], Some(1024)).is_err());
/// assert!(codec::decode(&rec, Some(0)).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn decode(bytes: &[u8], expected_physical_offset: Option<u64>) -> Result<Decoded<'_>, DecodeError> {
    decode_with(bytes, &DecodeOptions { expected_physical_offset, ..DecodeOptions::default() })
}

/// Reads `N` bytes at `at`, or reports how many bytes would be needed.
#[inline]
fn take<const N: usize>(bytes: &[u8], at: usize) -> Result<[u8; N], DecodeError> {
    let end =
        at.checked_add(N).ok_or(DecodeError::Truncated { needed: usize::MAX, available: bytes.len() })?;
    match bytes.get(at..end) {
        Some(s) => {
            let mut a = [0u8; N];
            a.copy_from_slice(s);
            Ok(a)
        }
        None => Err(DecodeError::Truncated { needed: end, available: bytes.len() }),
    }
}

/// A slice of `len` bytes at `at`, or how many bytes would be needed.
#[inline]
fn slice(bytes: &[u8], at: usize, len: usize) -> Result<&[u8], DecodeError> {
    let end =
        at.checked_add(len).ok_or(DecodeError::Truncated { needed: usize::MAX, available: bytes.len() })?;
    bytes.get(at..end).ok_or(DecodeError::Truncated { needed: end, available: bytes.len() })
}

/// Decodes the record at the start of `bytes` with the given checks. See [`decode`].
///
/// Checks, in order: header present; magic; (blank: size within `8..=bytes.len()`);
/// every length non-negative and every field within `bytes`; total size equal to the
/// recomputed length; body CRC; topic and properties UTF-8; topic non-empty and of
/// RocketMQ's topic bytes; record CRC per
/// `opts.record_crc`; physical offset.
///
/// # Errors
/// As [`decode`]; also [`DecodeError::RecordCrcMissing`] under [`RecordCrcCheck::Require`].
pub fn decode_with<'a>(bytes: &'a [u8], opts: &DecodeOptions) -> Result<Decoded<'a>, DecodeError> {
    if bytes.len() < BLANK_MIN {
        return Err(DecodeError::Truncated { needed: BLANK_MIN, available: bytes.len() });
    }
    let total = u32::from_be_bytes(take(bytes, TOTAL_SIZE_OFFSET)?);
    let magic = u32::from_be_bytes(take(bytes, MAGIC_OFFSET)?);
    if total == 0 && magic == 0 {
        return Err(DecodeError::Unwritten);
    }
    if magic == MAGIC_BLANK {
        if (total as usize) < BLANK_MIN || total as usize > bytes.len() {
            return Err(DecodeError::BadBlankSize { size: total, available: bytes.len() });
        }
        return Ok(Decoded::Blank { size: total });
    }
    let version = Version::from_magic(magic).ok_or(DecodeError::BadMagic { magic })?;

    let sys_flag = i32::from_be_bytes(take(bytes, SYS_FLAG_OFFSET)?);
    let born_v6 = sys_flag & SYS_FLAG_BORN_HOST_V6 != 0;
    let store_v6 = sys_flag & SYS_FLAG_STORE_HOST_V6 != 0;
    let shifts = HostShifts::new(born_v6, store_v6);

    let body_len = i32::from_be_bytes(take(bytes, shifts.body_len_at)?);
    let body_len = usize::try_from(body_len)
        .map_err(|_| DecodeError::NegativeLength { field: "body length", value: body_len.into() })?;
    let body_at = shifts.body_len_at + 4;
    let body = slice(bytes, body_at, body_len)?;
    let topic_len_at = body_at + body_len;
    let (topic_len, topic_at) = match version {
        Version::V1 => (usize::from(take::<1>(bytes, topic_len_at)?[0]), topic_len_at + 1),
        Version::V2 => {
            let len = i16::from_be_bytes(take(bytes, topic_len_at)?);
            let len = usize::try_from(len)
                .map_err(|_| DecodeError::NegativeLength { field: "topic length", value: len.into() })?;
            (len, topic_len_at + 2)
        }
    };
    let topic = slice(bytes, topic_at, topic_len)?;
    let properties_len_at = topic_at + topic_len;
    let properties_len = i16::from_be_bytes(take(bytes, properties_len_at)?);
    let properties_len = usize::try_from(properties_len).map_err(|_| DecodeError::NegativeLength {
        field: "properties length",
        value: properties_len.into(),
    })?;
    let properties_at = properties_len_at + 2;
    let properties_raw = slice(bytes, properties_at, properties_len)?;
    let computed = properties_at + properties_len;
    if computed != total as usize {
        return Err(DecodeError::TotalSizeMismatch { stored: total, computed });
    }
    let record = &bytes[..computed];

    if opts.verify_body_crc {
        let stored = u32::from_be_bytes(take(record, BODY_CRC_OFFSET)?);
        let computed = body_crc(body);
        if stored != computed {
            return Err(DecodeError::BodyCrcMismatch { stored, computed });
        }
    }
    let topic = std::str::from_utf8(topic).map_err(|_| DecodeError::TopicNotUtf8)?;
    // Without a record CRC nothing else covers the topic: a write torn inside it leaves
    // zeros that pass the size and body CRC checks (found by the fault-schedule proptest).
    if topic.is_empty() {
        return Err(DecodeError::InvalidTopic { index: 0, byte: 0 });
    }
    if let Some(index) = topic.bytes().position(|b| !is_valid_topic_byte(b)) {
        return Err(DecodeError::InvalidTopic { index, byte: topic.as_bytes()[index] });
    }
    let properties_all = std::str::from_utf8(properties_raw).map_err(|_| DecodeError::PropertiesNotUtf8)?;

    let (properties, record_crc_value) = match record_crc_digits_at(properties_raw) {
        Some(digits_in_props) => {
            let slot_at = digits_in_props - PROPERTY_CRC32.len() - 1;
            let digits_at = properties_at + digits_in_props;
            let value = parse_digits(&properties_raw[digits_in_props..digits_in_props + RECORD_CRC_DIGITS]);
            if opts.record_crc != RecordCrcCheck::Skip {
                let stored = value.ok_or(DecodeError::MalformedRecordCrc)?;
                // The body is covered through the body CRC field (checked above when
                // `verify_body_crc`), not hashed again.
                let (head, tail) = (&record[..body_at], &record[body_at + body_len..digits_at]);
                let computed = record_crc(head, PHYSICAL_OFFSET_OFFSET, shifts.store_timestamp_at, tail);
                if stored != computed {
                    return Err(DecodeError::RecordCrcMismatch { stored, computed });
                }
            }
            // The slot is ASCII, so `slot_at` is a char boundary.
            (properties_all.get(..slot_at).unwrap_or(""), value)
        }
        None if opts.record_crc == RecordCrcCheck::Require => return Err(DecodeError::RecordCrcMissing),
        None => (properties_all, None),
    };

    if let Some(expected) = opts.expected_physical_offset {
        let stored = u64::from_be_bytes(take(record, PHYSICAL_OFFSET_OFFSET)?);
        if stored != expected {
            return Err(DecodeError::PhysicalOffsetMismatch { stored, expected });
        }
    }

    Ok(Decoded::Message(StoredMessage {
        record,
        version,
        born_v6,
        store_v6,
        shifts,
        body,
        topic,
        properties,
        properties_raw,
        record_crc: record_crc_value,
    }))
}
