//! The strategy registry: maps a [`Strategy`] name to its raw lock type and runs a
//! cell on the selected critical section with it.

use crate::emulated::EmulatedLog;
use crate::grid::Cell;
use crate::limit::run_memcpy_limit;
use crate::peers::{RawSpinCrateMutex, RawStdMutex};
use crate::ring::Ring;
use crate::store_target::StoreTarget;
use crate::strategy::Strategy;
use crate::sweep_lock::SweepLock;
use crate::target::TargetError;
use crate::worker::{CellOutcome, CellTiming, RunOptions, run_cell};
use lock_api::RawMutex;
use std::path::PathBuf;
use std::sync::Arc;

/// Which critical section the cells drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    /// The real `abslock-store` CommitLog (`put_message`).
    Store,
    /// The emulated CommitLog ([`EmulatedLog`]) over a warm ring.
    Emulated,
}

impl TargetKind {
    /// "store" or "emulated", as written to the CSV and report.
    pub fn name(&self) -> &'static str {
        match self {
            TargetKind::Store => "store",
            TargetKind::Emulated => "emulated",
        }
    }
}

/// What every cell of a run shares.
#[derive(Debug)]
pub struct RunContext {
    /// The warm ring (emulated log and memcpy limit).
    pub ring: Arc<Ring>,
    /// Which critical section to drive.
    pub target: TargetKind,
    /// Directory under which per-cell stores are created.
    pub store_dir: PathBuf,
    /// Warm-up and measured window per cell.
    pub timing: CellTiming,
    /// Commitlog segment size of the per-cell stores, bytes.
    pub segment_size: u64,
    /// Keep every cell's store directory (`--keep`).
    pub keep: bool,
    /// Cores to pin workers to; `None` = unpinned.
    pub pin: Option<Vec<core_affinity::CoreId>>,
    /// ABS trace capacity for cells that keep a trace (0 = none).
    pub trace_capacity: usize,
}

/// Runs `cell`, with an ABS trace if `trace` and the strategy is adaptive.
///
/// # Errors
/// A [`TargetError`] from setting up the log or from a put.
pub fn run(cell: &Cell, ctx: &RunContext, trace: bool) -> Result<CellOutcome, TargetError> {
    match cell.strategy {
        Strategy::MemcpyLimit => Ok(run_memcpy_limit(&ctx.ring, cell.msg_size, ctx.timing)),
        Strategy::CasSpin => with_lock(cell, ctx, trace, || abslock::RawCasSpinLock::INIT),
        Strategy::Spin => with_lock(cell, ctx, trace, || abslock::RawSpinLock::INIT),
        Strategy::Backoff(k) => with_lock(cell, ctx, trace, move || abslock::RawBackoffLock::with_k(k)),
        Strategy::Abs => with_lock(cell, ctx, trace, || <abslock::RawAbsLock<abslock::Calibrated>>::INIT),
        Strategy::AbsRocketMq => {
            with_lock(cell, ctx, trace, || <abslock::RawAbsLock<abslock::RocketMq>>::INIT)
        }
        Strategy::ParkingLot => with_lock(cell, ctx, trace, || <parking_lot::RawMutex as RawMutex>::INIT),
        Strategy::Std => with_lock(cell, ctx, trace, || RawStdMutex::INIT),
        Strategy::SpinCrate => with_lock(cell, ctx, trace, || RawSpinCrateMutex::INIT),
    }
}

/// The segment size for `cell`: `base` for a single log; `base / topics` (at least
/// 1 MiB) per log for the per-topic layout, so the total preallocated stays near `base`.
pub fn segment_size_for(cell: &Cell, base: u64) -> u64 {
    match cell.layout {
        crate::grid::Layout::Single => base,
        crate::grid::Layout::PerTopic => (base / cell.topics.max(1) as u64).max(1 << 20),
    }
}

fn with_lock<R, F>(cell: &Cell, ctx: &RunContext, trace: bool, make: F) -> Result<CellOutcome, TargetError>
where
    R: SweepLock,
    F: Fn() -> R + Send + Sync + Clone + 'static,
{
    let opts = RunOptions {
        threads: cell.threads,
        topics: cell.topics,
        msg_size: cell.msg_size,
        timing: ctx.timing,
        pin: ctx.pin.clone(),
        trace_capacity: if trace && cell.strategy.is_abs() { ctx.trace_capacity } else { 0 },
    };
    match ctx.target {
        TargetKind::Emulated => {
            let log = EmulatedLog::new(Arc::clone(&ctx.ring), cell.layout, cell.topics, cell.flush, &make)?;
            run_cell(&log, &opts)
        }
        TargetKind::Store => {
            let store = StoreTarget::open(
                &ctx.store_dir,
                cell,
                segment_size_for(cell, ctx.segment_size),
                ctx.keep,
                make,
            )?;
            let out = run_cell(&store, &opts);
            store.close()?;
            out
        }
    }
}
