//! Commitlog segments: fixed-size, memory-mapped files named by their 20-digit start
//! offset (RocketMQ `MappedFile`), the pooled write buffers (RocketMQ
//! `TransientStorePool`) and the background preallocator (RocketMQ
//! `AllocateMappedFileService`).

mod pool;
mod preallocate;

pub(crate) use pool::BufferPool;
pub(crate) use preallocate::Preallocator;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use memmap2::{Advice, MmapRaw};

use crate::config::{PAGE_SIZE, WarmUp};
use crate::io::fault::FaultPoint;
use crate::io::{FileOps, FsResult};

/// The 20-digit, zero-padded file name of a file starting at `offset` (RocketMQ's naming).
pub(crate) fn file_name(offset: u64) -> String {
    format!("{offset:020}")
}

/// Parses a 20-digit file name; anything else is not ours.
pub(crate) fn parse_file_name(name: &str) -> Option<u64> {
    if name.len() == 20 && name.bytes().all(|b| b.is_ascii_digit()) { name.parse().ok() } else { None }
}

/// One commitlog segment: `[start, start + size)` of the log.
///
/// Concurrency: bytes below the log's published write (or commit) position are immutable and
/// read by any thread; bytes at and above it are written only by the put-message critical
/// section (which holds the put lock). The two ranges never overlap, so readers and the
/// writer never touch the same byte.
pub(crate) struct Segment {
    start: u64,
    size: u64,
    path: PathBuf,
    file: File,
    map: MmapRaw,
    /// Where the critical section copies to: the pooled buffer if the segment has one,
    /// else the mapping. Fixed at creation.
    write_ptr: *mut u8,
    /// The pooled write buffer, until the commit thread has copied all of it to the file
    /// and returned it to the pool.
    buffer: Mutex<Option<MmapRaw>>,
    has_buffer: bool,
}

// SAFETY: `write_ptr` points into `map` or into the buffer owned by `buffer`, both of which
// live as long as the segment (a buffer is only returned to the pool after the segment is
// full and committed, when no writer uses `write_ptr` again). Writes through it happen only
// under the put-message lock, on bytes no reader reads (see the type's doc).
unsafe impl Send for Segment {}
// SAFETY: as for `Send`: shared access is reads of published bytes and writes under the put lock.
unsafe impl Sync for Segment {}

impl std::fmt::Debug for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Segment").field("start", &self.start).field("size", &self.size).finish()
    }
}

impl Segment {
    /// Creates `dir/{start:020}` with `size` bytes reserved, maps it and borrows a pooled
    /// write buffer. Warming is separate ([`warm_up`](Self::warm_up)), so a segment can be
    /// handed out before it is warm.
    pub(crate) fn create(
        fs: &FileOps,
        dir: &Path,
        start: u64,
        size: u64,
        pool: Option<&BufferPool>,
    ) -> FsResult<Segment> {
        let path = dir.join(file_name(start));
        let file = fs.create_reserved(&path, size, FaultPoint::SegmentCreate)?;
        let map = match fs.map(&file, &path, size as usize) {
            Ok(m) => m,
            Err(e) => {
                let _ = fs.remove_file(&path);
                return Err(e);
            }
        };
        let buffer = pool.and_then(BufferPool::borrow);
        Ok(Self::assemble(start, size, path, file, map, buffer))
    }

    /// Opens and maps an existing segment file (recovery).
    pub(crate) fn open(fs: &FileOps, path: PathBuf, start: u64, size: u64) -> FsResult<Segment> {
        let file = fs.open_rw(&path)?;
        let map = fs.map(&file, &path, size as usize)?;
        Ok(Self::assemble(start, size, path, file, map, None))
    }

    fn assemble(
        start: u64,
        size: u64,
        path: PathBuf,
        file: File,
        map: MmapRaw,
        buffer: Option<MmapRaw>,
    ) -> Segment {
        let write_ptr = buffer.as_ref().map_or(map.as_mut_ptr(), MmapRaw::as_mut_ptr);
        let has_buffer = buffer.is_some();
        Segment { start, size, path, file, map, write_ptr, buffer: Mutex::new(buffer), has_buffer }
    }

    /// First physical offset of the segment.
    pub(crate) fn start(&self) -> u64 {
        self.start
    }

    /// One past the last physical offset of the segment.
    pub(crate) fn end(&self) -> u64 {
        self.start + self.size
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The open segment file (for `sendfile`).
    pub(crate) fn file(&self) -> &File {
        &self.file
    }

    pub(crate) fn has_buffer(&self) -> bool {
        self.has_buffer
    }

    /// The mapped bytes `[rel, rel + len)` of the file.
    ///
    /// # Safety
    /// The range must lie within the segment and below the published readable position (no
    /// concurrent writer), for as long as the returned slice lives.
    pub(crate) unsafe fn bytes(&self, rel: usize, len: usize) -> &[u8] {
        debug_assert!(rel as u64 + len as u64 <= self.size);
        // SAFETY: the caller guarantees the range is in bounds of the mapping and not written
        // concurrently; the mapping lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().add(rel), len) }
    }

    /// Copies `data` to `rel` in the write target (pooled buffer or mapping).
    ///
    /// # Safety
    /// Caller holds the put-message lock (sole writer), `rel + data.len() <= size`, and
    /// `[rel, rel + len)` is above every published readable position.
    #[inline]
    pub(crate) unsafe fn write(&self, rel: usize, data: &[u8]) {
        debug_assert!(rel as u64 + data.len() as u64 <= self.size);
        // SAFETY: in bounds by the caller's contract; `write_ptr` is valid for `size` bytes
        // (see the `Send` impl); source and target never overlap: the source is a private
        // buffer or a message body, both heap memory, never a segment or pooled buffer.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.write_ptr.add(rel), data.len()) }
    }

    /// Ends the segment at `rel` with the blank record ([`codec::write_blank`](crate::codec::write_blank)):
    /// `[rel, size)` holds no record.
    ///
    /// # Safety
    /// As [`write`](Self::write) for the range `[rel, size)`, and `size - rel >= 8`.
    pub(crate) unsafe fn write_blank(&self, rel: usize) {
        let len = self.size as usize - rel;
        // SAFETY: `[rel, size)` lies inside the write target, which is valid for `size`
        // bytes; the caller holds the put lock and no reader reads above the write position.
        let space = unsafe { std::slice::from_raw_parts_mut(self.write_ptr.add(rel), len) };
        crate::codec::write_blank(space);
    }

    /// Address the critical section writes offset `rel` to (a prefetch hint only).
    #[inline]
    pub(crate) fn write_addr(&self, rel: usize) -> usize {
        self.write_ptr as usize + rel
    }

    /// The pooled buffer's bytes `[rel, rel + len)`, for the commit thread.
    ///
    /// # Safety
    /// The range lies below the published write position (written, no concurrent writer).
    pub(crate) unsafe fn buffered(&self, rel: usize, len: usize) -> &[u8] {
        // SAFETY: `write_ptr` is valid for `size` bytes; the range is in bounds and not
        // being written, by the caller's contract.
        unsafe { std::slice::from_raw_parts(self.write_ptr.add(rel), len) }
    }

    /// Commits `[rel, rel + len)` of the pooled buffer to the file with `pwrite`.
    pub(crate) fn commit(&self, fs: &FileOps, rel: usize, len: usize) -> FsResult<()> {
        // SAFETY: the commit thread only commits below the published write position.
        let data = unsafe { self.buffered(rel, len) };
        fs.write_at(&self.file, &self.path, rel as u64, data)
    }

    /// Returns the pooled buffer once the segment is full and fully committed.
    pub(crate) fn release_buffer(&self, pool: &BufferPool) {
        let taken = self.buffer.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        if let Some(buf) = taken {
            pool.give_back(buf);
        }
    }

    /// `msync` of `[rel, rel + len)`.
    pub(crate) fn sync(&self, fs: &FileOps, rel: usize, len: usize) -> FsResult<()> {
        fs.sync_map(&self.map, &self.path, rel, len)
    }

    /// Moves the segment's file into `dir` under its own name (the mapping and descriptor
    /// stay valid: a rename does not touch the data).
    pub(crate) fn relocate(&mut self, fs: &FileOps, dir: &Path) -> FsResult<()> {
        let to = dir.join(file_name(self.start));
        fs.rename(&self.path, &to)?;
        self.path = to;
        Ok(())
    }

    /// Zeroes `[0, len)` through the mapping (no sync), for a segment no other thread uses.
    pub(crate) fn zero_head(&mut self, len: usize) {
        let len = len.min(self.size as usize);
        // SAFETY: `[0, len)` lies inside the mapping; `&mut self` means no log, reader or
        // writer holds the segment.
        unsafe { std::ptr::write_bytes(self.map.as_mut_ptr(), 0, len) }
    }

    /// Zeroes `[rel, size)` in the mapping (skipping pages already zero) and syncs it, so no
    /// stale record past a recovered write position can ever be replayed.
    pub(crate) fn zero_tail(&self, fs: &FileOps, rel: usize) -> FsResult<()> {
        let size = self.size as usize;
        let mut at = rel;
        let mut dirty = false;
        while at < size {
            let chunk = (PAGE_SIZE as usize - at % PAGE_SIZE as usize).min(size - at);
            // SAFETY: `[at, at + chunk)` is inside the mapping; recovery runs before any other
            // thread can reach the segment.
            let page = unsafe { std::slice::from_raw_parts_mut(self.map.as_mut_ptr().add(at), chunk) };
            if page.iter().any(|&b| b != 0) {
                page.fill(0);
                dirty = true;
            }
            at += chunk;
        }
        if dirty { self.sync(fs, rel, size - rel) } else { Ok(()) }
    }
}

impl Segment {
    /// Prefaults every page of the mapping writable (`madvise(MADV_POPULATE_WRITE)`, Linux
    /// 5.14+; else `MADV_WILLNEED`), optionally `mlock`s it (RocketMQ's
    /// `warmMappedFile` writes a zero into every page instead). The kernel does the work
    /// without reading or writing a byte of the data, so it is safe while the put path
    /// already writes the segment: a roll never has to wait for warming to finish.
    pub(crate) fn warm_up(&self, fs: &FileOps, warm: WarmUp) {
        fs.pass(FaultPoint::SegmentWarm);
        // Advice and mlock are hints: failure costs page faults, not correctness.
        if self.map.advise(Advice::PopulateWrite).is_err() {
            let _ = self.map.advise(Advice::WillNeed);
        }
        if warm.mlock {
            let _ = self.map.lock();
        }
    }
}
