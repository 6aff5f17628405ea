//! Store configuration, with RocketMQ's `MessageStoreConfig` knob names in the field docs.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::Duration;

use crate::codec::{DEFAULT_STORE_PORT, EncodeOptions};
use crate::error::ConfigError;
pub use crate::put_path::SequencerConfig;

use crate::io::fault::FaultInjector;
use crate::retention::Retention;

/// 64 MiB: the library's default segment size (ours), so a store with one message takes
/// 128 MiB of disk (the current segment and one kept ready), not RocketMQ's 3 GiB.
/// [`StoreConfig::rocketmq`] restores RocketMQ's [`ROCKETMQ_SEGMENT_SIZE`].
pub const DEFAULT_SEGMENT_SIZE: u64 = 64 << 20;
/// 1 GiB: RocketMQ's default `mappedFileSizeCommitLog`, used by [`StoreConfig::rocketmq`].
pub const ROCKETMQ_SEGMENT_SIZE: u64 = 1 << 30;
/// 4 MiB: RocketMQ's default `maxMessageSize` (the codec's
/// [`DEFAULT_MAX_BODY_SIZE`](crate::codec::DEFAULT_MAX_BODY_SIZE), one constant).
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = crate::codec::DEFAULT_MAX_BODY_SIZE;
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
/// 65 536 entries of 20 bytes (1.25 MiB per consume-queue file): the library's default
/// (ours), a fifth of RocketMQ's [`ROCKETMQ_CONSUME_QUEUE_ENTRIES`], since every
/// (topic, queue id) that receives a message reserves one whole file.
pub const DEFAULT_CONSUME_QUEUE_ENTRIES: u64 = 65_536;
/// 300 000 entries of 20 bytes: RocketMQ's default `mappedFileSizeConsumeQueue`, used by
/// [`StoreConfig::rocketmq`].
pub const ROCKETMQ_CONSUME_QUEUE_ENTRIES: u64 = 300_000;
/// 1 segment: the library's default (ours), the next segment only.
pub const DEFAULT_PREALLOCATE_AHEAD: usize = 1;
/// 2 segments: RocketMQ's `AllocateMappedFileService` prepares the next and the next-next
/// file; used by [`StoreConfig::rocketmq`].
pub const ROCKETMQ_PREALLOCATE_AHEAD: usize = 2;
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

/// Warm-up of fresh segments, done by the preallocation thread (and at open for the first
/// segment), off the put path and off the put-message lock: a segment is handed to a roll
/// as soon as it is mapped, and warming goes on meanwhile. Not done for segments a put had
/// to create itself (none was ready) or with `preallocate` off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WarmUp {
    /// Prefault every page writable, `madvise(MADV_POPULATE_WRITE)` (`MADV_WILLNEED` on
    /// kernels before 5.14). RocketMQ `warmMapedFileEnable` writes a zero into every page
    /// instead, which could not run beside the put path.
    pub enabled: bool,
    /// Also `mlock` the mapping (RocketMQ locks warmed files too); needs `RLIMIT_MEMLOCK`.
    /// A failed `mlock` is ignored: it only costs page faults.
    pub mlock: bool,
}

/// What recovery does with a commitlog record that fails its checks (ours, after RocksDB's
/// `WALRecoveryMode` and fjall's `RecoveryMode`).
///
/// Recovery verifies every record of the log at open (structure, body CRC, the
/// `__CRC32#` record CRC where the log was written with it, physical offset). The first
/// record that fails is the *cut point*; everything from there on is unreadable by the
/// scan. The *durable end* is what the last checkpoint recorded as flushed (after a clean
/// close: the whole log).
///
/// Whatever the mode, bytes past a cut are never zeroed as a side effect: they are first
/// copied (or, for whole segments, moved) to `cut/{20-digit physical offset}` in the log's
/// directory, and [`RecoveryReport`](crate::RecoveryReport) says where.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum RecoveryMode {
    /// A cut point at or past the durable end (the torn tail of a crash) is cut and
    /// reported; one before it (damage in data a flush and checkpoint had made durable, or
    /// anywhere in a cleanly closed log) fails `open` with
    /// [`OpenError::Damaged`](crate::OpenError::Damaged), naming the offset, and changes
    /// nothing on disk. RocksDB `kTolerateCorruptedTailRecords` / fjall
    /// `TolerateCorruptTail`. The default.
    #[default]
    Strict,
    /// Cut at the first damaged record wherever it is and keep the consistent prefix
    /// (RocksDB `kPointInTimeRecovery`; what RocketMQ's `CommitLog.recoverAbnormally` does,
    /// silently, in every case). Opt in after `Strict` reported damage and the log cannot
    /// be restored from a replica: acknowledged records past the damage are moved aside
    /// (see the type's doc), not served.
    PointInTime,
}

/// Who runs the put-message critical section: every put under the lock, or one thread
/// for many puts (ours; the trade-offs and figures are in `docs/delegation.md`). Every
/// path gives the same API and guarantees: per-(topic, queue id) order, contiguous
/// batches, segment rolls, flush, group commit and recovery as under the lock, and each
/// put's error to that put only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum PutPath {
    /// Each put takes the put-message lock `R` of `MessageStore<R>` and appends its own
    /// record (RocketMQ's `putMessageLock`).
    #[default]
    Lock,
    /// One writer thread owns the log's tail; puts hand their encoded records through a
    /// bounded queue and wait for their physical offsets (rocketmq-rust's design). The lock
    /// `R` is then taken by the writer only, once per batch.
    Sequencer(SequencerConfig),
    /// Flat combining (Hendler, Incze, Shavit, Tzafrir, SPAA 2010): a put publishes its
    /// encoded record in a slot; the put that takes the combiner lock appends every
    /// published record in one pass. The lock `R` is then taken by the combiner only.
    Combining,
}

/// Configuration of a [`MessageStore`](crate::MessageStore).
///
/// Build with struct update syntax over [`StoreConfig::default`] (sized for a library:
/// 64 MiB segments, one kept ready, so one message takes 128 MiB of disk plus 1.25 MiB per
/// consume queue) or [`StoreConfig::rocketmq`] (RocketMQ's broker sizes: 1 GiB segments,
/// two kept ready, 3 GiB of disk from the first message).
///
/// Disk used while open: `segment_size` x (segments holding data + `preallocate_ahead`
/// ready ones) for the commitlog (per topic under [`Layout::PerTopic`]), plus
/// `consume_queue_entries` x 20 bytes per started consume-queue file.
///
/// # Examples
/// ```
/// use abslock_store::{FlushMode, StoreConfig};
/// let config = StoreConfig { segment_size: 16 << 20, flush: FlushMode::SYNC, ..StoreConfig::default() };
/// assert_eq!(config.max_message_size, 4 << 20);
/// assert_eq!(StoreConfig::default().segment_size, 64 << 20);
/// assert_eq!(StoreConfig::rocketmq().segment_size, 1 << 30);
/// ```
#[derive(Debug, Clone)]
pub struct StoreConfig {
    /// Bytes per commitlog segment (RocketMQ `mappedFileSizeCommitLog`; default 64 MiB,
    /// RocketMQ's 1 GiB in [`StoreConfig::rocketmq`]). Each segment is reserved whole on
    /// disk when created. At least 64 bytes; tests use a few KiB.
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
    /// `AllocateMappedFileService`). Default on. Either way a put that finds no ready
    /// segment creates it outside the put-message lock and retries: a put holding the lock
    /// never waits for another thread (RocketMQ's roll waits inside it).
    pub preallocate: bool,
    /// Segments the preallocation thread keeps ready ahead of the current one (ours, after
    /// RocketMQ's `AllocateMappedFileService`, which prepares the next and the next-next
    /// file: 2 in [`StoreConfig::rocketmq`]; default 1). A roll then normally takes a ready segment even when the put path
    /// briefly writes faster than segments are created; it cannot help when it does so
    /// steadily. Each ready segment holds `segment_size` bytes of disk (and of memory once
    /// warmed). At least 1; ignored when `preallocate` is off.
    pub preallocate_ahead: usize,
    /// One log or one per topic. Default [`Layout::Single`].
    pub layout: Layout,
    /// Host written into every record's store-host field (RocketMQ `brokerIP1` + port).
    pub store_host: SocketAddr,
    /// Protect the whole record with the trailing `__CRC32#` property (RocketMQ
    /// `enabledAppendPropCRC`). Default on. Safe to change between runs: the log's
    /// `record_crc` file records from which physical offset each setting applied, and
    /// recovery requires the property only of records written while it was on (others are
    /// checked by their body CRC and structure, and by the property when present).
    pub append_record_crc: bool,
    /// What recovery does with a damaged record (ours, after RocksDB's `WALRecoveryMode`).
    /// Default [`RecoveryMode::Strict`].
    pub recovery: RecoveryMode,
    /// Entries per consume-queue file (RocketMQ `mappedFileSizeConsumeQueue` / 20; default
    /// 65 536, RocketMQ's 300 000 in [`StoreConfig::rocketmq`]).
    pub consume_queue_entries: u64,
    /// Interval at which consume queues are flushed and the checkpoint written (RocketMQ
    /// `flushIntervalConsumeQueue` = 1 s).
    pub checkpoint_interval: Duration,
    /// Stripes of the topic-queue lock that assigns queue offsets (ours; RocketMQ's
    /// `TopicQueueLock` uses 32).
    pub topic_queue_stripes: usize,
    /// Who runs the put-message critical section (ours; `docs/delegation.md`). Default
    /// [`PutPath::Lock`], RocketMQ's path.
    pub put_path: PutPath,
    /// When old commitlog segments are deleted (RocketMQ `fileReservedTime`,
    /// `diskMaxUsedSpaceRatio`, `cleanResourceInterval`). Default: never.
    pub retention: Retention,
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
            store_host: SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, DEFAULT_STORE_PORT)),
            append_record_crc: true,
            recovery: RecoveryMode::Strict,
            consume_queue_entries: DEFAULT_CONSUME_QUEUE_ENTRIES,
            checkpoint_interval: Duration::from_secs(1),
            topic_queue_stripes: 32,
            put_path: PutPath::Lock,
            retention: Retention::default(),
            fault_injector: FaultInjector::default(),
        }
    }
}

impl StoreConfig {
    /// RocketMQ's broker sizes (ours as a profile; values from RocketMQ's
    /// `MessageStoreConfig`): 1 GiB segments (`mappedFileSizeCommitLog`), two kept ready
    /// (`AllocateMappedFileService`), 300 000 entries per consume-queue file
    /// (`mappedFileSizeConsumeQueue`); everything else as [`StoreConfig::default`]. Needs
    /// 3 GiB of free disk from the first message on (6 GiB for two topics under
    /// [`Layout::PerTopic`]).
    ///
    /// # Examples
    /// ```
    /// use abslock_store::StoreConfig;
    /// let config = StoreConfig::rocketmq();
    /// assert_eq!((config.segment_size, config.preallocate_ahead), (1 << 30, 2));
    /// ```
    pub fn rocketmq() -> Self {
        Self {
            segment_size: ROCKETMQ_SEGMENT_SIZE,
            preallocate_ahead: ROCKETMQ_PREALLOCATE_AHEAD,
            consume_queue_entries: ROCKETMQ_CONSUME_QUEUE_ENTRIES,
            ..Self::default()
        }
    }

    /// The codec's encode options for this configuration (built once per log at open).
    pub(crate) fn encode_options(&self) -> EncodeOptions {
        EncodeOptions {
            store_host: self.store_host,
            max_body_size: self.max_message_size,
            append_record_crc: self.append_record_crc,
        }
    }

    /// Checks the configuration; returns what is wrong.
    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        if self.segment_size < 64 {
            return Err(ConfigError::SegmentTooSmall(self.segment_size));
        }
        if usize::try_from(self.segment_size).is_err() {
            return Err(ConfigError::SegmentTooLarge(self.segment_size));
        }
        if self.consume_queue_entries == 0 {
            return Err(ConfigError::NoConsumeQueueEntries);
        }
        if self.preallocate_ahead == 0 {
            return Err(ConfigError::NoPreallocateAhead);
        }
        if self.topic_queue_stripes == 0 {
            return Err(ConfigError::NoTopicQueueStripes);
        }
        if let PutPath::Sequencer(q) = self.put_path
            && (q.queue_capacity == 0 || q.max_batch == 0)
        {
            return Err(ConfigError::EmptySequencer);
        }
        if let WriteMode::Pooled { buffers, .. } = self.write_mode
            && buffers == 0
        {
            return Err(ConfigError::NoPoolBuffers);
        }
        Ok(())
    }
}
