//! A zero-copy view of one decoded record (RocketMQ's `MessageExt` as `MessageDecoder`
//! reads it, without copying the body).

use std::net::SocketAddr;

use super::host::read_host;
use super::layout::{
    BODY_CRC_OFFSET, BORN_HOST_OFFSET, BORN_TIMESTAMP_OFFSET, FLAG_OFFSET, HostShifts,
    PHYSICAL_OFFSET_OFFSET, QUEUE_ID_OFFSET, QUEUE_OFFSET_OFFSET, SYS_FLAG_OFFSET, TOTAL_SIZE_OFFSET,
    Version, host_len,
};
use super::properties::{PROPERTY_KEYS, PROPERTY_TAGS, Properties};
use super::tag_hash::tag_hash;
use crate::Message;

/// One record as it sits in the CommitLog, borrowed: every accessor reads the record's
/// bytes in place (big-endian), and `body()`, `topic()` and the properties borrow them.
///
/// Obtained from [`decode`](super::decode), which has already checked the record, so the
/// accessors never fail. Field meanings follow RocketMQ's `MessageExt`.
#[derive(Clone, Copy)]
pub struct StoredMessage<'a> {
    pub(crate) record: &'a [u8],
    pub(crate) version: Version,
    pub(crate) born_v6: bool,
    pub(crate) store_v6: bool,
    pub(crate) shifts: HostShifts,
    pub(crate) body: &'a [u8],
    pub(crate) topic: &'a str,
    /// Properties the producer set: the block without the codec's `__CRC32#` property.
    pub(crate) properties: &'a str,
    /// The whole properties block as stored.
    pub(crate) properties_raw: &'a [u8],
    pub(crate) record_crc: Option<u32>,
}

impl std::fmt::Debug for StoredMessage<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredMessage")
            .field("topic", &self.topic)
            .field("queue_id", &self.queue_id())
            .field("queue_offset", &self.queue_offset())
            .field("physical_offset", &self.physical_offset())
            .field("total_size", &self.total_size())
            .field("body_len", &self.body.len())
            .field("properties", &self.properties)
            .finish_non_exhaustive()
    }
}

#[inline]
fn be4(b: &[u8], at: usize) -> [u8; 4] {
    [b[at], b[at + 1], b[at + 2], b[at + 3]]
}

#[inline]
fn be8(b: &[u8], at: usize) -> [u8; 8] {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    a
}

impl<'a> StoredMessage<'a> {
    /// The whole record's bytes (`total_size()` of them).
    pub fn as_bytes(&self) -> &'a [u8] {
        self.record
    }

    /// Total size field: the record's length in bytes.
    pub fn total_size(&self) -> u32 {
        u32::from_be_bytes(be4(self.record, TOTAL_SIZE_OFFSET))
    }

    /// Format version (v1: 1-byte topic length, v2: 2-byte).
    pub fn version(&self) -> Version {
        self.version
    }

    /// The body CRC field (CRC32 of the body, masked to 31 bits).
    pub fn body_crc(&self) -> u32 {
        u32::from_be_bytes(be4(self.record, BODY_CRC_OFFSET))
    }

    /// Queue id.
    pub fn queue_id(&self) -> u32 {
        u32::from_be_bytes(be4(self.record, QUEUE_ID_OFFSET))
    }

    /// Flag (opaque to the store).
    pub fn flag(&self) -> i32 {
        i32::from_be_bytes(be4(self.record, FLAG_OFFSET))
    }

    /// Queue offset: the message's index in its consume queue.
    pub fn queue_offset(&self) -> u64 {
        u64::from_be_bytes(be8(self.record, QUEUE_OFFSET_OFFSET))
    }

    /// Physical offset: the record's position in the CommitLog (bytes).
    pub fn physical_offset(&self) -> u64 {
        u64::from_be_bytes(be8(self.record, PHYSICAL_OFFSET_OFFSET))
    }

    /// Sys flag as stored, host-family bits (4 and 5) included.
    pub fn sys_flag(&self) -> i32 {
        i32::from_be_bytes(be4(self.record, SYS_FLAG_OFFSET))
    }

    /// Born timestamp (ms since the Unix epoch).
    pub fn born_timestamp(&self) -> i64 {
        i64::from_be_bytes(be8(self.record, BORN_TIMESTAMP_OFFSET))
    }

    /// Born host (the producer's address).
    pub fn born_host(&self) -> SocketAddr {
        let len = host_len(self.born_v6);
        read_host(&self.record[BORN_HOST_OFFSET..BORN_HOST_OFFSET + len], self.born_v6)
    }

    /// Store timestamp (ms since the Unix epoch, set inside the put-message lock).
    pub fn store_timestamp(&self) -> i64 {
        i64::from_be_bytes(be8(self.record, self.shifts.store_timestamp_at))
    }

    /// Store host (the broker's address).
    pub fn store_host(&self) -> SocketAddr {
        let at = self.shifts.store_host_at;
        read_host(&self.record[at..at + host_len(self.store_v6)], self.store_v6)
    }

    /// Reconsume times.
    pub fn reconsume_times(&self) -> i32 {
        i32::from_be_bytes(be4(self.record, self.shifts.reconsume_times_at))
    }

    /// Prepared transaction offset.
    pub fn prepared_transaction_offset(&self) -> i64 {
        i64::from_be_bytes(be8(self.record, self.shifts.prepared_transaction_offset_at))
    }

    /// The body, borrowed from the record.
    pub fn body(&self) -> &'a [u8] {
        self.body
    }

    /// The topic, borrowed from the record.
    pub fn topic(&self) -> &'a str {
        self.topic
    }

    /// The properties block exactly as stored, the `__CRC32#` property included.
    pub fn properties_bytes(&self) -> &'a [u8] {
        self.properties_raw
    }

    /// The producer's `(name, value)` properties in stored order (the codec's `__CRC32#`
    /// property left out).
    pub fn properties(&self) -> Properties<'a> {
        Properties::new(self.properties)
    }

    /// The value of the first property called `name`, if any.
    pub fn property(&self, name: &str) -> Option<&'a str> {
        self.properties().find(name)
    }

    /// The tags (`TAGS` property), if any.
    pub fn tags(&self) -> Option<&'a str> {
        self.property(PROPERTY_TAGS)
    }

    /// The consume-queue tag hash of this message's tags ([`tag_hash`](super::tag_hash);
    /// 0 without tags).
    pub fn tag_hash(&self) -> i64 {
        self.tags().map_or(0, tag_hash)
    }

    /// The keys (`KEYS` property), if any.
    pub fn keys(&self) -> Option<&'a str> {
        self.property(PROPERTY_KEYS)
    }

    /// The whole-record CRC from the `__CRC32#` property, if the record carries a
    /// well-formed one (verified by `decode` unless told to skip it).
    pub fn record_crc(&self) -> Option<u32> {
        self.record_crc
    }

    /// An owned [`Message`] with this record's producer-side fields (topic, body, queue id,
    /// flag, properties, born host and timestamp, sys flag without the host bits, reconsume
    /// times, prepared transaction offset). Copies the body.
    pub fn to_message(&self) -> Message {
        Message::from_parts(
            self.topic,
            self.body,
            self.queue_id(),
            self.flag(),
            self.properties(),
            self.born_host(),
            self.born_timestamp(),
            self.sys_flag() & !(super::SYS_FLAG_BORN_HOST_V6 | super::SYS_FLAG_STORE_HOST_V6),
            self.reconsume_times(),
            self.prepared_transaction_offset(),
        )
    }
}
