//! Store configuration, with RocketMQ's `MessageStoreConfig` knob names in the field docs.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::Duration;

use crate::io::fault::FaultInjector;

/// 1 GiB: RocketMQ's default `mappedFileSizeCommitLog`.
pub const DEFAULT_SEGMENT_SIZE: u64 = 1 << 30;
/// 4 MiB: RocketMQ's default `maxMessageSize`.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 4 << 20;
/// 500 ms: RocketMQ's default `flushIntervalCommitLog`.
pub const DEFAULT_FLUSH_INTERVAL: Duration = Duration::from_millis(500);
/// 4 pages: RocketMQ's default `flushCommitLogLeastPages`.
pub const DEFAULT_FLUSH_LEAST_PAGES: u32 = 4;
/// 5 s: RocketMQ's default `syncFlushTimeout`.
pub const DEFAULT_SYNC_FLUSH_TIMEOUT: Duration = Duration::from_secs(5);
/// 200 ms: RocketMQ's default `commitIntervalCommitLog`.
pub const DEFAULT_COMMIT_INTERVAL: Duration = Duration::from_millis(200);
/// 5 buffers: RocketMQ's default `transientStorePoolSize`.
pub const DEFAULT_POOL_BUFFERS: usize = 5;
/// 300 000 entries of 20 bytes: RocketMQ's default `mappedFileSizeConsumeQueue`.
pub const DEFAULT_CONSUME_QUEUE_ENTRIES: u64 = 300_000;
/// 2 segments: RocketMQ's `AllocateMappedFileService` prepares the next and the next-next file.
pub const DEFAULT_PREALLOCATE_AHEAD: usize = 2;
/// Page size assumed by `least_pages` (RocketMQ's `OS_PAGE_SIZE`).
pub const PAGE_SIZE: u64 = 4096;

/// When the commitlog is made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FlushMode {
    /// A flush thread msyncs every `interval` once at least `least_pages` pages are dirty
    /// (RocketMQ `flushDiskType = ASYNC_FLUSH`, `FlushRealTimeService`). A put returns
    /// before its record is durable.
    Async {
        /// RocketMQ `flushIntervalCommitLog` (default 500 ms).
        interval: Duration,
        /// RocketMQ `flushCommitLogLeastPages` (default 4 pages of 4 KiB).
        least_pages: u32,
    },
    /// Group commit (RocketMQ `flushDiskType = SYNC_FLUSH`, `GroupCommitService`): a put
    /// returns only when a flush covers its record, or fails with a flush error or timeout.
    Sync {
        /// RocketMQ `syncFlushTimeout` (default 5 s).
        timeout: Duration,
    },
}

impl FlushMode {
    /// Async flush with RocketMQ's defaults.
    pub const ASYNC: FlushMode =
        FlushMode::Async { interval: DEFAULT_FLUSH_INTERVAL, least_pages: DEFAULT_FLUSH_LEAST_PAGES };
    /// Sync flush (group commit) with RocketMQ's default timeout.
    pub const SYNC: FlushMode = FlushMode::Sync { timeout: DEFAULT_SYNC_FLUSH_TIMEOUT };
}

/// Where the put-message critical section copies records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteMode {
    /// Straight into the segment's shared mapping (RocketMQ's default).
    Mmap,
    /// Into a pooled, page-locked write buffer; a commit thread `pwrite`s it to the file
    /// (RocketMQ `transientStorePoolEnable = true`, `TransientStorePool`). Reads see a
    /// record once committed. A segment created while the pool is empty is written
    /// straight into its mapping, as RocketMQ does.
    Pooled {
        /// RocketMQ `transientStorePoolSize` (default 5 buffers of one segment each).
        buffers: usize,
        /// RocketMQ `commitIntervalCommitLog` (default 200 ms).
        commit_interval: Duration,
    },
}

impl WriteMode {
    /// Pooled write buffers with RocketMQ's defaults.
    pub const POOLED: WriteMode =
        WriteMode::Pooled { buffers: DEFAULT_POOL_BUFFERS, commit_interval: DEFAULT_COMMIT_INTERVAL };
}

/// How many commitlogs and put-message locks the store has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Layout {
    /// One CommitLog and one put-message lock for all topics (RocketMQ).
    #[default]
    Single,
    /// One CommitLog and one put-message lock per topic (Kafka-style partitions), under
    /// `topics/{topic}/`. Physical offsets are per topic.
    PerTopic,
}

/// Warm-up of fresh segments, done by the preallocation thread, off the put path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WarmUp {
    /// Touch every page and `madvise(WILLNEED)` (RocketMQ `warmMapedFileEnable`).
    pub enabled: bool,
    /// Also `mlock` the mapping (RocketMQ locks warmed files too); needs `RLIMIT_MEMLOCK`.
    /// A failed `mlock` is ignored: it only costs page faults.
    pub mlock: bool,
}

/// Configuration of a [`MessageStore`](crate::MessageStore).
///
/// Build with struct update syntax over [`StoreConfig::default`].
///
/// # Examples
/// ```
/// use abslock_store::{FlushMode, StoreConfig};
/// let config = StoreConfig { segment_size: 64 << 20, flush: FlushMode::SYNC, ..StoreConfig::default() };
/// assert_eq!(config.max_message_size, 4 << 20);
/// ```
#[derive(Debug, Clone)]
pub struct StoreConfig {
    /// Bytes per commitlog segment (RocketMQ `mappedFileSizeCommitLog`, default 1 GiB).
    /// At least 64 bytes; tests use a few KiB.
    pub segment_size: u64,
    /// Largest message body in bytes (RocketMQ `maxMessageSize`, default 4 MiB).
    pub max_message_size: usize,
    /// Flush policy (RocketMQ `flushDiskType`, `flushIntervalCommitLog`,
    /// `flushCommitLogLeastPages`, `syncFlushTimeout`). Default async.
    pub flush: FlushMode,
    /// Write mode (RocketMQ `transientStorePoolEnable`). Default [`WriteMode::Mmap`].
    pub write_mode: WriteMode,
    /// Warm-up of fresh segments (RocketMQ `warmMapedFileEnable`). Default off.
    pub warm_up: WarmUp,
    /// Create the next segment on a background thread before it is needed (RocketMQ
    /// `AllocateMappedFileService`). Default on.
    pub preallocate: bool,
    /// Segments the preallocation thread keeps ready ahead of the current one (ours, after
    /// RocketMQ's `AllocateMappedFileService`, which prepares the next and the next-next
    /// file: default 2). A roll then normally takes a ready segment even when the put path
    /// briefly writes faster than segments are created; it cannot help when it does so
    /// steadily. Each ready segment holds `segment_size` bytes of disk (and of memory once
    /// warmed). At least 1; ignored when `preallocate` is off.
    pub preallocate_ahead: usize,
    /// One log or one per topic. Default [`Layout::Single`].
    pub layout: Layout,
    /// Host written into every record's store-host field (RocketMQ `brokerIP1` + port).
    pub store_host: SocketAddr,
    /// Protect the whole record with the trailing `__CRC32#` property (RocketMQ
    /// `enabledAppendPropCRC`). Default on; recovery also checks it when present.
    pub append_record_crc: bool,
    /// Entries per consume-queue file (RocketMQ `mappedFileSizeConsumeQueue` / 20, default 300 000).
    pub consume_queue_entries: u64,
    /// Interval at which consume queues are flushed and the checkpoint written (RocketMQ
    /// `flushIntervalConsumeQueue` = 1 s).
    pub checkpoint_interval: Duration,
    /// Stripes of the topic-queue lock that assigns queue offsets (ours; RocketMQ's
    /// `TopicQueueLock` uses 32).
    pub topic_queue_stripes: usize,
    /// Test hook: injects file-operation failures. Default injects nothing.
    #[doc(hidden)]
    pub fault_injector: FaultInjector,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            segment_size: DEFAULT_SEGMENT_SIZE,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            flush: FlushMode::ASYNC,
            write_mode: WriteMode::Mmap,
            warm_up: WarmUp::default(),
            preallocate: true,
            preallocate_ahead: DEFAULT_PREALLOCATE_AHEAD,
            layout: Layout::Single,
            store_host: SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 10911)),
            append_record_crc: true,
            consume_queue_entries: DEFAULT_CONSUME_QUEUE_ENTRIES,
            checkpoint_interval: Duration::from_secs(1),
            topic_queue_stripes: 32,
            fault_injector: FaultInjector::default(),
        }
    }
}

impl StoreConfig {
    /// Checks the configuration; returns what is wrong.
    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.segment_size < 64 {
            return Err(format!("segment_size {} is below 64 bytes", self.segment_size));
        }
        if usize::try_from(self.segment_size).is_err() {
            return Err(format!(
                "segment_size {} does not fit this platform's address space",
                self.segment_size
            ));
        }
        if self.consume_queue_entries == 0 {
            return Err("consume_queue_entries must be at least 1".into());
        }
        if self.preallocate_ahead == 0 {
            return Err("preallocate_ahead must be at least 1 (or set preallocate = false)".into());
        }
        if self.topic_queue_stripes == 0 {
            return Err("topic_queue_stripes must be at least 1".into());
        }
        if let WriteMode::Pooled { buffers, .. } = self.write_mode
            && buffers == 0
        {
            return Err("WriteMode::Pooled needs at least one buffer".into());
        }
        Ok(())
    }
}
