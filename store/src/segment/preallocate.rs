//! Background creation of the next segments (RocketMQ `AllocateMappedFileService`, which
//! keeps the next and the next-next file ready), so the roll inside the put-message
//! critical section usually takes a ready, warmed segment instead of creating, reserving
//! and mapping a file.

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
    /// Prepared segments, contiguous and in order, not yet handed out.
    ready: VecDeque<Segment>,
    /// Start offset of the segment the thread is creating.
    busy: Option<u64>,
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
        Segment::create(&self.fs, &self.dir, start, self.size, self.warm, self.pool.as_deref())
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

    /// Returns the segment starting at `start`: a prepared one if ready, else creates it
    /// now. Then lets the thread top up the segments kept ready. Called on a roll (inside
    /// the put-message lock) and at open.
    pub(crate) fn obtain(&self, start: u64) -> FsResult<Segment> {
        let s = &*self.shared;
        let mut st = s.lock();
        while st.busy == Some(start) {
            st = s.cv.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
        if st.ready.front().is_some_and(|seg| seg.start() == start) {
            let seg = st.ready.pop_front();
            // The thread refills up to `ahead` from `next`, which is unchanged.
            s.cv.notify_all();
            if let Some(seg) = seg {
                return Ok(seg);
            }
        }
        // Ready segments for other offsets are stale; dropping unmaps them, their files
        // (all zeros, past the write position) are removed by the next recovery.
        st.ready.clear();
        // Nothing for the thread to prepare while this roll creates `start` itself, so the
        // two never create the same file.
        st.next = None;
        drop(st);
        let seg = s.create(start)?;
        if self.background {
            let mut st = s.lock();
            st.next = Some(seg.end());
            s.cv.notify_all();
        }
        Ok(seg)
    }

    /// Asks the thread to prepare segments from `start` on (after open).
    pub(crate) fn prepare(&self, start: u64) {
        if self.background {
            let mut st = self.shared.lock();
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
        st.ready.extend(segments);
        self.shared.cv.notify_all();
    }

    /// Takes the ready segments out of the queue (a standalone log gives them back).
    pub(crate) fn take_ready(&self) -> Vec<Segment> {
        let mut st = self.shared.lock();
        st.ready.drain(..).collect()
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
            Some(w) if st.ready.len() < s.ahead => w,
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
                st.ready.push_back(seg);
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
