//! Consume queues: per (topic, queue id), an array of 20-byte entries indexed by queue
//! offset, in files `consumequeue/{topic}/{queue}/{20-digit start byte}` (RocketMQ
//! `ConsumeQueue`). Entry: commitlog physical offset (8), size (4), tag hash (8), big-endian.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use memmap2::MmapRaw;

use crate::append_only::AppendOnly;
use crate::io::fault::FaultPoint;
use crate::io::{FileOps, FsResult};
use crate::segment::{file_name, parse_file_name};
use crate::topic_queue::FastMap;

/// Bytes per consume-queue entry (RocketMQ `CQ_STORE_UNIT_SIZE`).
pub(crate) const ENTRY_LEN: u64 = crate::codec::CQ_ENTRY_SIZE as u64;

/// One consume-queue entry (the codec owns its 20-byte layout).
pub(crate) use crate::codec::ConsumeQueueEntry as Entry;

struct CqFile {
    path: PathBuf,
    map: MmapRaw,
}

/// One (topic, queue id) consume queue. One writer (the dispatcher, under the dispatch
/// lock); readers read entries below `len`.
pub(crate) struct ConsumeQueue {
    dir: PathBuf,
    fs: FileOps,
    per_file: u64,
    /// File `i` holds entries `[i * per_file, (i + 1) * per_file)`; append-only while open.
    files: AppendOnly<CqFile>,
    len: AtomicU64,
    flushed_len: AtomicU64,
    /// First readable queue offset (RocketMQ `ConsumeQueue.minLogicOffset`): entries below
    /// point at commitlog segments retention deleted.
    min: AtomicU64,
    /// Leading files whose blocks retention released (this run).
    released_files: AtomicU64,
}

impl ConsumeQueue {
    fn file_bytes(&self) -> u64 {
        self.per_file * ENTRY_LEN
    }

    /// Opens the queue at `dir`. Any file that is not exactly as we write them makes the
    /// whole queue be rebuilt: returns `Ok(None)` after removing its files.
    pub(crate) fn open(fs: &FileOps, dir: PathBuf, per_file: u64) -> FsResult<Option<ConsumeQueue>> {
        let mut named = Vec::new();
        let mut bad = false;
        for (name, path, ft) in fs.list_dir(&dir)? {
            if name.ends_with(".tmp") {
                fs.remove_file(&path)?;
                continue;
            }
            match parse_file_name(&name) {
                Some(start) if ft.is_file() => named.push((start, path)),
                _ => {} // not ours
            }
        }
        named.sort();
        let cq = ConsumeQueue::empty(fs, dir, per_file);
        let mut files = Vec::new();
        for (i, (start, path)) in named.iter().enumerate() {
            if *start != i as u64 * cq.file_bytes() {
                bad = true;
                break;
            }
            let file = fs.open_rw(path)?;
            if fs.file_len(&file, path)? != cq.file_bytes() {
                bad = true;
                break;
            }
            let map = fs.map(&file, path, cq.file_bytes() as usize)?;
            files.push(Arc::new(CqFile { path: path.clone(), map }));
        }
        if bad {
            drop(files);
            for (_, path) in &named {
                fs.remove_file(path)?;
            }
            return Ok(None);
        }
        let n = files.len() as u64 * per_file;
        let cq = ConsumeQueue { files: AppendOnly::new(files), ..cq };
        cq.len.store(n, Ordering::Release);
        Ok(Some(cq))
    }

    pub(crate) fn empty(fs: &FileOps, dir: PathBuf, per_file: u64) -> ConsumeQueue {
        ConsumeQueue {
            dir,
            fs: fs.clone(),
            per_file,
            files: AppendOnly::default(),
            len: AtomicU64::new(0),
            flushed_len: AtomicU64::new(0),
            min: AtomicU64::new(0),
            released_files: AtomicU64::new(0),
        }
    }

    /// Number of entries (the next queue offset).
    pub(crate) fn len(&self) -> u64 {
        self.len.load(Ordering::Acquire)
    }

    fn file(&self, idx: u64) -> Option<&CqFile> {
        self.files.get(usize::try_from(idx).ok()?)
    }

    fn slot(&self, qo: u64) -> Option<(&CqFile, usize)> {
        let f = self.file(qo / self.per_file)?;
        Some((f, ((qo % self.per_file) * ENTRY_LEN) as usize))
    }

    /// Entry `qo` as stored, whether or not it is below `len` (recovery).
    fn raw_entry(&self, qo: u64) -> Option<Entry> {
        let (f, at) = self.slot(qo)?;
        // SAFETY: `at + 20 <= file size`; entries are written only by the dispatcher, and this
        // is called by readers below `len` (published after the write) or during recovery.
        let b = unsafe { std::slice::from_raw_parts(f.map.as_ptr().add(at), ENTRY_LEN as usize) };
        let mut raw = [0u8; ENTRY_LEN as usize];
        raw.copy_from_slice(b);
        Some(Entry::from_bytes(&raw))
    }

    /// Entry at queue offset `qo`, if dispatched.
    pub(crate) fn entry(&self, qo: u64) -> Option<Entry> {
        if qo >= self.len() {
            return None;
        }
        self.raw_entry(qo)
    }

    /// Writes entry `qo` (dispatcher only); returns whether it wrote. Idempotent: an
    /// identical entry is left alone; a different one (stale, from before a truncation, or
    /// damaged) is replaced and the queue cut after it.
    pub(crate) fn put(&self, qo: u64, e: Entry) -> FsResult<bool> {
        let len = self.len();
        if qo < len && self.raw_entry(qo) == Some(e) {
            return Ok(false);
        }
        let idx = qo / self.per_file;
        loop {
            let have = self.files.len() as u64;
            if have > idx {
                break;
            }
            let path = self.dir.join(file_name(have * self.file_bytes()));
            self.fs.create_dir_all(&self.dir)?;
            let file = self.fs.create_reserved(&path, self.file_bytes(), FaultPoint::ConsumeQueueCreate)?;
            let map = self.fs.map(&file, &path, self.file_bytes() as usize)?;
            self.files.push(Arc::new(CqFile { path, map }));
        }
        if qo + 1 < len {
            self.truncate(qo + 1)?;
        }
        let Some((f, at)) = self.slot(qo) else { return Ok(false) };
        let b = e.to_bytes();
        // SAFETY: `at + 20 <= file size`; the dispatcher is the only writer, and entry `qo`
        // is not below the published `len` unless it is being replaced (readers then see the
        // old or new entry, both pointing at valid records or checked by decode).
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), f.map.as_mut_ptr().add(at), b.len()) };
        if qo + 1 > self.len() {
            self.len.store(qo + 1, Ordering::Release);
        }
        Ok(true)
    }

    /// Cuts the queue to `new_len` entries, zeroing the cut entries so they cannot come
    /// back; returns how many of them were not zero.
    pub(crate) fn truncate(&self, new_len: u64) -> FsResult<u64> {
        let mut removed = 0;
        let old = self.files.len() as u64 * self.per_file;
        self.len.store(new_len.min(self.len()), Ordering::Release);
        let mut qo = new_len;
        while qo < old {
            let Some((f, at)) = self.slot(qo) else { break };
            let n = (self.per_file - qo % self.per_file) as usize * ENTRY_LEN as usize;
            // SAFETY: `[at, at + n)` is the rest of this file; no reader reads past `len`,
            // which was lowered first.
            let s = unsafe { std::slice::from_raw_parts_mut(f.map.as_mut_ptr().add(at), n) };
            if s.iter().any(|&b| b != 0) {
                removed +=
                    s.chunks_exact(ENTRY_LEN as usize).filter(|e| e.iter().any(|&b| b != 0)).count() as u64;
                s.fill(0);
                self.fs.sync_map(&f.map, &f.path, at, n)?;
            }
            qo += n as u64 / ENTRY_LEN;
        }
        self.flushed_len.store(self.flushed_len.load(Ordering::Acquire).min(new_len), Ordering::Release);
        Ok(removed)
    }

    /// First readable queue offset.
    pub(crate) fn min_offset(&self) -> u64 {
        self.min.load(Ordering::Acquire)
    }

    /// Raises the first readable queue offset to the first entry whose record starts at or
    /// after `min_physical` (all entries if none does). Entries increase in physical
    /// offset, and zeroed entries (released files, or a queue rebuilt from a log whose
    /// front was deleted) form a prefix, so a binary search finds it.
    pub(crate) fn follow_min_physical(&self, min_physical: u64) -> u64 {
        let below =
            |qo: u64| self.raw_entry(qo).is_none_or(|e| e.size == 0 || e.physical_offset < min_physical);
        let (mut lo, mut hi) = (self.min_offset(), self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if below(mid) { lo = mid + 1 } else { hi = mid }
        }
        self.min.fetch_max(lo, Ordering::AcqRel);
        self.min_offset()
    }

    /// Length of the queue as far as its entries point wholly below `min_physical` (the
    /// log's first readable offset): one past its last non-zero entry if that entry lies
    /// below `min_physical`, else 0. At open, the log no longer holds those records, so the
    /// entries are what keeps the queue's length (and next queue offset) after retention.
    pub(crate) fn deleted_len(&self, min_physical: u64) -> u64 {
        let mut qo = self.files.len() as u64 * self.per_file;
        while qo > 0 {
            match self.raw_entry(qo - 1) {
                Some(e) if e == Entry::default() => qo -= 1,
                Some(e)
                    if e.size > 0 && e.physical_offset.saturating_add(u64::from(e.size)) <= min_physical =>
                {
                    return qo;
                }
                _ => return 0,
            }
        }
        0
    }

    /// Releases the blocks of the leading files whose entries are all below the first
    /// readable queue offset, oldest first; returns how many it released. The files keep
    /// their size and read as zeros. The files holding the last two entries are kept
    /// whatever the minimum: the queue's length is found by its last entry at open (see
    /// [`Self::deleted_len`]).
    pub(crate) fn release_files_below_min(&self) -> FsResult<u64> {
        let keep_from = self.len().saturating_sub(2) / self.per_file;
        let whole = (self.min_offset() / self.per_file).min(keep_from);
        let mut released = 0;
        let mut idx = self.released_files.load(Ordering::Acquire);
        while idx < whole {
            let Some(f) = self.file(idx) else { break };
            self.fs.release_blocks(&f.path)?;
            idx += 1;
            released += 1;
            self.released_files.store(idx, Ordering::Release);
        }
        Ok(released)
    }

    /// msyncs entries written since the last flush.
    pub(crate) fn flush(&self) -> FsResult<()> {
        let len = self.len();
        let mut at = self.flushed_len.load(Ordering::Acquire);
        while at < len {
            let Some((f, off)) = self.slot(at) else { break };
            let upto = len.min((at / self.per_file + 1) * self.per_file);
            self.fs.sync_map(&f.map, &f.path, off, ((upto - at) * ENTRY_LEN) as usize)?;
            at = upto;
        }
        self.flushed_len.store(len, Ordering::Release);
        Ok(())
    }
}

/// All consume queues of one log.
pub(crate) struct ConsumeQueues {
    root: PathBuf,
    fs: FileOps,
    per_file: u64,
    queues: RwLock<FastMap<String, FastMap<u32, Arc<ConsumeQueue>>>>,
}

impl ConsumeQueues {
    /// Opens every queue under `root` (`consumequeue/`). Returns the queues and whether a
    /// damaged queue was dropped (then the log must be re-dispatched from its start).
    pub(crate) fn open(fs: &FileOps, root: PathBuf, per_file: u64) -> FsResult<(ConsumeQueues, bool)> {
        let mut queues: FastMap<String, FastMap<u32, Arc<ConsumeQueue>>> = FastMap::default();
        let mut dropped = false;
        for (topic, tdir, ft) in fs.list_dir(&root)? {
            if !ft.is_dir() {
                continue;
            }
            for (qname, qdir, ft) in fs.list_dir(&tdir)? {
                let Ok(qid) = qname.parse::<u32>() else { continue };
                if !ft.is_dir() {
                    continue;
                }
                match ConsumeQueue::open(fs, qdir, per_file)? {
                    Some(cq) => {
                        queues.entry(topic.clone()).or_default().insert(qid, Arc::new(cq));
                    }
                    None => dropped = true,
                }
            }
        }
        Ok((ConsumeQueues { root, fs: fs.clone(), per_file, queues: RwLock::new(queues) }, dropped))
    }

    pub(crate) fn get(&self, topic: &str, queue_id: u32) -> Option<Arc<ConsumeQueue>> {
        self.queues.read().unwrap_or_else(PoisonError::into_inner).get(topic)?.get(&queue_id).cloned()
    }

    pub(crate) fn get_or_create(&self, topic: &str, queue_id: u32) -> Arc<ConsumeQueue> {
        if let Some(q) = self.get(topic, queue_id) {
            return q;
        }
        let mut w = self.queues.write().unwrap_or_else(PoisonError::into_inner);
        let dir = self.root.join(topic).join(queue_id.to_string());
        Arc::clone(
            w.entry(topic.to_owned())
                .or_default()
                .entry(queue_id)
                .or_insert_with(|| Arc::new(ConsumeQueue::empty(&self.fs, dir, self.per_file))),
        )
    }

    /// Every queue with its topic and id.
    pub(crate) fn all(&self) -> Vec<(String, u32, Arc<ConsumeQueue>)> {
        let r = self.queues.read().unwrap_or_else(PoisonError::into_inner);
        r.iter().flat_map(|(t, qs)| qs.iter().map(|(q, cq)| (t.clone(), *q, Arc::clone(cq)))).collect()
    }

    pub(crate) fn flush(&self) -> FsResult<()> {
        for (_, _, cq) in self.all() {
            cq.flush()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(phys: u64) -> Entry {
        Entry { physical_offset: phys, size: 10, tag_hash: phys as i64 }
    }

    #[test]
    fn put_is_idempotent_and_replaces_stale_entries() {
        let dir = tempfile::tempdir().unwrap();
        let fs = FileOps::default();
        let cq = ConsumeQueue::empty(&fs, dir.path().join("q"), 4);
        for i in 0..10 {
            cq.put(i, e(i * 10)).unwrap();
        }
        assert_eq!(cq.len(), 10);
        assert_eq!(cq.entry(9), Some(e(90)));
        // Same entry again: nothing changes.
        cq.put(3, e(30)).unwrap();
        assert_eq!(cq.len(), 10);
        // A different entry at 3 (stale tail): replaced, the queue cut after it.
        cq.put(3, e(31)).unwrap();
        assert_eq!(cq.len(), 4);
        assert_eq!(cq.entry(3), Some(e(31)));
        assert_eq!(cq.entry(4), None);
        assert_eq!(cq.raw_entry(5), Some(Entry::default()), "cut entries are zeroed");
    }

    #[test]
    fn truncate_cuts_entries_and_reopens() {
        let dir = tempfile::tempdir().unwrap();
        let fs = FileOps::default();
        let qdir = dir.path().join("q");
        {
            let cq = ConsumeQueue::empty(&fs, qdir.clone(), 4);
            for i in 0..9 {
                cq.put(i, e(i * 10)).unwrap();
            }
            cq.flush().unwrap();
        }
        let cq = ConsumeQueue::open(&fs, qdir.clone(), 4).unwrap().expect("well formed");
        assert_eq!(cq.len(), 12, "whole files until the log says otherwise");
        assert_eq!(cq.truncate(5).unwrap(), 4, "entries 5..=8 were written");
        assert_eq!(cq.len(), 5);
        assert_eq!(cq.entry(4), Some(e(40)));
        // A file of the wrong size makes the queue be rebuilt.
        std::fs::write(qdir.join(file_name(0)), [1u8; 7]).unwrap();
        drop(cq);
        assert!(ConsumeQueue::open(&fs, qdir.clone(), 4).unwrap().is_none());
        assert!(std::fs::read_dir(&qdir).unwrap().next().is_none(), "its files are removed");
    }
}
