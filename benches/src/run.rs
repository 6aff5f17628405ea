//! The sweep loop: R rounds; each round visits every cell of every target in a fresh random
//! order, and in each cell runs every strategy once, in a fresh random order, so drift and
//! neighbours' load hit all strategies of a round alike and each pairs with `parking_lot`
//! measured moments apart. Then every cell's verdicts.
//!
//! Rounds are the outer loop so that a cell's rounds spread over the whole run instead of a
//! few seconds of it: a burst of load from another process (a compile on a shared machine)
//! then touches one or two rounds of every cell, which the verdict's rank statistics
//! discount, rather than every round of the few cells it overlaps, which shifts those cells'
//! ratios as a whole (strategies suffer from a busy core unequally, so a common disturbance
//! does not cancel in a ratio). Variation between spans of the run is only averaged out by
//! sampling every cell across them (Kalibera and Jones, "Rigorous benchmarking in reasonable
//! time", ISMM 2013: repetitions at one level do not reduce the variance of a higher level).

use crate::grid::{Cell, Target, TargetGrid};
use crate::registry::{self, Targets};
use crate::results::{self, CellKey, CellResult, RoundRow, Status};
use crate::strategy::Strategy;
use crate::window::WindowSpec;
use abslock_store::Layout;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How a run measures.
#[derive(Debug, Clone)]
pub struct Plan {
    /// One grid per target, in run order.
    pub grids: Vec<TargetGrid>,
    /// Rounds per cell.
    pub rounds: u32,
    /// Warm-up before each timed span.
    pub warmup: Duration,
    /// Longest timed span per window.
    pub measure: Duration,
    /// Cores to pin workers to (`--pin`).
    pub pin: Option<Vec<core_affinity::CoreId>>,
    /// Work outside the lock per put on the lock-bound target, ns.
    pub outside_ns: u64,
    /// Equivalence margin of the verdicts (0.04 = 4%).
    pub margin: f64,
    /// Seed of the round orders.
    pub seed: u64,
    /// Print nothing per cell.
    pub quiet: bool,
}

/// Set-up cost of one window of `cell`, beyond warm-up and span, for the time estimate:
/// thread start and log hand-over (lock-bound: 3 ms measured); opening and closing a store
/// on the reused warm segment and zeroing what the window wrote (store, `Layout::Single`:
/// 16 ms measured); or creating, warming, unmapping and unlinking fresh segments (store,
/// `Layout::PerTopic`: about 1.2 ms per MiB, sized to the cell's rate, at most 4 x
/// `segment_mib`). Measured on the reference machine (ours), rounded up.
pub fn window_overhead(cell: &Cell, segment_mib: u64) -> Duration {
    match (cell.target, cell.layout) {
        (Target::LockBound, _) => Duration::from_millis(5),
        (Target::Store, Layout::Single) => Duration::from_millis(18),
        (Target::Store, _) => Duration::from_millis(10) + Duration::from_micros(1_200 * 4 * segment_mib),
    }
}

impl Plan {
    /// Windows the plan runs.
    pub fn windows(&self) -> u64 {
        self.grids
            .iter()
            .map(|g| (g.cells().len() * g.strategies.len()) as u64 * u64::from(self.rounds))
            .sum()
    }

    /// Estimated wall time: windows times (warm-up + span + set-up); a capped span ends early.
    pub fn estimate(&self, segment_mib: u64) -> Duration {
        self.grids
            .iter()
            .flat_map(|g| g.cells().into_iter().map(move |c| (c, g.strategies.len() as u32)))
            .map(|(c, n)| (self.warmup + self.measure + window_overhead(&c, segment_mib)) * n * self.rounds)
            .sum()
    }
}

/// Everything a run produced.
#[derive(Debug, Clone, Default)]
pub struct Output {
    /// Every window, grouped by cell in grid order, rounds ascending.
    pub rounds: Vec<RoundRow>,
    /// Per strategy and cell.
    pub results: Vec<CellResult>,
    /// Cells judged (all of them once a round has finished, none before).
    pub cells: usize,
    /// Whether a signal stopped the run (the round in progress is dropped).
    pub interrupted: bool,
}

/// Where progress goes: an `indicatif` bar over the windows when stderr is a terminal (the
/// per-cell lines print above it), plain lines otherwise (a log, CI), nothing with `quiet`.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    quiet: bool,
}

impl Progress {
    fn new(plan: &Plan) -> Progress {
        let bar = (!plan.quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::new(plan.windows());
            let style = indicatif::ProgressStyle::with_template(
                "{elapsed_precise} [{bar:40}] {pos}/{len} windows, eta {eta} {msg}",
            );
            if let Ok(style) = style {
                bar.set_style(style.progress_chars("=> "));
            }
            bar
        });
        Progress { bar, quiet: plan.quiet }
    }

    /// A line for the reader (above the bar on a terminal).
    fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None if !self.quiet => eprintln!("{text}"),
            None => {}
        }
    }

    /// A line that prints even with `quiet` (failures).
    fn always(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }

    fn window_done(&self, cell: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(cell.to_string());
            bar.inc(1);
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Runs `plan` on `targets`; `abort` (a signal) ends the window in progress and the run. An
/// interrupted run keeps the rounds every cell finished (the round in progress is dropped)
/// and judges the cells on them.
pub fn run(plan: &Plan, targets: &Targets, abort: &AtomicBool) -> Output {
    let progress = Progress::new(plan);
    let mut out = Output::default();
    let mut rng = fastrand::Rng::with_seed(plan.seed);
    let cells: Vec<(&TargetGrid, Cell, CellKey)> = plan
        .grids
        .iter()
        .flat_map(|g| g.cells().into_iter().map(move |c| (g, c)))
        .map(|(g, c)| {
            let outside = if c.target == Target::LockBound { plan.outside_ns } else { 0 };
            (g, c, CellKey::of(&c, outside))
        })
        .collect();
    let mut rows: Vec<Vec<RoundRow>> = vec![Vec::new(); cells.len()];
    let mut rounds_done = 0;
    let started = Instant::now();
    'rounds: for round in 0..plan.rounds {
        let t0 = Instant::now();
        let mut visit: Vec<usize> = (0..cells.len()).collect();
        rng.shuffle(&mut visit);
        let mut this_round: Vec<(usize, RoundRow)> = Vec::new();
        for &i in &visit {
            let (grid, cell, key) = &cells[i];
            let mut order = grid.strategies.clone();
            rng.shuffle(&mut order);
            for (position, &strategy) in order.iter().enumerate() {
                if abort.load(Ordering::Relaxed) {
                    out.interrupted = true;
                    break 'rounds;
                }
                let row =
                    window(plan, targets, abort, &progress, cell, key, round, position as u32, strategy);
                progress.window_done(&key.label());
                if abort.load(Ordering::Relaxed) {
                    out.interrupted = true;
                    break 'rounds;
                }
                this_round.push((i, row));
            }
        }
        for (i, row) in this_round {
            rows[i].push(row);
        }
        rounds_done += 1;
        progress.line(&format!(
            "sweep: round {}/{} of {} cells ({:.1} s, {:.0} s so far)",
            round + 1,
            plan.rounds,
            cells.len(),
            t0.elapsed().as_secs_f64(),
            started.elapsed().as_secs_f64(),
        ));
    }
    if rounds_done > 0 {
        let total = cells.len();
        for ((grid, _, key), rows) in cells.iter().zip(rows) {
            let results = results::analyse(key, &grid.strategies, &rows, rounds_done, plan.margin);
            out.cells += 1;
            progress.line(&format!(
                "sweep: [{}/{total}] {} over {rounds_done} rounds: {}",
                out.cells,
                key.label(),
                progress_summary(&results)
            ));
            out.rounds.extend(rows);
            out.results.extend(results);
        }
    }
    progress.finish();
    out
}

/// "best spin; abs 0.31x slower" for the progress line.
fn progress_summary(results: &[CellResult]) -> String {
    let best = results.first().map_or("-", |r| r.best.as_str());
    let abs = results
        .iter()
        .find(|r| r.strategy == Strategy::Abs.name())
        .map(|r| format!("; abs/parking_lot {:.2} ({})", r.ratio_pl, r.verdict_pl.word()))
        .unwrap_or_default();
    format!("best {best}{abs}")
}

#[allow(clippy::too_many_arguments)]
fn window(
    plan: &Plan,
    targets: &Targets,
    abort: &AtomicBool,
    progress: &Progress,
    cell: &Cell,
    key: &CellKey,
    round: u32,
    position: u32,
    strategy: Strategy,
) -> RoundRow {
    let spec = WindowSpec {
        threads: cell.threads,
        warmup: plan.warmup,
        measure: plan.measure,
        pin: plan.pin.clone(),
    };
    let mut row = RoundRow {
        target: key.target.clone(),
        threads: key.threads,
        size: key.size,
        layout: key.layout.clone(),
        topics: key.topics,
        flush: key.flush.clone(),
        outside_ns: key.outside_ns,
        round,
        position,
        strategy: strategy.name(),
        status: Status::Failed,
        messages: 0,
        seconds: 0.0,
        msgs_per_s: 0.0,
        cpu_ns_per_msg: f64::NAN,
        background_ns_per_msg: f64::NAN,
        capped: false,
        abs_contended_pct: None,
        acquire_p50_ns: None,
        acquire_p99_ns: None,
        acquire_p999_ns: None,
        error: String::new(),
    };
    match registry::run_window(strategy, cell, targets, &spec, abort) {
        Ok(o) => {
            let w = o.window;
            row.messages = w.messages;
            row.seconds = w.seconds;
            row.msgs_per_s = w.msgs_per_s();
            row.capped = w.capped;
            row.acquire_p50_ns = w.acquire.map(|p| p.p50);
            row.acquire_p99_ns = w.acquire.map(|p| p.p99);
            row.acquire_p999_ns = w.acquire.map(|p| p.p999);
            row.abs_contended_pct = o.abs.map(|(acq, cont)| 100.0 * cont as f64 / acq.max(1) as f64);
            if w.messages == 0 {
                row.status = Status::Stalled;
                progress.line(&format!(
                    "sweep: {} {strategy} round {round}: stalled (0 messages in {:.3} s)",
                    key.label(),
                    w.seconds
                ));
            } else {
                row.status = Status::Ok;
                row.cpu_ns_per_msg = w.worker_cpu_ns as f64 / w.messages as f64;
                row.background_ns_per_msg = w.background_cpu_ns as f64 / w.messages as f64;
            }
        }
        Err(e) if e.starts_with(crate::window::WARM_SPACE_FILLED) => {
            // A window that ran out of warm space before its span began put nothing measurable: a
            // stall of the sizing, not of the lock.
            row.status = Status::Stalled;
            progress.line(&format!("sweep: {} {strategy} round {round}: stalled ({e})", key.label()));
            row.error = e;
        }
        Err(e) => {
            if !abort.load(Ordering::Relaxed) {
                progress.always(&format!("sweep: {} {strategy} round {round} failed: {e}", key.label()));
            }
            row.error = e;
        }
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    use abslock_store::FlushMode;

    fn plan(target: Target, layouts: Vec<Layout>) -> Plan {
        Plan {
            grids: vec![TargetGrid {
                target,
                strategies: vec![Strategy::Abs, Strategy::ParkingLot],
                threads: vec![1, 4],
                sizes: vec![128],
                layouts,
                topics: vec![1],
                flushes: vec![FlushMode::ASYNC],
            }],
            rounds: 10,
            warmup: Duration::from_millis(5),
            measure: Duration::from_millis(30),
            pin: None,
            outside_ns: 0,
            margin: 0.04,
            seed: 1,
            quiet: true,
        }
    }

    #[test]
    fn the_estimate_counts_every_window_with_its_set_up() {
        // 2 cells x 2 strategies x 10 rounds = 40 windows of 35 ms plus set-up.
        let lb = plan(Target::LockBound, vec![Layout::Single]);
        assert_eq!(lb.windows(), 40);
        assert_eq!(lb.estimate(32), Duration::from_millis(40 * (35 + 5)));
        let single = plan(Target::Store, vec![Layout::Single]).estimate(32);
        assert_eq!(single, Duration::from_millis(40 * (35 + 18)), "reused warm segment");
        let both = plan(Target::Store, vec![Layout::Single, Layout::PerTopic]).estimate(32);
        // Per-topic windows create 4 x 32 MiB at 1.2 ms/MiB each.
        assert_eq!(both - single, Duration::from_micros(40 * (35_000 + 10_000 + 1_200 * 128)));
    }
}
