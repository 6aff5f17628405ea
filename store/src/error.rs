//! Error types of the store's operations (ours; shape after redb's `src/error.rs`): one
//! narrow `#[non_exhaustive]` enum per operation, each message saying what to do next.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::codec::{DecodeError, ValidationError};

/// A file operation failed; names the operation and the path.
#[derive(Debug, thiserror::Error)]
#[error("could not {op} {}: {source}", path.display())]
pub struct FileError {
    op: &'static str,
    path: PathBuf,
    #[source]
    source: io::Error,
}

impl FileError {
    pub(crate) fn new(op: &'static str, path: &Path, source: io::Error) -> Self {
        Self { op, path: path.to_path_buf(), source }
    }

    /// The file or directory the operation was on.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The operation that failed, e.g. `"msync"`, `"reserve disk space for"`.
    pub fn op(&self) -> &'static str {
        self.op
    }

    /// The underlying I/O error.
    pub fn io_error(&self) -> &io::Error {
        &self.source
    }
}

/// [`MessageStore::open`](crate::MessageStore::open) failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// A file operation failed while opening or recovering.
    #[error("{0}; check that the store directory exists, is writable and has free space")]
    Io(#[from] FileError),
    /// Another store in this or another process has the directory open.
    #[error("store directory {} is already open by another store; close that store first", path.display())]
    InUse {
        /// The store directory.
        path: PathBuf,
    },
    /// A file is damaged in a way recovery cannot repair by truncation.
    #[error("cannot recover {}: {reason}; move the file aside (the store keeps what precedes it) or restore it from a replica", path.display())]
    Corrupt {
        /// The damaged file.
        path: PathBuf,
        /// What is wrong with it.
        reason: Corruption,
    },
    /// Recovery found a damaged record inside what was known durable (below the last
    /// checkpoint's flushed offset, or anywhere in a cleanly closed log) under
    /// [`RecoveryMode::Strict`](crate::RecoveryMode::Strict). Nothing on disk was changed.
    #[error(
        "commitlog {} is damaged at physical offset {physical_offset}, below the durable end {durable_end}: {source}; restore the segment from a replica, or open with RecoveryMode::PointInTime to cut the log there (the bytes from the cut on are moved to cut/)",
        path.display()
    )]
    Damaged {
        /// The segment file holding the damaged record.
        path: PathBuf,
        /// Where the first damaged record starts, bytes.
        physical_offset: u64,
        /// Everything below this was durable (checkpoint or clean close), bytes.
        durable_end: u64,
        /// What the codec found.
        #[source]
        source: DecodeError,
    },
    /// The configuration is unusable.
    #[error("invalid store configuration: {0}")]
    InvalidConfig(#[from] ConfigError),
}

/// What is wrong with a store file that recovery cannot repair ([`OpenError::Corrupt`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Corruption {
    /// A segment's name is not a multiple of the segment size.
    #[error("start offset {start} is not a multiple of segment_size {segment_size}")]
    OffGrid {
        /// The start offset its name gives, bytes.
        start: u64,
        /// The configured segment size, bytes.
        segment_size: u64,
    },
    /// The segment before this one is missing.
    #[error("segment {missing:020} is missing before it")]
    MissingSegment {
        /// Start offset of the missing segment, bytes.
        missing: u64,
    },
    /// A segment's length is not the segment size.
    #[error(
        "segment is {len} bytes, expected segment_size {segment_size} (was the store made with another segment_size?)"
    )]
    WrongLength {
        /// Its length, bytes.
        len: u64,
        /// The configured segment size, bytes.
        segment_size: u64,
    },
    /// A record that recovery verified no longer decodes when the consume queues are
    /// rebuilt (the file changed under the store).
    #[error("record at {physical_offset} passed recovery but not dispatch: {source}")]
    ChangedDuringOpen {
        /// Where the record starts, bytes.
        physical_offset: u64,
        /// What the codec found.
        source: DecodeError,
    },
}

/// An unusable [`StoreConfig`](crate::StoreConfig) ([`OpenError::InvalidConfig`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// `segment_size` below 64 bytes.
    #[error("segment_size {0} is below 64 bytes")]
    SegmentTooSmall(u64),
    /// `segment_size` beyond this platform's address space.
    #[error("segment_size {0} does not fit this platform's address space")]
    SegmentTooLarge(u64),
    /// `consume_queue_entries` is 0.
    #[error("consume_queue_entries must be at least 1")]
    NoConsumeQueueEntries,
    /// `preallocate_ahead` is 0.
    #[error("preallocate_ahead must be at least 1 (or set preallocate = false)")]
    NoPreallocateAhead,
    /// `topic_queue_stripes` is 0.
    #[error("topic_queue_stripes must be at least 1")]
    NoTopicQueueStripes,
    /// A standalone log's [`WarmSegments`](crate::WarmSegments) asked for no segment.
    #[error("WarmSegments needs at least one segment")]
    NoWarmSegments,
    /// A standalone log's segment size is 0 or not a multiple of the 4 KiB page.
    #[error("segment_size {0} is not a positive multiple of 4096 bytes")]
    SegmentNotPageMultiple(u64),
    /// `WriteMode::Pooled` with no buffer.
    #[error("WriteMode::Pooled needs at least one buffer")]
    NoPoolBuffers,
    /// `PutPath::Sequencer` with a queue capacity or batch size of 0.
    #[error("PutPath::Sequencer needs queue_capacity and max_batch of at least 1")]
    EmptySequencer,
    /// [`MessageStore::open_over_warm_segments`](crate::MessageStore::open_over_warm_segments)
    /// cannot use the segments: the reason.
    #[error("warm segments unusable: {0}")]
    WarmSegmentsUnusable(&'static str),
    /// The directory holds a store of the other [`Layout`](crate::Layout).
    #[error("{} holds a Layout::{found:?} store; open it with that layout", dir.display())]
    LayoutMismatch {
        /// The store directory.
        dir: PathBuf,
        /// The layout found on disk.
        found: crate::Layout,
    },
}

/// The last failure of a store's background work
/// ([`MessageStore::background_error`](crate::MessageStore::background_error)).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum BackgroundError {
    /// The async flush thread's last flush failed (cleared by a successful `flush`).
    #[error("async flush failed: {0}")]
    Flush(FlushError),
    /// Dispatching records into the consume queues stopped; reads retry it.
    #[error("dispatch into the consume queues stopped: {0}")]
    Dispatch(Arc<ReadError>),
    /// Writing the checkpoint (or flushing the consume queues before it) failed.
    #[error("checkpoint failed: {0}")]
    Checkpoint(Arc<FileError>),
    /// A background retention run stopped at a failed deletion step; the next run retries.
    #[error("{0}")]
    Retention(Arc<crate::retention::RetentionError>),
}

/// [`MessageStore::put_message`](crate::MessageStore::put_message) or
/// [`put_messages`](crate::MessageStore::put_messages) failed.
///
/// Except for [`PutError::Flush`], nothing was written: the write position, every file and
/// every consume queue are unchanged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PutError {
    /// The message breaks a limit; fix the message.
    #[error("message rejected, nothing written: {0}")]
    Invalid(#[from] ValidationError),
    /// The encoded record can never fit one segment (it needs `size + 8` bytes).
    #[error(
        "record of {size} bytes can never fit a segment of {segment_size} bytes; raise segment_size or send a smaller message"
    )]
    TooLargeForSegment {
        /// Encoded record size in bytes.
        size: usize,
        /// Configured segment size in bytes.
        segment_size: u64,
    },
    /// `put_messages` was given no messages.
    #[error("empty batch: pass at least one message")]
    EmptyBatch,
    /// The encoded batch would need more than one segment roll; batches are all or nothing.
    #[error(
        "batch of {size} encoded bytes exceeds the {limit}-byte batch limit (segment_size - 8); split the batch or raise segment_size"
    )]
    BatchTooLarge {
        /// Encoded batch size in bytes.
        size: usize,
        /// Largest accepted encoded batch in bytes.
        limit: u64,
    },
    /// The next segment could not be created (disk full, permissions); nothing was written.
    #[error(
        "could not create the next commitlog segment, nothing written: {0}; free disk space and retry (reads keep working)"
    )]
    SegmentCreate(#[source] FileError),
    /// The record is in the log at `physical_offset` but a sync flush did not make it
    /// durable; it is not acknowledged. It may survive a crash or not.
    #[error("message written at physical offset {physical_offset} but not acknowledged as durable: {source}")]
    Flush {
        /// Where the record was written.
        physical_offset: u64,
        /// Why the flush did not cover it.
        #[source]
        source: FlushError,
    },
    /// A [`Layout::PerTopic`](crate::Layout::PerTopic) batch named two topics.
    #[error("batch mixes topics {first:?} and {other:?}; under Layout::PerTopic send one batch per topic")]
    MixedTopics {
        /// The batch's first topic.
        first: String,
        /// A different topic in the same batch.
        other: String,
    },
    /// Under [`Layout::PerTopic`](crate::Layout::PerTopic), the log of a topic met for the
    /// first time could not be opened for a reason other than I/O (those are
    /// [`PutError::SegmentCreate`]); nothing was written.
    #[error("could not open the log of topic {topic:?}, nothing written: {source}")]
    TopicLog {
        /// The topic.
        topic: String,
        /// Why its log did not open.
        #[source]
        source: Box<OpenError>,
    },
    /// The store is closing.
    #[error("store is closed; open it again to write")]
    Closed,
    /// The delegated put path ([`PutPath::Sequencer`](crate::PutPath::Sequencer),
    /// [`PutPath::Combining`](crate::PutPath::Combining)) panicked while appending this put's
    /// records: a bug, never caused by input. The record may or may not be in the log; it is
    /// not acknowledged.
    #[error("the put path panicked while appending this message; it is not acknowledged")]
    PutPathPanicked,
}

/// A read failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The record at `physical_offset` does not decode.
    #[error(
        "record at physical offset {physical_offset} is damaged: {source}; reopen the store to run recovery"
    )]
    Corrupt {
        /// Where the record should start.
        physical_offset: u64,
        /// What the codec found.
        #[source]
        source: DecodeError,
    },
    /// A consume-queue entry points outside the readable commitlog.
    #[error(
        "consume queue {topic}/{queue_id} entry {queue_offset} points to [{physical_offset}, +{size}), which is not that message in the readable log; reopen the store to rebuild consume queues"
    )]
    BadQueueEntry {
        /// Topic.
        topic: String,
        /// Queue id.
        queue_id: u32,
        /// Queue offset of the entry.
        queue_offset: u64,
        /// Physical offset in the entry.
        physical_offset: u64,
        /// Size in the entry, bytes.
        size: u32,
    },
    /// No record starts at the physical offset given to
    /// [`get_message_at`](crate::MessageStore::get_message_at): it points into a record or
    /// past a segment's blank. The log itself is intact (ours).
    #[error(
        "no record starts at physical offset {physical_offset}; pass an offset from a PutResult or a StoredMessage"
    )]
    NoRecordAt {
        /// The offset asked for.
        physical_offset: u64,
    },
    /// The queue offset is below the queue's first readable offset: retention deleted the
    /// segment its record was in (ours; RocketMQ answers `OFFSET_TOO_SMALL`).
    #[error(
        "queue offset {queue_offset} of {topic}/{queue_id} was deleted by retention; the first readable queue offset is {min_queue_offset}"
    )]
    BelowMinQueueOffset {
        /// Topic.
        topic: String,
        /// Queue id.
        queue_id: u32,
        /// The queue offset asked for.
        queue_offset: u64,
        /// The queue's first readable queue offset.
        min_queue_offset: u64,
    },
    /// The physical offset is below the log's first readable offset: retention deleted its
    /// segment (ours).
    #[error(
        "physical offset {physical_offset} was deleted by retention; the first readable physical offset is {min_physical_offset}"
    )]
    BelowMinPhysicalOffset {
        /// The physical offset asked for.
        physical_offset: u64,
        /// The log's first readable physical offset.
        min_physical_offset: u64,
    },
    /// `get_message_at` without a topic on a [`Layout::PerTopic`](crate::Layout::PerTopic)
    /// store, where each topic has its own physical offsets.
    #[error("per-topic layout: physical offsets are per topic; use get_message_at_in(topic, offset)")]
    TopicRequired,
    /// A consume-queue file could not be read or created.
    #[error("{0}; reopen the store to rebuild consume queues")]
    Io(#[from] FileError),
}

/// A flush failed; the flushed position did not advance past what is durable.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum FlushError {
    /// `msync`/`fsync` or the pooled write failed.
    #[error("flush failed, flushed position stays at {flushed}: {source}; retry once the disk is healthy")]
    Io {
        /// The flushed physical offset, unchanged by the failure.
        flushed: u64,
        /// The failed operation.
        #[source]
        source: Arc<FileError>,
    },
    /// No flush covered the offset within the sync-flush timeout (RocketMQ `syncFlushTimeout`).
    #[error(
        "no flush covered physical offset {offset} within {timeout:?}; the disk is slow or failing, retry or raise the sync flush timeout"
    )]
    Timeout {
        /// The end offset waited for.
        offset: u64,
        /// The timeout.
        timeout: Duration,
    },
    /// The store is closing.
    #[error("store is closed; nothing more will be flushed")]
    Closed,
}

/// [`MessageStore::close`](crate::MessageStore::close) failed; `abort` stays, so the next
/// open runs crash recovery.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CloseError {
    /// The final flush failed.
    #[error("final flush failed: {0}; the next open will recover from the log")]
    Flush(#[from] FlushError),
    /// Writing the checkpoint or removing `abort` failed.
    #[error("{0}; the next open will run crash recovery")]
    Io(#[from] FileError),
    /// [`MessageStore::close_into_warm_segments`](crate::MessageStore::close_into_warm_segments)
    /// cannot take the segments out (the store closed cleanly): the reason.
    #[error("closed, but the segments cannot be taken out: {0}")]
    NotRecyclable(&'static str),
}
