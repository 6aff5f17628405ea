//! The CommitLog: one append-only log of records over fixed-size segments, with the
//! put-message critical section under a lock `R` (RocketMQ `CommitLog` + `MappedFileQueue`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use crossbeam_utils::CachePadded;
use lock_api::RawMutex;

use crate::append_only::AppendOnly;
use crate::codec::{self, RecordLayout};
use crate::error::{FlushError, PutError};
use crate::io::{FileOps, FsResult};
use crate::put_executor::{AppendOutcome, AppendRequest};
use crate::put_path::Job;
use crate::segment::{BufferPool, Preallocator, Segment};

mod standalone;
pub use standalone::{EncodedRecord, WarmSegments};

/// Size of the end-of-segment blank record: total size (4) + blank magic (4). A record
/// goes into a segment only if `len + BLANK_LEN <= space left` (RocketMQ
/// `END_FILE_MIN_BLANK_LENGTH`), so a blank always fits.
pub(crate) const BLANK_LEN: u64 = codec::BLANK_MIN as u64;

/// State owned by the put-message lock.
pub(crate) struct PutState {
    /// Next physical offset to write.
    write_pos: u64,
    /// The segment containing `write_pos`; `None` when `write_pos` is at a segment start
    /// whose segment does not exist yet.
    current: Option<Arc<Segment>>,
    /// Store timestamp of the last record, ms: timestamps never go backwards in log order.
    last_timestamp: i64,
}

/// One record to append, in two pieces: its encoded head and tail (from
/// [`codec::encode_parts_into`], queue offset set, record CRC sealed) and its body, still in
/// the caller's message. The critical section copies head, body, tail, so the body is
/// copied once, from the message straight into the log.
#[derive(Debug)]
pub(crate) struct RecordParts<'a> {
    /// The record without its body: head then tail.
    pub(crate) parts: &'a mut [u8],
    pub(crate) layout: RecordLayout,
    pub(crate) body: &'a [u8],
}

impl RecordParts<'_> {
    /// Bytes the record occupies in the log. Counted from the slices, so the copy covers
    /// exactly this many bytes whatever the layout says.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.parts.len() + self.body.len()
    }
}

/// What the critical section did.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Appended {
    pub(crate) physical_offset: u64,
    pub(crate) store_timestamp: i64,
}

/// How reads are bounded and what a flush covers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LogMode {
    pub(crate) pooled: bool,
    pub(crate) sync_flush: bool,
}

/// An append-only commitlog over segments, generic over the put-message lock `R`.
///
/// Positions (physical offsets, bytes): `flushed <= committed <= write_pos`. Readers see
/// `[0, readable_end)`: `flushed` under sync flush, `committed` in pooled write mode,
/// `write_pos` otherwise. Source: RocketMQ `CommitLog`, `MappedFileQueue`.
pub struct CommitLog<R: RawMutex> {
    dir: PathBuf,
    fs: FileOps,
    segment_size: u64,
    /// Append-only while the log is open: a `&Segment` stays valid for as long as `&self`.
    /// Segments retention deleted (below `min_offset`: file unlinked, blocks released) stay
    /// here, mapped, until the log drops, and lookups below `min_offset` find nothing.
    segments: AppendOnly<Segment>,
    /// First readable physical offset: the start of the oldest segment retention kept.
    min_offset: AtomicU64,
    /// Padded: readers and the dispatcher read-lock `segments` for every record they read,
    /// and a put lock on the same cache line would miss on every put.
    put: CachePadded<lock_api::Mutex<R, PutState>>,
    write_pos: CachePadded<AtomicU64>,
    committed: CachePadded<AtomicU64>,
    flushed: CachePadded<AtomicU64>,
    /// Serialises commits and flushes (flush thread, group commit, explicit flush).
    flush_lock: Mutex<()>,
    prealloc: Preallocator,
    pool: Option<Arc<BufferPool>>,
    mode: LogMode,
    /// Where the next record will most likely be copied (an address, never dereferenced):
    /// [`prefetch_next`](Self::prefetch_next) warms those cache lines before the lock.
    next_write_addr: CachePadded<AtomicUsize>,
    /// Successful flushes that advanced the flushed position.
    flushes: AtomicU64,
    /// Segment rolls.
    rolls: AtomicU64,
    /// Times a put found no ready segment and left the put lock to wait for one.
    roll_waits: AtomicU64,
}

impl<R: RawMutex> std::fmt::Debug for CommitLog<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommitLog")
            .field("dir", &self.dir)
            .field("write_pos", &self.write_pos())
            .field("flushed", &self.flushed())
            .finish_non_exhaustive()
    }
}

/// Milliseconds since the Unix epoch (vDSO `clock_gettime`, no syscall; still tens of ns
/// under a paravirtual clock, so it is read outside the put-message lock).
#[inline]
pub(crate) fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

impl<R: RawMutex> CommitLog<R> {
    /// Assembles a recovered log: `segments` contiguous, `write_pos` inside or at the end of
    /// the last one, everything below `write_pos` durable.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        dir: PathBuf,
        fs: FileOps,
        segment_size: u64,
        segments: Vec<Arc<Segment>>,
        write_pos: u64,
        lock: R,
        prealloc: Preallocator,
        pool: Option<Arc<BufferPool>>,
        mode: LogMode,
    ) -> Self {
        let current = segments.last().filter(|s| s.start() <= write_pos && write_pos < s.end()).cloned();
        let next = current.as_ref().map_or(write_pos, |s| s.end());
        prealloc.prepare(next);
        let next_addr = current.as_ref().map_or(0, |s| s.write_addr((write_pos - s.start()) as usize));
        Self {
            dir,
            fs,
            segment_size,
            min_offset: AtomicU64::new(segments.first().map_or(write_pos, |s| s.start())),
            segments: AppendOnly::new(segments),
            put: CachePadded::new(lock_api::Mutex::from_raw(
                lock,
                PutState { write_pos, current, last_timestamp: 0 },
            )),
            write_pos: CachePadded::new(AtomicU64::new(write_pos)),
            committed: CachePadded::new(AtomicU64::new(write_pos)),
            flushed: CachePadded::new(AtomicU64::new(write_pos)),
            flush_lock: Mutex::new(()),
            prealloc,
            pool,
            mode,
            next_write_addr: CachePadded::new(AtomicUsize::new(next_addr)),
            flushes: AtomicU64::new(0),
            rolls: AtomicU64::new(0),
            roll_waits: AtomicU64::new(0),
        }
    }

    /// The commitlog directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Bytes per segment.
    pub fn segment_size(&self) -> u64 {
        self.segment_size
    }

    /// Next physical offset to be written (published after each put).
    pub fn write_pos(&self) -> u64 {
        self.write_pos.load(Ordering::Acquire)
    }

    /// Physical offset up to which the pooled write buffers are copied to the files
    /// (equals [`write_pos`](Self::write_pos) in mmap write mode).
    pub fn committed(&self) -> u64 {
        if self.mode.pooled { self.committed.load(Ordering::Acquire) } else { self.write_pos() }
    }

    /// Physical offset up to which the log is durable.
    pub fn flushed(&self) -> u64 {
        self.flushed.load(Ordering::Acquire)
    }

    /// End of what readers may see: flushed under sync flush, else committed.
    pub fn readable_end(&self) -> u64 {
        if self.mode.sync_flush { self.flushed() } else { self.committed() }
    }

    /// The put-message lock (for statistics).
    pub fn put_lock(&self) -> &R {
        // SAFETY: the reference is only used to read the lock's state or statistics; this
        // crate never unlocks through it, and callers need `unsafe` to do so.
        unsafe { self.put.raw() }
    }

    /// The put-message critical section: store timestamp, get or roll the last segment,
    /// patch physical offsets, copy, advance the write position. No allocation and no
    /// syscall except on a roll.
    ///
    /// `records` go into one segment, contiguously and in order; each is copied as head,
    /// body, tail (three copies, no staging buffer). `clock_ms` is the wall clock read just
    /// before the lock (a clock read costs as much as the rest of a small critical section);
    /// inside, the store timestamp is made monotonic in log order.
    #[inline]
    pub(crate) fn append(
        &self,
        records: &mut [RecordParts<'_>],
        clock_ms: i64,
    ) -> Result<Appended, PutError> {
        let len: u64 = records.iter().map(|r| r.len() as u64).sum();
        loop {
            let mut st = self.put.lock();
            let fits = st.current.as_ref().is_some_and(|seg| seg.end() - st.write_pos >= len + BLANK_LEN);
            if !fits {
                let next_start = st.current.as_ref().map_or(st.write_pos, |s| s.end());
                match self.prealloc.take_ready(next_start) {
                    Some(next) => self.roll(&mut st, next),
                    None => {
                        // Never wait for another thread while holding the lock: leave it,
                        // get the segment ready, retry (another put may roll meanwhile).
                        drop(st);
                        self.roll_waits.fetch_add(1, Ordering::Relaxed);
                        self.prealloc.ensure(next_start).map_err(PutError::SegmentCreate)?;
                        continue;
                    }
                }
                let appended = self.copy_in(&mut st, records, len, clock_ms);
                drop(st);
                self.prealloc.refill();
                return appended;
            }
            return self.copy_in(&mut st, records, len, clock_ms);
        }
    }

    /// The copy half of the critical section: `records` fit in the current segment.
    #[inline]
    fn copy_in(
        &self,
        st: &mut PutState,
        records: &mut [RecordParts<'_>],
        len: u64,
        clock_ms: i64,
    ) -> Result<Appended, PutError> {
        let now = clock_ms.max(st.last_timestamp);
        st.last_timestamp = now;
        let pos = st.write_pos;
        let Some(seg) = st.current.as_ref() else {
            // `append` only copies once the segment fits.
            return Err(PutError::Closed);
        };
        let mut rel = (pos - seg.start()) as usize;
        for r in records.iter_mut() {
            codec::set_physical_offset(r.parts, &r.layout, seg.start() + rel as u64);
            codec::set_store_timestamp(r.parts, &r.layout, now);
            let (head, tail) = r.parts.split_at(r.layout.head_len().min(r.parts.len()));
            // SAFETY: we hold the put lock (sole writer); the three copies fill
            // `[rel, rel + r.len())`, and these ranges tile `[pos, pos + len)`, where
            // `len + 8 <= end - pos` was checked (or the roll made a fresh segment, where the
            // caller checked `len + 8 <= size`); that range is at or above the published
            // write position, unseen by readers.
            unsafe {
                seg.write(rel, head);
                seg.write(rel + head.len(), r.body);
                seg.write(rel + head.len() + r.body.len(), tail);
            }
            rel += r.len();
        }
        let next_addr = seg.write_addr(rel);
        st.write_pos = pos + len;
        self.write_pos.store(pos + len, Ordering::Release);
        self.next_write_addr.store(next_addr, Ordering::Relaxed);
        Ok(Appended { physical_offset: pos, store_timestamp: now })
    }

    /// The put-message critical section for a delegated pass (sequencer writer or flat
    /// combiner): many puts' record groups, each contiguous, in order. When the whole pass
    /// fits the current segment it runs under one lock acquisition with one fit check;
    /// otherwise each group is appended on its own ([`append`](Self::append): its own fit
    /// check, roll and error), so a failed roll fails the groups it stops and no other.
    pub(crate) fn append_jobs(&self, jobs: &mut [Job<AppendRequest, AppendOutcome>]) {
        let mut total = 0;
        for j in jobs.iter_mut() {
            // SAFETY: the executor calling us holds these requests until it completes them.
            total += unsafe { j.input.records() }.iter().map(|r| r.len() as u64).sum::<u64>();
        }
        {
            let mut st = self.put.lock();
            if st.current.as_ref().is_some_and(|seg| seg.end() - st.write_pos >= total + BLANK_LEN) {
                for j in jobs.iter_mut() {
                    let clock_ms = j.input.clock_ms;
                    // SAFETY: as above.
                    let records = unsafe { j.input.records() };
                    let len = records.iter().map(|r| r.len() as u64).sum();
                    j.output = Some(self.copy_in(&mut st, records, len, clock_ms));
                }
                return;
            }
        }
        for j in jobs.iter_mut() {
            let clock_ms = j.input.clock_ms;
            // SAFETY: as above.
            j.output = Some(self.append(unsafe { j.input.records() }, clock_ms));
        }
    }

    /// Prefetches the cache lines the next record of `len` bytes will most likely be
    /// copied to, so the copy inside the critical section finds them in cache instead of
    /// stalling on memory while the lock is held (ours). Called before encoding, so the
    /// lines arrive while the CPU computes CRCs. A hint only: prefetches never fault, and a
    /// stale address (another thread won the race, a roll) only wastes the prefetch.
    ///
    /// The hint is T1 (into L2, not L1): a 4 KiB record is ~68 lines, more than the L1 can
    /// have in flight, and L1 prefetches stalled this loop until earlier lines arrived
    /// (measured with `examples/put_vs_memcpy`: T1 gave a higher put/memcpy ratio than T0).
    #[inline]
    pub(crate) fn prefetch_next(&self, len: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T1, _mm_prefetch};
            /// Prefetch at most this many bytes: more would only evict itself.
            const MAX: usize = 16 << 10;
            let base = self.next_write_addr.load(Ordering::Relaxed);
            if base == 0 {
                return;
            }
            let mut line = base & !63;
            let end = base.saturating_add(len.min(MAX));
            while line < end {
                // SAFETY: `_mm_prefetch` only hints the cache; it never faults and never
                // reads into the program, whatever the address.
                unsafe { _mm_prefetch::<_MM_HINT_T1>(line as *const i8) };
                line += 64;
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = len;
    }

    /// Ends the current segment with a blank record and makes `next` (ready, taken from
    /// the preallocator) current. No syscall and no wait: the segment list's write lock is
    /// held by readers only for an index lookup.
    #[cold]
    #[inline(never)]
    fn roll(&self, st: &mut PutState, next: Arc<Segment>) {
        if let Some(old) = st.current.as_ref() {
            // SAFETY: we hold the put lock; `space >= 8` is the segment invariant (every
            // record leaves room for a blank); the range is above the published write position.
            unsafe { old.write_blank((st.write_pos - old.start()) as usize) };
        }
        st.write_pos = next.start();
        self.segments.push(Arc::clone(&next));
        st.current = Some(next);
        self.rolls.fetch_add(1, Ordering::Relaxed);
    }

    /// First readable physical offset (RocketMQ `getMinOffset`): the start of the oldest
    /// segment retention has not deleted.
    pub fn min_offset(&self) -> u64 {
        self.min_offset.load(Ordering::Acquire)
    }

    /// Raises the first readable offset (retention, before deleting anything below it).
    pub(crate) fn raise_min_offset(&self, to: u64) {
        self.min_offset.fetch_max(to, Ordering::AcqRel);
    }

    /// The segments from the first readable one on, oldest first.
    pub(crate) fn live_segments(&self) -> Vec<Arc<Segment>> {
        let min = self.min_offset();
        self.segments.to_vec().into_iter().filter(|s| s.end() > min).collect()
    }

    /// The segment containing `phys`, borrowed for as long as `&self`; `None` below the
    /// first readable offset.
    pub(crate) fn segment_at(&self, phys: u64) -> Option<&Segment> {
        if phys < self.min_offset() {
            return None;
        }
        let first = self.segments.get(0)?.start();
        let idx = usize::try_from(phys.checked_sub(first)? / self.segment_size).ok()?;
        self.segments.get(idx)
    }

    /// The readable bytes from `phys` to the end of its segment or `limit`, whichever is first.
    pub(crate) fn bytes_from(&self, phys: u64, limit: u64) -> Option<&[u8]> {
        let limit = limit.min(self.readable_end());
        if phys >= limit {
            return None;
        }
        let seg = self.segment_at(phys)?;
        let end = seg.end().min(limit);
        // SAFETY: `[phys, end)` is inside the segment and below the readable end, so no
        // writer touches it; the segment lives as long as `&self` (see `segment_at`).
        Some(unsafe { seg.bytes((phys - seg.start()) as usize, (end - phys) as usize) })
    }

    /// Copies pooled write buffers to the files up to the write position. Caller holds
    /// `flush_lock`.
    fn commit_locked(&self) -> FsResult<u64> {
        let target = self.write_pos();
        let mut at = self.committed.load(Ordering::Acquire);
        while at < target {
            let Some(seg) = self.segment_at(at) else { break };
            let upto = target.min(seg.end());
            if seg.has_buffer() {
                seg.commit(&self.fs, (at - seg.start()) as usize, (upto - at) as usize)?;
            }
            at = upto;
            self.committed.store(at, Ordering::Release);
            if at == seg.end()
                && let Some(pool) = &self.pool
            {
                seg.release_buffer(pool);
            }
        }
        Ok(at)
    }

    /// Commits pooled buffers (pooled write mode) without flushing; a no-op otherwise.
    pub(crate) fn commit(&self) -> Result<u64, FlushError> {
        if !self.mode.pooled {
            return Ok(self.write_pos());
        }
        let _g = self.flush_lock.lock().unwrap_or_else(PoisonError::into_inner);
        self.commit_locked().map_err(|e| FlushError::Io { flushed: self.flushed(), source: Arc::new(e) })
    }

    /// Commits (pooled mode) and msyncs everything written so far; returns the new flushed
    /// position. A failure leaves the flushed position unchanged.
    pub(crate) fn flush(&self) -> Result<u64, FlushError> {
        let _g = self.flush_lock.lock().unwrap_or_else(PoisonError::into_inner);
        let from = self.flushed();
        let io = |e| FlushError::Io { flushed: from, source: Arc::new(e) };
        let end = if self.mode.pooled { self.commit_locked().map_err(io)? } else { self.write_pos() };
        let mut at = from;
        while at < end {
            let Some(seg) = self.segment_at(at) else { break };
            let upto = end.min(seg.end());
            seg.sync(&self.fs, (at - seg.start()) as usize, (upto - at) as usize).map_err(io)?;
            at = upto;
        }
        if end > from {
            self.flushes.fetch_add(1, Ordering::Relaxed);
        }
        self.flushed.store(end, Ordering::Release);
        Ok(end)
    }

    /// Flushes that advanced the flushed position so far.
    pub fn flushes(&self) -> u64 {
        self.flushes.load(Ordering::Relaxed)
    }

    /// Segment rolls so far.
    pub fn rolls(&self) -> u64 {
        self.rolls.load(Ordering::Relaxed)
    }

    /// Times a put that needed a roll found no ready segment and left the put-message lock
    /// to wait for the preallocator (or create the segment itself) before retrying. A put
    /// holding the lock never waits for another thread.
    pub fn roll_waits(&self) -> u64 {
        self.roll_waits.load(Ordering::Relaxed)
    }

    /// Bytes written but not yet flushed.
    pub(crate) fn dirty(&self) -> u64 {
        self.write_pos().saturating_sub(self.flushed())
    }

    /// Queues `segments` (warm, contiguous after the current one) for the roll, as if the
    /// preallocator had made them.
    pub(crate) fn stock_ready(&self, segments: impl IntoIterator<Item = Segment>) {
        self.prealloc.stock(segments);
    }

    /// Stops the preallocation thread.
    pub(crate) fn shutdown(&self) {
        self.prealloc.shutdown();
    }
}
