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

/// The grid a set of rows covers: strategies in order of first appearance (without
/// `memcpy-limit`), thread counts, sizes and topic counts ascending, layouts and flush
/// modes in order of first appearance, repetitions = highest index + 1. `None` if no
/// lock strategy appears.
pub fn grid_of(rows: &[crate::row::Row]) -> Option<Grid> {
    fn push<T: PartialEq>(v: &mut Vec<T>, x: T) {
        if !v.contains(&x) {
            v.push(x);
        }
    }
    let mut g = Grid {
        strategies: Vec::new(),
        threads: Vec::new(),
        sizes: Vec::new(),
        layouts: Vec::new(),
        topics: Vec::new(),
        flushes: Vec::new(),
        reps: 1,
    };
    for r in rows {
        let c = &r.cell;
        if c.strategy.is_lock() {
            push(&mut g.strategies, c.strategy);
            push(&mut g.threads, c.threads);
            push(&mut g.layouts, c.layout);
            push(&mut g.topics, c.topics);
            push(&mut g.flushes, c.flush);
        }
        push(&mut g.sizes, c.msg_size);
        g.reps = g.reps.max(c.rep + 1);
    }
    g.threads.sort_unstable();
    g.sizes.sort_unstable();
    g.topics.sort_unstable();
    (!g.strategies.is_empty()).then_some(g)
}

/// Reads `abs_trace.csv` back into traces, taking each trace's contention from the
/// repetition-0 row of its cell in `rows`. Lines that do not parse are skipped.
pub fn read_traces(text: &str, rows: &[crate::row::Row]) -> Vec<crate::run::CellTrace> {
    use crate::grid::{Cell, FlushMode, Layout};
    use crate::sweep_lock::TracePoint;
    let mut traces: Vec<crate::run::CellTrace> = Vec::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() < 9 {
            continue;
        }
        let parsed = (|| {
            let cell = Cell {
                strategy: f[0].parse::<Strategy>().ok()?,
                threads: f[1].parse().ok()?,
                msg_size: f[2].parse().ok()?,
                layout: f[3].parse::<Layout>().ok()?,
                topics: f[4].parse().ok()?,
                flush: f[5].parse::<FlushMode>().ok()?,
                rep: 0,
            };
            let point = TracePoint {
                acquisition: f[6].parse().ok()?,
                k: f[7].parse().ok()?,
                parking: f[8] == "park",
            };
            Some((cell, point))
        })();
        let Some((cell, point)) = parsed else { continue };
        match traces.iter_mut().find(|t| t.cell == cell) {
            Some(t) => t.points.push(point),
            None => traces.push(crate::run::CellTrace {
                cell,
                contended_ratio: rows
                    .iter()
                    .find(|r| r.cell == cell)
                    .and_then(|r| r.abs_contended_ratio)
                    .unwrap_or(0.0),
                points: vec![point],
            }),
        }
    }
    traces
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csv::{read_csv, write_csv};

    #[test]
    fn grid_and_traces_come_back_from_the_files() {
        let text = "strategy,threads,msg_size,layout,topics,flush,rep,messages,seconds,msgs_per_s,mb_per_s,\
                    cpu_s_per_million,jain,p50_ns,p99_ns,p999_ns,abs_switches,abs_final_k\n\
                    memcpy-limit,1,128,single,1,async,0,10,1,10,1,,,,,,,\n\
                    abs,4,128,single,1,async,1,10,1,10,1,,,,,,2,21\n\
                    parking_lot,1,128,single,1,async,0,10,1,10,1,,,,,,,\n\
                    abs,1,128,single,1,async,0,10,1,10,1,,,,,,0,21\n";
        let rows = read_csv(text).unwrap();
        let g = grid_of(&rows).unwrap();
        assert_eq!(g.strategies, vec![Strategy::Abs, Strategy::ParkingLot]);
        assert_eq!(g.threads, vec![1, 4]);
        assert_eq!(g.sizes, vec![128]);
        assert_eq!(g.reps, 2);
        let mut out = Vec::new();
        write_csv(&mut out, &rows).unwrap();
        assert_eq!(read_csv(&String::from_utf8(out).unwrap()).unwrap(), rows);
        let traces = read_traces(
            "strategy,threads,msg_size,layout,topics,flush,acquisition,k,mode\n\
             abs,4,128,single,1,async,1024,21,spin\nabs,4,128,single,1,async,2048,42,park\ngarbage\n",
            &rows,
        );
        assert_eq!(traces.len(), 1);
        assert_eq!(traces[0].points.len(), 2);
        assert!(traces[0].points[1].parking);
    }
}
