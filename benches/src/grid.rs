//! The sweep's grid: targets, and per target the strategies, thread counts, message sizes
//! and (store target) layouts, topic counts and flush modes; one cell per point, each run
//! for R rounds with every strategy once per round.

use crate::strategy::{REFERENCE, Strategy};
use abslock_store::{FlushMode, Layout};

/// The critical section a cell drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum)]
pub enum Target {
    /// The store's critical section alone: `CommitLog` appends of records encoded
    /// beforehand into warm segments, with the real roll (plus `--outside-ns` of work
    /// outside the lock per put).
    LockBound,
    /// The real `MessageStore::put_message` path: encode, CRC, queue offset, the critical
    /// section, consume-queue dispatch and flush on the store's threads.
    Store,
}

impl Target {
    /// `lock-bound` or `store`, as in flags, the CSV and the report.
    pub fn name(&self) -> &'static str {
        match self {
            Target::LockBound => "lock-bound",
            Target::Store => "store",
        }
    }
}

/// The name of a store layout as in flags, the CSV and the report.
pub fn layout_name(l: Layout) -> &'static str {
    match l {
        Layout::PerTopic => "per-topic",
        _ => "single",
    }
}

/// The name of a flush mode as in flags, the CSV and the report.
pub fn flush_name(f: FlushMode) -> &'static str {
    match f {
        FlushMode::Sync { .. } => "sync",
        _ => "async",
    }
}

/// One point of the grid: every strategy of the target runs here, once per round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    /// The critical section.
    pub target: Target,
    /// Worker threads putting concurrently.
    pub threads: usize,
    /// Message body size, bytes.
    pub size: usize,
    /// Store layout (the lock-bound target has one log: single).
    pub layout: Layout,
    /// Topics the workers spread messages over (store target; 1 for lock-bound).
    pub topics: usize,
    /// Flush mode (store target; async for lock-bound, which never flushes).
    pub flush: FlushMode,
}

/// What runs for one target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetGrid {
    /// The target.
    pub target: Target,
    /// Strategies in report column order; always holds the reference (`parking_lot`).
    pub strategies: Vec<Strategy>,
    /// Thread counts, ascending.
    pub threads: Vec<usize>,
    /// Message sizes in bytes, ascending.
    pub sizes: Vec<usize>,
    /// Layouts (store target).
    pub layouts: Vec<Layout>,
    /// Topic counts (store target).
    pub topics: Vec<usize>,
    /// Flush modes (store target).
    pub flushes: Vec<FlushMode>,
}

impl TargetGrid {
    /// The cells, in run order: scenario, then size, then threads.
    pub fn cells(&self) -> Vec<Cell> {
        let mut out = Vec::new();
        for &layout in &self.layouts {
            for &topics in &self.topics {
                for &flush in &self.flushes {
                    for &size in &self.sizes {
                        for &threads in &self.threads {
                            out.push(Cell { target: self.target, threads, size, layout, topics, flush });
                        }
                    }
                }
            }
        }
        out
    }
}

/// The main strategies of the default lock-bound grid: RocketMQ's two locks, the spinners,
/// one backoff, both ABS profiles, the two peers and the two delegating put paths.
pub const LOCK_BOUND_STRATEGIES: &[Strategy] = &[
    Strategy::CasSpin,
    Strategy::Spin,
    Strategy::Backoff(100),
    Strategy::Abs,
    Strategy::AbsRocketMq,
    Strategy::ParkingLot,
    Strategy::Std,
    Strategy::Sequencer,
    Strategy::Combining,
];

/// The default store-target strategies (fewer: each store window costs a segment's warm-up).
pub const STORE_STRATEGIES: &[Strategy] = &[
    Strategy::CasSpin,
    Strategy::Abs,
    Strategy::AbsRocketMq,
    Strategy::ParkingLot,
    Strategy::Std,
    Strategy::Sequencer,
    Strategy::Combining,
];

/// Adds the reference strategy if missing and drops repeats, keeping the given order.
pub fn with_reference(list: &[Strategy]) -> Vec<Strategy> {
    let mut out: Vec<Strategy> = Vec::new();
    for s in list.iter().chain([&REFERENCE]) {
        if !out.contains(s) {
            out.push(*s);
        }
    }
    out
}

/// Sorted, deduplicated copy.
pub fn sorted(v: &[usize]) -> Vec<usize> {
    let mut v = v.to_vec();
    v.sort_unstable();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_is_always_in_and_repeats_go() {
        let s = with_reference(&[Strategy::Abs, Strategy::Abs, Strategy::Spin]);
        assert_eq!(s, vec![Strategy::Abs, Strategy::Spin, Strategy::ParkingLot]);
        assert_eq!(with_reference(&[Strategy::ParkingLot]), vec![Strategy::ParkingLot]);
    }

    #[test]
    fn cells_cover_every_point_once() {
        let g = TargetGrid {
            target: Target::Store,
            strategies: vec![Strategy::ParkingLot],
            threads: vec![1, 4],
            sizes: vec![128, 1024, 16384],
            layouts: vec![Layout::Single, Layout::PerTopic],
            topics: vec![1],
            flushes: vec![FlushMode::ASYNC, FlushMode::SYNC],
        };
        let cells = g.cells();
        assert_eq!(cells.len(), 2 * 3 * 2 * 2);
        for (i, a) in cells.iter().enumerate() {
            assert!(!cells[i + 1..].contains(a));
        }
    }
}
