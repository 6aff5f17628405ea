//! The sweep loop: run every cell of the grid in order, turn outcomes into rows,
//! keep ABS traces, and stop after the current cell when asked (Ctrl-C).

use crate::grid::{Cell, Grid};
use crate::registry::{self, RunContext};
use crate::row::Row;
use crate::sweep_lock::TracePoint;
use indicatif::ProgressBar;
use std::sync::atomic::{AtomicBool, Ordering};

/// An ABS adaptation trace and the cell it came from.
#[derive(Debug, Clone)]
pub struct CellTrace {
    /// The cell (repetition 0 of an ABS strategy).
    pub cell: Cell,
    /// Fraction of acquisitions that found the lock held (picks the most contended cell).
    pub contended_ratio: f64,
    /// The decisions.
    pub points: Vec<TracePoint>,
}

/// Everything a sweep produced.
#[derive(Debug, Clone, Default)]
pub struct SweepOutcome {
    /// One row per finished cell, in run order.
    pub rows: Vec<Row>,
    /// ABS traces (repetition 0 of each ABS cell).
    pub traces: Vec<CellTrace>,
    /// Cells that failed, with the error text.
    pub failures: Vec<(Cell, String)>,
    /// Whether the run was stopped early (Ctrl-C); `rows` holds what finished.
    pub interrupted: bool,
}

/// Runs `grid`'s cells with `ctx`, ticking `progress`; checks `stop` before each cell.
pub fn run_grid(grid: &Grid, ctx: &RunContext, stop: &AtomicBool, progress: &ProgressBar) -> SweepOutcome {
    let mut out = SweepOutcome::default();
    let pinned = ctx.pin.is_some();
    for cell in grid.cells() {
        if stop.load(Ordering::Relaxed) {
            out.interrupted = true;
            break;
        }
        progress.set_message(format!(
            "{} t={} {}B {} x{} {}",
            cell.strategy, cell.threads, cell.msg_size, cell.layout, cell.topics, cell.flush
        ));
        let trace = cell.rep == 0 && cell.strategy.is_abs();
        match registry::run(&cell, ctx, trace) {
            Ok(o) => {
                let row = Row::from_outcome(cell, &o, pinned, ctx.target.name());
                if trace && !o.trace.is_empty() {
                    out.traces.push(CellTrace {
                        cell,
                        contended_ratio: row.abs_contended_ratio.unwrap_or(0.0),
                        points: o.trace,
                    });
                }
                out.rows.push(row);
            }
            Err(e) => {
                progress.println(format!(
                    "cell {} t={} {}B failed: {e}",
                    cell.strategy, cell.threads, cell.msg_size
                ));
                out.failures.push((cell, e.to_string()));
            }
        }
        progress.inc(1);
    }
    progress.finish_and_clear();
    out
}
