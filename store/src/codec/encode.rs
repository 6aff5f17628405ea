//! Encoding a [`Message`] into a CommitLog record, and patching the fields set later on the
//! put path (RocketMQ's `MessageExtEncoder` and `CommitLog.DefaultAppendMessageCallback`).

use super::crc::body_crc;
use super::errors::ValidationError;
use super::host::write_host;
use super::layout::{
    HostShifts, PHYSICAL_OFFSET_LEN, PHYSICAL_OFFSET_OFFSET, QUEUE_OFFSET_LEN, QUEUE_OFFSET_OFFSET,
    RecordLayout, STORE_TIMESTAMP_LEN, SYS_FLAG_BORN_HOST_V6, SYS_FLAG_STORE_HOST_V6, Version,
};
use super::options::EncodeOptions;
use super::properties::{
    NAME_VALUE_SEPARATOR, PROPERTY_CRC32, PROPERTY_SEPARATOR, RECORD_CRC_DIGITS, write_property,
};
use super::validate::validate;
use crate::Message;

/// Validates `msg` (see [`validate`]), then clears `out` and writes its whole record there.
///
/// The queue offset, physical offset and store timestamp are written as 0, and the
/// `__CRC32#` value (when `opts.append_record_crc`) as ten `'0'`s: patch them with
/// [`set_queue_offset`], [`seal_record_crc`](super::seal_record_crc),
/// [`set_physical_offset`] and [`set_store_timestamp`], at the positions in the returned
/// [`RecordLayout`]. The put path uses [`encode_parts_into`] instead, which leaves the body out. The record is v1 when the topic is at most 127 bytes, else v2; the
/// sys flag's bits 4 and 5 are set from the host families. The record is `out[..layout.total_size]`
/// (which is all of `out`).
///
/// Allocates nothing beyond growing `out`: reuse one buffer per thread.
///
/// # Errors
/// A [`ValidationError`] naming the first limit broken; `out` is then left unchanged.
///
/// # Examples
/// ```
/// use abslock_store::{Message, codec::{self, EncodeOptions}};
/// let opts = EncodeOptions { append_record_crc: false, ..EncodeOptions::default() };
/// let mut out = Vec::new();
/// let layout = codec::encode_into(&Message::new("orders", b"hello".to_vec()), &opts, &mut out)?;
/// assert_eq!(layout.total_size, 91 + 5 + 6); // v1, IPv4 hosts, no properties
/// assert_eq!(out.len(), layout.total_size);
/// # Ok::<(), codec::ValidationError>(())
/// ```
pub fn encode_into(
    msg: &Message,
    opts: &EncodeOptions,
    out: &mut Vec<u8>,
) -> Result<RecordLayout, ValidationError> {
    encode(msg, opts, out, true)
}

/// Like [`encode_into`], but writes the record without its body: `out` holds the head
/// (record bytes `[0, layout.body_at)`) followed by the tail (record bytes
/// `[layout.body_at + layout.body_len, layout.total_size)`), `layout.parts_len()` bytes in
/// all. The body CRC field is computed from `msg.body()` as usual. The returned layout
/// describes the whole record.
///
/// The put path uses this so the body is copied once, straight from the [`Message`] into
/// the log: the writer copies head, body, tail (ours). Patch the head's fields with
/// [`set_queue_offset`], [`set_physical_offset`] and [`set_store_timestamp`] as for a whole
/// record, and seal with [`seal_record_crc_parts`](super::seal_record_crc_parts).
///
/// # Errors
/// As [`encode_into`]; `out` is then left unchanged.
///
/// # Examples
/// ```
/// use abslock_store::{Message, codec::{self, EncodeOptions}};
/// let msg = Message::new("orders", b"hello".to_vec()).tags("new");
/// let mut parts = Vec::new();
/// let layout = codec::encode_parts_into(&msg, &EncodeOptions::default(), &mut parts)?;
/// codec::set_queue_offset(&mut parts, &layout, 3);
/// codec::seal_record_crc_parts(&mut parts, &layout);
/// let (head, tail) = parts.split_at(layout.head_len());
/// let rec = [head, msg.body(), tail].concat();
///
/// let mut whole = Vec::new();
/// codec::encode_into(&msg, &EncodeOptions::default(), &mut whole)?;
/// codec::set_queue_offset(&mut whole, &layout, 3);
/// codec::seal_record_crc(&mut whole, &layout);
/// assert_eq!(rec, whole);
/// # Ok::<(), codec::ValidationError>(())
/// ```
pub fn encode_parts_into(
    msg: &Message,
    opts: &EncodeOptions,
    out: &mut Vec<u8>,
) -> Result<RecordLayout, ValidationError> {
    encode(msg, opts, out, false)
}

/// The encoder behind [`encode_into`] (`with_body`) and [`encode_parts_into`].
#[inline]
fn encode(
    msg: &Message,
    opts: &EncodeOptions,
    out: &mut Vec<u8>,
    with_body: bool,
) -> Result<RecordLayout, ValidationError> {
    let total_size = validate(msg, opts)?;
    let topic = msg.topic().as_bytes();
    let body = msg.body();
    let born_v6 = msg.get_born_host().is_ipv6();
    let store_v6 = opts.store_host.is_ipv6();
    let version = Version::for_topic_len(topic.len());
    let shifts = HostShifts::new(born_v6, store_v6);
    let mut sys_flag = msg.get_sys_flag() & !(SYS_FLAG_BORN_HOST_V6 | SYS_FLAG_STORE_HOST_V6);
    if born_v6 {
        sys_flag |= SYS_FLAG_BORN_HOST_V6;
    }
    if store_v6 {
        sys_flag |= SYS_FLAG_STORE_HOST_V6;
    }
    // Bytes of the record that are not in `out` (the body, when it is left out).
    let skipped = if with_body { 0 } else { body.len() };

    out.clear();
    out.reserve(total_size - skipped);
    // Lengths below were bounded by `validate`: total <= i32::MAX, topic <= 255, properties <= 32 767.
    out.extend_from_slice(&(total_size as u32).to_be_bytes());
    out.extend_from_slice(&version.magic().to_be_bytes());
    out.extend_from_slice(&body_crc(body).to_be_bytes());
    out.extend_from_slice(&msg.get_queue_id().to_be_bytes());
    out.extend_from_slice(&msg.get_flag().to_be_bytes());
    out.extend_from_slice(&[0; QUEUE_OFFSET_LEN]);
    out.extend_from_slice(&[0; PHYSICAL_OFFSET_LEN]);
    out.extend_from_slice(&sys_flag.to_be_bytes());
    out.extend_from_slice(&msg.get_born_timestamp().to_be_bytes());
    write_host(out, &msg.get_born_host());
    out.extend_from_slice(&[0; STORE_TIMESTAMP_LEN]);
    write_host(out, &opts.store_host);
    out.extend_from_slice(&msg.get_reconsume_times().to_be_bytes());
    out.extend_from_slice(&msg.get_prepared_transaction_offset().to_be_bytes());
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    let body_at = out.len();
    debug_assert_eq!(body_at, shifts.body_len_at + 4);
    if with_body {
        out.extend_from_slice(body);
    }
    match version {
        Version::V1 => out.push(topic.len() as u8),
        Version::V2 => out.extend_from_slice(&(topic.len() as u16).to_be_bytes()),
    }
    out.extend_from_slice(topic);
    let properties_len_at = out.len();
    out.extend_from_slice(&[0, 0]);
    for (name, value) in msg.properties() {
        write_property(out, name, value);
    }
    let record_crc_at = if opts.append_record_crc {
        out.extend_from_slice(PROPERTY_CRC32.as_bytes());
        out.push(NAME_VALUE_SEPARATOR);
        let at = out.len() + skipped;
        out.extend_from_slice(&[b'0'; RECORD_CRC_DIGITS]);
        out.push(PROPERTY_SEPARATOR);
        Some(at)
    } else {
        None
    };
    let properties_len = (out.len() - properties_len_at - 2) as u16;
    out[properties_len_at..properties_len_at + 2].copy_from_slice(&properties_len.to_be_bytes());
    debug_assert_eq!(out.len() + skipped, total_size);

    Ok(RecordLayout {
        total_size,
        queue_offset_at: QUEUE_OFFSET_OFFSET,
        physical_offset_at: PHYSICAL_OFFSET_OFFSET,
        store_timestamp_at: shifts.store_timestamp_at,
        body_at,
        body_len: body.len(),
        record_crc_at,
    })
}

/// Writes an 8-byte big-endian field at `at`; never panics (see the setters' docs).
#[inline]
fn patch8(rec: &mut [u8], at: usize, value: [u8; 8]) {
    match rec.get_mut(at..at + 8) {
        Some(field) => field.copy_from_slice(&value),
        None => debug_assert!(false, "record buffer shorter than its layout"),
    }
}

/// Writes the queue offset (the message's index in its consume queue) into an encoded
/// record or parts buffer (the field is in the head). Covered by the record CRC: call
/// before [`seal_record_crc`](super::seal_record_crc).
///
/// # Panics
/// Never; if `rec` is too short for `layout` (not the record `encode_into` wrote), nothing
/// is written and debug builds assert.
#[inline]
pub fn set_queue_offset(rec: &mut [u8], layout: &RecordLayout, queue_offset: u64) {
    patch8(rec, layout.queue_offset_at, queue_offset.to_be_bytes());
}

/// Writes the physical offset (the record's position in the CommitLog, bytes) into an
/// encoded record or parts buffer. Not covered by the record CRC, so it can be set inside the put-message
/// lock after sealing.
///
/// # Panics
/// Never; see [`set_queue_offset`].
#[inline]
pub fn set_physical_offset(rec: &mut [u8], layout: &RecordLayout, physical_offset: u64) {
    patch8(rec, layout.physical_offset_at, physical_offset.to_be_bytes());
}

/// Writes the store timestamp (ms since the Unix epoch) into an encoded record or parts
/// buffer. Not covered by the record CRC, so it can be set inside the put-message lock after sealing.
///
/// # Panics
/// Never; see [`set_queue_offset`].
#[inline]
pub fn set_store_timestamp(rec: &mut [u8], layout: &RecordLayout, store_timestamp_ms: i64) {
    patch8(rec, layout.store_timestamp_at, store_timestamp_ms.to_be_bytes());
}
