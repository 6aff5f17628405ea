//! loom model checks for `abslock`.
//!
//! The models live in `tests/` and compile only with `--cfg abslock_loom`; without it this crate builds
//! and runs nothing heavy. Run them with
//!
//! ```text
//! RUSTFLAGS="--cfg abslock_loom" LOOM_MAX_PREEMPTIONS=2 \
//!     cargo test -p abslock-loom-tests --release --target-dir target/loom
//! ```
//!
//! Cost on the project's 2-core machine: about 30 s to build loom and the crate, then under 10 s for
//! all 47 models (ABS 3-thread models explore ~2 300 executions each at two preemptions; the solo ones run
//! at one, see `ModelLock::BUSY_WAITS`, and so do the quiet-regime ones).
//!
//! Models drive every raw lock through `abslock::ModelLock` (the bodies of the `lock_api` methods,
//! which exist only in loom builds), re-exported here; this crate adds the ABS profiles the models use.
//! Time does not pass under loom: `Impatient` (a starvation bound of 0) makes every release over sleepers
//! a direct hand-off, while `SmallSpin`'s bound never comes due, so its releases take the wake path; a
//! timed lock's deadline is modelled as passed by the time it would sleep. `Solo` and `SoloImpatient` run
//! the solo restriction, whose sleepers come back only by a hand-off or their own re-check (a timed park
//! that times out at once here).

#[cfg(abslock_loom)]
mod model_lock;
#[cfg(abslock_loom)]
pub use abslock::ModelLock;
#[cfg(abslock_loom)]
pub use model_lock::*;
