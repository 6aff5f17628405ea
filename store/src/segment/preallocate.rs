//! Background creation of the next segment (RocketMQ `AllocateMappedFileService`), so the
//! roll inside the put-message critical section usually takes a ready, warmed segment
//! instead of creating, reserving and mapping a file.

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use super::{BufferPool, Segment};
use crate::config::WarmUp;
use crate::io::{FileOps, FsResult};

#[derive(Default)]
struct State {
    /// Start offset the thread should prepare next.
    wanted: Option<u64>,
    /// A prepared segment, not yet handed out.
    ready: Option<Segment>,
    /// The thread is creating the segment for `wanted`.
    busy: bool,
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
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Preallocator {
    pub(crate) fn new(
        fs: FileOps,
        dir: PathBuf,
        size: u64,
        warm: WarmUp,
        pool: Option<Arc<BufferPool>>,
        background: bool,
    ) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            cv: Condvar::new(),
            fs,
            dir,
            size,
            warm,
            pool,
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
        Ok(Self { shared, thread: Mutex::new(thread) })
    }

    /// Returns the segment starting at `start`: the prepared one if ready, else creates it
    /// now. Then asks the thread to prepare the following one. Called on a roll (inside the
    /// put-message lock) and at open.
    pub(crate) fn obtain(&self, start: u64) -> FsResult<Segment> {
        let s = &*self.shared;
        let mut st = s.lock();
        while st.busy && st.wanted == Some(start) {
            st = s.cv.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
        let ready = match st.ready.take() {
            Some(seg) if seg.start() == start => Some(seg),
            // A segment for another offset is stale; dropping unmaps it, its file is
            // removed by the next recovery (past the write position).
            _ => None,
        };
        st.wanted = None;
        drop(st);
        let seg = match ready {
            Some(seg) => seg,
            None => s.create(start)?,
        };
        if self.thread.lock().unwrap_or_else(PoisonError::into_inner).is_some() {
            let mut st = s.lock();
            st.wanted = Some(seg.end());
            s.cv.notify_all();
        }
        Ok(seg)
    }

    /// Asks the thread to prepare the segment at `start` (after open).
    pub(crate) fn prepare(&self, start: u64) {
        if self.thread.lock().unwrap_or_else(PoisonError::into_inner).is_some() {
            let mut st = self.shared.lock();
            st.wanted = Some(start);
            self.shared.cv.notify_all();
        }
    }

    /// Stops the thread and drops any prepared segment (its file stays, all zeros, and is
    /// removed by the next open).
    pub(crate) fn shutdown(&self) {
        {
            let mut st = self.shared.lock();
            st.shutdown = true;
            st.ready = None;
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
        let want = match (st.wanted, &st.ready) {
            (Some(w), None) => w,
            _ => {
                st = s.cv.wait(st).unwrap_or_else(PoisonError::into_inner);
                continue;
            }
        };
        st.busy = true;
        drop(st);
        let result = s.create(want);
        st = s.lock();
        st.busy = false;
        match result {
            Ok(seg) if st.wanted == Some(want) && !st.shutdown => st.ready = Some(seg),
            Ok(_) => {}
            // The roll retries synchronously and reports the error to its caller.
            Err(_) => {
                if st.wanted == Some(want) {
                    st.wanted = None;
                }
            }
        }
        s.cv.notify_all();
    }
}
