//! How a [`LogStore`](crate::log_store::LogStore) runs the put-message critical section:
//! under the lock `R` in the calling thread, or delegated to a [`Sequencer`] or
//! [`Combining`] executor that applies many puts' records in one pass (ours; see
//! `docs/delegation.md`).

use std::sync::Arc;

use lock_api::RawMutex;

use crate::commitlog::{Appended, CommitLog, RecordParts};
use crate::config::PutPath;
use crate::error::PutError;
use crate::put_path::{Apply, Combining, HandOffError, Job, Sequencer};

/// One put's records, lent to the executor while the put waits for its result.
pub(crate) struct AppendRequest {
    /// The caller's records (lifetime erased: the caller waits until the request is done,
    /// so the borrow outlives every use).
    records: *mut RecordParts<'static>,
    /// How many records.
    len: usize,
    /// Wall clock read by the caller before the hand-off, ms.
    pub(crate) clock_ms: i64,
}

// SAFETY: the request lends `&mut [RecordParts]` to exactly one executor thread while its put
// waits (the put touches nothing of it until the result is handed back); `RecordParts` is
// plain bytes and slices, `Send` when borrowed mutably.
unsafe impl Send for AppendRequest {}

impl AppendRequest {
    /// The lent records.
    ///
    /// # Safety
    /// Called only by the executor that holds the request, before completing it.
    pub(crate) unsafe fn records<'a>(&'a mut self) -> &'a mut [RecordParts<'a>] {
        // SAFETY: the put lent these records for as long as the request is not completed,
        // and nobody else touches them meanwhile (the caller's contract); `'a` is shorter
        // than the lender's borrow.
        unsafe { std::slice::from_raw_parts_mut(self.records.cast::<RecordParts<'a>>(), self.len) }
    }

    /// Lends `records` to an executor.
    fn lend(records: &mut [RecordParts<'_>], clock_ms: i64) -> Self {
        AppendRequest {
            records: records.as_mut_ptr().cast::<RecordParts<'static>>(),
            len: records.len(),
            clock_ms,
        }
    }
}

/// What a delegated append returns to its put.
pub(crate) type AppendOutcome = Result<Appended, PutError>;

/// The log tail an executor appends to.
pub(crate) struct LogTail<R: RawMutex> {
    log: Arc<CommitLog<R>>,
}

impl<R: RawMutex + Send + Sync> Apply for LogTail<R> {
    type Input = AppendRequest;
    type Output = AppendOutcome;

    fn apply(&mut self, jobs: &mut [Job<AppendRequest, AppendOutcome>]) {
        self.log.append_jobs(jobs);
    }
}

/// The put path a log was opened with.
pub(crate) enum PutExecutor<R: RawMutex + Send + Sync + 'static> {
    /// Each put appends under the lock `R` itself.
    Lock,
    /// One writer thread appends.
    Sequencer(Box<Sequencer<LogTail<R>>>),
    /// The put holding the combiner lock appends for all.
    Combining(Box<Combining<LogTail<R>>>),
}

impl<R: RawMutex + Send + Sync + 'static> PutExecutor<R> {
    /// Starts the executor `path` names over `log`.
    pub(crate) fn start(path: PutPath, log: &Arc<CommitLog<R>>) -> std::io::Result<Self> {
        let tail = || LogTail { log: Arc::clone(log) };
        Ok(match path {
            PutPath::Lock => PutExecutor::Lock,
            PutPath::Sequencer(config) => PutExecutor::Sequencer(Box::new(Sequencer::start(tail(), config)?)),
            PutPath::Combining => PutExecutor::Combining(Box::new(Combining::new(tail()))),
        })
    }

    /// The put-message critical section for one put's contiguous `records`.
    #[inline]
    pub(crate) fn append(
        &self,
        log: &CommitLog<R>,
        records: &mut [RecordParts<'_>],
        clock_ms: i64,
    ) -> Result<Appended, PutError> {
        // The put waits in `submit` until its request is completed, so the lent borrow
        // outlives every use of it.
        let out = match self {
            PutExecutor::Lock => return log.append(records, clock_ms),
            PutExecutor::Sequencer(s) => s.submit(AppendRequest::lend(records, clock_ms)),
            PutExecutor::Combining(c) => c.submit(AppendRequest::lend(records, clock_ms)),
        };
        match out {
            Ok(r) => r,
            Err(HandOffError::Closed) => Err(PutError::Closed),
            Err(_) => Err(PutError::PutPathPanicked),
        }
    }

    /// CPU time of the thread this path runs of its own, ns: the sequencer's writer;
    /// `None` for the paths that run in the callers' threads (or once closed).
    pub(crate) fn own_thread_cpu_ns(&self) -> Option<u64> {
        match self {
            PutExecutor::Sequencer(s) => s.writer_cpu_ns(),
            PutExecutor::Lock | PutExecutor::Combining(_) => None,
        }
    }

    /// Stops accepting puts (later ones fail with [`PutError::Closed`]) after serving every
    /// accepted one; joins the sequencer's writer.
    pub(crate) fn close(&self) {
        match self {
            PutExecutor::Lock => {}
            PutExecutor::Sequencer(s) => s.close(),
            PutExecutor::Combining(c) => c.close(),
        }
    }
}
