//! `PutTarget`: the critical section the sweep drives. The real CommitLog store and
//! the emulated stand-in both implement it, so the worker harness is the same.

use crate::sweep_lock::SweepLock;
use crate::timed::Timed;

/// An error from one put, reported in the cell's outcome (the cell is then dropped).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TargetError {
    /// The message does not fit the target (e.g. larger than a segment).
    #[error("message of {size} bytes does not fit: {why}")]
    TooLarge {
        /// Encoded size in bytes.
        size: usize,
        /// What limit it broke.
        why: String,
    },
    /// The store refused the put or failed to flush it.
    #[error("store error: {0}")]
    Store(String),
    /// Setting up the target failed.
    #[error("setup failed: {0}")]
    Setup(String),
}

/// A log that takes messages under a put-message lock `Timed<R>`.
pub trait PutTarget<R: SweepLock>: Send + Sync {
    /// A message prepared outside any lock (encoded record or store message).
    type Msg: Send + Sync;

    /// Prepares the message a worker puts for topic `topic` (0-based), queue `queue_id`,
    /// with a body of `body`.
    ///
    /// # Errors
    /// [`TargetError::TooLarge`] if it can never fit.
    fn prepare(&self, topic: usize, queue_id: u32, body: &[u8]) -> Result<Self::Msg, TargetError>;

    /// Appends `msg`, waiting for its flush when the target runs in sync-flush mode.
    ///
    /// # Errors
    /// Whatever the target reports; the worker stops the cell on the first error.
    fn put(&self, msg: &Self::Msg) -> Result<(), TargetError>;

    /// Calls `f` with every put-message lock (one per log).
    fn for_each_put_lock(&self, f: &mut dyn FnMut(&Timed<R>));

    /// Flushes completed so far, if the target counts them.
    fn flushes(&self) -> Option<u64>;

    /// Segment rolls so far (the log moved to a fresh segment), if the target counts them.
    /// A roll runs inside the put-message lock and may wait for the next segment.
    fn rolls(&self) -> Option<u64> {
        None
    }
}
