//! The lock-bound target: the store's own critical section alone. Each worker appends a
//! record encoded beforehand (`abslock_store::EncodedRecord`) through
//! `CommitLog::append_encoded` into segments created and warmed once per run
//! (`abslock_store::WarmSegments`, given back after every window), with the real roll
//! between them; optionally `--outside-ns` of calibrated work outside the lock per put.

use super::{Outcome, SetupError, slack};
use crate::grid::Cell;
use crate::sweep_lock::SweepLock;
use crate::window::{Step, WindowSpec, run_window};
use abslock_store::codec::EncodeOptions;
use abslock_store::{CommitLog, EncodedRecord, Message, WarmSegments};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Mutex, PoisonError};

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
