//! Retention: deletes the oldest commitlog segments once they are older than a configured
//! age or the log is over a configured size, and lets the consume queues and the minimum
//! readable offsets follow (RocketMQ `DefaultMessageStore.CleanCommitLogService` and
//! `CleanConsumeQueueService`; Kafka's `retention.ms` / `retention.bytes`).
//!
//! Order of one deletion, chosen so that a crash after any step leaves a valid store (see
//! `docs/format.md`): (1) raise the in-memory minimum physical offset and each queue's
//! minimum queue offset, so readers get a typed error from now on; (2) unlink the chosen
//! segments oldest first, each unlink made durable before the next, so the files on disk
//! are always a contiguous run of segments, which recovery accepts, starting at the next
//! oldest one; (3) release the blocks of consume-queue files whose entries all point below
//! the minimum. Nothing new is written, and the minimums are derived at open from the first
//! segment file and the consume-queue entries, so there is no state to keep consistent.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use lock_api::RawMutex;

use crate::codec::{self, DecodeOptions, Decoded, RecordCrcCheck};
use crate::commitlog::CommitLog;
use crate::consume_queue::ConsumeQueues;
use crate::error::FileError;
use crate::io::FileOps;

/// 10 s: RocketMQ's default `cleanResourceInterval`.
pub const DEFAULT_RETENTION_INTERVAL: Duration = Duration::from_secs(10);

/// When old commitlog segments are deleted. Default: never (both limits `None`).
///
/// A segment is deleted only when it is wholly below the flushed position and below what
/// the consume queues have indexed, and never the segment being written; segments go
/// oldest first. The check runs on the store's dispatcher thread every `interval`, or on
/// demand with [`MessageStore::run_retention_now`](crate::MessageStore::run_retention_now).
///
/// A deleted segment's file is unlinked and its blocks released at once, but its mapping
/// stays (no disk, no memory) until the store closes, because a
/// [`StoredMessage`](crate::StoredMessage) borrows it for as long as the store: one
/// memory mapping per deleted segment counts against the kernel's `vm.max_map_count`, and
/// a `StoredMessage` borrowed before its segment was deleted reads zeros afterwards (copy
/// what you keep past the retention horizon).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Delete a segment once its newest record is at least this old (store timestamps; a
    /// segment's newest record is taken as no newer than the next segment's first record).
    /// RocketMQ `fileReservedTime` (72 hours there). Default `None`: no age limit.
    pub max_age: Option<Duration>,
    /// Delete the oldest segments while the commitlog's segments holding data take more
    /// than this many bytes (per topic under [`Layout::PerTopic`](crate::Layout::PerTopic);
    /// segments kept ready by preallocation do not count). Ours as a byte cap: RocketMQ
    /// deletes by the disk's fill ratio, `diskMaxUsedSpaceRatio` (75 %). Default `None`.
    pub max_bytes: Option<u64>,
    /// How often the dispatcher thread checks (RocketMQ `cleanResourceInterval`, 10 s).
    pub interval: Duration,
}

impl Default for Retention {
    fn default() -> Self {
        Self { max_age: None, max_bytes: None, interval: DEFAULT_RETENTION_INTERVAL }
    }
}

impl Retention {
    fn enabled(&self) -> bool {
        self.max_age.is_some() || self.max_bytes.is_some()
    }
}

/// What one retention run deleted (summed over topics under
/// [`Layout::PerTopic`](crate::Layout::PerTopic)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct RetentionReport {
    /// Commitlog segments deleted.
    pub segments_deleted: u64,
    /// Bytes of commitlog segments deleted.
    pub bytes_deleted: u64,
    /// Consume-queue files whose blocks were released.
    pub consume_queue_files_released: u64,
}

impl RetentionReport {
    pub(crate) fn add(&mut self, other: RetentionReport) {
        self.segments_deleted += other.segments_deleted;
        self.bytes_deleted += other.bytes_deleted;
        self.consume_queue_files_released += other.consume_queue_files_released;
    }
}

/// A retention run stopped at a failed deletion step.
///
/// What it deleted before stays deleted; the minimum readable offsets were already raised,
/// so nothing below them is served, and the next run (or the next open) finishes the job.
#[derive(Debug, thiserror::Error)]
#[error("retention stopped after deleting {} segments: {source}; the next run retries", report.segments_deleted)]
pub struct RetentionError {
    /// What was deleted before the failure.
    pub report: RetentionReport,
    /// The failed step.
    #[source]
    pub source: FileError,
}

/// Per-log retention state: when it last ran, and a lock so runs never overlap.
#[derive(Debug)]
pub(crate) struct RetentionState {
    running: Mutex<Instant>,
}

impl Default for RetentionState {
    fn default() -> Self {
        Self { running: Mutex::new(Instant::now()) }
    }
}

impl RetentionState {
    /// Runs retention if `interval` passed since the last run (background).
    pub(crate) fn run_if_due<R: RawMutex>(
        &self,
        policy: &Retention,
        parts: Parts<'_, R>,
    ) -> Result<RetentionReport, RetentionError> {
        if !policy.enabled() {
            return Ok(RetentionReport::default());
        }
        let Ok(mut last) = self.running.try_lock() else { return Ok(RetentionReport::default()) };
        if last.elapsed() < policy.interval {
            return Ok(RetentionReport::default());
        }
        *last = Instant::now();
        run(policy, parts, now_ms(SystemTime::now()))
    }

    /// Runs retention now, as if the wall clock read `now`.
    pub(crate) fn run_at<R: RawMutex>(
        &self,
        policy: &Retention,
        parts: Parts<'_, R>,
        now: SystemTime,
    ) -> Result<RetentionReport, RetentionError> {
        let mut last = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        *last = Instant::now();
        run(policy, parts, now_ms(now))
    }
}

/// What retention works on, lent by the log's owner.
pub(crate) struct Parts<'a, R: RawMutex> {
    pub(crate) log: &'a CommitLog<R>,
    pub(crate) cqs: &'a ConsumeQueues,
    pub(crate) fs: &'a FileOps,
    /// Everything below is indexed by the consume queues.
    pub(crate) dispatched: u64,
}

fn now_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// Sets each queue's minimum from the log's (at open, and after a deletion).
pub(crate) fn follow_min<R: RawMutex>(log: &CommitLog<R>, cqs: &ConsumeQueues) {
    let min = log.min_offset();
    for (_, _, cq) in cqs.all() {
        cq.follow_min_physical(min);
    }
}

fn run<R: RawMutex>(
    policy: &Retention,
    p: Parts<'_, R>,
    now_ms: i64,
) -> Result<RetentionReport, RetentionError> {
    let mut report = RetentionReport::default();
    let segs = p.log.live_segments();
    // Never what is not durable or not indexed yet; never the segment being written (it
    // is the last one, or holds the flushed position).
    let safe_end = p.log.flushed().min(p.dispatched);
    let size = p.log.segment_size();
    let mut total = segs.len() as u64 * size;
    let mut count = 0;
    while count + 1 < segs.len() && segs[count].end() <= safe_end {
        let over_size = policy.max_bytes.is_some_and(|max| total > max);
        let too_old = policy.max_age.is_some_and(|age| {
            first_timestamp(p.log, segs[count + 1].start(), safe_end)
                .is_some_and(|ts| now_ms.saturating_sub(ts) >= age.as_millis() as i64)
        });
        if !over_size && !too_old {
            break;
        }
        total -= size;
        count += 1;
    }
    if count == 0 {
        return Ok(report);
    }
    // (1) Readers get a typed error below the new minimums from now on.
    p.log.raise_min_offset(segs[count - 1].end());
    follow_min(p.log, p.cqs);
    let fail = |report, source| RetentionError { report, source };
    // (2) Oldest first, each unlink durable before the next.
    for seg in &segs[..count] {
        p.fs.delete_segment(seg.path(), seg.file()).map_err(|e| fail(report, e))?;
        report.segments_deleted += 1;
        report.bytes_deleted += size;
    }
    // (3) Consume-queue files wholly below their queue's minimum.
    for (_, _, cq) in p.cqs.all() {
        report.consume_queue_files_released += cq.release_files_below_min().map_err(|e| fail(report, e))?;
    }
    Ok(report)
}

/// Store timestamp of the record at `start` (a segment's first), if it is readable below
/// `end` and decodes.
fn first_timestamp<R: RawMutex>(log: &CommitLog<R>, start: u64, end: u64) -> Option<i64> {
    let bytes = log.bytes_from(start, end)?;
    let opts = DecodeOptions {
        expected_physical_offset: Some(start),
        verify_body_crc: false,
        record_crc: RecordCrcCheck::Skip,
    };
    match codec::decode_with(bytes, &opts) {
        Ok(Decoded::Message(m)) => Some(m.store_timestamp()),
        _ => None,
    }
}

/// Sums reports over logs (per-topic layout).
pub(crate) fn sum(reports: impl IntoIterator<Item = RetentionReport>) -> RetentionReport {
    let mut total = RetentionReport::default();
    for r in reports {
        total.add(r);
    }
    total
}
