//! [`MessageStore`]: the public store API over one log ([`Layout::Single`], RocketMQ) or
//! one log per topic ([`Layout::PerTopic`], Kafka-style).

use std::collections::HashMap;
use std::fs::File;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use lock_api::RawMutex;

use crate::append_only::AppendOnly;
use crate::codec::{self, StoredMessage};
use crate::commitlog::WarmSegments;
use crate::config::{Layout, StoreConfig};
use crate::dispatcher::Dispatcher;
use crate::error::{
    BackgroundError, CloseError, ConfigError, FileError, FlushError, OpenError, PutError, ReadError,
};
use crate::io::FileOps;
use crate::log_store::LogStore;
use crate::message::Message;
pub use crate::put_result::PutResult;
use crate::recovery_report::RecoveryReport;
use crate::retention::{RetentionError, RetentionReport};
use crate::transfer::{TransferError, TransferLimit, TransferReport};

/// Counters of a store (summed over topics under [`Layout::PerTopic`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreStats {
    /// Next physical offset to be written, bytes.
    pub write_position: u64,
    /// Durable physical offset, bytes.
    pub flushed_position: u64,
    /// Flushes (msync rounds, incl. group commits) that advanced the flushed position.
    pub flushes: u64,
    /// Segment rolls (a blank record plus a switch to the next segment).
    pub rolls: u64,
    /// Puts that needed a roll, found no ready segment and left the put-message lock to
    /// wait for the preallocator (or create the segment) before retrying (ours).
    pub roll_waits: u64,
    /// Commitlogs (1, or one per topic).
    pub logs: u64,
}

type MakeLock<R> = Box<dyn Fn() -> R + Send + Sync>;

enum Logs<R: RawMutex + Send + Sync + 'static> {
    Single(LogStore<R>),
    PerTopic {
        root: PathBuf,
        /// Topic -> index in `all`; both only grow while the store is open.
        index: RwLock<HashMap<String, usize>>,
        /// Every topic's log: a `&LogStore` stays valid for `&self`.
        all: AppendOnly<LogStore<R>>,
        make_lock: MakeLock<R>,
        /// One dispatcher thread for all topics.
        dispatcher: Arc<Dispatcher>,
        _root_lock: File,
    },
}

/// A RocketMQ-style message store: CommitLog segments, consume queues, flush, recovery,
/// generic over the put-message lock `R`.
///
/// Source: RocketMQ `DefaultMessageStore` (`Layout::Single`); `Layout::PerTopic` is ours.
///
/// # Examples
/// ```
/// use abslock_store::{Message, MessageStore, StoreConfig};
/// let dir = tempfile::tempdir()?;
/// let config = StoreConfig { segment_size: 1 << 20, ..StoreConfig::default() };
/// let store: MessageStore<parking_lot::RawMutex> = MessageStore::open(dir.path(), config)?;
/// let put = store.put_message(&Message::new("orders", b"hello".to_vec()).queue_id(0))?;
/// let msg = store.get_message("orders", 0, put.queue_offset)?.expect("just written");
/// assert_eq!(msg.body(), b"hello");
/// store.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct MessageStore<R: RawMutex + Send + Sync + 'static> {
    dir: PathBuf,
    config: StoreConfig,
    logs: Logs<R>,
    recovery: RecoveryReport,
}

impl<R: RawMutex + Send + Sync + 'static> std::fmt::Debug for MessageStore<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MessageStore").field("dir", &self.dir).field("layout", &self.config.layout).finish()
    }
}

impl<R: RawMutex + Send + Sync + 'static> MessageStore<R> {
    /// Opens the store in `dir` (created if missing), recovering after a crash; the
    /// put-message lock starts as `R::INIT`.
    ///
    /// # Errors
    /// [`OpenError`]: I/O (with the path), a directory already open, a damaged file that
    /// truncation cannot repair, an invalid configuration.
    pub fn open(dir: impl AsRef<Path>, config: StoreConfig) -> Result<Self, OpenError> {
        Self::open_with_lock(dir, config, || R::INIT)
    }

    /// Like [`open`](Self::open), with each put-message lock made by `make_lock` (for locks
    /// whose useful configuration is not `INIT`, e.g. `RawBackoffLock::with_k(10)`).
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn open_with_lock(
        dir: impl AsRef<Path>,
        config: StoreConfig,
        make_lock: impl Fn() -> R + Send + Sync + 'static,
    ) -> Result<Self, OpenError> {
        let dir = dir.as_ref().to_path_buf();
        config.validate()?;
        let fs = FileOps::new(config.fault_injector.clone());
        fs.create_dir_all(&dir)?;
        let logs = match config.layout {
            Layout::Single => {
                if dir.join("topics").is_dir() {
                    return Err(ConfigError::LayoutMismatch { dir, found: Layout::PerTopic }.into());
                }
                Logs::Single(LogStore::open(&dir, &config, make_lock(), None)?)
            }
            Layout::PerTopic => {
                if dir.join("commitlog").is_dir() {
                    return Err(ConfigError::LayoutMismatch { dir, found: Layout::Single }.into());
                }
                let root_lock =
                    fs.lock_file(&dir.join("lock"))?.ok_or_else(|| OpenError::InUse { path: dir.clone() })?;
                let root = dir.join("topics");
                fs.create_dir_all(&root)?;
                let dispatcher = Arc::new(
                    Dispatcher::start().map_err(|e| FileError::new("start dispatcher for", &dir, e))?,
                );
                // Every topic's recovery is planned before any is carried out: a damaged
                // log fails the open with every log unchanged.
                let mut pending = Vec::new();
                for (name, path, ft) in fs.list_dir(&root)? {
                    // Only directories that are ours: a valid topic name holding a commitlog.
                    // Opening anything else would create segments inside someone's directory.
                    if ft.is_dir() && codec::validate_topic(&name).is_ok() && path.join("commitlog").is_dir()
                    {
                        pending.push((name, LogStore::<R>::plan(&path, &config)?));
                    }
                }
                pending.sort_by(|a, b| a.0.cmp(&b.0));
                let (mut index, all) = (HashMap::new(), AppendOnly::default());
                for (name, p) in pending {
                    let log = LogStore::finish(p, &config, make_lock(), Some(Arc::clone(&dispatcher)), None)?;
                    index.insert(name, all.push(Arc::new(log)));
                }
                Logs::PerTopic {
                    root,
                    index: RwLock::new(index),
                    all,
                    make_lock: Box::new(make_lock),
                    dispatcher,
                    _root_lock: root_lock,
                }
            }
        };
        Ok(Self::assemble(dir, config, logs))
    }

    /// Creates a new, empty [`Layout::Single`] store in `dir` whose commitlog starts on
    /// `segments` (from [`WarmSegments::create`] or an earlier
    /// [`close_into_warm_segments`](Self::close_into_warm_segments)) instead of creating and
    /// warming its first segment: their files move into `dir/commitlog/`, still mapped and
    /// warm; the first is the current segment, the others wait ready for the roll. So a
    /// series of short-lived stores (one per measurement) reuses the same warm files. Ours.
    ///
    /// The segments must hold zeros where a record could be read (fresh, or given back by
    /// `close_into_warm_segments`, which zeroes what the log wrote).
    ///
    /// # Errors
    /// [`OpenError::InvalidConfig`] with [`ConfigError::WarmSegmentsUnusable`] if the layout is
    /// not `Single`, the write mode is `Pooled`, the segment sizes differ from
    /// `config.segment_size`, or `dir` already holds a commitlog; otherwise as
    /// [`open`](Self::open). On an error the segments are dropped (their files stay where
    /// they were moved).
    ///
    /// # Examples
    /// ```
    /// use abslock_store::{Message, MessageStore, StoreConfig, WarmSegments};
    /// use lock_api::RawMutex as _;
    /// let (warm_dir, a, b) = (tempfile::tempdir()?, tempfile::tempdir()?, tempfile::tempdir()?);
    /// let config = StoreConfig { segment_size: 1 << 20, preallocate: false, ..StoreConfig::default() };
    /// let warm = WarmSegments::create(warm_dir.path(), 1 << 20, 1)?;
    /// let store: MessageStore<parking_lot::RawMutex> =
    ///     MessageStore::open_over_warm_segments(a.path(), config.clone(), || parking_lot::RawMutex::INIT, warm)?;
    /// store.put_message(&Message::new("orders", b"one".to_vec()))?;
    /// let warm = store.close_into_warm_segments(warm_dir.path())?;
    /// let store: MessageStore<parking_lot::RawMutex> =
    ///     MessageStore::open_over_warm_segments(b.path(), config, || parking_lot::RawMutex::INIT, warm)?;
    /// assert_eq!(store.put_message(&Message::new("orders", b"two".to_vec()))?.physical_offset, 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_over_warm_segments(
        dir: impl AsRef<Path>,
        config: StoreConfig,
        make_lock: impl Fn() -> R + Send + Sync + 'static,
        segments: WarmSegments,
    ) -> Result<Self, OpenError> {
        let dir = dir.as_ref().to_path_buf();
        config.validate()?;
        let unusable = |why| Err(OpenError::InvalidConfig(ConfigError::WarmSegmentsUnusable(why)));
        if !matches!(config.layout, Layout::Single) {
            return unusable("only a Layout::Single store can start on warm segments");
        }
        if matches!(config.write_mode, crate::WriteMode::Pooled { .. }) {
            return unusable("WriteMode::Pooled writes through buffers the warm segments lack");
        }
        if segments.segment_size() != config.segment_size {
            return unusable("their size differs from config.segment_size");
        }
        let fs = FileOps::new(config.fault_injector.clone());
        fs.create_dir_all(&dir)?;
        if dir.join("topics").is_dir() {
            return Err(ConfigError::LayoutMismatch { dir, found: Layout::PerTopic }.into());
        }
        let logs = Logs::Single(LogStore::open_over(&dir, &config, make_lock(), segments)?);
        Ok(Self::assemble(dir, config, logs))
    }

    fn assemble(dir: PathBuf, config: StoreConfig, logs: Logs<R>) -> Self {
        let mut recovery = RecoveryReport::default();
        match &logs {
            Logs::Single(l) => recovery.logs.push(l.recovery_report().clone()),
            Logs::PerTopic { all, .. } => {
                recovery.logs = all.to_vec().iter().map(|l| l.recovery_report().clone()).collect();
            }
        }
        Self { dir, config, logs, recovery }
    }

    /// What recovery did at [`open`](Self::open): per log, whether it crashed, the durable
    /// end, any cut (where, why, how many bytes, where they were moved) and the consume
    /// queues rebuilt from the log (ours, after fjall's and RocksDB's recovery reports).
    ///
    /// # Examples
    /// ```
    /// use abslock_store::{Message, MessageStore, StoreConfig};
    /// let dir = tempfile::tempdir()?;
    /// let config = StoreConfig { segment_size: 1 << 20, ..StoreConfig::default() };
    /// let store: MessageStore<parking_lot::RawMutex> = MessageStore::open(dir.path(), config.clone())?;
    /// store.put_message(&Message::new("orders", b"hello".to_vec()))?;
    /// store.close()?;
    /// let store: MessageStore<parking_lot::RawMutex> = MessageStore::open(dir.path(), config)?;
    /// let report = store.recovery_report();
    /// assert!(!report.any_cut() && !report.logs[0].crashed);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn recovery_report(&self) -> &RecoveryReport {
        &self.recovery
    }

    /// The log of `topic`, if it exists, borrowed for `&self`.
    fn log_of(&self, topic: &str) -> Option<&LogStore<R>> {
        match &self.logs {
            Logs::Single(l) => Some(l),
            Logs::PerTopic { index, all, .. } => {
                let i = *index.read().unwrap_or_else(PoisonError::into_inner).get(topic)?;
                all.get(i)
            }
        }
    }

    fn log_for_put(&self, msg: &Message) -> Result<&LogStore<R>, PutError> {
        if let Some(l) = self.log_of(msg.topic()) {
            return Ok(l);
        }
        let Logs::PerTopic { root, index, all, make_lock, dispatcher, .. } = &self.logs else {
            return Err(PutError::Closed);
        };
        // Validate before creating a directory named after the topic.
        LogStore::<R>::validate(&self.config, msg)?;
        let mut map = index.write().unwrap_or_else(PoisonError::into_inner);
        if !map.contains_key(msg.topic()) {
            let dir = root.join(msg.topic());
            // A topic whose log cannot be made (disk full) leaves nothing behind: a half-made
            // topic directory would make every later open try, and fail, again.
            let fresh = !dir.exists();
            let log = LogStore::open(&dir, &self.config, make_lock(), Some(Arc::clone(dispatcher))).map_err(
                |e| {
                    if fresh {
                        let _ = FileOps::new(self.config.fault_injector.clone()).remove_dir_all(&dir);
                    }
                    match e {
                        OpenError::Io(f) => PutError::SegmentCreate(f),
                        other => {
                            PutError::TopicLog { topic: msg.topic().to_owned(), source: Box::new(other) }
                        }
                    }
                },
            )?;
            map.insert(msg.topic().to_owned(), all.push(Arc::new(log)));
        }
        drop(map);
        self.log_of(msg.topic()).ok_or(PutError::Closed)
    }

    /// Appends one message. Validation, encoding and CRCs happen before any lock; the
    /// queue offset is assigned under the topic-queue stripe lock, held across the
    /// put-message critical section. Under sync flush, returns once the record is durable.
    ///
    /// # Errors
    /// [`PutError`]: a broken limit (nothing written), no space for the next segment
    /// (nothing written), a failed or timed-out sync flush (written, not acknowledged).
    pub fn put_message(&self, msg: &Message) -> Result<PutResult, PutError> {
        self.log_for_put(msg)?.put_message(msg)
    }

    /// Appends a batch, all or nothing: every message is validated first and the records
    /// land contiguously in one segment. Messages may name different topics and queues
    /// (under [`Layout::PerTopic`], one topic per batch).
    ///
    /// # Errors
    /// As [`put_message`](Self::put_message); also [`PutError::EmptyBatch`],
    /// [`PutError::BatchTooLarge`] (encoded batch over segment size - 8 bytes).
    ///
    /// # Examples
    /// ```
    /// use abslock_store::{Message, MessageStore, StoreConfig};
    /// let dir = tempfile::tempdir()?;
    /// let config = StoreConfig { segment_size: 1 << 20, ..StoreConfig::default() };
    /// let store: MessageStore<parking_lot::RawMutex> = MessageStore::open(dir.path(), config)?;
    /// let batch = [Message::new("orders", b"a".to_vec()), Message::new("orders", b"b".to_vec())];
    /// let puts = store.put_messages(&batch)?;
    /// assert_eq!((puts[0].queue_offset, puts[1].queue_offset), (0, 1));
    /// assert_eq!(puts[1].physical_offset, puts[0].physical_offset + u64::from(puts[0].size));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn put_messages(&self, msgs: &[Message]) -> Result<Vec<PutResult>, PutError> {
        let Some(first) = msgs.first() else { return Err(PutError::EmptyBatch) };
        if matches!(self.logs, Logs::PerTopic { .. }) {
            for m in msgs {
                LogStore::<R>::validate(&self.config, m)?;
                if m.topic() != first.topic() {
                    return Err(PutError::MixedTopics {
                        first: first.topic().to_owned(),
                        other: m.topic().to_owned(),
                    });
                }
            }
        }
        self.log_for_put(first)?.put_messages(msgs)
    }

    /// Reads the message at `queue_offset` of (topic, queue id), zero-copy. `Ok(None)` if
    /// no such message is readable (yet).
    ///
    /// # Errors
    /// [`ReadError`]: a damaged record or consume-queue entry.
    pub fn get_message(
        &self,
        topic: &str,
        queue_id: u32,
        queue_offset: u64,
    ) -> Result<Option<StoredMessage<'_>>, ReadError> {
        match self.log_of(topic) {
            Some(l) => l.get_message(topic, queue_id, queue_offset),
            None => Ok(None),
        }
    }

    /// Reads the record starting at `physical_offset` of the ([`Layout::Single`]) log.
    /// `Ok(None)` past the readable end or at an end-of-segment blank.
    ///
    /// # Errors
    /// [`ReadError::NoRecordAt`] if no record starts there (an offset inside a record),
    /// [`ReadError::Corrupt`] if the record there is damaged; [`ReadError::TopicRequired`]
    /// under [`Layout::PerTopic`] (use [`get_message_at_in`](Self::get_message_at_in)).
    ///
    /// # Examples
    /// ```
    /// use abslock_store::{Message, MessageStore, StoreConfig};
    /// let dir = tempfile::tempdir()?;
    /// let config = StoreConfig { segment_size: 1 << 20, ..StoreConfig::default() };
    /// let store: MessageStore<parking_lot::RawMutex> = MessageStore::open(dir.path(), config)?;
    /// let put = store.put_message(&Message::new("orders", b"hello".to_vec()))?;
    /// let msg = store.get_message_at(put.physical_offset)?.expect("written");
    /// assert_eq!((msg.body(), msg.queue_offset()), (&b"hello"[..], put.queue_offset));
    /// assert!(store.get_message_at(put.physical_offset + u64::from(put.size))?.is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn get_message_at(&self, physical_offset: u64) -> Result<Option<StoredMessage<'_>>, ReadError> {
        match &self.logs {
            Logs::Single(l) => l.get_message_at(physical_offset),
            Logs::PerTopic { .. } => Err(ReadError::TopicRequired),
        }
    }

    /// Reads the record at `physical_offset` of `topic`'s log (any layout).
    ///
    /// # Errors
    /// As [`get_message_at`](Self::get_message_at).
    pub fn get_message_at_in(
        &self,
        topic: &str,
        physical_offset: u64,
    ) -> Result<Option<StoredMessage<'_>>, ReadError> {
        match self.log_of(topic) {
            Some(l) => l.get_message_at(physical_offset),
            None => Ok(None),
        }
    }

    /// Sends the records of (topic, queue id) from `from_offset` on to `out` (a socket, a
    /// pipe, a file), up to `limit`, with `sendfile(2)` from the segment files (zero-copy,
    /// Kafka's `FileChannel.transferTo`), falling back to `write(2)` from the mapping where
    /// the kernel refuses `sendfile` for this descriptor. Blocks while `out` is full.
    ///
    /// What goes out is each record exactly as stored, in queue order, back to back: its
    /// layout is `docs/format.md`'s, so a receiver splits the stream by each record's
    /// leading total size and decodes it with [`codec::decode`]. Only records below the
    /// readable end are sent, the same bound as [`get_message`](Self::get_message): the
    /// flushed position under [`FlushMode::Sync`](crate::FlushMode::Sync), else the
    /// position written to the files (committed in pooled write mode). An unknown queue or
    /// an offset at its end sends nothing and returns a report of zero messages.
    ///
    /// # Errors
    /// [`TransferError::Read`]: a damaged consume-queue entry or record (whole records sent
    /// before it are in the report); [`TransferError::Write`]: the descriptor failed (e.g.
    /// `EAGAIN` on a full non-blocking socket, `EPIPE`), possibly in the middle of a record.
    ///
    /// # Examples
    /// ```
    /// use std::io::Read;
    /// use abslock_store::{Message, MessageStore, StoreConfig, TransferLimit, codec};
    /// let dir = tempfile::tempdir()?;
    /// let config = StoreConfig { segment_size: 1 << 20, ..StoreConfig::default() };
    /// let store: MessageStore<parking_lot::RawMutex> = MessageStore::open(dir.path(), config)?;
    /// for body in ["one", "two", "three"] {
    ///     store.put_message(&Message::new("orders", body.as_bytes().to_vec()).queue_id(0))?;
    /// }
    /// let (mut rx, tx) = std::os::unix::net::UnixStream::pair()?;
    /// let sent = store.transfer_to("orders", 0, 1, TransferLimit::messages(10), &tx)?;
    /// assert_eq!((sent.messages, sent.next_offset), (2, 3));
    /// drop(tx);
    /// let mut bytes = Vec::new();
    /// rx.read_to_end(&mut bytes)?;
    /// assert_eq!(bytes.len() as u64, sent.bytes);
    /// let codec::Decoded::Message(first) = codec::decode(&bytes, None)? else { panic!("a record") };
    /// assert_eq!(first.body(), b"two");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn transfer_to(
        &self,
        topic: &str,
        queue_id: u32,
        from_offset: u64,
        limit: TransferLimit,
        out: &impl AsFd,
    ) -> Result<TransferReport, TransferError> {
        match self.log_of(topic) {
            Some(l) => l.transfer_to(topic, queue_id, from_offset, limit, out.as_fd()),
            None => Ok(TransferReport::empty_at(from_offset)),
        }
    }

    /// Runs retention now (see [`StoreConfig::retention`]) instead of waiting for the
    /// dispatcher thread's next check, and returns what it deleted. Does nothing when no
    /// retention limit is configured.
    ///
    /// # Errors
    /// [`RetentionError`]: a deletion step failed; what was deleted before stays deleted,
    /// and the next run retries.
    ///
    /// # Examples
    /// ```
    /// use abslock_store::{Message, MessageStore, Retention, StoreConfig};
    /// let dir = tempfile::tempdir()?;
    /// let retention = Retention { max_bytes: Some(8192), ..Retention::default() };
    /// let config = StoreConfig { segment_size: 4096, retention, ..StoreConfig::default() };
    /// let store: MessageStore<parking_lot::RawMutex> = MessageStore::open(dir.path(), config)?;
    /// for _ in 0..40 {
    ///     store.put_message(&Message::new("orders", vec![0u8; 500]))?;
    /// }
    /// store.flush()?;
    /// let deleted = store.run_retention_now()?;
    /// assert!(deleted.segments_deleted > 0);
    /// assert!(store.min_queue_offset("orders", 0) > 0);
    /// assert!(store.get_message("orders", 0, 0).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn run_retention_now(&self) -> Result<RetentionReport, RetentionError> {
        self.run_retention_at(std::time::SystemTime::now())
    }

    /// Runs retention as if the wall clock read `now`: what
    /// [`run_retention_now`](Self::run_retention_now) does, with the age limit measured
    /// from `now` (for tests and tools that decide about age without waiting).
    ///
    /// # Errors
    /// As [`run_retention_now`](Self::run_retention_now).
    pub fn run_retention_at(&self, now: std::time::SystemTime) -> Result<RetentionReport, RetentionError> {
        let mut reports = Vec::new();
        let mut failure = None;
        self.each_log(|l| match l.run_retention_at(now) {
            Ok(r) => reports.push(r),
            Err(e) if failure.is_none() => failure = Some(e),
            Err(e) => reports.push(e.report),
        });
        match failure {
            Some(mut e) => {
                let mut all = reports;
                all.push(e.report);
                e.report = crate::retention::sum(all);
                Err(e)
            }
            None => Ok(crate::retention::sum(reports)),
        }
    }

    /// First readable queue offset of (topic, queue id) (RocketMQ
    /// `getMinOffsetInQueue`): 0 until retention deletes the segments holding its oldest
    /// records. Reads below it get [`ReadError::BelowMinQueueOffset`].
    pub fn min_queue_offset(&self, topic: &str, queue_id: u32) -> u64 {
        self.log_of(topic).map_or(0, |l| l.min_queue_offset(topic, queue_id))
    }

    /// First readable physical offset of `topic`'s log (any layout; under
    /// [`Layout::Single`] every topic shares one log) (RocketMQ `getMinPhyOffset`). Reads
    /// below it get [`ReadError::BelowMinPhysicalOffset`]. 0 for an unknown topic.
    pub fn min_physical_offset_in(&self, topic: &str) -> u64 {
        self.log_of(topic).map_or(0, |l| l.log().min_offset())
    }

    fn each_log(&self, mut f: impl FnMut(&LogStore<R>)) {
        match &self.logs {
            Logs::Single(l) => f(l),
            Logs::PerTopic { all, .. } => {
                for l in all.to_vec() {
                    f(&l);
                }
            }
        }
    }

    /// Makes everything written so far durable (commit + msync). Returns the flushed
    /// physical offset (under [`Layout::PerTopic`], the sum over topics).
    ///
    /// Under [`Layout::PerTopic`] every topic's log is flushed even after one fails: each
    /// log's flush is all-or-nothing, so a log that failed keeps its flushed position
    /// ([`flushed_position_in`](Self::flushed_position_in)), while a log that succeeded
    /// is durable up to its write position and its flushed position says so. The summed
    /// [`flushed_position`](Self::flushed_position) may therefore advance even though
    /// `flush` returns `Err`; a caller that needs to know which topics are durable asks
    /// per topic (ours).
    ///
    /// # Errors
    /// [`FlushError`] of the first log that failed (under [`Layout::PerTopic`], its
    /// `flushed` field is that log's offset, not the sum): no log's flushed position
    /// advanced past what is durable.
    ///
    /// # Examples
    /// ```
    /// use abslock_store::{Message, MessageStore, StoreConfig};
    /// let dir = tempfile::tempdir()?;
    /// let config = StoreConfig { segment_size: 1 << 20, ..StoreConfig::default() };
    /// let store: MessageStore<parking_lot::RawMutex> = MessageStore::open(dir.path(), config)?;
    /// let put = store.put_message(&Message::new("orders", b"hello".to_vec()))?;
    /// assert_eq!(store.flush()?, put.physical_offset + u64::from(put.size));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn flush(&self) -> Result<u64, FlushError> {
        let mut total = 0;
        let mut err = None;
        self.each_log(|l| match l.flush() {
            Ok(n) => total += n,
            // Keep going: the other logs' data becomes durable; report the first failure.
            Err(e) => {
                err.get_or_insert(e);
            }
        });
        match err {
            Some(e) => Err(e),
            None => Ok(total),
        }
    }

    /// Clean shutdown: flush, finish consume queues, write the checkpoint, remove `abort`.
    /// Dropping the store without `close` behaves like a crash that keeps the page cache.
    ///
    /// # Errors
    /// [`CloseError`]; `abort` then stays and the next open recovers.
    pub fn close(self) -> Result<(), CloseError> {
        match self.logs {
            Logs::Single(l) => l.close(),
            Logs::PerTopic { all, .. } => {
                let mut first_err = None;
                for l in all.into_vec() {
                    let l = Arc::into_inner(l);
                    if let Some(l) = l
                        && let Err(e) = l.close()
                        && first_err.is_none()
                    {
                        first_err = Some(e);
                    }
                }
                first_err.map_or(Ok(()), Err)
            }
        }
    }

    /// Closes the store cleanly, as [`close`](Self::close), then takes its commitlog's
    /// segments out for the next [`open_over_warm_segments`](Self::open_over_warm_segments):
    /// the bytes the log wrote are zeroed through the mapping (not synced), and the files move
    /// into `dir` (an existing directory on the same file system), still mapped and warm.
    /// `Layout::Single` only. The store's directory keeps its consume queues and checkpoint
    /// but no log: remove it. Ours.
    ///
    /// # Errors
    /// As [`close`](Self::close); [`CloseError::NotRecyclable`] for a `PerTopic` store (closed
    /// cleanly first); [`CloseError::Io`] if a file cannot be moved (the segments are dropped).
    pub fn close_into_warm_segments(self, dir: &Path) -> Result<WarmSegments, CloseError> {
        match self.logs {
            Logs::Single(l) => l.close_into_warm(dir),
            logs @ Logs::PerTopic { .. } => {
                Self { logs, ..self }.close()?;
                Err(CloseError::NotRecyclable("a Layout::PerTopic store has one log per topic"))
            }
        }
    }

    /// Calls `f` with every put-message lock (one, or one per topic), e.g. to read ABS
    /// statistics.
    ///
    /// # Examples
    /// ```
    /// use abslock_store::{Message, MessageStore, StoreConfig};
    /// let dir = tempfile::tempdir()?;
    /// let config = StoreConfig { segment_size: 1 << 20, ..StoreConfig::default() };
    /// let store: MessageStore<abslock::RawAbsLock> = MessageStore::open(dir.path(), config)?;
    /// store.put_message(&Message::new("orders", b"hello".to_vec()))?;
    /// let mut acquisitions = 0;
    /// store.for_each_put_lock(|lock| acquisitions += lock.stats().acquisitions);
    /// assert_eq!(acquisitions, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn for_each_put_lock(&self, mut f: impl FnMut(&R)) {
        self.each_log(|l| f(l.log().put_lock()));
    }

    /// CPU time the put path's own threads have used so far, ns, summed over logs: the
    /// writer threads of [`PutPath::Sequencer`](crate::PutPath::Sequencer) (ours; a benchmark counts it with the puts
    /// those threads serve). `None` under [`PutPath::Lock`](crate::PutPath::Lock) and [`PutPath::Combining`](crate::PutPath::Combining),
    /// which run in the callers' threads, and after close.
    pub fn put_path_cpu_ns(&self) -> Option<u64> {
        let mut total: Option<u64> = None;
        self.each_log(|l| {
            if let Some(ns) = l.put_path_cpu_ns() {
                *total.get_or_insert(0) += ns;
            }
        });
        total
    }

    fn sum(&self, f: impl Fn(&LogStore<R>) -> u64) -> u64 {
        let mut total = 0;
        self.each_log(|l| total += f(l));
        total
    }

    /// Next physical offset to be written (under [`Layout::PerTopic`], the sum over topics).
    pub fn write_position(&self) -> u64 {
        self.sum(|l| l.log().write_pos())
    }

    /// Physical offset up to which the log is durable (under [`Layout::PerTopic`], the sum).
    pub fn flushed_position(&self) -> u64 {
        self.sum(|l| l.log().flushed())
    }

    /// Next physical offset to be written in `topic`'s log (any layout; under
    /// [`Layout::Single`] every topic shares one log) (ours). 0 for an unknown topic.
    pub fn write_position_in(&self, topic: &str) -> u64 {
        self.log_of(topic).map_or(0, |l| l.log().write_pos())
    }

    /// Physical offset up to which `topic`'s log is durable (any layout; under
    /// [`Layout::Single`] every topic shares one log) (ours). 0 for an unknown topic.
    /// A failed [`flush`](Self::flush) never advances it for the log that failed.
    pub fn flushed_position_in(&self, topic: &str) -> u64 {
        self.log_of(topic).map_or(0, |l| l.log().flushed())
    }

    /// Counters: positions, flushes, rolls (ours).
    ///
    /// # Examples
    /// ```
    /// use abslock_store::{FlushMode, Message, MessageStore, StoreConfig};
    /// let dir = tempfile::tempdir()?;
    /// let config = StoreConfig { segment_size: 1 << 20, flush: FlushMode::SYNC, ..StoreConfig::default() };
    /// let store: MessageStore<parking_lot::RawMutex> = MessageStore::open(dir.path(), config)?;
    /// let put = store.put_message(&Message::new("orders", b"hello".to_vec()))?;
    /// let stats = store.stats();
    /// assert_eq!(stats.flushed_position, put.physical_offset + u64::from(put.size));
    /// assert!(stats.flushes >= 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stats(&self) -> StoreStats {
        let mut st = StoreStats::default();
        self.each_log(|l| {
            let log = l.log();
            st.write_position += log.write_pos();
            st.flushed_position += log.flushed();
            st.flushes += log.flushes();
            st.rolls += log.rolls();
            st.roll_waits += log.roll_waits();
            st.logs += 1;
        });
        st
    }

    /// Entries in the consume queue of (topic, queue id): its next queue offset.
    ///
    /// # Errors
    /// [`ReadError`] if dispatching pending records fails.
    pub fn consume_queue_len(&self, topic: &str, queue_id: u32) -> Result<u64, ReadError> {
        self.log_of(topic).map_or(Ok(0), |l| l.queue_len(topic, queue_id))
    }

    /// The last error of a background thread (async flush, dispatch, checkpoint), if any.
    pub fn background_error(&self) -> Option<BackgroundError> {
        let mut out = None;
        self.each_log(|l| {
            if out.is_none() {
                out = l.background_error();
            }
        });
        out
    }

    /// The store directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The configuration the store was opened with.
    pub fn config(&self) -> &StoreConfig {
        &self.config
    }
}
