//! Where every field of a CommitLog record sits: widths, offsets and magic codes.
//!
//! Follows RocketMQ's `CommitLog.calMsgLength` and the field order written by
//! `CommitLog.DefaultAppendMessageCallback` / `MessageExtEncoder`. Offsets are chained
//! named constants (each field starts where the previous one ends) and are absolute for a
//! v1 record with IPv4 born and store hosts. An IPv6 born host shifts every later field by
//! [`HOST_V6_SHIFT`] bytes, an IPv6 store host shifts the fields after it by the same amount,
//! and a v2 record's 2-byte topic length shifts the properties by one byte.
//! `docs/format.md` is the prose form of this file; `tests/codec_format_spec.rs` holds the
//! two together. Every multi-byte integer is big-endian.

/// Magic code of a v1 record (1-byte topic length): `0xDAA320A7`, RocketMQ's `MESSAGE_MAGIC_CODE`.
pub const MAGIC_V1: u32 = 0xDAA3_20A7;
/// Magic code of a v2 record (2-byte topic length): `0xDAA320AB`, RocketMQ's `MESSAGE_MAGIC_CODE_V2`.
pub const MAGIC_V2: u32 = 0xDAA3_20AB;
/// Magic code of the end-of-segment blank record: `0xCBD43194`, RocketMQ's `BLANK_MAGIC_CODE`.
pub const MAGIC_BLANK: u32 = 0xCBD4_3194;

/// Sys flag bit set when the born host is IPv6 (RocketMQ `MessageSysFlag.BORNHOST_V6_FLAG`, bit 4).
pub const SYS_FLAG_BORN_HOST_V6: i32 = 1 << 4;
/// Sys flag bit set when the store host is IPv6 (RocketMQ `MessageSysFlag.STOREHOSTADDRESS_V6_FLAG`, bit 5).
pub const SYS_FLAG_STORE_HOST_V6: i32 = 1 << 5;

/// Bytes of an IPv4 host: 4 address bytes, then the port as a 4-byte integer.
pub const HOST_V4_LEN: usize = 4 + 4;
/// Bytes of an IPv6 host: 16 address bytes, then the port as a 4-byte integer.
pub const HOST_V6_LEN: usize = 16 + 4;
/// How far an IPv6 host pushes every later field (bytes).
pub const HOST_V6_SHIFT: usize = HOST_V6_LEN - HOST_V4_LEN;

/// Total size field: the whole record's length in bytes, itself included.
pub const TOTAL_SIZE_OFFSET: usize = 0;
/// Width of [`TOTAL_SIZE_OFFSET`]'s field (bytes).
pub const TOTAL_SIZE_LEN: usize = 4;
/// Magic code field ([`MAGIC_V1`], [`MAGIC_V2`] or [`MAGIC_BLANK`]).
pub const MAGIC_OFFSET: usize = TOTAL_SIZE_OFFSET + TOTAL_SIZE_LEN;
/// Width of the magic code (bytes).
pub const MAGIC_LEN: usize = 4;
/// Body CRC field: CRC32 (IEEE) of the body, masked with `0x7FFF_FFFF`.
pub const BODY_CRC_OFFSET: usize = MAGIC_OFFSET + MAGIC_LEN;
/// Width of the body CRC (bytes).
pub const BODY_CRC_LEN: usize = 4;
/// Queue id field.
pub const QUEUE_ID_OFFSET: usize = BODY_CRC_OFFSET + BODY_CRC_LEN;
/// Width of the queue id (bytes).
pub const QUEUE_ID_LEN: usize = 4;
/// Flag field (the producer's opaque message flag).
pub const FLAG_OFFSET: usize = QUEUE_ID_OFFSET + QUEUE_ID_LEN;
/// Width of the flag (bytes).
pub const FLAG_LEN: usize = 4;
/// Queue offset field: the message's index in its consume queue.
pub const QUEUE_OFFSET_OFFSET: usize = FLAG_OFFSET + FLAG_LEN;
/// Width of the queue offset (bytes).
pub const QUEUE_OFFSET_LEN: usize = 8;
/// Physical offset field: the record's position in the CommitLog (bytes from the log's start).
pub const PHYSICAL_OFFSET_OFFSET: usize = QUEUE_OFFSET_OFFSET + QUEUE_OFFSET_LEN;
/// Width of the physical offset (bytes).
pub const PHYSICAL_OFFSET_LEN: usize = 8;
/// Sys flag field (bits 4 and 5 choose the host widths).
pub const SYS_FLAG_OFFSET: usize = PHYSICAL_OFFSET_OFFSET + PHYSICAL_OFFSET_LEN;
/// Width of the sys flag (bytes).
pub const SYS_FLAG_LEN: usize = 4;
/// Born timestamp field (ms since the Unix epoch, set by the producer).
pub const BORN_TIMESTAMP_OFFSET: usize = SYS_FLAG_OFFSET + SYS_FLAG_LEN;
/// Width of the born timestamp (bytes).
pub const BORN_TIMESTAMP_LEN: usize = 8;
/// Born host field (the producer's address); [`HOST_V4_LEN`] or [`HOST_V6_LEN`] wide.
pub const BORN_HOST_OFFSET: usize = BORN_TIMESTAMP_OFFSET + BORN_TIMESTAMP_LEN;
/// Store timestamp field (ms since the Unix epoch, set inside the put-message lock).
/// Absolute for an IPv4 born host; add [`HOST_V6_SHIFT`] for an IPv6 one.
pub const STORE_TIMESTAMP_OFFSET: usize = BORN_HOST_OFFSET + HOST_V4_LEN;
/// Width of the store timestamp (bytes).
pub const STORE_TIMESTAMP_LEN: usize = 8;
/// Store host field (the broker's address); [`HOST_V4_LEN`] or [`HOST_V6_LEN`] wide.
/// Absolute for an IPv4 born host.
pub const STORE_HOST_OFFSET: usize = STORE_TIMESTAMP_OFFSET + STORE_TIMESTAMP_LEN;
/// Reconsume times field. Absolute for IPv4 born and store hosts.
pub const RECONSUME_TIMES_OFFSET: usize = STORE_HOST_OFFSET + HOST_V4_LEN;
/// Width of the reconsume times (bytes).
pub const RECONSUME_TIMES_LEN: usize = 4;
/// Prepared transaction offset field. Absolute for IPv4 hosts.
pub const PREPARED_TRANSACTION_OFFSET_OFFSET: usize = RECONSUME_TIMES_OFFSET + RECONSUME_TIMES_LEN;
/// Width of the prepared transaction offset (bytes).
pub const PREPARED_TRANSACTION_OFFSET_LEN: usize = 8;
/// Body length field (bytes of body that follow). Absolute for IPv4 hosts.
pub const BODY_LEN_OFFSET: usize = PREPARED_TRANSACTION_OFFSET_OFFSET + PREPARED_TRANSACTION_OFFSET_LEN;
/// Width of the body length (bytes).
pub const BODY_LEN_LEN: usize = 4;
/// First body byte for IPv4 hosts; the topic length follows the body.
pub const BODY_OFFSET: usize = BODY_LEN_OFFSET + BODY_LEN_LEN;
/// Width of the topic length in a v1 record (bytes).
pub const TOPIC_LEN_V1_LEN: usize = 1;
/// Width of the topic length in a v2 record (bytes).
pub const TOPIC_LEN_V2_LEN: usize = 2;
/// Width of the properties length (bytes); it follows the topic.
pub const PROPERTIES_LEN_LEN: usize = 2;

/// Bytes of a v1 record with IPv4 hosts besides its body, topic and properties: 91.
pub const V1_IPV4_OVERHEAD: usize = BODY_OFFSET + TOPIC_LEN_V1_LEN + PROPERTIES_LEN_LEN;

/// Size of the end-of-segment blank record: total size and magic (bytes).
/// RocketMQ's `END_FILE_MIN_BLANK_LENGTH`: a record fits only if `len + BLANK_MIN <= space left`.
pub const BLANK_MIN: usize = TOTAL_SIZE_LEN + MAGIC_LEN;

/// Longest topic a v1 record holds (bytes); longer topics use v2. RocketMQ switches at `Byte.MAX_VALUE`.
pub const TOPIC_MAX_LEN_V1: usize = 127;
/// Longest topic accepted at all (bytes).
pub const TOPIC_MAX_LEN: usize = 255;
/// Longest encoded properties block (bytes), RocketMQ's `Short.MAX_VALUE`; includes the CRC property.
pub const PROPERTIES_MAX_LEN: usize = 32_767;
/// Default largest body (bytes): 4 MiB, RocketMQ's `maxMessageSize` default.
pub const DEFAULT_MAX_BODY_SIZE: usize = 4 * 1024 * 1024;
/// Largest record at all (bytes): the total size field is a signed 32-bit integer in RocketMQ.
pub const RECORD_MAX_LEN: usize = i32::MAX as usize;

/// The record format version, chosen by topic length (RocketMQ's `MessageVersion`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Version {
    /// Magic [`MAGIC_V1`], 1-byte topic length; topics of at most [`TOPIC_MAX_LEN_V1`] bytes.
    V1,
    /// Magic [`MAGIC_V2`], 2-byte topic length; topics longer than [`TOPIC_MAX_LEN_V1`] bytes.
    V2,
}

impl Version {
    /// The version a topic of `topic_len` bytes is written with (ours writes v1 whenever it can).
    #[inline]
    pub const fn for_topic_len(topic_len: usize) -> Version {
        if topic_len <= TOPIC_MAX_LEN_V1 { Version::V1 } else { Version::V2 }
    }

    /// This version's magic code.
    #[inline]
    pub const fn magic(self) -> u32 {
        match self {
            Version::V1 => MAGIC_V1,
            Version::V2 => MAGIC_V2,
        }
    }

    /// The version a magic code names, or `None` for the blank magic and anything else.
    #[inline]
    pub const fn from_magic(magic: u32) -> Option<Version> {
        match magic {
            MAGIC_V1 => Some(Version::V1),
            MAGIC_V2 => Some(Version::V2),
            _ => None,
        }
    }

    /// Width of this version's topic length field (bytes).
    #[inline]
    pub const fn topic_len_width(self) -> usize {
        match self {
            Version::V1 => TOPIC_LEN_V1_LEN,
            Version::V2 => TOPIC_LEN_V2_LEN,
        }
    }
}

/// Width of a host given whether it is IPv6 (bytes).
#[inline]
pub(crate) const fn host_len(v6: bool) -> usize {
    if v6 { HOST_V6_LEN } else { HOST_V4_LEN }
}

/// Positions of the fields that depend on the host widths, for one record.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HostShifts {
    pub store_timestamp_at: usize,
    pub store_host_at: usize,
    pub reconsume_times_at: usize,
    pub prepared_transaction_offset_at: usize,
    pub body_len_at: usize,
}

impl HostShifts {
    #[inline]
    pub(crate) const fn new(born_v6: bool, store_v6: bool) -> HostShifts {
        let born_shift = if born_v6 { HOST_V6_SHIFT } else { 0 };
        let store_shift = born_shift + if store_v6 { HOST_V6_SHIFT } else { 0 };
        HostShifts {
            store_timestamp_at: STORE_TIMESTAMP_OFFSET + born_shift,
            store_host_at: STORE_HOST_OFFSET + born_shift,
            reconsume_times_at: RECONSUME_TIMES_OFFSET + store_shift,
            prepared_transaction_offset_at: PREPARED_TRANSACTION_OFFSET_OFFSET + store_shift,
            body_len_at: BODY_LEN_OFFSET + store_shift,
        }
    }
}

/// Length of a whole record (bytes), RocketMQ's `calMsgLength`. Never overflows for
/// lengths that fit in memory.
#[inline]
pub const fn record_len(
    version: Version,
    born_v6: bool,
    store_v6: bool,
    body_len: usize,
    topic_len: usize,
    properties_len: usize,
) -> usize {
    V1_IPV4_OVERHEAD
        + if born_v6 { HOST_V6_SHIFT } else { 0 }
        + if store_v6 { HOST_V6_SHIFT } else { 0 }
        + (version.topic_len_width() - TOPIC_LEN_V1_LEN)
        + body_len
        + topic_len
        + properties_len
}

/// Where the fields patched after encoding sit in one encoded record, returned by
/// [`encode_into`](super::encode_into) (ours).
///
/// All positions are byte offsets from the record's first byte. The patched fields all lie
/// in the head (before [`body_at`](Self::body_at)), so they sit at the same offsets in a
/// parts buffer from [`encode_parts_into`](super::encode_parts_into); the `__CRC32#`
/// digits lie in the tail, at `record_crc_at - body_len` there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RecordLayout {
    /// The record's length (bytes); equals the total size field.
    pub total_size: usize,
    /// Offset of the 8-byte queue offset field.
    pub queue_offset_at: usize,
    /// Offset of the 8-byte physical offset field.
    pub physical_offset_at: usize,
    /// Offset of the 8-byte store timestamp field.
    pub store_timestamp_at: usize,
    /// Offset of the first body byte: the length of the record's head, every byte before
    /// the body (see [`encode_parts_into`](super::encode_parts_into)).
    pub body_at: usize,
    /// Length of the body (bytes).
    pub body_len: usize,
    /// Offset of the 10 ASCII digits of the trailing `__CRC32#` property value, when the
    /// record carries one (see [`seal_record_crc`](super::seal_record_crc)).
    pub record_crc_at: Option<usize>,
}

impl RecordLayout {
    /// Length of the record's head: every byte before the body (bytes).
    #[inline]
    pub const fn head_len(&self) -> usize {
        self.body_at
    }

    /// Length of the record's tail: every byte after the body (topic length, topic,
    /// properties length, properties; bytes).
    #[inline]
    pub const fn tail_len(&self) -> usize {
        self.total_size.saturating_sub(self.body_at).saturating_sub(self.body_len)
    }

    /// Length of the record without its body, `head_len + tail_len`: what
    /// [`encode_parts_into`](super::encode_parts_into) writes (bytes).
    #[inline]
    pub const fn parts_len(&self) -> usize {
        self.total_size.saturating_sub(self.body_len)
    }
}
