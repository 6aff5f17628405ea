//! Background creation of the next segments (RocketMQ `AllocateMappedFileService`, which
//! keeps the next and the next-next file ready), so the roll inside the put-message
//! critical section takes a ready segment instead of creating, reserving and mapping a
//! file.
//!
//! A put holding the put-message lock never waits for this thread (ours; RocketMQ's roll
//! waits for `AllocateMappedFileService` inside the lock, and spinning waiters can then
//! starve it of CPU): [`Preallocator::take_ready`] only takes a segment that is ready
//! (`try_lock`, no wait), and a segment is ready as soon as its file is mapped, while
//! warming continues on this thread (see `Segment::warm_up`). When none is ready the put
//! leaves the lock and calls [`Preallocator::ensure`], which waits for this thread or
//! creates the segment itself, and then retries.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use super::{BufferPool, Segment};
use crate::config::WarmUp;
use crate::io::{FileOps, FsResult};

#[derive(Default)]
struct State {
    /// Start offset of the next segment the thread should prepare: the end of the last
    /// ready one, or the offset the next roll will ask for. `None`: prepare nothing.
    next: Option<u64>,
    /// Prepared segments, contiguous and in order, not yet handed out (maybe still warming).
    ready: VecDeque<Arc<Segment>>,
    /// Start offset of the segment being created (by the thread or by [`Preallocator::ensure`]).
    busy: Option<u64>,
    /// Every segment below this offset has been handed out (or was in the log at open):
    /// creating one of them again would replace a file the log is writing.
    handed_out: u64,
    shutdown: bool,
}

struct Shared {
    state: Mutex<State>,
    cv: Condvar,
    fs: FileOps,
    dir: PathBuf,
    size: u64,
    warm: WarmUp,
    pool: Option<Arc<BufferPool>>,
    /// Segments kept ready ahead of the current one (at least 1).
    ahead: usize,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn create(&self, start: u64) -> FsResult<Segment> {
        Segment::create(&self.fs, &self.dir, start, self.size, self.pool.as_deref())
    }
}

/// Hands out new segments, prepared ahead on a background thread when enabled.
pub(crate) struct Preallocator {
    shared: Arc<Shared>,
    background: bool,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Preallocator {
    /// `ahead`: segments to keep ready (RocketMQ prepares 2: the next and the next-next
    /// file); 0 is taken as 1. Ignored without `background`.
    pub(crate) fn new(
        fs: FileOps,
        dir: PathBuf,
        size: u64,
        warm: WarmUp,
        pool: Option<Arc<BufferPool>>,
        background: bool,
        ahead: usize,
    ) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            cv: Condvar::new(),
            fs,
            dir,
            size,
            warm,
            pool,
            ahead: ahead.max(1),
        });
        let thread = if background {
            let s = Arc::clone(&shared);
            Some(
                std::thread::Builder::new()
                    .name("abslock-store-preallocate".into())
                    .spawn(move || run(&s))?,
            )
        } else {
            None
        };
        Ok(Self { shared, background, thread: Mutex::new(thread) })
    }

    /// The ready segment starting at `start`, if there is one right now; never waits (the
    /// state lock is only tried). Called on a roll, inside the put-message lock: no
    /// syscall, no allocation (popping from the ring allocates nothing).
    pub(crate) fn take_ready(&self, start: u64) -> Option<Arc<Segment>> {
        let mut st = self.shared.state.try_lock().ok()?;
        if st.ready.front().is_some_and(|seg| seg.start() == start) {
            st.handed_out = start + self.shared.size;
            // The caller calls `refill` once out of the put-message lock (a wake-up is a syscall).
            return st.ready.pop_front();
        }
        None
    }

    /// Lets the thread top up the ready segments after a [`take_ready`](Self::take_ready).
    pub(crate) fn refill(&self) {
        self.shared.cv.notify_all();
    }

    /// Makes the segment starting at `start` ready: waits while it is being created,
    /// creates it on this thread if nobody is. Called outside the put-message lock. A
    /// `start` already handed out (another put rolled meanwhile) is left alone: the caller
    /// retries and finds its segment current.
    pub(crate) fn ensure(&self, start: u64) -> FsResult<()> {
        let s = &*self.shared;
        let mut st = s.lock();
        loop {
            if start < st.handed_out || st.ready.front().is_some_and(|seg| seg.start() == start) {
                return Ok(());
            }
            if st.busy.is_none() {
                break;
            }
            st = s.cv.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
        // Ready segments for other offsets are stale; dropping unmaps them, their files
        // (all zeros, past the write position) are removed by the next recovery.
        let stale: Vec<Arc<Segment>> = st.ready.drain(..).collect();
        // Nothing for the thread to prepare while this thread creates `start`, so the two
        // never create the same file.
        st.next = None;
        st.busy = Some(start);
        drop(st);
        drop(stale);
        let created = s.create(start);
        let mut st = s.lock();
        st.busy = None;
        let result = match created {
            Ok(seg) => {
                if self.background {
                    st.next = Some(seg.end());
                }
                st.ready.push_back(Arc::new(seg));
                Ok(())
            }
            Err(e) => Err(e),
        };
        s.cv.notify_all();
        result
    }

    /// Returns the segment starting at `start`, warmed if warming is on (at open, on the
    /// caller's thread, before any put).
    pub(crate) fn obtain(&self, start: u64) -> FsResult<Arc<Segment>> {
        loop {
            self.ensure(start)?;
            let mut st = self.shared.lock();
            if st.ready.front().is_some_and(|seg| seg.start() == start)
                && let Some(seg) = st.ready.pop_front()
            {
                st.handed_out = start + self.shared.size;
                self.shared.cv.notify_all();
                drop(st);
                if self.shared.warm.enabled {
                    seg.warm_up(&self.shared.fs, self.shared.warm);
                }
                return Ok(seg);
            }
        }
    }

    /// Asks the thread to prepare segments from `start` on (after open: the log's
    /// segments end at `start`).
    pub(crate) fn prepare(&self, start: u64) {
        let mut st = self.shared.lock();
        st.handed_out = st.handed_out.max(start);
        if self.background {
            if st.ready.front().is_none_or(|seg| seg.start() != start) {
                st.ready.clear();
                st.next = Some(start);
            }
            self.shared.cv.notify_all();
        }
    }

    /// Adds already created segments to the ready queue, after any ready ones (a standalone
    /// log hands its warm segments over here so its rolls take them). The caller keeps them
    /// contiguous: each starts where the previous ready one ends.
    pub(crate) fn stock(&self, segments: impl IntoIterator<Item = Segment>) {
        let mut st = self.shared.lock();
        st.ready.extend(segments.into_iter().map(Arc::new));
        self.shared.cv.notify_all();
    }

    /// Takes the ready segments out of the queue (a standalone log gives them back).
    pub(crate) fn drain_ready(&self) -> Vec<Segment> {
        let mut st = self.shared.lock();
        st.ready.drain(..).filter_map(|s| Arc::try_unwrap(s).ok()).collect()
    }

    /// Stops the thread and drops the prepared segments (their files stay, all zeros, and
    /// are removed by the next open).
    pub(crate) fn shutdown(&self) {
        {
            let mut st = self.shared.lock();
            st.shutdown = true;
            st.ready.clear();
            self.shared.cv.notify_all();
        }
        if let Some(t) = self.thread.lock().unwrap_or_else(PoisonError::into_inner).take() {
            let _ = t.join();
        }
    }
}

impl Drop for Preallocator {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn run(s: &Shared) {
    let mut st = s.lock();
    loop {
        if st.shutdown {
            return;
        }
        let want = match st.next {
            Some(w) if st.ready.len() < s.ahead && st.busy.is_none() => w,
            _ => {
                st = s.cv.wait(st).unwrap_or_else(PoisonError::into_inner);
                continue;
            }
        };
        st.busy = Some(want);
        drop(st);
        let result = s.create(want);
        st = s.lock();
        st.busy = None;
        match result {
            Ok(seg) if st.next == Some(want) && !st.shutdown => {
                st.next = Some(seg.end());
                let seg = Arc::new(seg);
                st.ready.push_back(Arc::clone(&seg));
                s.cv.notify_all();
                if s.warm.enabled {
                    // Ready before warm: a roll may take it now; warming goes on here.
                    drop(st);
                    seg.warm_up(&s.fs, s.warm);
                    st = s.lock();
                }
            }
            // No longer wanted (a roll created it itself, or shutdown): dropped; its file
            // is past the write position and removed by the next recovery.
            Ok(_) => {}
            // Stop preparing: the roll retries synchronously and reports the error to its
            // caller; a later successful roll restarts the thread.
            Err(_) => {
                if st.next == Some(want) {
                    st.next = None;
                }
            }
        }
        s.cv.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A put that computed its roll target before another put rolled there asks for a
    /// segment already handed out: it must not create that file again (the rename would
    /// replace the file the log is writing; found by `crash_loop`).
    #[test]
    fn ensuring_a_segment_already_handed_out_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        for background in [false, true] {
            let sub = dir.path().join(background.to_string());
            std::fs::create_dir_all(&sub).unwrap();
            let p = Preallocator::new(
                FileOps::default(),
                sub.clone(),
                4096,
                WarmUp::default(),
                None,
                background,
                2,
            )
            .unwrap();
            p.prepare(0);
            p.ensure(0).unwrap();
            let seg = p.take_ready(0).expect("ready after ensure");
            // SAFETY: a fresh segment nobody else writes or reads; 4 bytes at 0 are in bounds.
            unsafe { seg.write(0, b"kept") };
            p.ensure(0).unwrap();
            let on_disk = std::fs::read(sub.join(super::super::file_name(0))).unwrap();
            assert_eq!(&on_disk[..4], b"kept", "background {background}");
            p.shutdown();
        }
    }
}
