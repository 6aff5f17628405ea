//! `report.md`: medians over repetitions, tables per message size with the best in
//! bold and every cell's ratio to the best, CPU, fairness, latency, the ABS summary,
//! and the layout and flush sections when the grid includes them.
//!
//! Everything here is a pure function of the rows, so it is unit-tested without timing.

use crate::grid::{Cell, FlushMode, Grid, Layout};
use crate::machine::Machine;
use crate::row::Row;
use crate::run::SweepOutcome;
use crate::stats::{geometric_mean, median};
use crate::strategy::Strategy;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A cell without its repetition index: what medians are taken over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    /// Strategy.
    pub strategy: Strategy,
    /// Worker threads.
    pub threads: usize,
    /// Message size, bytes.
    pub msg_size: usize,
    /// Layout.
    pub layout: Layout,
    /// Topics.
    pub topics: usize,
    /// Flush mode.
    pub flush: FlushMode,
}

impl Key {
    /// The key of `cell`.
    pub fn of(cell: &Cell) -> Key {
        Key {
            strategy: cell.strategy,
            threads: cell.threads,
            msg_size: cell.msg_size,
            layout: cell.layout,
            topics: cell.topics,
            flush: cell.flush,
        }
    }
}

/// Medians over repetitions of `metric`, per key (keys with no value are absent).
pub fn medians(rows: &[Row], metric: impl Fn(&Row) -> Option<f64>) -> BTreeMap<Key, f64> {
    let mut groups: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
    for r in rows {
        if let Some(v) = metric(r) {
            groups.entry(Key::of(&r.cell)).or_default().push(v);
        }
    }
    groups.into_iter().filter_map(|(k, v)| median(&v).map(|m| (k, m))).collect()
}

/// The largest value, ignoring `None` and NaN.
pub fn best(values: &[Option<f64>]) -> Option<f64> {
    values.iter().flatten().copied().filter(|v| !v.is_nan()).reduce(f64::max)
}

/// The smallest value, ignoring `None` and NaN.
pub fn lowest(values: &[Option<f64>]) -> Option<f64> {
    values.iter().flatten().copied().filter(|v| !v.is_nan()).reduce(f64::min)
}

/// A number with three significant digits (no exponent for the ranges we print).
pub fn sig3(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.1 {
        format!("{v:.3}")
    } else if a == 0.0 {
        "0".into()
    } else {
        format!("{v:.4}")
    }
}

/// A rate in messages per second with a unit that keeps it readable: `2.10 M/s`, `13.0 k/s`, `950/s`.
pub fn rate(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2} M/s", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} k/s", v / 1e3)
    } else {
        format!("{v:.0}/s")
    }
}

/// A throughput table cell: `value` in millions with its ratio to `best`, bold when
/// it is the best (ties are all bold); `-` when missing.
pub fn ratio_cell(value: Option<f64>, best: Option<f64>, scale: f64) -> String {
    match (value, best) {
        (Some(v), Some(b)) if b > 0.0 => {
            let txt = sig3(v / scale);
            let ratio = v / b;
            if v >= b { format!("**{txt}** (1.00)") } else { format!("{txt} ({ratio:.2})") }
        }
        (Some(v), _) => sig3(v / scale),
        _ => "-".into(),
    }
}

/// A cell for a lower-is-better table (CPU): bold when it is the lowest.
pub fn lowest_cell(value: Option<f64>, low: Option<f64>) -> String {
    match (value, low) {
        (Some(v), Some(l)) if v <= l => format!("**{}**", sig3(v)),
        (Some(v), _) => sig3(v),
        _ => "-".into(),
    }
}

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

/// One scenario: the (layout, topics, flush) part of a key.
type Scenario = (Layout, usize, FlushMode);

fn scenarios(grid: &Grid) -> Vec<Scenario> {
    let mut v = Vec::new();
    for &l in &grid.layouts {
        for &t in &grid.topics {
            for &f in &grid.flushes {
                v.push((l, t, f));
            }
        }
    }
    v
}

fn key(s: Strategy, threads: usize, size: usize, sc: Scenario) -> Key {
    Key { strategy: s, threads, msg_size: size, layout: sc.0, topics: sc.1, flush: sc.2 }
}

fn scenario_name(sc: Scenario) -> String {
    let topics = if sc.1 == 1 { "1 topic".to_string() } else { format!("{} topics", sc.1) };
    let log = match sc.0 {
        Layout::Single => "single log",
        Layout::PerTopic => "one log per topic",
    };
    format!("{log}, {topics}, {} flush", sc.2)
}

fn size_name(size: usize) -> String {
    if size >= 1024 && size.is_multiple_of(1024) {
        format!("{} KiB", size / 1024)
    } else {
        format!("{size} B")
    }
}

/// Per-cell figures of one strategy relative to the best strategy and to a peer.
#[derive(Debug, Clone, PartialEq)]
pub struct RelativeSummary {
    /// (threads, size, ratio to the best strategy in that cell).
    pub to_best: Vec<(usize, usize, f64)>,
    /// Geometric mean of the ratio to the peer over the cells both have.
    pub geomean_to_peer: Option<f64>,
}

/// `subject`'s median throughput relative to the best strategy of each (threads, size)
/// cell of scenario `sc`, and its geometric-mean ratio to `peer`.
pub fn relative_summary(
    tput: &BTreeMap<Key, f64>,
    grid: &Grid,
    sc: Scenario,
    subject: Strategy,
    peer: Strategy,
) -> RelativeSummary {
    let mut to_best = Vec::new();
    let mut to_peer = Vec::new();
    for &size in &grid.sizes {
        for &t in &grid.threads {
            let Some(&v) = tput.get(&key(subject, t, size, sc)) else { continue };
            let vals: Vec<Option<f64>> =
                grid.strategies.iter().map(|&s| tput.get(&key(s, t, size, sc)).copied()).collect();
            if let Some(b) = best(&vals)
                && b > 0.0
            {
                to_best.push((t, size, v / b));
            }
            if let Some(&p) = tput.get(&key(peer, t, size, sc))
                && p > 0.0
                && v > 0.0
            {
                to_peer.push(v / p);
            }
        }
    }
    RelativeSummary { to_best, geomean_to_peer: geometric_mean(&to_peer) }
}

fn strategy_header(out: &mut String, first: &str, strategies: &[Strategy]) {
    let _ = write!(out, "| {first} |");
    for s in strategies {
        let _ = write!(out, " {s} |");
    }
    out.push('\n');
    out.push_str("|---|");
    for _ in strategies {
        out.push_str("---:|");
    }
    out.push('\n');
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

/// The spread between strategies where none is contended (1 thread): min/max of their
/// median throughputs, per size. Every lock is uncontended there, so the spread is
/// measurement noise (plus fast-path differences of a few ns).
pub fn noise_floor(tput: &BTreeMap<Key, f64>, g: &Grid, sc: Scenario) -> Vec<(usize, f64)> {
    if !g.threads.contains(&1) {
        return Vec::new();
    }
    g.sizes
        .iter()
        .filter_map(|&size| {
            let vals: Vec<Option<f64>> =
                g.strategies.iter().map(|&s| tput.get(&key(s, 1, size, sc)).copied()).collect();
            match (lowest(&vals), best(&vals)) {
                (Some(l), Some(b)) if b > 0.0 && vals.iter().flatten().count() > 1 => Some((size, l / b)),
                _ => None,
            }
        })
        .collect()
}

fn render_wins(o: &mut String, tput: &BTreeMap<Key, f64>, g: &Grid, sc: Scenario, cores: usize) {
    let floor = noise_floor(tput, g, sc);
    if !floor.is_empty() {
        let _ = writeln!(o, "## Noise floor ({})\n", scenario_name(sc));
        let _ = writeln!(
            o,
            "At 1 thread no lock is contended, so differences between strategies there are measurement noise \
             (plus a few ns of fast path). Slowest / fastest strategy at 1 thread:\n"
        );
        for (size, r) in &floor {
            let _ = writeln!(o, "- {}: {r:.2}", size_name(*size));
        }
        o.push('\n');
    }
    let _ = writeln!(o, "## Where each strategy wins ({})\n", scenario_name(sc));
    let _ = writeln!(
        o,
        "Cells won, and the geometric-mean ratio to the best strategy over the cells with threads <= {cores} \
         (the core count) and with threads > {cores} (oversubscribed), small (<= 1 KiB) and large messages.\n"
    );
    let _ = writeln!(
        o,
        "| strategy | cells won | under, small | under, large | over, small | over, large | worst ratio (cell) |"
    );
    let _ = writeln!(o, "|---|---:|---:|---:|---:|---:|---|");
    for &s in &g.strategies {
        let mut won = 0;
        let mut buckets: [Vec<f64>; 4] = Default::default();
        let mut worst: Option<(f64, usize, usize)> = None;
        for &size in &g.sizes {
            for &t in &g.threads {
                let vals: Vec<Option<f64>> =
                    g.strategies.iter().map(|&x| tput.get(&key(x, t, size, sc)).copied()).collect();
                let (Some(b), Some(&v)) = (best(&vals), tput.get(&key(s, t, size, sc))) else { continue };
                if b <= 0.0 {
                    continue;
                }
                let r = v / b;
                if v >= b {
                    won += 1;
                }
                let idx = usize::from(t > cores) * 2 + usize::from(size > 1024);
                buckets[idx].push(r);
                if worst.is_none_or(|w| r < w.0) {
                    worst = Some((r, t, size));
                }
            }
        }
        let gm = |v: &Vec<f64>| geometric_mean(v).map_or("-".to_string(), |x| format!("{x:.2}"));
        let _ = writeln!(
            o,
            "| {s} | {won} | {} | {} | {} | {} | {} |",
            gm(&buckets[0]),
            gm(&buckets[1]),
            gm(&buckets[2]),
            gm(&buckets[3]),
            worst.map_or("-".into(), |(r, t, size)| format!("{r:.2} ({t} threads, {})", size_name(size)))
        );
    }
    o.push('\n');
}

fn render_abs(o: &mut String, rows: &[Row], tput: &BTreeMap<Key, f64>, g: &Grid, sc: Scenario) {
    let has = |s: Strategy| g.strategies.contains(&s);
    if !has(Strategy::Abs) && !has(Strategy::AbsRocketMq) {
        return;
    }
    let _ = writeln!(o, "## ABS summary ({})\n", scenario_name(sc));
    let switches = medians(rows, |r| r.abs_switches.map(|v| v as f64));
    let final_k = medians(rows, |r| r.abs_final_k.map(f64::from));
    for subject in [Strategy::Abs, Strategy::AbsRocketMq].into_iter().filter(|s| has(*s)) {
        let rel = relative_summary(tput, g, sc, subject, Strategy::ParkingLot);
        let _ = writeln!(o, "### {subject}: ratio to the best strategy per cell\n");
        let _ = write!(o, "| threads |");
        for &size in &g.sizes {
            let _ = write!(o, " {} |", size_name(size));
        }
        o.push_str("\n|---|");
        for _ in &g.sizes {
            o.push_str("---:|");
        }
        o.push('\n');
        for &t in &g.threads {
            let _ = write!(o, "| {t} |");
            for &size in &g.sizes {
                match rel.to_best.iter().find(|c| c.0 == t && c.1 == size) {
                    Some(c) if c.2 < 0.95 => {
                        let _ = write!(o, " {:.2} (below 0.95) |", c.2);
                    }
                    Some(c) => {
                        let _ = write!(o, " {:.2} |", c.2);
                    }
                    None => o.push_str(" - |"),
                }
            }
            o.push('\n');
        }
        o.push('\n');
        let n = rel.to_best.len();
        let ok = rel.to_best.iter().filter(|c| c.2 >= 0.95).count();
        if let Some(w) = rel.to_best.iter().min_by(|a, b| a.2.total_cmp(&b.2)) {
            let _ =
                writeln!(o, "- Worst cell: {:.2} of the best at {} threads, {}.", w.2, w.0, size_name(w.1));
        }
        let _ = writeln!(o, "- Cells at >= 0.95 of the best: {ok} of {n}.");
        match rel.geomean_to_peer {
            Some(gm) => {
                let _ = writeln!(o, "- Geometric-mean ratio to parking_lot over the grid: {gm:.3}.");
            }
            None => {
                let _ = writeln!(
                    o,
                    "- Geometric-mean ratio to parking_lot: not available (parking_lot not in the grid)."
                );
            }
        }
        let _ = writeln!(o, "- Mode switches in the window / final k (medians):");
        let mut line = String::new();
        for &size in &g.sizes {
            for &t in &g.threads {
                let k = key(subject, t, size, sc);
                if let (Some(sw), Some(fk)) = (switches.get(&k), final_k.get(&k)) {
                    let _ = write!(line, " {t}t/{}: {sw:.0} sw, k={fk:.0};", size_name(size));
                }
            }
        }
        let _ = writeln!(o, " {}\n", line.trim());
    }
    if has(Strategy::Abs) && has(Strategy::AbsRocketMq) {
        let _ = writeln!(o, "### abs versus abs-rocketmq (calibrated versus upstream constants)\n");
        let _ = write!(o, "| threads |");
        for &size in &g.sizes {
            let _ = write!(o, " {} |", size_name(size));
        }
        o.push_str("\n|---|");
        for _ in &g.sizes {
            o.push_str("---:|");
        }
        o.push('\n');
        let mut all = Vec::new();
        for &t in &g.threads {
            let _ = write!(o, "| {t} |");
            for &size in &g.sizes {
                match (
                    tput.get(&key(Strategy::Abs, t, size, sc)),
                    tput.get(&key(Strategy::AbsRocketMq, t, size, sc)),
                ) {
                    (Some(a), Some(r)) if *r > 0.0 => {
                        all.push(a / r);
                        let _ = write!(o, " {:.2} |", a / r);
                    }
                    _ => o.push_str(" - |"),
                }
            }
            o.push('\n');
        }
        let _ = writeln!(
            o,
            "\nabs / abs-rocketmq throughput; geometric mean over the grid: {}.\n",
            geometric_mean(&all).map_or("-".into(), |v| format!("{v:.3}"))
        );
    }
}

fn render_layout(o: &mut String, tput: &BTreeMap<Key, f64>, g: &Grid) {
    if g.layouts.len() < 2 && g.topics.len() < 2 {
        return;
    }
    let _ = writeln!(o, "## Layout: one log versus one log per topic\n");
    for &flush in &g.flushes {
        for &size in &g.sizes {
            for &t in &g.threads {
                let _ =
                    writeln!(o, "### {t} threads, {} messages, {flush} flush (Mmsg/s)\n", size_name(size));
                strategy_header(o, "layout, topics", &g.strategies);
                for &layout in &g.layouts {
                    for &topics in &g.topics {
                        let sc = (layout, topics, flush);
                        let vals: Vec<Option<f64>> =
                            g.strategies.iter().map(|&s| tput.get(&key(s, t, size, sc)).copied()).collect();
                        let b = best(&vals);
                        let _ = write!(o, "| {layout}, {topics} |");
                        for v in &vals {
                            let _ = write!(o, " {} |", ratio_cell(*v, b, 1e6));
                        }
                        o.push('\n');
                    }
                }
                o.push('\n');
                if g.layouts.contains(&Layout::Single) && g.layouts.contains(&Layout::PerTopic) {
                    let _ = writeln!(o, "per-topic / single throughput ratio:\n");
                    strategy_header(o, "topics", &g.strategies);
                    for &topics in &g.topics {
                        let _ = write!(o, "| {topics} |");
                        for &s in &g.strategies {
                            let a = tput.get(&key(s, t, size, (Layout::PerTopic, topics, flush)));
                            let b = tput.get(&key(s, t, size, (Layout::Single, topics, flush)));
                            match (a, b) {
                                (Some(a), Some(b)) if *b > 0.0 => {
                                    let _ = write!(o, " {:.2} |", a / b);
                                }
                                _ => o.push_str(" - |"),
                            }
                        }
                        o.push('\n');
                    }
                    o.push('\n');
                    // Crossover: the fewest topics at which one log per topic beats the single
                    // log's best strategy, comparing best against best.
                    let best_at = |layout: Layout, topics: usize| {
                        best(
                            &g.strategies
                                .iter()
                                .map(|&s| tput.get(&key(s, t, size, (layout, topics, flush))).copied())
                                .collect::<Vec<_>>(),
                        )
                    };
                    let cross = g.topics.iter().find(|&&n| {
                        match (best_at(Layout::PerTopic, n), best_at(Layout::Single, n)) {
                            (Some(p), Some(s)) => p > s,
                            _ => false,
                        }
                    });
                    let _ = writeln!(
                        o,
                        "Crossover (best per-topic beats best single log): {}.\n",
                        cross.map_or("none in this grid".to_string(), |n| format!("at {n} topics"))
                    );
                }
            }
        }
    }
}

fn render_flush(o: &mut String, rows: &[Row], tput: &BTreeMap<Key, f64>, g: &Grid) {
    if !(g.flushes.contains(&FlushMode::Async) && g.flushes.contains(&FlushMode::Sync)) {
        return;
    }
    let per_flush = medians(rows, |r| r.msgs_per_flush);
    let _ = writeln!(o, "## Flush: async versus sync (group commit)\n");
    let _ = writeln!(
        o,
        "Each cell: sync throughput, its ratio to async throughput, and messages per flush (how many puts one \
         group commit covered). Only meaningful with stores on a real disk (`--store-dir`); on tmpfs msync is free.\n"
    );
    for &layout in &g.layouts {
        for &topics in &g.topics {
            for &size in &g.sizes {
                let _ = writeln!(o, "### {}, {layout} layout, {topics} topic(s)\n", size_name(size));
                strategy_header(o, "threads", &g.strategies);
                for &t in &g.threads {
                    let _ = write!(o, "| {t} |");
                    for &s in &g.strategies {
                        let ks = key(s, t, size, (layout, topics, FlushMode::Sync));
                        let ka = key(s, t, size, (layout, topics, FlushMode::Async));
                        match (tput.get(&ks), tput.get(&ka)) {
                            (Some(sv), Some(av)) if *av > 0.0 => {
                                let mpf = per_flush.get(&ks).map_or("-".into(), |m| format!("{m:.1}"));
                                let _ = write!(o, " {} ({:.3}x, {mpf}/flush) |", rate(*sv), sv / av);
                            }
                            _ => o.push_str(" - |"),
                        }
                    }
                    o.push('\n');
                }
                o.push('\n');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_and_lowest_ignore_missing_and_nan() {
        assert_eq!(best(&[Some(1.0), None, Some(3.0), Some(f64::NAN)]), Some(3.0));
        assert_eq!(lowest(&[Some(1.0), None, Some(3.0)]), Some(1.0));
        assert_eq!(best(&[None]), None);
    }

    #[test]
    fn ratio_cell_bolds_the_best_only_and_gives_ratios() {
        assert_eq!(ratio_cell(Some(4e6), Some(4e6), 1e6), "**4.00** (1.00)");
        assert_eq!(ratio_cell(Some(2e6), Some(4e6), 1e6), "2.00 (0.50)");
        assert_eq!(ratio_cell(Some(12.34e6), Some(40e6), 1e6), "12.3 (0.31)");
        assert_eq!(ratio_cell(None, Some(4e6), 1e6), "-");
        assert_eq!(ratio_cell(Some(1e6), None, 1e6), "1.00");
    }

    #[test]
    fn lowest_cell_bolds_the_lowest() {
        assert_eq!(lowest_cell(Some(0.5), Some(0.5)), "**0.500**");
        assert_eq!(lowest_cell(Some(2.0), Some(0.5)), "2.00");
        assert_eq!(lowest_cell(None, Some(0.5)), "-");
    }

    #[test]
    fn rate_picks_a_readable_unit() {
        assert_eq!(rate(2_100_000.0), "2.10 M/s");
        assert_eq!(rate(13_000.0), "13.0 k/s");
        assert_eq!(rate(950.0), "950/s");
    }

    #[test]
    fn sig3_keeps_three_significant_digits() {
        assert_eq!(sig3(123.4), "123");
        assert_eq!(sig3(12.34), "12.3");
        assert_eq!(sig3(1.234), "1.23");
        assert_eq!(sig3(0.1234), "0.123");
        assert_eq!(sig3(0.01234), "0.0123");
        assert_eq!(sig3(0.0), "0");
    }

    fn row(s: Strategy, threads: usize, size: usize, rep: u32, rate: f64) -> Row {
        Row {
            cell: Cell {
                strategy: s,
                threads,
                msg_size: size,
                layout: Layout::Single,
                topics: 1,
                flush: FlushMode::Async,
                rep,
            },
            messages: rate as u64,
            seconds: 1.0,
            msgs_per_s: rate,
            mb_per_s: 0.0,
            cpu_s_per_million: None,
            jain: None,
            p50_ns: None,
            p99_ns: None,
            p999_ns: None,
            abs_switches: None,
            abs_final_k: None,
            hold_p50_ns: None,
            hold_p99_ns: None,
            min_thread_msgs: 0,
            max_thread_msgs: 0,
            abs_parks: None,
            abs_contended_ratio: None,
            abs_final_mode: None,
            flushes: None,
            msgs_per_flush: None,
            cores_used: None,
            pinned: false,
            target: "emulated",
        }
    }

    #[test]
    fn medians_group_over_repetitions() {
        let rows = vec![
            row(Strategy::Abs, 2, 128, 0, 1.0),
            row(Strategy::Abs, 2, 128, 1, 9.0),
            row(Strategy::Abs, 2, 128, 2, 3.0),
            row(Strategy::Abs, 4, 128, 0, 7.0),
        ];
        let m = medians(&rows, |r| Some(r.msgs_per_s));
        assert_eq!(m.len(), 2);
        assert_eq!(m[&Key::of(&rows[0].cell)], 3.0);
        assert_eq!(m[&Key::of(&rows[3].cell)], 7.0);
    }

    #[test]
    fn noise_floor_is_slowest_over_fastest_at_one_thread() {
        let mut g = Grid::default_grid();
        g.strategies = vec![Strategy::Abs, Strategy::ParkingLot];
        g.threads = vec![1, 2];
        g.sizes = vec![128];
        let rows = vec![
            row(Strategy::Abs, 1, 128, 0, 3.0),
            row(Strategy::ParkingLot, 1, 128, 0, 4.0),
            row(Strategy::Abs, 2, 128, 0, 1.0),
        ];
        let tput = medians(&rows, |r| Some(r.msgs_per_s));
        let sc = (Layout::Single, 1, FlushMode::Async);
        assert_eq!(noise_floor(&tput, &g, sc), vec![(128, 0.75)]);
        g.threads = vec![2];
        assert!(noise_floor(&tput, &g, sc).is_empty());
    }

    #[test]
    fn relative_summary_ratios_to_best_and_geomean_to_peer() {
        let mut g = Grid::default_grid();
        g.strategies = vec![Strategy::Abs, Strategy::ParkingLot, Strategy::Spin];
        g.threads = vec![1, 2];
        g.sizes = vec![128];
        g.reps = 1;
        let rows = vec![
            row(Strategy::Abs, 1, 128, 0, 8.0),
            row(Strategy::ParkingLot, 1, 128, 0, 4.0),
            row(Strategy::Spin, 1, 128, 0, 10.0),
            row(Strategy::Abs, 2, 128, 0, 2.0),
            row(Strategy::ParkingLot, 2, 128, 0, 8.0),
            row(Strategy::Spin, 2, 128, 0, 1.0),
        ];
        let tput = medians(&rows, |r| Some(r.msgs_per_s));
        let sc = (Layout::Single, 1, FlushMode::Async);
        let rel = relative_summary(&tput, &g, sc, Strategy::Abs, Strategy::ParkingLot);
        assert_eq!(rel.to_best, vec![(1, 128, 0.8), (2, 128, 0.25)]);
        // ratios to parking_lot: 2.0 and 0.25 -> geomean sqrt(0.5)
        assert!((rel.geomean_to_peer.unwrap() - 0.5f64.sqrt()).abs() < 1e-12);
    }
}
