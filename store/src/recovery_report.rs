//! What recovery did at open, for the application to read
//! ([`MessageStore::recovery_report`](crate::MessageStore::recovery_report)). Ours, after
//! fjall's and RocksDB's recovery modes, which report what they dropped instead of
//! dropping it silently.

use std::path::PathBuf;

use crate::codec::DecodeError;

/// What recovery did to every log opened by [`MessageStore::open`](crate::MessageStore::open)
/// (one under [`Layout::Single`](crate::Layout::Single), one per existing topic under
/// [`Layout::PerTopic`](crate::Layout::PerTopic)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecoveryReport {
    /// One entry per log, in the order they were opened.
    pub logs: Vec<LogRecovery>,
}

impl RecoveryReport {
    /// Whether recovery cut any log (a torn tail, or damage under
    /// [`RecoveryMode::PointInTime`](crate::RecoveryMode::PointInTime)).
    pub fn any_cut(&self) -> bool {
        self.logs.iter().any(|l| l.cut.is_some())
    }

    /// Consume queues rebuilt (entries written or removed) from the logs, summed.
    pub fn queues_rebuilt(&self) -> u64 {
        self.logs.iter().map(|l| l.queues_rebuilt).sum()
    }
}

/// What recovery did to one log.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LogRecovery {
    /// The log's directory (the store's, or `topics/{topic}`).
    pub dir: PathBuf,
    /// The log was not closed cleanly (`abort` present or no valid checkpoint).
    pub crashed: bool,
    /// Below this physical offset the log was known durable (the checkpoint's flushed
    /// offset; after a clean close, the whole log), bytes.
    pub durable_end: u64,
    /// The recovered write position: where the next record goes, bytes.
    pub write_position: u64,
    /// The cut, if recovery cut the log.
    pub cut: Option<Cut>,
    /// Consume queues whose entries were written, replaced or removed to match the log.
    pub queues_rebuilt: u64,
    /// Consume-queue entries written or replaced from the log.
    pub entries_rebuilt: u64,
    /// Consume-queue entries removed because the log holds no such record (records cut
    /// now or earlier, or a damaged queue), messages.
    pub entries_removed: u64,
}

/// A cut of the commitlog: everything from `physical_offset` on was moved aside.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Cut {
    /// The new end of the log (the first record that failed its checks), bytes.
    pub physical_offset: u64,
    /// Why that record failed.
    pub cause: DecodeError,
    /// Whether the cut lies below the durable end (damage to durable data, cut only under
    /// [`RecoveryMode::PointInTime`](crate::RecoveryMode::PointInTime)); otherwise it is the
    /// torn tail of a crash.
    pub below_durable_end: bool,
    /// Bytes moved aside: from the cut to the last non-zero byte of its segment, plus every
    /// later segment that held any non-zero byte.
    pub bytes: u64,
    /// Where they went: files under the log's `cut/` directory, each named by the physical
    /// offset of its first byte.
    pub moved_to: Vec<PathBuf>,
}
