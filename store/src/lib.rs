//! A RocketMQ-style CommitLog message store on memory-mapped segments, generic over the
//! put-message lock.
//!
//! One append-only commitlog of fixed-size segments holds every record (in RocketMQ's
//! CommitLog record layout; the `__CRC32#` property's value covers less than RocketMQ's, see
//! `docs/format.md`), a consume queue per (topic, queue id) indexes it, a
//! flush thread (async) or group commit (sync) makes it durable, and recovery after a
//! crash keeps every acknowledged record. The put-message critical section runs under any
//! `R: lock_api::RawMutex`, so the same store is measured under every lock strategy.
//!
//! ```
//! use abslock_store::{Message, MessageStore, StoreConfig};
//!
//! let dir = tempfile::tempdir()?;
//! let config = StoreConfig { segment_size: 1 << 20, ..StoreConfig::default() };
//! let store: MessageStore<parking_lot::RawMutex> = MessageStore::open(dir.path(), config)?;
//! for body in ["one", "two", "three"] {
//!     store.put_message(&Message::new("orders", body.as_bytes().to_vec()).queue_id(0).tags("new"))?;
//! }
//! for (queue_offset, body) in ["one", "two", "three"].iter().enumerate() {
//!     let msg = store.get_message("orders", 0, queue_offset as u64)?.expect("written above");
//!     assert_eq!(msg.body(), body.as_bytes());
//! }
//! store.close()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Files under the store directory: `commitlog/{20-digit start offset}`,
//! `consumequeue/{topic}/{queue id}/{20-digit start byte}`, `checkpoint`, `record_crc`,
//! `abort` (present while open), `lock`, and `cut/` (bytes recovery cut from the log,
//! saved rather than zeroed). The record layout is specified in `docs/format.md`.
//!
//! Every open verifies the whole log, rebuilds the consume queues from it, and fails on
//! damage to durable data unless [`RecoveryMode::PointInTime`] is chosen;
//! [`MessageStore::recovery_report`] says what it did.

pub mod codec;
mod message;
pub mod put_path;

mod append_only;
mod checkpoint;
mod commitlog;
mod config;
mod consume_queue;
mod crc_epochs;
mod dispatcher;
mod error;
mod flush;
mod io;
mod log_store;
mod put_executor;
mod put_result;
mod recovery;
mod recovery_report;
mod retention;
mod segment;
mod store;
mod topic_queue;
mod transfer;

pub use codec::{DecodeError, StoredMessage, ValidationError};
pub use commitlog::{CommitLog, EncodedRecord, WarmSegments};
pub use config::{
    DEFAULT_COMMIT_INTERVAL, DEFAULT_CONSUME_QUEUE_ENTRIES, DEFAULT_FLUSH_INTERVAL,
    DEFAULT_FLUSH_LEAST_PAGES, DEFAULT_MAX_MESSAGE_SIZE, DEFAULT_POOL_BUFFERS, DEFAULT_PREALLOCATE_AHEAD,
    DEFAULT_SEGMENT_SIZE, DEFAULT_SYNC_FLUSH_TIMEOUT, FlushMode, Layout, PAGE_SIZE, PutPath,
    ROCKETMQ_CONSUME_QUEUE_ENTRIES, ROCKETMQ_PREALLOCATE_AHEAD, ROCKETMQ_SEGMENT_SIZE, RecoveryMode,
    SequencerConfig, StoreConfig, WarmUp, WriteMode,
};
pub use error::{
    BackgroundError, CloseError, ConfigError, Corruption, FileError, FlushError, OpenError, PutError,
    ReadError,
};
pub use message::Message;
pub use recovery_report::{Cut, LogRecovery, RecoveryReport};
pub use retention::{DEFAULT_RETENTION_INTERVAL, Retention, RetentionError, RetentionReport};
pub use store::{MessageStore, PutResult, StoreStats};
pub use transfer::{TransferError, TransferLimit, TransferMethod, TransferReport};

/// Fault injection for tests: make chosen file operations fail (see
/// [`StoreConfig::fault_injector`]).
pub mod fault {
    pub use crate::io::fault::{FaultInjector, FaultPoint};
}

/// The README's examples, compiled and run as doctests so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
