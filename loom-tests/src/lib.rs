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
//! all 19 models (ABS 3-thread models explore ~2 300 executions each at two preemptions).
//!
//! `ModelLock` (loom builds only) gives every raw lock one guard-free interface so each model is written once.

#[cfg(abslock_loom)]
mod model_lock;
#[cfg(abslock_loom)]
pub use model_lock::*;
