//! Delegating put-path executors: instead of every put taking the put-message lock, a put
//! hands its encoded record to one thread that applies it against the log's tail (ours).
//!
//! - [`Sequencer`]: one writer thread owns the tail; puts hand requests through a bounded
//!   multi-producer queue and wait for their result (the design of rocketmq-rust's single
//!   sequencing task).
//! - [`Combining`]: flat combining (Hendler, Incze, Shavit, Tzafrir, "Flat Combining and the
//!   Synchronization-Parallelism Tradeoff", SPAA 2010): a put publishes its request in a slot;
//!   whichever put takes the combiner lock applies every published request in one pass.
//!
//! Both are generic over an [`Apply`]: "apply this batch of requests to the log's tail, in
//! order, and give each its own output". Each request's output reaches its own caller only.
//! Neither executor reorders a caller's requests: a caller waits for each result before it
//! can submit again, so the store keeps per-(topic, queue id) order by holding the
//! topic-queue stripe across the hand-off, exactly as it holds it across the lock.
//!
//! Waiting is bounded busy-waiting, then sleep: a put spins a few hundred pause hints on
//! its own cache line, then sleeps on a futex until its result is in.

mod combining;
pub mod completion;
mod sequencer;
pub(crate) mod sync;

pub use combining::{Combining, SLOTS};
pub use completion::Completion;
pub use sequencer::{Sequencer, SequencerConfig};

/// One request in a batch given to [`Apply::apply`]: its input and the slot for its output.
#[derive(Debug)]
pub struct Job<T, O> {
    /// What the caller submitted.
    pub input: T,
    /// What the caller gets back; [`Apply::apply`] sets it for every job it gets to. A job
    /// left `None` (the batch panicked first) completes with [`HandOffError::Panicked`].
    pub output: Option<O>,
}

/// The work one executor applies on behalf of its callers: the put-message critical
/// section, over a batch (ours).
pub trait Apply: Send {
    /// A request, as handed over by its caller.
    type Input: Send;
    /// A request's result, as handed back to its caller.
    type Output: Send;

    /// Applies `jobs` in order, setting each job's output. Called by one thread at a time.
    /// A panic completes every job without an output with [`HandOffError::Panicked`]; the
    /// executor stays usable.
    fn apply(&mut self, jobs: &mut [Job<Self::Input, Self::Output>]);
}

/// Why a request got no output from its executor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HandOffError {
    /// The executor was closed before the request was accepted; nothing was applied.
    #[error("put path closed")]
    Closed,
    /// [`Apply::apply`] panicked in the batch holding this request, before setting its
    /// output: the request may or may not have been applied.
    #[error("the put path panicked while applying this request")]
    Panicked,
}

/// Runs one batch: applies it, catching a panic, and leaves every job with an outcome.
fn run_batch<A: Apply>(
    tail: &mut A,
    jobs: &mut [Job<A::Input, A::Output>],
) -> impl Iterator<Item = Result<A::Output, HandOffError>> {
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tail.apply(jobs)));
    jobs.iter_mut().map(|j| j.output.take().ok_or(HandOffError::Panicked))
}
