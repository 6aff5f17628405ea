//! The emulated CommitLog: the stand-in critical section used when the real store
//! is not selected (`--target emulated`).
//!
//! A put encodes a RocketMQ-shaped record outside the lock (91 bytes of header +
//! topic + body, into a per-thread buffer) and computes the body CRC32, then, under the put-message lock, reads the wall clock for the
//! store timestamp, copies the record into a warm mapping at the log's write
//! position, patches the physical offset and the store timestamp, and advances
//! the position; a record that does not fit before the end of the log's region
//! wraps to its start (a segment roll without the blank). That is the store's
//! critical section (DESIGN.md, "The put path", step 3) minus segment management.
//! `per-topic` layout gives each topic its own region and lock. Flushing follows
//! RocketMQ: async msyncs every 500 ms when at least 4 pages are dirty; sync is a
//! group commit: the put waits until a flush covers it.

use crate::grid::{FlushMode, Layout};
use crate::ring::{PAGE, Ring};
use crate::sweep_lock::SweepLock;
use crate::target::{PutTarget, TargetError};
use crate::timed::Timed;
use lock_api::RawMutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// RocketMQ v1 record overhead with IPv4 hosts, in bytes (DESIGN.md record layout).
pub const RECORD_OVERHEAD: usize = 91;
/// Offset of the physical offset field in a record (after size, magic, body CRC,
/// queue id, flag, queue offset).
const PHYSICAL_OFFSET_AT: usize = 28;
/// Offset of the store timestamp field (after physical offset, sys flag, born
/// timestamp, born host).
const STORE_TIMESTAMP_AT: usize = 56;
/// Offset of the body length field (after reconsume times and prepared transaction offset).
const BODY_LEN_AT: usize = 84;
/// v1 message magic (RocketMQ `MESSAGE_MAGIC_CODE`).
const MAGIC_V1: u32 = 0xDAA3_20A7;
/// Async flush period, RocketMQ `flushIntervalCommitLog` default (ms).
const FLUSH_INTERVAL: Duration = Duration::from_millis(500);
/// Async flush threshold, RocketMQ `flushCommitLogLeastPages` default.
const FLUSH_LEAST_PAGES: u64 = 4;

/// One log: a region of the ring, its lock and its write position.
struct Shard<R> {
    lock: Timed<R>,
    /// Logical write position (bytes ever appended, including wrap skips).
    /// Written only by the lock holder; read by the flusher.
    pos: AtomicU64,
    /// Flushed logical position; touched only by the flusher thread.
    flushed: AtomicU64,
    start: usize,
    len: usize,
}

#[derive(Default)]
struct FlushState {
    requested: u64,
    flushed: u64,
    stop: bool,
}

struct Shared<R> {
    ring: Arc<Ring>,
    shards: Vec<Shard<R>>,
    flush_mode: FlushMode,
    state: Mutex<FlushState>,
    wake_flusher: Condvar,
    flushed_cv: Condvar,
    flushes: AtomicU64,
    flush_failed: AtomicBool,
}

/// The emulated CommitLog over a shared warm [`Ring`] (see the module doc).
pub struct EmulatedLog<R: SweepLock> {
    shared: Arc<Shared<R>>,
    flusher: Option<JoinHandle<()>>,
}

/// A message template: the record as encoded for its topic, and the shard (log) it goes to.
/// Each put re-encodes it into a per-thread buffer and computes the body CRC, outside the lock,
/// as the store's put path does.
#[derive(Debug, Clone)]
pub struct EncodedRecord {
    shard: usize,
    bytes: Vec<u8>,
    body_len: usize,
}

thread_local! {
    static ENCODE_BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl<R: SweepLock> EmulatedLog<R> {
    /// Splits `ring` into one region per log (`topics` logs for `per-topic`, else one),
    /// creates a lock per log with `make_lock`, and starts the flush thread.
    ///
    /// # Errors
    /// [`TargetError::Setup`] if the ring is too small for that many logs (under a page each)
    /// or the flush thread cannot start.
    pub fn new(
        ring: Arc<Ring>,
        layout: Layout,
        topics: usize,
        flush_mode: FlushMode,
        make_lock: &dyn Fn() -> R,
    ) -> Result<EmulatedLog<R>, TargetError> {
        let logs = match layout {
            Layout::Single => 1,
            Layout::PerTopic => topics.max(1),
        };
        let region = ring.len() / logs / PAGE * PAGE;
        if region == 0 {
            return Err(TargetError::Setup(format!(
                "ring of {} bytes cannot hold {logs} logs; raise --ring-mib",
                ring.len()
            )));
        }
        let shards = (0..logs)
            .map(|i| Shard {
                lock: Timed::new(make_lock()),
                pos: AtomicU64::new(0),
                flushed: AtomicU64::new(0),
                start: i * region,
                len: region,
            })
            .collect();
        let shared = Arc::new(Shared {
            ring,
            shards,
            flush_mode,
            state: Mutex::new(FlushState::default()),
            wake_flusher: Condvar::new(),
            flushed_cv: Condvar::new(),
            flushes: AtomicU64::new(0),
            flush_failed: AtomicBool::new(false),
        });
        let s = Arc::clone(&shared);
        let flusher = std::thread::Builder::new()
            .name("emulated-flush".into())
            .spawn(move || flush_loop(&s))
            .map_err(|e| TargetError::Setup(format!("cannot start flush thread: {e}")))?;
        Ok(EmulatedLog { shared, flusher: Some(flusher) })
    }
}

fn flush_loop<R: SweepLock>(s: &Shared<R>) {
    loop {
        let target = {
            let mut st = s.state.lock().unwrap_or_else(PoisonError::into_inner);
            match s.flush_mode {
                FlushMode::Sync => {
                    while st.requested == st.flushed && !st.stop {
                        st = s.wake_flusher.wait(st).unwrap_or_else(PoisonError::into_inner);
                    }
                }
                FlushMode::Async => {
                    if !st.stop {
                        st = s
                            .wake_flusher
                            .wait_timeout(st, FLUSH_INTERVAL)
                            .unwrap_or_else(PoisonError::into_inner)
                            .0;
                    }
                }
            }
            if st.stop {
                return;
            }
            st.requested
        };
        let least = match s.flush_mode {
            FlushMode::Sync => 1,
            FlushMode::Async => FLUSH_LEAST_PAGES * PAGE as u64,
        };
        let mut flushed_any = false;
        for sh in &s.shards {
            // Acquire pairs with the holder's Release store: the copy is in the mapping.
            let end = sh.pos.load(Ordering::Acquire);
            let begin = sh.flushed.load(Ordering::Relaxed);
            if end.saturating_sub(begin) < least {
                continue;
            }
            let region = sh.len as u64;
            let ok = if end - begin >= region {
                s.ring.msync(sh.start, sh.len).is_ok()
            } else {
                let a = (begin % region) as usize;
                let b = (end % region) as usize;
                if a < b {
                    s.ring.msync(sh.start + a, b - a).is_ok()
                } else {
                    s.ring.msync(sh.start + a, sh.len - a).is_ok() && s.ring.msync(sh.start, b).is_ok()
                }
            };
            if !ok {
                s.flush_failed.store(true, Ordering::Relaxed);
            }
            sh.flushed.store(end, Ordering::Relaxed);
            flushed_any = true;
        }
        if flushed_any || s.flush_mode == FlushMode::Sync {
            s.flushes.fetch_add(1, Ordering::Relaxed);
        }
        let mut st = s.state.lock().unwrap_or_else(PoisonError::into_inner);
        st.flushed = target;
        drop(st);
        s.flushed_cv.notify_all();
    }
}

impl<R: SweepLock> Drop for EmulatedLog<R> {
    fn drop(&mut self) {
        {
            let mut st = self.shared.state.lock().unwrap_or_else(PoisonError::into_inner);
            st.stop = true;
        }
        self.shared.wake_flusher.notify_all();
        if let Some(h) = self.flusher.take() {
            let _ = h.join();
        }
    }
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

impl<R: SweepLock> PutTarget<R> for EmulatedLog<R> {
    type Msg = EncodedRecord;

    fn prepare(&self, topic: usize, queue_id: u32, body: &[u8]) -> Result<EncodedRecord, TargetError> {
        let name = format!("topic-{topic}");
        let total = RECORD_OVERHEAD + name.len() + body.len();
        let shard = topic % self.shared.shards.len();
        if total > self.shared.shards[shard].len {
            return Err(TargetError::TooLarge {
                size: total,
                why: format!("larger than the log region of {} bytes", self.shared.shards[shard].len),
            });
        }
        let mut bytes = vec![0u8; total];
        bytes[0..4].copy_from_slice(&(total as u32).to_be_bytes());
        bytes[4..8].copy_from_slice(&MAGIC_V1.to_be_bytes());
        bytes[12..16].copy_from_slice(&queue_id.to_be_bytes());
        bytes[BODY_LEN_AT..BODY_LEN_AT + 4].copy_from_slice(&(body.len() as u32).to_be_bytes());
        let body_at = BODY_LEN_AT + 4;
        bytes[body_at..body_at + body.len()].copy_from_slice(body);
        let topic_at = body_at + body.len();
        bytes[topic_at] = name.len() as u8;
        bytes[topic_at + 1..topic_at + 1 + name.len()].copy_from_slice(name.as_bytes());
        Ok(EncodedRecord { shard, bytes, body_len: body.len() })
    }

    #[inline]
    fn put(&self, msg: &EncodedRecord) -> Result<(), TargetError> {
        ENCODE_BUF.with(|buf| {
            let mut buf = buf.borrow_mut();
            // Outside the lock: encode (copy the template) and checksum the body, as a producer's put does.
            buf.clear();
            buf.extend_from_slice(&msg.bytes);
            let body_at = BODY_LEN_AT + 4;
            let crc = crc32fast::hash(&buf[body_at..body_at + msg.body_len]) & 0x7FFF_FFFF;
            buf[8..12].copy_from_slice(&crc.to_be_bytes());
            self.append(msg.shard, &buf)
        })
    }

    fn for_each_put_lock(&self, f: &mut dyn FnMut(&Timed<R>)) {
        for sh in &self.shared.shards {
            f(&sh.lock);
        }
    }

    fn flushes(&self) -> Option<u64> {
        Some(self.shared.flushes.load(Ordering::Relaxed))
    }
}

impl<R: SweepLock> EmulatedLog<R> {
    /// The critical section (and, in sync mode, the wait for the group commit).
    #[inline]
    fn append(&self, shard: usize, rec: &[u8]) -> Result<(), TargetError> {
        let s = &*self.shared;
        let sh = &s.shards[shard];
        let guard = sh.lock.lock();
        let stamp = now_ms();
        let mut pos = sh.pos.load(Ordering::Relaxed);
        let mut at = (pos % sh.len as u64) as usize;
        if at + rec.len() > sh.len {
            pos += (sh.len - at) as u64;
            at = 0;
        }
        // SAFETY: `sh.start + at + rec.len() <= sh.start + sh.len <= ring.len()` (checked
        // above and in `prepare`), so the range is inside the mapping; this shard's byte
        // range is written only by the holder of `sh.lock`, which we hold, and the
        // record buffer is a separate heap allocation, so the copy does not overlap.
        unsafe {
            let dst = s.ring.base().add(sh.start + at);
            std::ptr::copy_nonoverlapping(rec.as_ptr(), dst, rec.len());
            std::ptr::copy_nonoverlapping(pos.to_be_bytes().as_ptr(), dst.add(PHYSICAL_OFFSET_AT), 8);
            std::ptr::copy_nonoverlapping(stamp.to_be_bytes().as_ptr(), dst.add(STORE_TIMESTAMP_AT), 8);
        }
        let end = pos + rec.len() as u64;
        sh.pos.store(end, Ordering::Release);
        // SAFETY: `guard` is the state `sh.lock.lock()` returned above, unlocked once.
        unsafe { sh.lock.unlock(guard) };

        if s.flush_mode == FlushMode::Sync {
            let mut st = s.state.lock().unwrap_or_else(PoisonError::into_inner);
            st.requested += 1;
            let mine = st.requested;
            s.wake_flusher.notify_one();
            while st.flushed < mine && !st.stop {
                st = s.flushed_cv.wait(st).unwrap_or_else(PoisonError::into_inner);
            }
            if s.flush_failed.load(Ordering::Relaxed) {
                return Err(TargetError::Store("msync failed".into()));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn puts_land_in_the_ring_and_sync_flush_counts_group_commits() {
        let dir = tempfile::tempdir().unwrap();
        let ring = Arc::new(Ring::create(dir.path(), "ring", 64 * 1024).unwrap());
        let log = EmulatedLog::<parking_lot::RawMutex>::new(
            Arc::clone(&ring),
            Layout::Single,
            1,
            FlushMode::Sync,
            &|| parking_lot::RawMutex::INIT,
        )
        .unwrap();
        let rec = log.prepare(0, 0, &[7u8; 100]).unwrap();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..500 {
                        log.put(&rec).unwrap();
                    }
                });
            }
        });
        let flushes = log.flushes().unwrap();
        assert!((1..=2000).contains(&flushes), "{flushes}");
        // SAFETY: all writers have finished (scope joined); we only read the first record.
        let first = unsafe { std::slice::from_raw_parts(ring.base(), 8) };
        assert_eq!(&first[0..4], &(rec.bytes.len() as u32).to_be_bytes());
        assert_eq!(&first[4..8], &MAGIC_V1.to_be_bytes());
    }

    #[test]
    fn per_topic_splits_the_ring_and_rejects_oversized_records() {
        let dir = tempfile::tempdir().unwrap();
        let ring = Arc::new(Ring::create(dir.path(), "ring", 16 * PAGE).unwrap());
        let log =
            EmulatedLog::<parking_lot::RawMutex>::new(ring, Layout::PerTopic, 4, FlushMode::Async, &|| {
                parking_lot::RawMutex::INIT
            })
            .unwrap();
        let mut locks = 0;
        log.for_each_put_lock(&mut |_| locks += 1);
        assert_eq!(locks, 4);
        assert!(matches!(log.prepare(1, 0, &vec![0; 5 * PAGE]), Err(TargetError::TooLarge { .. })));
        let r = log.prepare(5, 0, &[1; 10]).unwrap();
        assert_eq!(r.shard, 1);
    }
}
