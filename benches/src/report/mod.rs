//! `report.md`: medians over repetitions, tables per message size with the best in
//! bold and every cell's ratio to the best, CPU, fairness, latency, the ABS summary,
//! and the layout and flush sections when the grid includes them.
//!
//! Everything here is a pure function of the rows, so it is unit-tested without timing.
//!
//! | file | what |
//! |---|---|
//! | `aggregate.rs` | medians per cell, best/lowest, ratios, noise floor |
//! | `format.rs` | number and cell formatting |
//! | `sections.rs` | wins, ABS summary, layout and flush sections |

mod aggregate;
mod format;
mod sections;

pub use aggregate::{
    Key, RelativeSummary, Scenario, best, lowest, medians, noise_floor, paired_ratios, relative_summary,
};
pub use format::{lowest_cell, rate, ratio_cell, sig3};

use aggregate::{key, scenarios};
use format::{scenario_name, size_name, strategy_header};
use sections::{render_abs, render_flush, render_layout, render_wins};

use crate::grid::Grid;
use crate::machine::Machine;
use crate::run::SweepOutcome;
use crate::strategy::Strategy;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Everything the report needs besides the rows.
#[derive(Debug, Clone)]
pub struct ReportInput<'a> {
    /// Where the run happened.
    pub machine: &'a Machine,
    /// The command line as typed.
    pub command: &'a str,
    /// Whether workers were pinned.
    pub pinned: bool,
    /// "store" or "emulated".
    pub target: &'a str,
    /// The grid run.
    pub grid: &'a Grid,
    /// The sweep's rows, traces, failures.
    pub outcome: &'a SweepOutcome,
    /// Wall seconds of the whole run.
    pub wall_seconds: f64,
    /// Per-cell warm-up and measured window, ms.
    pub warmup_ms: u64,
    /// Measured window, ms.
    pub measure_ms: u64,
    /// Load averages (1/5/15 min) at the start and the end of the run.
    pub load: (String, String),
    /// A line describing the calibrated ABS config.
    pub abs_config: String,
    /// Extra lines for the header (store directory, segment size, ...).
    pub notes: Vec<String>,
    /// Plot files written (title, relative path).
    pub plots: Vec<(String, String)>,
}

/// Renders the whole report.
pub fn render(inp: &ReportInput<'_>) -> String {
    let rows = &inp.outcome.rows;
    let g = inp.grid;
    let tput = medians(rows, |r| Some(r.msgs_per_s));
    let cpu = medians(rows, |r| r.cpu_s_per_million);
    let jain = medians(rows, |r| r.jain);
    let minmax = medians(rows, |r| {
        (r.max_thread_msgs > 0).then(|| r.min_thread_msgs as f64 / r.max_thread_msgs as f64)
    });
    let mut o = String::new();
    let _ = writeln!(o, "# abslock sweep report\n");
    let _ = writeln!(o, "- Machine: {}", inp.machine);
    let _ = writeln!(o, "- Command: `{}`", inp.command);
    let _ = writeln!(
        o,
        "- Load average (1/5/15 min) at start: {}; at end: {} (other work on the machine competes with the workers)",
        inp.load.0, inp.load.1
    );
    let _ = writeln!(
        o,
        "- Workers pinned: {}",
        if inp.pinned { "yes (round robin over cores, `--pin`)" } else { "no (scheduler places threads)" }
    );
    let _ = writeln!(
        o,
        "- Critical section: {}",
        match inp.target {
            "store" => "the real abslock-store CommitLog (`put_message`)".to_string(),
            other => format!(
                "**{other}**: the emulated CommitLog (record encoded outside the lock; under it: clock read, \
             memcpy into a warm mapping at the write position, offset patch), NOT the real store"
            ),
        }
    );
    let _ = writeln!(
        o,
        "- Per cell: {} ms warm-up, {} ms measured, {} repetition(s), medians reported; {} cells in {:.0} s",
        inp.warmup_ms,
        inp.measure_ms,
        g.reps,
        rows.len(),
        inp.wall_seconds
    );
    let _ = writeln!(o, "- ABS calibrated config: {}", inp.abs_config);
    for n in &inp.notes {
        let _ = writeln!(o, "- {n}");
    }
    if inp.outcome.interrupted {
        let _ = writeln!(o, "- **Interrupted** (Ctrl-C): only the cells that finished are reported.");
    }
    for (cell, err) in &inp.outcome.failures {
        let _ = writeln!(o, "- Failed cell {} t={} {} B: {err}", cell.strategy, cell.threads, cell.msg_size);
    }
    o.push('\n');
    let _ = writeln!(
        o,
        "Throughput is in million messages per second (median over repetitions); **bold** is the best in its row, \
         the number in parentheses is the ratio to that best. MB/s counts message bodies (10^6 bytes).\n"
    );

    // The limit.
    let _ = writeln!(o, "## The limit: memcpy into a warm mapping (one thread, no lock)\n");
    let _ = writeln!(o, "| size | Mmsg/s | MB/s | best lock (Mmsg/s) | best lock / limit |");
    let _ = writeln!(o, "|---|---:|---:|---:|---:|");
    let sc0 = scenarios(g)[0];
    for &size in &g.sizes {
        let lim = tput.get(&key(Strategy::MemcpyLimit, 1, size, sc0)).copied();
        let best_lock = best(
            &g.threads
                .iter()
                .flat_map(|&t| g.strategies.iter().map(move |&s| (s, t)))
                .map(|(s, t)| tput.get(&key(s, t, size, sc0)).copied())
                .collect::<Vec<_>>(),
        );
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} |",
            size_name(size),
            lim.map_or("-".into(), |v| sig3(v / 1e6)),
            lim.map_or("-".into(), |v| sig3(v * size as f64 / 1e6)),
            best_lock.map_or("-".into(), |v| sig3(v / 1e6)),
            match (best_lock, lim) {
                (Some(b), Some(l)) if l > 0.0 => format!("{:.2}", b / l),
                _ => "-".into(),
            }
        );
    }
    o.push('\n');

    for sc in scenarios(g) {
        let _ = writeln!(o, "## Throughput: {}\n", scenario_name(sc));
        for &size in &g.sizes {
            let _ = writeln!(o, "### {} messages (Mmsg/s)\n", size_name(size));
            strategy_header(&mut o, "threads", &g.strategies);
            for &t in &g.threads {
                let vals: Vec<Option<f64>> =
                    g.strategies.iter().map(|&s| tput.get(&key(s, t, size, sc)).copied()).collect();
                let b = best(&vals);
                let _ = write!(o, "| {t} |");
                for v in &vals {
                    let _ = write!(o, " {} |", ratio_cell(*v, b, 1e6));
                }
                o.push('\n');
            }
            o.push('\n');
        }
    }

    let sc = sc0;
    let _ = writeln!(o, "## CPU seconds per million messages ({})\n", scenario_name(sc));
    let _ = writeln!(
        o,
        "Process user + system CPU (getrusage) over the measured window; **bold** is the lowest.\n"
    );
    for &size in &g.sizes {
        let _ = writeln!(o, "### {}\n", size_name(size));
        strategy_header(&mut o, "threads", &g.strategies);
        for &t in &g.threads {
            let vals: Vec<Option<f64>> =
                g.strategies.iter().map(|&s| cpu.get(&key(s, t, size, sc)).copied()).collect();
            let l = lowest(&vals);
            let _ = write!(o, "| {t} |");
            for v in &vals {
                let _ = write!(o, " {} |", lowest_cell(*v, l));
            }
            o.push('\n');
        }
        o.push('\n');
    }

    let used = medians(rows, |r| r.cores_used);
    let _ = writeln!(o, "### Cores the process kept busy (CPU s per wall s, median)\n");
    let _ = writeln!(
        o,
        "Well below min(threads, {}) means other work on the machine took the CPU during the cell, \
         which lowers throughput for every strategy alike; CPU per message is the figure that load disturbs least.\n",
        inp.machine.cores
    );
    strategy_header(&mut o, "threads / size", &g.strategies);
    for &size in &g.sizes {
        for &t in &g.threads {
            let _ = write!(o, "| {t} / {} |", size_name(size));
            for &s in &g.strategies {
                match used.get(&key(s, t, size, sc)) {
                    Some(u) => {
                        let _ = write!(o, " {u:.2} |");
                    }
                    None => o.push_str(" - |"),
                }
            }
            o.push('\n');
        }
    }
    o.push('\n');

    let rolls = medians(rows, |r| r.rolls.map(|v| v as f64));
    if !rolls.is_empty() {
        let _ = writeln!(o, "### Segment rolls in the measured window (median)\n");
        let _ = writeln!(
            o,
            "A roll runs inside the put-message lock and waits for the preallocation thread when the next \
             segment is not ready yet; a lock whose waiters keep the cores busy delays that thread.\n"
        );
        strategy_header(&mut o, "threads / size", &g.strategies);
        for &size in &g.sizes {
            for &t in &g.threads {
                let _ = write!(o, "| {t} / {} |", size_name(size));
                for &s in &g.strategies {
                    match rolls.get(&key(s, t, size, sc)) {
                        Some(v) => {
                            let _ = write!(o, " {v:.0} |");
                        }
                        None => o.push_str(" - |"),
                    }
                }
                o.push('\n');
            }
        }
        o.push('\n');
    }

    let _ = writeln!(o, "## Fairness ({})\n", scenario_name(sc));
    let _ = writeln!(
        o,
        "Jain's index over per-thread message counts (1 = equal shares, 1/n = one thread got all), then the \
         fewest/most messages any thread put. Single-thread rows are trivially fair and omitted.\n"
    );
    for &size in &g.sizes {
        if g.threads.iter().all(|&t| t == 1) {
            break;
        }
        let _ = writeln!(o, "### {}\n", size_name(size));
        strategy_header(&mut o, "threads", &g.strategies);
        for &t in g.threads.iter().filter(|&&t| t > 1) {
            let _ = write!(o, "| {t} |");
            for &s in &g.strategies {
                let k = key(s, t, size, sc);
                match (jain.get(&k), minmax.get(&k)) {
                    (Some(j), Some(m)) => {
                        let _ = write!(o, " {j:.2} / {m:.2} |");
                    }
                    _ => o.push_str(" - |"),
                }
            }
            o.push('\n');
        }
        o.push('\n');
    }

    // Latency at the most threads.
    if let Some(&tmax) = g.threads.last() {
        let acq50 = medians(rows, |r| r.p50_ns.map(|v| v as f64));
        let acq99 = medians(rows, |r| r.p99_ns.map(|v| v as f64));
        let acq999 = medians(rows, |r| r.p999_ns.map(|v| v as f64));
        let hold50 = medians(rows, |r| r.hold_p50_ns.map(|v| v as f64));
        let hold99 = medians(rows, |r| r.hold_p99_ns.map(|v| v as f64));
        let _ = writeln!(o, "## Acquire latency and hold time ({})\n", scenario_name(sc));
        let _ = writeln!(
            o,
            "Sampled on every 64th acquisition per thread through the `Timed` wrapper, ns. Hold time is the \
             critical section as the lock sees it. Acquire latency at {tmax} threads; hold time at 1 thread \
             (uncontended) and at {tmax}.\n"
        );
        let tmin = g.threads[0];
        for &size in &g.sizes {
            let _ = writeln!(o, "### {}\n", size_name(size));
            let _ = writeln!(
                o,
                "| strategy | acquire p50 | p99 | p99.9 | hold p50 @{tmin}t | hold p99 @{tmin}t | hold p50 @{tmax}t | hold p99 @{tmax}t |"
            );
            let _ = writeln!(o, "|---|---:|---:|---:|---:|---:|---:|---:|");
            let f = |m: &BTreeMap<Key, f64>, k: &Key| m.get(k).map_or("-".to_string(), |v| format!("{v:.0}"));
            for &s in &g.strategies {
                let km = key(s, tmax, size, sc);
                let k1 = key(s, tmin, size, sc);
                let _ = writeln!(
                    o,
                    "| {s} | {} | {} | {} | {} | {} | {} | {} |",
                    f(&acq50, &km),
                    f(&acq99, &km),
                    f(&acq999, &km),
                    f(&hold50, &k1),
                    f(&hold99, &k1),
                    f(&hold50, &km),
                    f(&hold99, &km)
                );
            }
            o.push('\n');
        }
    }

    render_wins(&mut o, &tput, g, sc, inp.machine.cores);
    render_abs(&mut o, rows, &tput, g, sc);
    render_layout(&mut o, &tput, g);
    render_flush(&mut o, rows, &tput, g);

    if !inp.plots.is_empty() {
        let _ = writeln!(o, "## Plots\n");
        for (title, file) in &inp.plots {
            let _ = writeln!(o, "- [{title}]({file})");
        }
        o.push('\n');
    }
    o
}
