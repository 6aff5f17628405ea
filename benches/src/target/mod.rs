//! The critical sections a cell drives: [`lock_bound`] (the CommitLog's append alone) and
//! [`store`] (the real put path). Both run one window per call with a fresh lock and
//! give back what the window measured.

pub mod lock_bound;
pub mod store;

use crate::window::Window;

/// What one window of one strategy produced.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The measured span.
    pub window: Window,
    /// The adaptive lock's statistics after the window (ABS strategies only), summed over
    /// logs: (acquisitions, contended acquisitions).
    pub abs: Option<(u64, u64)>,
    /// The adaptive lock's decisions over the window, when the window was traced
    /// (lock-bound only; empty otherwise).
    pub trace: Vec<abslock::TracePoint>,
}

/// Why a target could not be set up (before any cell runs).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// The warm segments of the lock-bound target could not be created.
    #[error(
        "cannot create {count} warm segments of {segment_mib} MiB in {dir}: {source}; \
         lower --segment-mib or point --store-dir at a file system with more space"
    )]
    WarmSegments {
        /// Segments asked for.
        count: usize,
        /// Their size, MiB.
        segment_mib: u64,
        /// Where.
        dir: String,
        /// The store's error.
        #[source]
        source: abslock_store::OpenError,
    },
}

/// Bytes kept free at the end of a target's warm space so that puts in flight when the
/// byte cap is seen never reach a cold segment: two records per thread.
pub fn slack(threads: usize, record_len: usize) -> u64 {
    2 * threads as u64 * (record_len as u64 + 8)
}
