//! A standalone [`CommitLog`]: the put-message critical section alone, without consume
//! queues, flush, dispatch or recovery, over segments created and warmed beforehand and
//! given back afterwards for the next log (ours). Benchmarks use it to time the lock around
//! the real append and the real roll, with nothing else running.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use lock_api::RawMutex;

use super::{BLANK_LEN, CommitLog, LogMode, RecordParts, now_ms};
use crate::codec::{self, EncodeOptions, RecordLayout, ValidationError};
use crate::config::{PAGE_SIZE, WarmUp};
use crate::error::{ConfigError, FileError, OpenError, PutError};
use crate::io::FileOps;
use crate::message::Message;
use crate::segment::{Preallocator, Segment};

/// Commitlog segments created, reserved, mapped and warmed (every page touched) ahead of
/// use: segment `i` covers physical offsets `[i * segment_size, (i + 1) * segment_size)`.
///
/// Hand them to [`CommitLog::over_warm_segments`] and take them back with
/// [`CommitLog::into_warm_segments`], so a series of logs (one per measurement) reuses the
/// same warm files instead of creating and faulting in new ones. The files live in the
/// directory given to [`create`](Self::create) until the caller removes it; a reused
/// segment still holds the records of the log before, which a standalone log overwrites
/// and never reads. Source: ours (RocketMQ's `TransientStorePool` reuses buffers the same way).
#[derive(Debug)]
pub struct WarmSegments {
    fs: FileOps,
    dir: PathBuf,
    segment_size: u64,
    /// Contiguous from offset 0, in order.
    segments: Vec<Segment>,
}

impl WarmSegments {
    /// Creates `count` warm segments of `segment_size` bytes in `dir` (which must exist;
    /// files are named by start offset as in a store's `commitlog/`).
    ///
    /// # Errors
    /// [`OpenError::InvalidConfig`] if `count` is 0 or `segment_size` is not a positive
    /// multiple of 4 KiB; [`OpenError::Io`] if a file cannot be created, reserved or mapped
    /// (missing directory, no space).
    pub fn create(dir: &Path, segment_size: u64, count: usize) -> Result<Self, OpenError> {
        if count == 0 {
            return Err(OpenError::InvalidConfig(ConfigError::NoWarmSegments));
        }
        if segment_size == 0 || !segment_size.is_multiple_of(PAGE_SIZE) {
            return Err(OpenError::InvalidConfig(ConfigError::SegmentNotPageMultiple(segment_size)));
        }
        let mut me = WarmSegments {
            fs: FileOps::default(),
            dir: dir.to_path_buf(),
            segment_size,
            segments: Vec::new(),
        };
        me.grow(count)?;
        Ok(me)
    }

    /// Adds warm segments after the last one until there are `count`.
    ///
    /// # Errors
    /// [`FileError`] if a file cannot be created; the segments made so far are kept.
    pub fn grow(&mut self, count: usize) -> Result<(), FileError> {
        let warm = WarmUp { enabled: true, mlock: false };
        while self.segments.len() < count {
            let start = self.segments.len() as u64 * self.segment_size;
            let seg = Segment::create(&self.fs, &self.dir, start, self.segment_size, None)?;
            seg.warm_up(&self.fs, warm);
            self.segments.push(seg);
        }
        Ok(())
    }

    /// The directory, size and segments (for a store to adopt).
    pub(crate) fn into_parts(self) -> (PathBuf, u64, Vec<Segment>) {
        (self.dir, self.segment_size, self.segments)
    }

    /// Segments contiguous from offset 0, of `segment_size` bytes, whose files are in `dir`.
    pub(crate) fn from_parts(dir: PathBuf, segment_size: u64, segments: Vec<Segment>) -> Self {
        WarmSegments { fs: FileOps::default(), dir, segment_size, segments }
    }

    /// Bytes per segment.
    pub fn segment_size(&self) -> u64 {
        self.segment_size
    }

    /// Number of segments.
    pub fn len(&self) -> usize {
        self.segments.len()
    }

    /// Whether there are no segments (never true for a value from [`create`](Self::create)).
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    /// Bytes of log the segments hold, `len() * segment_size()`.
    pub fn capacity(&self) -> u64 {
        self.segments.len() as u64 * self.segment_size
    }
}

/// A record encoded beforehand for [`CommitLog::append_encoded`]: the whole record in
/// RocketMQ's layout (see `docs/format.md`), queue offset 0, sealed; the critical section
/// patches its physical offset and store timestamp in place, as the store's put path does.
#[derive(Debug, Clone)]
pub struct EncodedRecord {
    bytes: Vec<u8>,
    layout: RecordLayout,
}

impl EncodedRecord {
    /// Encodes `msg` with `opts` ([`codec::encode_into`]) and seals its record CRC.
    ///
    /// # Errors
    /// [`ValidationError`] if the message breaks a limit of `opts` or of the format.
    pub fn new(msg: &Message, opts: &EncodeOptions) -> Result<Self, ValidationError> {
        let mut bytes = Vec::new();
        let layout = codec::encode_into(msg, opts, &mut bytes)?;
        codec::seal_record_crc(&mut bytes, &layout);
        Ok(EncodedRecord { bytes, layout })
    }

    /// The record's length in the log, bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Always false: a record has at least its fixed head.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The record's bytes as last appended (physical offset and store timestamp patched).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl<R: RawMutex> CommitLog<R> {
    /// A log with no background thread over `segments`, written from physical offset 0:
    /// the first segment is current, the others wait ready for the roll, which takes them
    /// in order as RocketMQ's roll takes a preallocated file. A roll past the last one
    /// creates a segment inside the critical section (cold), so size `segments` for the
    /// bytes the log will take. No consume queue, flush or recovery: the log is for
    /// measuring the put-message critical section.
    ///
    /// # Errors
    /// [`FileError`] only if the (thread-less) segment source cannot be set up.
    pub fn over_warm_segments(segments: WarmSegments, lock: R) -> Result<Self, FileError> {
        let WarmSegments { fs, dir, segment_size, segments } = segments;
        let warm = WarmUp { enabled: true, mlock: false };
        let prealloc = Preallocator::new(fs.clone(), dir.clone(), segment_size, warm, None, false, 1)
            .map_err(|e| FileError::new("set up segments for", &dir, e))?;
        let mut rest = segments.into_iter();
        let first: Vec<Arc<Segment>> = rest.next().map(Arc::new).into_iter().collect();
        let mode = LogMode { pooled: false, sync_flush: false };
        let log = CommitLog::new(dir, fs, segment_size, first, 0, lock, prealloc, None, mode);
        log.prealloc.stock(rest);
        Ok(log)
    }

    /// Ends the log and gives its segments back (those it rolled into and those still
    /// ready), for the next [`over_warm_segments`](Self::over_warm_segments).
    pub fn into_warm_segments(mut self) -> WarmSegments {
        drop(self.put.lock().current.take());
        let listed = std::mem::take(&mut self.segments).into_vec();
        // `self` is consumed and `segment_at` borrows from it, so no other Arc is alive.
        let mut segments: Vec<Segment> = listed.into_iter().filter_map(|s| Arc::try_unwrap(s).ok()).collect();
        segments.extend(self.prealloc.drain_ready());
        segments.sort_by_key(Segment::start);
        WarmSegments { fs: self.fs.clone(), dir: self.dir.clone(), segment_size: self.segment_size, segments }
    }

    /// Appends `record` through the put-message critical section (the same `append` and
    /// roll the store's put path runs; the wall clock is read before the lock, as there) and
    /// returns its physical offset.
    ///
    /// # Errors
    /// [`PutError::TooLargeForSegment`] if the record plus the 8-byte end blank exceeds a
    /// segment; [`PutError::SegmentCreate`] if a roll past the warm segments cannot create one.
    pub fn append_encoded(&self, record: &mut EncodedRecord) -> Result<u64, PutError> {
        let size = record.bytes.len();
        if size as u64 + BLANK_LEN > self.segment_size {
            return Err(PutError::TooLargeForSegment { size, segment_size: self.segment_size });
        }
        let clock = now_ms();
        // The whole record as "parts" with an empty body: the copy is head, then the rest.
        let mut parts = [RecordParts { parts: &mut record.bytes, layout: record.layout, body: &[] }];
        Ok(self.append(&mut parts, clock)?.physical_offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(body: usize) -> EncodedRecord {
        EncodedRecord::new(&Message::new("bench", vec![7; body]), &EncodeOptions::default()).unwrap()
    }

    #[test]
    fn appends_roll_through_the_warm_segments_and_come_back() {
        let dir = tempfile::tempdir().unwrap();
        let warm = WarmSegments::create(dir.path(), 64 << 10, 3).unwrap();
        let log: CommitLog<parking_lot::RawMutex> =
            CommitLog::over_warm_segments(warm, parking_lot::RawMutex::INIT).unwrap();
        let mut rec = record(1000);
        let per_segment = (64 << 10) / rec.len() as u64;
        let mut last = 0;
        for _ in 0..per_segment * 2 {
            last = log.append_encoded(&mut rec).unwrap();
        }
        assert!(last >= 64 << 10, "two segments' worth of records rolled at least once");
        assert!(log.rolls() >= 1);
        let decoded = codec::decode(rec.as_bytes(), Some(last)).unwrap();
        assert_eq!(decoded.size() as usize, rec.len());
        let back = log.into_warm_segments();
        assert_eq!(back.len(), 3, "every segment comes back");
        assert_eq!(back.capacity(), 3 * (64 << 10));
        let log: CommitLog<parking_lot::RawMutex> =
            CommitLog::over_warm_segments(back, parking_lot::RawMutex::INIT).unwrap();
        assert_eq!(log.append_encoded(&mut rec).unwrap(), 0, "a reused set starts at offset 0");
    }

    #[test]
    fn bad_sizes_and_oversized_records_are_typed_errors() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(WarmSegments::create(dir.path(), 64 << 10, 0), Err(OpenError::InvalidConfig(_))));
        assert!(matches!(WarmSegments::create(dir.path(), 1000, 1), Err(OpenError::InvalidConfig(_))));
        assert!(matches!(
            WarmSegments::create(&dir.path().join("missing"), 64 << 10, 1),
            Err(OpenError::Io(_))
        ));
        let warm = WarmSegments::create(dir.path(), 4096, 1).unwrap();
        let log: CommitLog<parking_lot::RawMutex> =
            CommitLog::over_warm_segments(warm, parking_lot::RawMutex::INIT).unwrap();
        assert!(matches!(log.append_encoded(&mut record(8000)), Err(PutError::TooLargeForSegment { .. })));
    }
}
