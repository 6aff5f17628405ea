//! Where a put landed: the value every put returns (ours, after RocketMQ's `PutMessageResult`
//! / `AppendMessageResult`). Its own module so the store and each log share it without
//! depending on each other.

/// Where a put landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PutResult {
    /// Byte offset of the record in its commitlog (per topic under [`Layout::PerTopic`](crate::Layout::PerTopic)).
    pub physical_offset: u64,
    /// Index of the message in its (topic, queue id) consume queue.
    pub queue_offset: u64,
    /// Record size in bytes.
    pub size: u32,
    /// Store timestamp written into the record, ms since the Unix epoch.
    pub store_timestamp: i64,
}
