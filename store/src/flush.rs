//! Flush services: group commit for sync flush (RocketMQ `GroupCommitService`) and the
//! periodic flush for async flush (RocketMQ `FlushRealTimeService` + `CommitRealTimeService`).

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use lock_api::RawMutex;

use crate::commitlog::CommitLog;
use crate::error::FlushError;

#[derive(Debug, Default)]
struct State {
    /// Highest end offset any waiter asked to be durable.
    requested: u64,
    /// Bumped by every waiter registration.
    request_seq: u64,
    /// `request_seq` when the last flush failed; the flusher retries only after a newer request.
    failed_seq: Option<u64>,
    /// Bumped by every failed flush.
    failures: u64,
    last_error: Option<FlushError>,
    shutdown: bool,
}

/// Group commit: waiters ask for an end offset; one flusher thread msyncs everything
/// written so far and wakes all waiters it covered.
#[derive(Debug, Default)]
pub(crate) struct GroupCommit {
    state: Mutex<State>,
    wake_flusher: Condvar,
    done: Condvar,
}

impl GroupCommit {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Blocks until `flushed() >= end`, a flush fails, or `timeout` passes.
    pub(crate) fn wait_durable<R: RawMutex>(
        &self,
        log: &CommitLog<R>,
        end: u64,
        timeout: Duration,
    ) -> Result<(), FlushError> {
        if log.flushed() >= end {
            return Ok(());
        }
        let deadline = Instant::now() + timeout;
        let mut st = self.lock();
        let failures = st.failures;
        st.requested = st.requested.max(end);
        st.request_seq += 1;
        self.wake_flusher.notify_one();
        loop {
            if log.flushed() >= end {
                return Ok(());
            }
            if st.failures != failures {
                return Err(st.last_error.clone().unwrap_or(FlushError::Closed));
            }
            if st.shutdown {
                return Err(FlushError::Closed);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(FlushError::Timeout { offset: end, timeout });
            }
            st = self.done.wait_timeout(st, deadline - now).unwrap_or_else(PoisonError::into_inner).0;
        }
    }

    /// Wakes waiters after a flush done outside the flusher thread.
    pub(crate) fn notify_progress(&self) {
        let _st = self.lock();
        self.done.notify_all();
    }

    /// The flusher thread's body.
    pub(crate) fn run<R: RawMutex>(&self, log: &CommitLog<R>) {
        loop {
            let mut st = self.lock();
            loop {
                if st.shutdown {
                    return;
                }
                let retry_ok = st.failed_seq.is_none_or(|s| st.request_seq > s);
                if st.requested > log.flushed() && retry_ok {
                    break;
                }
                st = self.wake_flusher.wait(st).unwrap_or_else(PoisonError::into_inner);
            }
            let seq = st.request_seq;
            drop(st);
            let result = log.flush();
            let mut st = self.lock();
            match result {
                Ok(_) => st.failed_seq = None,
                Err(e) => {
                    st.failures += 1;
                    st.last_error = Some(e);
                    st.failed_seq = Some(seq);
                }
            }
            self.done.notify_all();
        }
    }

    pub(crate) fn shutdown(&self) {
        let mut st = self.lock();
        st.shutdown = true;
        self.wake_flusher.notify_all();
        self.done.notify_all();
    }
}

/// A stop flag with a timed wait, for the periodic service threads.
#[derive(Debug, Default)]
pub(crate) struct Stop {
    stopped: Mutex<bool>,
    cv: Condvar,
}

impl Stop {
    /// Waits up to `d`; returns `true` if stopped.
    pub(crate) fn wait(&self, d: Duration) -> bool {
        let g = self.stopped.lock().unwrap_or_else(PoisonError::into_inner);
        if *g {
            return true;
        }
        *self.cv.wait_timeout(g, d).unwrap_or_else(PoisonError::into_inner).0
    }

    pub(crate) fn stop(&self) {
        *self.stopped.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.cv.notify_all();
    }
}

/// RocketMQ `flushCommitLogThoroughInterval`: flush whatever is dirty at least this often.
pub(crate) const THOROUGH_INTERVAL: Duration = Duration::from_secs(10);

/// The async flush thread's body: every tick commit pooled buffers; every `interval`
/// msync once `least_bytes` are dirty (or anything dirty after [`THOROUGH_INTERVAL`]).
/// Failures are kept in `last_error` and retried next tick.
pub(crate) fn run_async<R: RawMutex>(
    log: &CommitLog<R>,
    stop: &Stop,
    tick: Duration,
    interval: Duration,
    least_bytes: u64,
    last_error: &Mutex<Option<FlushError>>,
) {
    let mut last_flush = Instant::now();
    let mut last_thorough = Instant::now();
    while !stop.wait(tick) {
        let mut result = log.commit().map(|_| ());
        if result.is_ok() && last_flush.elapsed() >= interval {
            last_flush = Instant::now();
            let dirty = log.dirty();
            let thorough = last_thorough.elapsed() >= THOROUGH_INTERVAL;
            if dirty >= least_bytes.max(1) || (thorough && dirty > 0) {
                if thorough {
                    last_thorough = Instant::now();
                }
                result = log.flush().map(|_| ());
            }
        }
        if let Err(e) = result {
            *last_error.lock().unwrap_or_else(PoisonError::into_inner) = Some(e);
        }
    }
}
