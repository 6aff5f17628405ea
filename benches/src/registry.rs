//! The strategy registry: maps a [`Strategy`] to its raw lock type and runs one window of a
//! cell's target with it. The put paths that are not locks (see [`crate::strategy::PutPath`])
//! run over `parking_lot::RawMutex` as the log's lock, taken by the writer or combiner only.

use crate::grid::{Cell, Target};
use crate::latency::Sampled;
use crate::peers::{RawSpinCrateMutex, RawStdMutex};
use crate::strategy::Strategy;
use crate::sweep_lock::SweepLock;
use crate::target::Outcome;
use crate::target::lock_bound::{Delegate, LockBound};
use crate::target::store::StoreTarget;
use crate::window::WindowSpec;
use abslock_store::{PutPath, SequencerConfig};
use lock_api::RawMutex;
use std::sync::atomic::AtomicBool;

/// The targets of one run (`None`: the target is not in the run).
#[derive(Debug)]
pub struct Targets {
    /// The lock-bound target.
    pub lock_bound: Option<LockBound>,
    /// The store target.
    pub store: Option<StoreTarget>,
}

/// Runs one window of `cell` with `strategy`.
///
/// # Errors
/// The target's error text (setup, a failed put, or "interrupted").
pub fn run_window(
    strategy: Strategy,
    cell: &Cell,
    targets: &Targets,
    spec: &WindowSpec,
    abort: &AtomicBool,
) -> Result<Outcome, String> {
    traced_window(strategy, cell, targets, spec, abort, 0)
}

/// [`run_window`] with the adaptive lock's trace on, keeping up to `trace_capacity`
/// decisions in [`Outcome::trace`] (0: off; non-adaptive strategies record none).
///
/// # Errors
/// As [`run_window`].
pub fn traced_window(
    strategy: Strategy,
    cell: &Cell,
    targets: &Targets,
    spec: &WindowSpec,
    abort: &AtomicBool,
    trace_capacity: usize,
) -> Result<Outcome, String> {
    let run = Run { cell, targets, spec, abort, trace_capacity };
    match strategy {
        Strategy::CasSpin => run.with(|| abslock::RawCasSpinLock::INIT),
        Strategy::Spin => run.with(|| abslock::RawSpinLock::INIT),
        Strategy::Backoff(k) => run.with(move || abslock::RawBackoffLock::with_k(k)),
        Strategy::Abs => run.with(|| <abslock::RawAbsLock<abslock::Calibrated>>::INIT),
        Strategy::AbsRocketMq => run.with(|| <abslock::RawAbsLock<abslock::RocketMq>>::INIT),
        Strategy::AbsYield => run.with(|| <abslock::RawAbsLock<crate::ablations::YieldWhenCrowded>>::INIT),
        Strategy::AbsSpin => run.with(|| <abslock::RawAbsLock<crate::ablations::SpinWhenCrowded>>::INIT),
        Strategy::AbsPark => run.with(|| <abslock::RawAbsLock<crate::ablations::ParkWhenUncrowded>>::INIT),
        Strategy::AbsSolo => run.with(|| <abslock::RawAbsLock<crate::ablations::Solo>>::INIT),
        Strategy::AbsNoSolo => run.with(|| <abslock::RawAbsLock<crate::ablations::NoSoloTrial>>::INIT),
        Strategy::AbsNoQuiet => run.with(|| <abslock::RawAbsLock<crate::ablations::NoQuiet>>::INIT),
        Strategy::Abs8Yields => run.with(|| <abslock::RawAbsLock<crate::ablations::EightYields>>::INIT),
        Strategy::AbsDirectHandoff => {
            run.with(|| <abslock::RawAbsLock<crate::ablations::DirectHandoff>>::INIT)
        }
        Strategy::ParkingLot => run.with(|| <parking_lot::RawMutex as RawMutex>::INIT),
        Strategy::Std => run.with(|| RawStdMutex::INIT),
        Strategy::SpinCrate => run.with(|| RawSpinCrateMutex::INIT),
        Strategy::Sequencer => run.delegated(Delegate::Sequencer),
        Strategy::Combining => run.delegated(Delegate::Combining),
    }
}

struct Run<'a> {
    cell: &'a Cell,
    targets: &'a Targets,
    spec: &'a WindowSpec,
    abort: &'a AtomicBool,
    trace_capacity: usize,
}

impl Run<'_> {
    /// A window through a delegating put path: the lock-bound target's executor over
    /// `append_encoded`, or the store opened with the matching `PutPath`.
    fn delegated(&self, via: Delegate) -> Result<Outcome, String> {
        match self.cell.target {
            Target::LockBound => {
                let t = self.targets.lock_bound.as_ref().ok_or("lock-bound target not set up")?;
                t.window_delegated(self.cell, self.spec, self.abort, via)
            }
            Target::Store => {
                let t = self.targets.store.as_ref().ok_or("store target not set up")?;
                let path = match via {
                    Delegate::Sequencer => PutPath::Sequencer(SequencerConfig::default()),
                    Delegate::Combining => PutPath::Combining,
                };
                let lock = || <parking_lot::RawMutex as RawMutex>::INIT;
                t.window_on(self.cell, self.spec, self.abort, path, lock)
            }
        }
    }

    /// Runs the window with locks from `make`, each wrapped for acquire-latency sampling.
    fn with<R: SweepLock>(&self, make: impl Fn() -> R + Send + Sync + 'static) -> Result<Outcome, String> {
        let capacity = self.trace_capacity;
        let make = move || {
            let lock = Sampled(make());
            if capacity > 0 {
                lock.enable_trace(capacity);
            }
            lock
        };
        match self.cell.target {
            Target::LockBound => {
                let t = self.targets.lock_bound.as_ref().ok_or("lock-bound target not set up")?;
                t.window(self.cell, self.spec, self.abort, make)
            }
            Target::Store => {
                let t = self.targets.store.as_ref().ok_or("store target not set up")?;
                t.window(self.cell, self.spec, self.abort, make)
            }
        }
    }
}
