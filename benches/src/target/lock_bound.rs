//! The lock-bound target: the store's own critical section alone. Each worker appends a
//! record encoded beforehand (`abslock_store::EncodedRecord`) through
//! `CommitLog::append_encoded` into segments created and warmed once per run
//! (`abslock_store::WarmSegments`, given back after every window), with the real roll
//! between them; optionally `--outside-ns` of calibrated work outside the lock per put.
//! Under a delegating put path ([`Delegate`]) each worker hands its record, one request per
//! put, to a `Sequencer` or `Combining` executor whose [`Apply`] calls `append_encoded`.

use super::{Outcome, SetupError, slack};
use crate::grid::Cell;
use crate::sweep_lock::SweepLock;
use crate::window::{Step, WindowSpec, run_window, run_window_with};
use abslock_store::codec::EncodeOptions;
use abslock_store::put_path::{Apply, Combining, Job, Sequencer, SequencerConfig};
use abslock_store::{CommitLog, EncodedRecord, Message, PutError, WarmSegments};
use lock_api::RawMutex as _;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, PoisonError};

/// Warm segments per run: the log rolls through them (up to 14 rolls per window) and the last
/// one is slack for puts in flight when the cap is seen. With the default 32 MiB segments a
/// window may write 480 MiB: about 40 ms at 16 KiB on one thread of the reference machine.
pub const WARM_SEGMENTS: usize = 16;

/// The lock-bound target of one run.
#[derive(Debug)]
pub struct LockBound {
    segments: Mutex<Option<WarmSegments>>,
    segment_size: u64,
    /// Work units (`pool::work`) outside the lock per put.
    outside_units: u64,
}

impl LockBound {
    /// Creates and warms [`WARM_SEGMENTS`] segments of `segment_size` bytes in `dir`;
    /// `outside_units` of `pool::work` run outside the lock before each put.
    ///
    /// # Errors
    /// [`SetupError::WarmSegments`] if the files cannot be created (no space).
    pub fn create(dir: &Path, segment_size: u64, outside_units: u64) -> Result<LockBound, SetupError> {
        let segs = WarmSegments::create(dir, segment_size, WARM_SEGMENTS).map_err(|source| {
            SetupError::WarmSegments {
                count: WARM_SEGMENTS,
                segment_mib: segment_size >> 20,
                dir: dir.display().to_string(),
                source,
            }
        })?;
        Ok(LockBound { segments: Mutex::new(Some(segs)), segment_size, outside_units })
    }

    /// Bytes a window may fill before it ends: every warm segment but the last.
    pub fn cap(&self) -> u64 {
        (WARM_SEGMENTS as u64 - 1) * self.segment_size
    }

    /// Runs one window of `cell` under a lock from `make`.
    ///
    /// # Errors
    /// A message if the record cannot be encoded or the log fails; the warm segments
    /// survive any error.
    pub fn window<R: SweepLock>(
        &self,
        cell: &Cell,
        spec: &WindowSpec,
        abort: &AtomicBool,
        make: impl Fn() -> R,
    ) -> Result<Outcome, String> {
        let record =
            EncodedRecord::new(&Message::new("bench", vec![0x5a; cell.size]), &EncodeOptions::default())
                .map_err(|e| format!("cannot encode a {} B message: {e}", cell.size))?;
        let cap = self.cap().saturating_sub(slack(cell.threads, record.len()));
        let segs = self
            .segments
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .ok_or("the warm segments were lost by an earlier window")?;
        let log = CommitLog::over_warm_segments(segs, make()).map_err(|e| e.to_string())?;
        let outside = self.outside_units;
        let window = run_window(spec, abort, |i| {
            let mut rec = record.clone();
            let log = &log;
            let mut seed = i as u64;
            move || {
                if outside > 0 {
                    seed = std::hint::black_box(crate::pool::work(seed, outside));
                }
                let at = log.append_encoded(&mut rec)?;
                Ok::<_, abslock_store::PutError>(if at >= cap { Step::Full } else { Step::More })
            }
        });
        let abs = log.put_lock().abs_stats().map(|s| (s.acquisitions, s.contended));
        let trace = log.put_lock().trace();
        *self.segments.lock().unwrap_or_else(PoisonError::into_inner) = Some(log.into_warm_segments());
        Ok(Outcome { window: window?, abs, trace })
    }
}

/// A delegating put path of the lock-bound target (ours; see `docs/delegation.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delegate {
    /// One writer thread (`Sequencer` with its default sizes) appends every record.
    Sequencer,
    /// The worker holding the combiner lock appends every published record (`Combining`).
    Combining,
}

/// The log's lock under a delegating path: taken by the writer or combiner only.
type TailLock = parking_lot::RawMutex;

/// A worker's record, lent to the executor while the worker waits in `submit`.
struct Lent(*mut EncodedRecord);

// SAFETY: the record is touched only by the executor that holds the request, while its
// worker waits for the result (the worker reuses it only after `submit` returns).
unsafe impl Send for Lent {}

/// The log's tail as the executors see it: one `append_encoded` per request, in order.
struct Tail(Arc<CommitLog<TailLock>>);

impl Apply for Tail {
    type Input = Lent;
    type Output = Result<u64, PutError>;

    fn apply(&mut self, jobs: &mut [Job<Lent, Result<u64, PutError>>]) {
        for job in jobs {
            // SAFETY: the lender waits in `submit` until this job completes and nobody else
            // holds the request (see `Lent`).
            let record = unsafe { &mut *job.input.0 };
            job.output = Some(self.0.append_encoded(record));
        }
    }
}

/// The executor of one window.
enum Executor {
    Sequencer(Sequencer<Tail>),
    Combining(Box<Combining<Tail>>),
}

impl Executor {
    fn submit(&self, record: &mut EncodedRecord) -> Result<u64, String> {
        let out = match self {
            Executor::Sequencer(s) => s.submit(Lent(record)),
            Executor::Combining(c) => c.submit(Lent(record)),
        };
        match out {
            Ok(r) => r.map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        }
    }

    fn own_cpu_ns(&self) -> u64 {
        match self {
            Executor::Sequencer(s) => s.writer_cpu_ns().unwrap_or(0),
            Executor::Combining(_) => 0,
        }
    }

    fn close(&self) {
        match self {
            Executor::Sequencer(s) => s.close(),
            Executor::Combining(c) => c.close(),
        }
    }
}

impl LockBound {
    /// Runs one window of `cell` through the delegating path `via`, over a log locked with
    /// `parking_lot::RawMutex`; the sequencer's writer CPU counts as the workers'.
    ///
    /// # Errors
    /// As [`LockBound::window`], or the writer thread could not be started.
    pub fn window_delegated(
        &self,
        cell: &Cell,
        spec: &WindowSpec,
        abort: &AtomicBool,
        via: Delegate,
    ) -> Result<Outcome, String> {
        let record =
            EncodedRecord::new(&Message::new("bench", vec![0x5a; cell.size]), &EncodeOptions::default())
                .map_err(|e| format!("cannot encode a {} B message: {e}", cell.size))?;
        let cap = self.cap().saturating_sub(slack(cell.threads, record.len()));
        let segs = self
            .segments
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .ok_or("the warm segments were lost by an earlier window")?;
        let log = Arc::new(CommitLog::over_warm_segments(segs, TailLock::INIT).map_err(|e| e.to_string())?);
        let tail = Tail(Arc::clone(&log));
        let started = match via {
            Delegate::Sequencer => {
                Sequencer::start(tail, SequencerConfig::default()).map(Executor::Sequencer)
            }
            Delegate::Combining => Ok(Executor::Combining(Box::new(Combining::new(tail)))),
        };
        let window =
            started.map_err(|e| format!("cannot start the put-sequencer thread: {e}")).and_then(|ex| {
                let outside = self.outside_units;
                let w = run_window_with(spec, abort, &|| ex.own_cpu_ns(), |i| {
                    let mut rec = record.clone();
                    let ex = &ex;
                    let mut seed = i as u64;
                    move || {
                        if outside > 0 {
                            seed = std::hint::black_box(crate::pool::work(seed, outside));
                        }
                        let at = ex.submit(&mut rec)?;
                        Ok::<_, String>(if at >= cap { Step::Full } else { Step::More })
                    }
                });
                ex.close();
                w
            });
        // Every executor (and its `Tail`) is gone: the log is ours again.
        let log = Arc::try_unwrap(log).map_err(|_| "the executor kept the log: warm segments lost")?;
        *self.segments.lock().unwrap_or_else(PoisonError::into_inner) = Some(log.into_warm_segments());
        Ok(Outcome { window: window?, abs: None, trace: Vec::new() })
    }
}
