//! One CommitLog with its consume queues, topic-queue table, flush and dispatch threads,
//! checkpoint and `abort` marker, in one directory. [`MessageStore`](crate::MessageStore)
//! uses one (`Layout::Single`) or one per topic (`Layout::PerTopic`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Instant;

use crossbeam_utils::CachePadded;
use lock_api::RawMutex;

use crate::checkpoint::Checkpoint;
use crate::codec::{self, DecodeOptions, Decoded, EncodeOptions, RecordCrcCheck, StoredMessage};
use crate::commitlog::{BLANK_LEN, CommitLog, LogMode, RecordParts, now_ms};
use crate::config::{FlushMode, PAGE_SIZE, StoreConfig, WriteMode};
use crate::consume_queue::{ConsumeQueues, Entry};
use crate::crc_epochs::CrcEpochs;
use crate::dispatcher::{DispatchTarget, Dispatcher};
use crate::error::{
    BackgroundError, CloseError, ConfigError, Corruption, FileError, FlushError, OpenError, PutError,
    ReadError,
};
use crate::flush::{GroupCommit, Stop};
use crate::io::FileOps;
use crate::message::Message;
use crate::put_executor::PutExecutor;
use crate::put_result::PutResult;
use crate::recovery::{CUT_DIR, Recovered, RecoveryInput, RecoveryPlan, apply_recovery, plan_recovery};
use crate::recovery_report::LogRecovery;
use crate::segment::{BufferPool, Preallocator};
use crate::topic_queue::{QueueHash, Stripe, TopicQueueTable};

thread_local! {
    /// Per-thread encode buffer for a record's head and tail (the body stays in the
    /// message): a put allocates only when head and tail outgrow it.
    static ENCODE_BUF: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// Per-thread buffer for a batch's concatenated heads and tails.
    static BATCH_BUF: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// One record of a batch, encoded into the batch buffer (head and tail, body left in the
/// message).
struct EncodedRecord {
    /// Where the record starts, relative to the batch's first record, bytes.
    offset_in_batch: usize,
    layout: codec::RecordLayout,
}

/// A batch in the log.
struct AppendedBatch {
    results: Vec<PutResult>,
    /// Where the batch starts.
    physical_offset: u64,
    /// One past its last byte.
    end: u64,
}

/// Why dispatching stopped.
#[derive(Debug)]
pub(crate) enum DispatchError {
    Io(FileError),
    Decode { physical_offset: u64, source: codec::DecodeError },
}

impl From<DispatchError> for ReadError {
    fn from(e: DispatchError) -> Self {
        match e {
            DispatchError::Io(e) => ReadError::Io(e),
            DispatchError::Decode { physical_offset, source } => {
                ReadError::Corrupt { physical_offset, source }
            }
        }
    }
}

impl DispatchError {
    /// At open, recovery verified every record below the write position: a record that
    /// then fails to dispatch changed under us.
    fn into_open_error(self, log_dir: &Path) -> OpenError {
        match self {
            DispatchError::Io(e) => OpenError::Io(e),
            DispatchError::Decode { physical_offset, source } => OpenError::Corrupt {
                path: log_dir.to_path_buf(),
                reason: Corruption::ChangedDuringOpen { physical_offset, source },
            },
        }
    }
}

/// One consume-queue entry dispatched: (topic, queue id, queue offset, whether the entry
/// was written rather than found in place).
type OnEntry<'a> = &'a mut dyn FnMut(&str, u32, u64, bool);

/// Everything of one log that its threads share.
struct Shared<R: RawMutex> {
    dir: PathBuf,
    config: StoreConfig,
    opts: EncodeOptions,
    log: Arc<CommitLog<R>>,
    cqs: ConsumeQueues,
    table: TopicQueueTable,
    /// Next commitlog offset to dispatch into consume queues. Padded: the dispatcher locks
    /// it every round, and the put path reads the fields around it (`opts`, `config`,
    /// `table`) on every put.
    reput: CachePadded<Mutex<u64>>,
    group: GroupCommit,
    stop: Stop,
    fs: FileOps,
    async_flush_error: Mutex<Option<FlushError>>,
    background_error: Mutex<Option<BackgroundError>>,
    last_checkpoint: Mutex<Instant>,
    retention: crate::retention::RetentionState,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<R: RawMutex> Shared<R> {
    /// Builds consume-queue entries for every record in `[reput, end)`. Idempotent.
    fn dispatch_to(&self, end: u64) -> Result<(), DispatchError> {
        self.dispatch_with(end, &mut |_, _, _, _| {})
    }

    /// As [`dispatch_to`](Self::dispatch_to), telling `on_entry` about every entry.
    fn dispatch_with(&self, end: u64, on_entry: OnEntry<'_>) -> Result<(), DispatchError> {
        let mut reput = lock(&self.reput);
        while *reput < end {
            let at = *reput;
            let Some(bytes) = self.log.bytes_from(at, end) else { break };
            let to_segment_end = self.config.segment_size - at % self.config.segment_size;
            if (bytes.len() as u64) < BLANK_LEN && bytes.len() as u64 == to_segment_end {
                // A segment tail too short for a blank, zeroed by recovery: no record.
                *reput = at + to_segment_end;
                continue;
            }
            // Records below the readable end were written by this process or verified by
            // recovery: check structure and position, skip the CRCs.
            let opts = DecodeOptions {
                expected_physical_offset: Some(at),
                verify_body_crc: false,
                record_crc: RecordCrcCheck::Skip,
            };
            match codec::decode_with(bytes, &opts) {
                Ok(Decoded::Message(m)) => {
                    let size = m.total_size();
                    let cq = self.cqs.get_or_create(m.topic(), m.queue_id());
                    let tag_hash = m.tags().map_or(0, codec::tag_hash);
                    let wrote = cq
                        .put(m.queue_offset(), Entry { physical_offset: at, size, tag_hash })
                        .map_err(DispatchError::Io)?;
                    on_entry(m.topic(), m.queue_id(), m.queue_offset(), wrote);
                    *reput = at + u64::from(size);
                }
                Ok(Decoded::Blank { size }) => *reput = at + u64::from(size).max(BLANK_LEN),
                Err(source) => return Err(DispatchError::Decode { physical_offset: at, source }),
            }
        }
        Ok(())
    }

    /// At open: dispatches the whole log, so every consume queue holds exactly the
    /// entries of the records in the log (files, directories or entries lost or damaged
    /// are rebuilt, entries of records no longer in the log removed), and sets each
    /// queue's next queue offset from the log. RocketMQ issue #7355 and Kafka KAFKA-13603
    /// are this class of bug: an index shorter than the log hands out a queue offset twice.
    fn rebuild_queues(&self, report: &mut LogRecovery) -> Result<(), OpenError> {
        let mut next: HashMap<(String, u32), (u64, bool)> = HashMap::new();
        let mut rebuilt_entries = 0;
        let write_pos = self.log.write_pos();
        self.dispatch_with(write_pos, &mut |topic, qid, qo, wrote| {
            let e = next.entry((topic.to_owned(), qid)).or_default();
            e.0 = e.0.max(qo + 1);
            e.1 |= wrote;
            rebuilt_entries += u64::from(wrote);
        })
        .map_err(|e| e.into_open_error(self.log.dir()))?;
        report.entries_rebuilt = rebuilt_entries;
        let min_physical = self.log.min_offset();
        for (topic, qid, cq) in self.cqs.all() {
            let (len, wrote) = next.get(&(topic.clone(), qid)).copied().unwrap_or((0, false));
            // Retention deleted the segments of a queue's oldest records, or all of them: its
            // entries there keep the queue's length, so no queue offset is handed out twice.
            let len = len.max(cq.deleted_len(min_physical));
            let removed = cq.truncate(len)?;
            report.entries_removed += removed;
            report.queues_rebuilt += u64::from(wrote || removed > 0);
            let hash = QueueHash::of(&topic, qid);
            self.table.lock(self.table.stripe_of(hash)).set(hash, &topic, qid, len);
        }
        Ok(())
    }

    fn write_checkpoint(&self) -> Result<(), FileError> {
        let consume_queue = *lock(&self.reput);
        let commitlog = self.log.flushed();
        self.cqs.flush()?;
        Checkpoint { commitlog, consume_queue }.write(&self.fs, &self.dir.join("checkpoint"))
    }
}

impl<R: RawMutex + Send + Sync> DispatchTarget for Shared<R> {
    /// One dispatcher round: dispatch what became readable; checkpoint when due.
    fn dispatch_round(&self) {
        if let Err(e) = self.dispatch_to(self.log.readable_end()) {
            self.note(BackgroundError::Dispatch(Arc::new(e.into())));
        }
        let due = {
            let mut last = lock(&self.last_checkpoint);
            let due = last.elapsed() >= self.config.checkpoint_interval;
            if due {
                *last = Instant::now();
            }
            due
        };
        if due && let Err(e) = self.write_checkpoint() {
            self.note(BackgroundError::Checkpoint(Arc::new(e)));
        }
        if let Err(e) = self.retention.run_if_due(&self.config.retention, self.retention_parts()) {
            self.note(BackgroundError::Retention(Arc::new(e)));
        }
    }
}

impl<R: RawMutex> Shared<R> {
    fn note(&self, what: BackgroundError) {
        *lock(&self.background_error) = Some(what);
    }

    fn retention_parts(&self) -> crate::retention::Parts<'_, R> {
        let dispatched = *lock(&self.reput);
        crate::retention::Parts { log: &self.log, cqs: &self.cqs, fs: &self.fs, dispatched }
    }
}

/// A log whose recovery is planned but not carried out ([`LogStore::plan`]).
pub(crate) struct PendingLog {
    log: LogFiles,
    dir_lock: File,
    plan: RecoveryPlan,
}

/// What recovery reads of a log's directory before it scans.
struct LogFiles {
    dir: PathBuf,
    clog_dir: PathBuf,
    fs: FileOps,
    checkpoint: Option<u64>,
    crashed: bool,
    crc: CrcEpochs,
}

impl LogFiles {
    fn input<'a>(&'a self, config: &StoreConfig) -> RecoveryInput<'a> {
        RecoveryInput {
            fs: &self.fs,
            dir: &self.clog_dir,
            cut_dir: self.dir.join(CUT_DIR),
            segment_size: config.segment_size,
            checkpoint: self.checkpoint,
            crashed: self.crashed,
            mode: config.recovery,
            crc: &self.crc,
        }
    }
}

/// One log and everything around it.
pub(crate) struct LogStore<R: RawMutex + Send + Sync + 'static> {
    shared: Arc<Shared<R>>,
    /// Who runs the put-message critical section.
    put_path: PutExecutor<R>,
    threads: Vec<JoinHandle<()>>,
    dispatcher: Arc<Dispatcher>,
    report: LogRecovery,
    _dir_lock: File,
}

impl<R: RawMutex + Send + Sync + 'static> LogStore<R> {
    /// Opens (creating or recovering) the log in `dir`, served by `dispatcher` (a new one
    /// when `None`). See [`plan`](Self::plan) and [`finish`](Self::finish).
    pub(crate) fn open(
        dir: &Path,
        config: &StoreConfig,
        lock_: R,
        dispatcher: Option<Arc<Dispatcher>>,
    ) -> Result<Self, OpenError> {
        Self::finish(Self::plan(dir, config)?, config, lock_, dispatcher, None)
    }

    /// Creates a new log in `dir` (which must hold no commitlog segment) over `warm`: the
    /// files move into `dir/commitlog/`, the first becomes the current segment, the others
    /// wait ready for the roll. See [`MessageStore::open_over_warm_segments`].
    ///
    /// [`MessageStore::open_over_warm_segments`]: crate::MessageStore::open_over_warm_segments
    pub(crate) fn open_over(
        dir: &Path,
        config: &StoreConfig,
        lock_: R,
        warm: crate::WarmSegments,
    ) -> Result<Self, OpenError> {
        let pending = Self::plan(dir, config)?;
        if !pending.plan.is_empty() {
            return Err(ConfigError::WarmSegmentsUnusable("the directory already holds a commitlog").into());
        }
        let (_, _, segments) = warm.into_parts();
        Self::finish(pending, config, lock_, None, Some(segments))
    }

    /// Closes cleanly ([`close`](Self::close)), then takes the commitlog's segments out:
    /// written bytes zeroed, files moved into `home`. Segments retention deleted are dropped.
    pub(crate) fn close_into_warm(mut self, home: &Path) -> Result<crate::WarmSegments, CloseError> {
        self.shut()?;
        let shared = Arc::clone(&self.shared);
        drop(self);
        let in_use = || CloseError::NotRecyclable("the log is still shared with another thread");
        let shared = Arc::try_unwrap(shared).map_err(|_| in_use())?;
        let (fs, log) = (shared.fs, shared.log);
        let log = Arc::try_unwrap(log).map_err(|_| in_use())?;
        let (end, min) = (log.write_pos(), log.min_offset());
        let (_, size, segments) = log.into_warm_segments().into_parts();
        let mut kept = Vec::with_capacity(segments.len());
        for mut seg in segments.into_iter().filter(|s| s.start() >= min) {
            if seg.start() < end {
                seg.zero_head((end.min(seg.end()) - seg.start()) as usize);
            }
            seg.relocate(&fs, home)?;
            kept.push(seg);
        }
        Ok(crate::WarmSegments::from_parts(home.to_path_buf(), size, kept))
    }

    /// First step of opening: locks the directory and verifies the commitlog, deciding
    /// what recovery will do; changes nothing on disk, so a [`RecoveryMode::Strict`]
    /// failure of any log of a store leaves every log as it was.
    ///
    /// [`RecoveryMode::Strict`]: crate::RecoveryMode::Strict
    pub(crate) fn plan(dir: &Path, config: &StoreConfig) -> Result<PendingLog, OpenError> {
        config.validate()?;
        let fs = FileOps::new(config.fault_injector.clone());
        fs.create_dir_all(dir)?;
        let dir_lock =
            fs.lock_file(&dir.join("lock"))?.ok_or_else(|| OpenError::InUse { path: dir.to_path_buf() })?;
        let checkpoint = Checkpoint::read(&fs, &dir.join("checkpoint"))?;
        let crashed = dir.join("abort").exists() || checkpoint.is_none();
        fs.create_dir_all(&dir.join("commitlog"))?;
        let crc = CrcEpochs::read(&fs, &dir.join("record_crc"))?;
        let log = LogFiles {
            dir: dir.to_path_buf(),
            clog_dir: dir.join("commitlog"),
            fs,
            checkpoint: checkpoint.map(|c| c.commitlog),
            crashed,
            crc,
        };
        let plan = plan_recovery(&log.input(config))?;
        Ok(PendingLog { log, dir_lock, plan })
    }

    /// Second step: carries out recovery, records the record-CRC setting, rebuilds the
    /// consume queues from the log, then starts the services. Nothing is accepted before
    /// the queues match the log.
    pub(crate) fn finish(
        pending: PendingLog,
        config: &StoreConfig,
        lock_: R,
        dispatcher: Option<Arc<Dispatcher>>,
        warm: Option<Vec<crate::segment::Segment>>,
    ) -> Result<Self, OpenError> {
        let PendingLog { mut log, dir_lock, plan } = pending;
        let rec = apply_recovery(&log.input(config), plan)?;
        let (dir, fs) = (log.dir.as_path(), &log.fs);
        log.crc.record(fs, &dir.join("record_crc"), rec.write_pos, config.append_record_crc)?;
        let mut report = LogRecovery {
            dir: dir.to_path_buf(),
            crashed: log.crashed,
            durable_end: rec.durable_end,
            write_position: rec.write_pos,
            cut: rec.cut.clone(),
            queues_rebuilt: 0,
            entries_rebuilt: 0,
            entries_removed: 0,
        };
        let shared = Self::assemble(dir, config, fs, rec, lock_, warm)?;
        fs.create_marker(&dir.join("abort"))?;
        shared.rebuild_queues(&mut report)?;
        crate::retention::follow_min(&shared.log, &shared.cqs);
        let dispatcher = match dispatcher {
            Some(d) => d,
            None => {
                Arc::new(Dispatcher::start().map_err(|e| FileError::new("start dispatcher for", dir, e))?)
            }
        };
        let put_path = PutExecutor::start(config.put_path, &shared.log)
            .map_err(|e| FileError::new("start put path for", dir, e))?;
        let threads =
            spawn_services(&shared).map_err(|e| FileError::new("start flush thread for", dir, e))?;
        dispatcher.register(Arc::clone(&shared) as Arc<dyn DispatchTarget>);
        Ok(LogStore { shared, put_path, threads, dispatcher, report, _dir_lock: dir_lock })
    }

    /// Builds the log and the state its threads share over the recovered segments.
    fn assemble(
        dir: &Path,
        config: &StoreConfig,
        fs: &FileOps,
        rec: Recovered,
        lock_: R,
        warm: Option<Vec<crate::segment::Segment>>,
    ) -> Result<Arc<Shared<R>>, OpenError> {
        let size = config.segment_size;
        let clog_dir = dir.join("commitlog");
        let pool = match config.write_mode {
            WriteMode::Pooled { buffers, .. } => {
                Some(Arc::new(BufferPool::new(fs, buffers, size as usize, config.warm_up.mlock)))
            }
            _ => None,
        };
        let prealloc = Preallocator::new(
            fs.clone(),
            clog_dir.clone(),
            size,
            config.warm_up,
            pool.clone(),
            config.preallocate,
            config.preallocate_ahead,
        )
        .map_err(|e| FileError::new("start preallocation thread for", dir, e))?;
        let first = rec.segments.first().map_or(0, |s| s.start());
        let mut segments = rec.segments;
        let mut ready = Vec::new();
        if segments.is_empty() {
            match warm {
                Some(warm) => {
                    let mut warm = warm.into_iter();
                    for mut seg in warm.by_ref() {
                        seg.relocate(fs, &clog_dir)?;
                        if segments.is_empty() {
                            segments.push(Arc::new(seg));
                        } else {
                            ready.push(seg);
                        }
                    }
                }
                None => segments.push(prealloc.obtain(0)?),
            }
        }
        let mode = LogMode {
            pooled: matches!(config.write_mode, WriteMode::Pooled { .. }),
            sync_flush: matches!(config.flush, FlushMode::Sync { .. }),
        };
        let log =
            CommitLog::new(clog_dir, fs.clone(), size, segments, rec.write_pos, lock_, prealloc, pool, mode);
        log.stock_ready(ready);
        let (cqs, _) = ConsumeQueues::open(fs, dir.join("consumequeue"), config.consume_queue_entries)?;
        Ok(Arc::new(Shared {
            dir: dir.to_path_buf(),
            config: config.clone(),
            opts: config.encode_options(),
            log: Arc::new(log),
            cqs,
            table: TopicQueueTable::new(config.topic_queue_stripes),
            reput: CachePadded::new(Mutex::new(first)),
            group: GroupCommit::default(),
            stop: Stop::default(),
            fs: fs.clone(),
            async_flush_error: Mutex::new(None),
            background_error: Mutex::new(None),
            last_checkpoint: Mutex::new(Instant::now()),
            retention: Default::default(),
        }))
    }

    fn check_fits(&self, size: usize) -> Result<(), PutError> {
        let segment_size = self.shared.config.segment_size;
        if size as u64 + BLANK_LEN > segment_size {
            return Err(PutError::TooLargeForSegment { size, segment_size });
        }
        Ok(())
    }

    /// Validates `msg` without writing anything (used before creating a per-topic log).
    pub(crate) fn validate(config: &StoreConfig, msg: &Message) -> Result<(), PutError> {
        codec::validate(msg, &config.encode_options())?;
        Ok(())
    }

    fn after_put(&self, physical_offset: u64, end: u64) -> Result<(), PutError> {
        if let FlushMode::Sync { timeout } = self.shared.config.flush {
            self.shared
                .group
                .wait_durable(&self.shared.log, end, timeout)
                .map_err(|source| PutError::Flush { physical_offset, source })?;
        }
        Ok(())
    }

    /// The put path for one message.
    pub(crate) fn put_message(&self, msg: &Message) -> Result<PutResult, PutError> {
        let s = &*self.shared;
        // Warm the destination while encoding; a 4 KiB body's record is ~4.2 KiB.
        s.log.prefetch_next(msg.body().len() + 256);
        let (result, end) = ENCODE_BUF.with_borrow_mut(|buf| {
            // Outside any lock: validate, encode head and tail, body CRC.
            let layout = codec::encode_parts_into(msg, &s.opts, buf)?;
            self.check_fits(layout.total_size)?;
            let (topic, queue_id) = (msg.topic(), msg.get_queue_id());
            let hash = QueueHash::of(topic, queue_id);
            let mut stripe = s.table.lock(s.table.stripe_of(hash));
            let slot = stripe.slot(hash, topic, queue_id);
            let queue_offset = *slot;
            codec::set_queue_offset(buf, &layout, queue_offset);
            codec::seal_record_crc_parts(buf, &layout);
            let mut record = [RecordParts { parts: buf, layout, body: msg.body() }];
            let appended = self.put_path.append(&s.log, &mut record, now_ms())?;
            *slot = queue_offset + 1;
            drop(stripe);
            let size = layout.total_size as u32;
            let end = appended.physical_offset + u64::from(size);
            let r = PutResult {
                physical_offset: appended.physical_offset,
                queue_offset,
                size,
                store_timestamp: appended.store_timestamp,
            };
            Ok::<_, PutError>((r, end))
        })?;
        self.after_put(result.physical_offset, end)?;
        Ok(result)
    }

    /// The put path for a batch: all records land contiguously in one segment, or none do.
    pub(crate) fn put_messages(&self, msgs: &[Message]) -> Result<Vec<PutResult>, PutError> {
        if msgs.is_empty() {
            return Err(PutError::EmptyBatch);
        }
        let s = &*self.shared;
        s.log.prefetch_next(msgs.iter().map(|m| m.body().len() + 256).sum());
        let batch = BATCH_BUF.with_borrow_mut(|blob| {
            ENCODE_BUF.with_borrow_mut(|buf| {
                blob.clear();
                let mut encoded: Vec<EncodedRecord> = Vec::with_capacity(msgs.len());
                let mut size = 0;
                for m in msgs {
                    let layout = codec::encode_parts_into(m, &s.opts, buf)?;
                    self.check_fits(layout.total_size)?;
                    encoded.push(EncodedRecord { offset_in_batch: size, layout });
                    blob.extend_from_slice(buf);
                    size += layout.total_size;
                }
                let limit = s.config.segment_size - BLANK_LEN;
                if size as u64 > limit {
                    return Err(PutError::BatchTooLarge { size, limit });
                }
                let hashes: Vec<QueueHash> =
                    msgs.iter().map(|m| QueueHash::of(m.topic(), m.get_queue_id())).collect();
                let stripe_ids: Vec<usize> = hashes.iter().map(|&h| s.table.stripe_of(h)).collect();
                let mut order = stripe_ids.clone();
                order.sort_unstable();
                order.dedup();
                // Lock stripes in index order: no deadlock between overlapping batches.
                let mut guards: Vec<MutexGuard<'_, Stripe>> =
                    order.iter().map(|&i| s.table.lock(i)).collect();
                let guard_of = |i: usize| order.binary_search(&stripe_ids[i]).unwrap_or(0);
                // The queue offset of each message, in batch order.
                let mut queue_offsets: Vec<u64> = Vec::with_capacity(msgs.len());
                let mut records = Vec::with_capacity(msgs.len());
                let mut rest = blob.as_mut_slice();
                for (i, (m, rec)) in msgs.iter().zip(&encoded).enumerate() {
                    let (topic, qid) = (m.topic(), m.get_queue_id());
                    let earlier =
                        msgs[..i].iter().rposition(|p| p.topic() == topic && p.get_queue_id() == qid);
                    let qo = match earlier {
                        Some(j) => queue_offsets[j] + 1,
                        None => guards[guard_of(i)].next(hashes[i], topic, qid),
                    };
                    queue_offsets.push(qo);
                    let (parts, later) = std::mem::take(&mut rest).split_at_mut(rec.layout.parts_len());
                    rest = later;
                    codec::set_queue_offset(parts, &rec.layout, qo);
                    codec::seal_record_crc_parts(parts, &rec.layout);
                    records.push(RecordParts { parts, layout: rec.layout, body: m.body() });
                }
                let appended = self.put_path.append(&s.log, &mut records, now_ms())?;
                for (i, m) in msgs.iter().enumerate() {
                    guards[guard_of(i)].set(hashes[i], m.topic(), m.get_queue_id(), queue_offsets[i] + 1);
                }
                drop(guards);
                let results: Vec<PutResult> = encoded
                    .iter()
                    .zip(&queue_offsets)
                    .map(|(rec, &queue_offset)| PutResult {
                        physical_offset: appended.physical_offset + rec.offset_in_batch as u64,
                        queue_offset,
                        size: rec.layout.total_size as u32,
                        store_timestamp: appended.store_timestamp,
                    })
                    .collect();
                Ok(AppendedBatch {
                    results,
                    physical_offset: appended.physical_offset,
                    end: appended.physical_offset + size as u64,
                })
            })
        })?;
        self.after_put(batch.physical_offset, batch.end)?;
        Ok(batch.results)
    }

    fn catch_up(&self) -> Result<(), ReadError> {
        let s = &*self.shared;
        let _ = s.log.commit();
        Ok(s.dispatch_to(s.log.readable_end())?)
    }

    /// What recovery did when this log was opened.
    pub(crate) fn recovery_report(&self) -> &LogRecovery {
        &self.report
    }

    fn entry(&self, topic: &str, queue_id: u32, queue_offset: u64) -> Option<Entry> {
        self.shared.cqs.get(topic, queue_id)?.entry(queue_offset)
    }

    /// Reads by (topic, queue id, queue offset).
    pub(crate) fn get_message(
        &self,
        topic: &str,
        queue_id: u32,
        queue_offset: u64,
    ) -> Result<Option<StoredMessage<'_>>, ReadError> {
        self.check_min_queue_offset(topic, queue_id, queue_offset)?;
        let read = self.get_message_above_min(topic, queue_id, queue_offset);
        if !matches!(read, Ok(Some(_))) {
            // Retention may have deleted the record between the check and the read.
            self.check_min_queue_offset(topic, queue_id, queue_offset)?;
        }
        read
    }

    /// A typed error if `queue_offset` is below the queue's first readable offset.
    fn check_min_queue_offset(&self, topic: &str, queue_id: u32, queue_offset: u64) -> Result<(), ReadError> {
        let min_queue_offset = self.min_queue_offset(topic, queue_id);
        if queue_offset < min_queue_offset {
            return Err(ReadError::BelowMinQueueOffset {
                topic: topic.to_owned(),
                queue_id,
                queue_offset,
                min_queue_offset,
            });
        }
        Ok(())
    }

    /// First readable queue offset of (topic, queue id); 0 for an unknown queue.
    pub(crate) fn min_queue_offset(&self, topic: &str, queue_id: u32) -> u64 {
        self.shared.cqs.get(topic, queue_id).map_or(0, |cq| cq.min_offset())
    }

    /// Runs retention now, as if the wall clock read `now`.
    pub(crate) fn run_retention_at(
        &self,
        now: std::time::SystemTime,
    ) -> Result<crate::RetentionReport, crate::RetentionError> {
        // Index everything readable first, so an explicit run is not held back by a
        // dispatcher that has not caught up (it deletes less if this fails).
        let _ = self.catch_up();
        let s = &*self.shared;
        s.retention.run_at(&s.config.retention, s.retention_parts(), now)
    }

    fn get_message_above_min(
        &self,
        topic: &str,
        queue_id: u32,
        queue_offset: u64,
    ) -> Result<Option<StoredMessage<'_>>, ReadError> {
        let e = match self.entry(topic, queue_id, queue_offset) {
            Some(e) => e,
            None => {
                self.catch_up()?;
                match self.entry(topic, queue_id, queue_offset) {
                    Some(e) => e,
                    None => return Ok(None),
                }
            }
        };
        if e.size == 0 {
            return Ok(None);
        }
        let bad = || ReadError::BadQueueEntry {
            topic: topic.to_owned(),
            queue_id,
            queue_offset,
            physical_offset: e.physical_offset,
            size: e.size,
        };
        let end = e.physical_offset.checked_add(u64::from(e.size)).ok_or_else(bad)?;
        let bytes = self.shared.log.bytes_from(e.physical_offset, end).ok_or_else(bad)?;
        if bytes.len() != e.size as usize {
            return Err(bad());
        }
        match codec::decode(bytes, Some(e.physical_offset)) {
            // A damaged entry can point at another whole record: serve only the asked one.
            Ok(Decoded::Message(m))
                if m.queue_offset() == queue_offset && m.queue_id() == queue_id && m.topic() == topic =>
            {
                Ok(Some(m))
            }
            Ok(_) => Err(bad()),
            Err(source) => Err(ReadError::Corrupt { physical_offset: e.physical_offset, source }),
        }
    }

    /// Reads the record starting at `physical_offset`.
    pub(crate) fn get_message_at(
        &self,
        physical_offset: u64,
    ) -> Result<Option<StoredMessage<'_>>, ReadError> {
        let log = &self.shared.log;
        let min_physical_offset = log.min_offset();
        if physical_offset < min_physical_offset {
            return Err(ReadError::BelowMinPhysicalOffset { physical_offset, min_physical_offset });
        }
        if physical_offset >= log.readable_end() {
            let _ = log.commit();
        }
        let Some(bytes) = log.bytes_from(physical_offset, u64::MAX) else { return Ok(None) };
        match codec::decode(bytes, Some(physical_offset)) {
            Ok(Decoded::Message(m)) => Ok(Some(m)),
            Ok(_) => Ok(None),
            // No magic code where a record would start: the offset points into a record, not
            // at damage (everything below the readable end was verified or written by us).
            Err(codec::DecodeError::BadMagic { .. } | codec::DecodeError::Unwritten) => {
                Err(ReadError::NoRecordAt { physical_offset })
            }
            Err(source) => Err(ReadError::Corrupt { physical_offset, source }),
        }
    }

    /// Sends records of (topic, queue id) from `from_offset` to `out` (see
    /// [`crate::transfer`]), after dispatching everything readable.
    pub(crate) fn transfer_to(
        &self,
        topic: &str,
        queue_id: u32,
        from_offset: u64,
        limit: crate::transfer::TransferLimit,
        out: std::os::fd::BorrowedFd<'_>,
    ) -> Result<crate::transfer::TransferReport, crate::transfer::TransferError> {
        let mut caught_up = false;
        // A missing entry may only be undispatched: dispatch what is readable, once.
        let entry = |qo| match self
            .check_min_queue_offset(topic, queue_id, qo)
            .map(|()| self.entry(topic, queue_id, qo))?
        {
            None if !caught_up => {
                caught_up = true;
                self.catch_up()?;
                Ok(self.entry(topic, queue_id, qo))
            }
            e => Ok(e),
        };
        crate::transfer::transfer(&self.shared.log, (topic, queue_id), from_offset, limit, entry, out)
    }

    /// Commits and msyncs everything written; returns the flushed offset.
    pub(crate) fn flush(&self) -> Result<u64, FlushError> {
        let r = self.shared.log.flush();
        self.shared.group.notify_progress();
        if r.is_ok() {
            *lock(&self.shared.async_flush_error) = None;
        }
        r
    }

    /// Number of consume-queue entries of (topic, queue id) (its next queue offset),
    /// after dispatching everything readable.
    pub(crate) fn queue_len(&self, topic: &str, queue_id: u32) -> Result<u64, ReadError> {
        self.catch_up()?;
        Ok(self.shared.cqs.get(topic, queue_id).map_or(0, |cq| cq.len()))
    }

    pub(crate) fn log(&self) -> &CommitLog<R> {
        &self.shared.log
    }

    /// CPU time of the put path's own thread (the sequencer's writer), ns; `None` otherwise.
    pub(crate) fn put_path_cpu_ns(&self) -> Option<u64> {
        self.put_path.own_thread_cpu_ns()
    }

    /// The last error of a background thread (async flush, dispatch, checkpoint), if any.
    pub(crate) fn background_error(&self) -> Option<BackgroundError> {
        if let Some(e) = lock(&self.shared.async_flush_error).as_ref() {
            return Some(BackgroundError::Flush(e.clone()));
        }
        lock(&self.shared.background_error).clone()
    }

    fn stop_threads(&mut self) {
        self.put_path.close();
        let s = &self.shared;
        self.dispatcher.unregister(s);
        s.stop.stop();
        s.group.shutdown();
        s.log.shutdown();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }

    /// Clean shutdown: flush, dispatch, checkpoint, remove `abort`.
    pub(crate) fn close(mut self) -> Result<(), CloseError> {
        self.shut()
    }

    /// [`close`](Self::close) without consuming the log.
    fn shut(&mut self) -> Result<(), CloseError> {
        self.shared.log.flush()?;
        self.stop_threads();
        let s = &*self.shared;
        match s.dispatch_to(s.log.write_pos()) {
            Err(DispatchError::Io(e)) => return Err(e.into()),
            // Recovery rebuilds what dispatch could not.
            Err(DispatchError::Decode { .. }) | Ok(()) => {}
        }
        s.write_checkpoint()?;
        s.fs.remove_file(&s.dir.join("abort"))?;
        s.fs.sync_dir(&s.dir)?;
        Ok(())
    }
}

impl<R: RawMutex + Send + Sync + 'static> Drop for LogStore<R> {
    /// Without `close`: stops the threads and leaves `abort`, like a crash that keeps the
    /// page cache (the next open runs crash recovery).
    fn drop(&mut self) {
        self.stop_threads();
    }
}

fn spawn_services<R: RawMutex + Send + Sync + 'static>(
    shared: &Arc<Shared<R>>,
) -> std::io::Result<Vec<JoinHandle<()>>> {
    let mut threads = Vec::new();
    let s = Arc::clone(shared);
    threads.push(std::thread::Builder::new().name("abslock-store-flush".into()).spawn(move || {
        match s.config.flush {
            FlushMode::Sync { .. } => s.group.run(&s.log),
            FlushMode::Async { interval, least_pages } => {
                let tick = match s.config.write_mode {
                    WriteMode::Pooled { commit_interval, .. } => commit_interval.min(interval),
                    _ => interval,
                };
                crate::flush::run_async(
                    &s.log,
                    &s.stop,
                    tick,
                    interval,
                    u64::from(least_pages) * PAGE_SIZE,
                    &s.async_flush_error,
                );
            }
        }
    })?);
    Ok(threads)
}
