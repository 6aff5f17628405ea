//! Writing a sweep's files: `results.csv`, `abs_trace.csv` and the SVG plots
//! (`report.md` is rendered by [`crate::report`]).

use crate::csv;
use crate::grid::Grid;
use crate::plots::{self, Series};
use crate::report::{self, Key};
use crate::run::SweepOutcome;
use crate::strategy::Strategy;
use std::io::Write as _;
use std::path::Path;

/// Writes `out/results.csv` (one row per cell) and `out/abs_trace.csv` (every ABS
/// decision of the traced cells: strategy, cell, acquisition, k, mode).
///
/// # Errors
/// A message naming the file that could not be written.
pub fn write_csvs(out: &Path, outcome: &SweepOutcome) -> Result<(), String> {
    let path = out.join("results.csv");
    let f = std::fs::File::create(&path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    csv::write_csv(std::io::BufWriter::new(f), &outcome.rows)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let tpath = out.join("abs_trace.csv");
    let mut w = std::io::BufWriter::new(
        std::fs::File::create(&tpath).map_err(|e| format!("cannot write {}: {e}", tpath.display()))?,
    );
    let res = (|| -> std::io::Result<()> {
        writeln!(w, "strategy,threads,msg_size,layout,topics,flush,acquisition,k,mode")?;
        for t in &outcome.traces {
            for p in &t.points {
                writeln!(
                    w,
                    "{},{},{},{},{},{},{},{},{}",
                    t.cell.strategy,
                    t.cell.threads,
                    t.cell.msg_size,
                    t.cell.layout,
                    t.cell.topics,
                    t.cell.flush,
                    p.acquisition,
                    p.k,
                    if p.parking { "park" } else { "spin" }
                )?;
            }
        }
        w.flush()
    })();
    res.map_err(|e| format!("cannot write {}: {e}", tpath.display()))
}

/// Draws the SVG plots into `out` for the grid's first scenario: throughput and CPU per
/// million messages versus threads for each message size, and the ABS trace of the most
/// contended traced `abs` cell. Returns (title, file name) of each plot written; a plot that
/// cannot be drawn is reported on stderr and skipped.
pub fn write_plots(out: &Path, grid: &Grid, outcome: &SweepOutcome) -> Vec<(String, String)> {
    let mut written = Vec::new();
    let (layout, topics, flush) = (grid.layouts[0], grid.topics[0], grid.flushes[0]);
    let tput = report::medians(&outcome.rows, |r| Some(r.msgs_per_s / 1e6));
    let cpu = report::medians(&outcome.rows, |r| r.cpu_s_per_million);
    for &size in &grid.sizes {
        let series_of = |m: &std::collections::BTreeMap<Key, f64>| -> Vec<Series> {
            grid.strategies
                .iter()
                .map(|&s| Series {
                    name: s.name(),
                    points: grid
                        .threads
                        .iter()
                        .filter_map(|&t| {
                            m.get(&Key { strategy: s, threads: t, msg_size: size, layout, topics, flush })
                                .map(|&v| (t as f64, v))
                        })
                        .collect(),
                })
                .filter(|s| !s.points.is_empty())
                .collect()
        };
        for (kind, m, ydesc) in
            [("throughput", &tput, "million messages / s"), ("cpu", &cpu, "CPU s per million messages")]
        {
            let series = series_of(m);
            if series.is_empty() {
                continue;
            }
            let file = format!("{kind}_{size}.svg");
            let title = format!("{kind} vs threads, {size} B messages ({layout}, {flush} flush)");
            match plots::lines_vs_threads(&out.join(&file), &title, ydesc, &series) {
                Ok(()) => written.push((title, file)),
                Err(e) => eprintln!("sweep: warning: {e}"),
            }
        }
    }
    // The most contended traced cell of the calibrated ABS (else any ABS).
    let pick = outcome
        .traces
        .iter()
        .filter(|t| t.cell.strategy == Strategy::Abs)
        .max_by(|a, b| {
            a.contended_ratio.total_cmp(&b.contended_ratio).then(a.cell.threads.cmp(&b.cell.threads))
        })
        .or_else(|| outcome.traces.iter().max_by(|a, b| a.contended_ratio.total_cmp(&b.contended_ratio)));
    if let Some(t) = pick {
        let title = format!(
            "{}: k and mode, {} threads, {} B ({:.0}% of acquisitions contended)",
            t.cell.strategy,
            t.cell.threads,
            t.cell.msg_size,
            t.contended_ratio * 100.0
        );
        match plots::abs_trace(&out.join("abs_trace.svg"), &title, &t.points) {
            Ok(()) => written.push((title, "abs_trace.svg".into())),
            Err(e) => eprintln!("sweep: warning: {e}"),
        }
    }
    written
}
