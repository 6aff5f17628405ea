//! The 20-byte consume-queue entry (RocketMQ's `ConsumeQueue.CQ_STORE_UNIT_SIZE` unit):
//! commitlog offset 8, size 4, tag hash 8, big-endian. Kept beside the record codec so that
//! `docs/format.md` describes both and its test holds both to the code.

/// Commitlog (physical) offset of the record (bytes).
pub const CQ_PHYSICAL_OFFSET_OFFSET: usize = 0;
/// Width of the commitlog offset (bytes).
pub const CQ_PHYSICAL_OFFSET_LEN: usize = 8;
/// Record size (bytes).
pub const CQ_SIZE_OFFSET: usize = CQ_PHYSICAL_OFFSET_OFFSET + CQ_PHYSICAL_OFFSET_LEN;
/// Width of the size (bytes).
pub const CQ_SIZE_LEN: usize = 4;
/// Tag hash ([`tag_hash`](super::tag_hash)).
pub const CQ_TAG_HASH_OFFSET: usize = CQ_SIZE_OFFSET + CQ_SIZE_LEN;
/// Width of the tag hash (bytes).
pub const CQ_TAG_HASH_LEN: usize = 8;
/// Bytes of one consume-queue entry: 20.
pub const CQ_ENTRY_SIZE: usize = CQ_TAG_HASH_OFFSET + CQ_TAG_HASH_LEN;

/// One consume-queue entry: where a message of a (topic, queue id) sits in the CommitLog.
///
/// # Examples
/// ```
/// use abslock_store::codec::ConsumeQueueEntry;
/// let e = ConsumeQueueEntry { physical_offset: 4096, size: 120, tag_hash: -7 };
/// assert_eq!(ConsumeQueueEntry::from_bytes(&e.to_bytes()), e);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ConsumeQueueEntry {
    /// Physical offset of the record in the CommitLog (bytes).
    pub physical_offset: u64,
    /// The record's total size (bytes).
    pub size: u32,
    /// The tag hash ([`tag_hash`](super::tag_hash) of the tags; 0 without tags).
    pub tag_hash: i64,
}

impl ConsumeQueueEntry {
    /// The entry's 20 bytes, big-endian.
    pub fn to_bytes(&self) -> [u8; CQ_ENTRY_SIZE] {
        let mut b = [0u8; CQ_ENTRY_SIZE];
        b[CQ_PHYSICAL_OFFSET_OFFSET..CQ_SIZE_OFFSET].copy_from_slice(&self.physical_offset.to_be_bytes());
        b[CQ_SIZE_OFFSET..CQ_TAG_HASH_OFFSET].copy_from_slice(&self.size.to_be_bytes());
        b[CQ_TAG_HASH_OFFSET..CQ_ENTRY_SIZE].copy_from_slice(&self.tag_hash.to_be_bytes());
        b
    }

    /// Reads an entry from its 20 bytes.
    pub fn from_bytes(b: &[u8; CQ_ENTRY_SIZE]) -> ConsumeQueueEntry {
        let mut off = [0u8; 8];
        off.copy_from_slice(&b[CQ_PHYSICAL_OFFSET_OFFSET..CQ_SIZE_OFFSET]);
        let mut size = [0u8; 4];
        size.copy_from_slice(&b[CQ_SIZE_OFFSET..CQ_TAG_HASH_OFFSET]);
        let mut tag = [0u8; 8];
        tag.copy_from_slice(&b[CQ_TAG_HASH_OFFSET..CQ_ENTRY_SIZE]);
        ConsumeQueueEntry {
            physical_offset: u64::from_be_bytes(off),
            size: u32::from_be_bytes(size),
            tag_hash: i64::from_be_bytes(tag),
        }
    }
}
