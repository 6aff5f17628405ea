//! `report.md`: how the run was made, then per target the verdict tables (against
//! `parking_lot` and against the cell's best), a per-strategy summary that uses only what
//! the verdicts support, CPU per message, the ABS summary, stalls and failures, the plots.

use crate::plots::size_label;
use crate::results::{self, CellResult, RoundRow, Status};
use crate::stats::{self, Verdict};
use std::fmt::Write;

/// What the report needs besides the rows.
#[derive(Debug, Clone)]
pub struct Context {
    /// The command line.
    pub command: String,
    /// Git commit the sweep binary was built from (and the checkout it ran from, if that differs), or
    /// "unknown".
    pub commit: String,
    /// Machine description.
    pub machine: String,
    /// Cores available.
    pub cores: usize,
    /// Load averages at start and end.
    pub load: (String, String),
    /// Wall time, s.
    pub wall_s: f64,
    /// Rounds per cell.
    pub rounds: u32,
    /// Warm-up and span per window, ms.
    pub warmup_ms: u64,
    /// Longest span, ms.
    pub measure_ms: u64,
    /// Equivalence margin, %.
    pub margin_pct: f64,
    /// `abslock::AbsConfig::calibrated()`, Debug-printed.
    pub abs_calibrated: String,
    /// `abslock::AbsConfig::ROCKETMQ`, Debug-printed.
    pub abs_rocketmq: String,
    /// Free-form notes (store directory, segment size).
    pub notes: Vec<String>,
    /// Whether a signal stopped the run.
    pub interrupted: bool,
}

fn arrow(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => "↑",
        Verdict::Slower => "↓",
        Verdict::Tie => "≈",
        Verdict::Best => "★",
        Verdict::Reference => "",
        Verdict::NotAvailable => "?",
    }
}

fn num(x: f64) -> String {
    if x.is_finite() { format!("{x:.2}") } else { "-".into() }
}

/// Strategies in first-seen order.
pub fn strategy_order(rows: &[CellResult]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for r in rows {
        if !v.contains(&r.strategy) {
            v.push(r.strategy.clone());
        }
    }
    v
}

/// Cells (labels) of a target in row order.
fn cells(rows: &[&CellResult]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for r in rows {
        let l = cell_label(r);
        if !v.contains(&l) {
            v.push(l);
        }
    }
    v
}

fn cell_label(r: &CellResult) -> String {
    let mut s = format!("{} t, {}", r.threads, size_label(r.size));
    if r.layout != "single" || r.topics != 1 || r.flush != "async" {
        s += &format!(", {} x{}, {}", r.layout, r.topics, r.flush);
    }
    s
}

fn table(out: &mut String, rows: &[&CellResult], order: &[String], cell: impl Fn(&CellResult) -> String) {
    let _ = writeln!(out, "| cell | {} |", order.join(" | "));
    let _ = writeln!(out, "|---|{}", "---:|".repeat(order.len()));
    for c in cells(rows) {
        let line: Vec<String> = order
            .iter()
            .map(|s| {
                rows.iter().find(|r| cell_label(r) == c && &r.strategy == s).map_or("".into(), |r| cell(r))
            })
            .collect();
        let _ = writeln!(out, "| {c} | {} |", line.join(" | "));
    }
    out.push('\n');
}

/// Per-strategy summary figures over a set of cells.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// Verdicts against `parking_lot`: faster, tie, slower.
    pub vs_pl: (usize, usize, usize),
    /// Cells where the strategy is the best or ties with it, of cells.
    pub in_best: (usize, usize),
    /// Geometric mean of the ratio to `parking_lot` with ties counted as 1.00.
    pub geomean_supported: Option<f64>,
    /// Geometric mean of the CPU-per-message ratio to `parking_lot`, cells past the cores.
    pub cpu_past_cores: Option<f64>,
}

/// The summary of `strategy` over `rows` (one target).
pub fn summarise(rows: &[&CellResult], strategy: &str, cores: usize) -> Summary {
    let mine: Vec<&&CellResult> = rows.iter().filter(|r| r.strategy == strategy).collect();
    let mut s = Summary::default();
    for r in &mine {
        match r.verdict_pl {
            Verdict::Faster => s.vs_pl.0 += 1,
            Verdict::Tie => s.vs_pl.1 += 1,
            Verdict::Slower => s.vs_pl.2 += 1,
            _ => {}
        }
        s.in_best.1 += 1;
        s.in_best.0 += usize::from(matches!(r.verdict_best, Verdict::Best | Verdict::Tie));
    }
    s.geomean_supported =
        stats::geomean(mine.iter().filter(|r| r.ratio_pl.is_finite()).map(|r| match r.verdict_pl {
            Verdict::Faster | Verdict::Slower => r.ratio_pl,
            _ => 1.0,
        }));
    s.cpu_past_cores = stats::geomean(mine.iter().filter(|r| r.threads > cores).map(|r| r.cpu_ratio_pl));
    s
}

/// Renders the report.
pub fn render(
    ctx: &Context,
    results: &[CellResult],
    rounds: &[RoundRow],
    plots: &[(String, String)],
) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# Contention sweep report\n");
    if ctx.interrupted {
        let _ = writeln!(
            o,
            "**Interrupted**: the figures below come from the rounds every cell finished; the rest did not run.\n"
        );
    }
    let _ = writeln!(o, "- Command: `{}`", ctx.command);
    let _ = writeln!(o, "- Commit: {}", ctx.commit);
    let _ = writeln!(o, "- Machine: {}", ctx.machine);
    let _ = writeln!(o, "- Load average (1, 5, 15 min): {} at start, {} at end", ctx.load.0, ctx.load.1);
    let _ = writeln!(o, "- Wall time: {:.0} s", ctx.wall_s);
    let _ = writeln!(
        o,
        "- Design: {} rounds; each round visits every cell in a fresh random order, and in a cell runs every \
         strategy one window ({} ms warm-up, then at most {} ms, shorter when the warm segments fill) in a fresh \
         random order; ratios are paired within a round, and a cell's rounds spread over the whole run.",
        ctx.rounds, ctx.warmup_ms, ctx.measure_ms
    );
    let _ = writeln!(
        o,
        "- Verdicts (Wilcoxon signed-rank test on the log round ratios): the ratio shown is the Hodges-Lehmann \
         estimate (exp of the median of the pairwise means of the log ratios); its 95% interval ({c}) must lie \
         above {m1:.2} (faster, ↑) or below {m2:.3} (slower, ↓), a ±{:.0}% equivalence margin; otherwise tie (≈). \
         ★ marks the cell's best (highest ratio to `parking_lot`); against the best, ≈ means not separable from it.",
        ctx.margin_pct,
        c = stats::wilcoxon_c(ctx.rounds as usize).map_or(
            "none exists below 6 rounds, so every verdict is a tie".to_string(),
            |c| {
                let n = ctx.rounds as usize;
                format!(
                    "the {}-th smallest to the {}-th largest of the {} pairwise means",
                    c + 1,
                    c + 1,
                    n * (n + 1) / 2
                )
            },
        ),
        m1 = 1.0 + ctx.margin_pct / 100.0,
        m2 = 1.0 / (1.0 + ctx.margin_pct / 100.0),
    );
    let _ = writeln!(o, "- ABS calibrated bounds (`AbsConfig::calibrated()`): `{}`", ctx.abs_calibrated);
    let _ = writeln!(o, "- ABS RocketMQ bounds (`AbsConfig::ROCKETMQ`): `{}`", ctx.abs_rocketmq);
    if let Some(line) = thread_limits_note(&ctx.abs_calibrated, ctx.cores) {
        let _ = writeln!(o, "- {line}");
    }
    for n in &ctx.notes {
        let _ = writeln!(o, "- {n}");
    }
    o.push('\n');
    let order = strategy_order(results);
    let mut targets: Vec<&str> = Vec::new();
    for r in results {
        if !targets.contains(&r.target.as_str()) {
            targets.push(&r.target);
        }
    }
    for target in &targets {
        let rows: Vec<&CellResult> = results.iter().filter(|r| &r.target == target).collect();
        let order: Vec<String> =
            order.iter().filter(|s| rows.iter().any(|r| &&r.strategy == s)).cloned().collect();
        let _ = writeln!(o, "## Target `{target}`\n");
        let _ = writeln!(
            o,
            "### Throughput ratio to `parking_lot` (Hodges-Lehmann estimate over rounds) and verdict\n"
        );
        table(&mut o, &rows, &order, |r| {
            if r.verdict_pl == Verdict::Reference {
                format!("{:.2}M/s", r.msgs_per_s / 1e6)
            } else {
                format!("{}{}", num(r.ratio_pl), arrow(r.verdict_pl))
            }
        });
        let _ = writeln!(o, "### Ratio to the cell's best and verdict\n");
        table(&mut o, &rows, &order, |r| format!("{}{}", num(r.ratio_best), arrow(r.verdict_best)));
        let _ = writeln!(o, "### Summary (only what the verdicts support)\n");
        let _ = writeln!(
            o,
            "Geomean: ratio to `parking_lot` over the cells, a tie counted as 1.00. Best: cells where the strategy is \
             the best or ties with it. CPU: geomean of the paired CPU-per-message ratio to `parking_lot` over cells \
             with more threads than the {} cores.\n",
            ctx.cores
        );
        let _ = writeln!(
            o,
            "| strategy | vs parking_lot ↑/≈/↓ | geomean | best or tied | CPU/msg past the cores | stalled windows |"
        );
        let _ = writeln!(o, "|---|---|---:|---:|---:|---:|");
        for s in &order {
            let sm = summarise(&rows, s, ctx.cores);
            let stalled: u32 = rows.iter().filter(|r| &r.strategy == s).map(|r| r.stalled).sum();
            let _ = writeln!(
                o,
                "| {s} | {}/{}/{} | {} | {}/{} | {} | {stalled} |",
                sm.vs_pl.0,
                sm.vs_pl.1,
                sm.vs_pl.2,
                sm.geomean_supported.map_or("-".into(), num),
                sm.in_best.0,
                sm.in_best.1,
                sm.cpu_past_cores.map_or("-".into(), num),
            );
        }
        let decisive = rows.iter().filter(|r| r.verdict_pl.is_decisive()).count();
        let judged = rows.iter().filter(|r| r.verdict_pl != Verdict::Reference).count();
        let _ = writeln!(
            o,
            "\nDecisive verdicts against `parking_lot`: {decisive}/{judged} ({:.0}%).\n",
            100.0 * decisive as f64 / judged.max(1) as f64
        );
        let _ = writeln!(
            o,
            "### CPU per message (ns, workers' own CPU clocks plus a sequencer's writer thread; median)\n"
        );
        table(&mut o, &rows, &order, |r| {
            if r.cpu_ns_per_msg.is_finite() { format!("{:.0}", r.cpu_ns_per_msg) } else { "-".into() }
        });
        let bg: Vec<f64> = rows.iter().map(|r| r.background_ns_per_msg).filter(|x| x.is_finite()).collect();
        if let Some(m) = stats::median(&bg) {
            let _ = writeln!(
                o,
                "Background threads (store flush, dispatch; not in the figures above): median {m:.0} ns of CPU per \
                 message over all windows.\n"
            );
        }
        abs_summary(&mut o, &rows, ctx.cores);
        abs_variants(&mut o, &rows, rounds, ctx.margin_pct / 100.0);
        latency(&mut o, &rows, &order);
    }
    problems(&mut o, rounds);
    if !plots.is_empty() {
        let _ = writeln!(o, "## Plots\n");
        for (caption, file) in plots {
            let _ = writeln!(o, "- [{caption}]({file})");
        }
    }
    o
}

/// The hindsight ceiling of `rows` (one target): the geometric mean over cells of the highest ratio to
/// `parking_lot` any strategy measured in that cell (`parking_lot` itself counts as 1.00), that is, what a
/// lock that picked the best of the measured strategies in each cell after the fact would score. Noise
/// only lifts it: each cell's figure is the largest of several noisy estimates. `None` without a
/// measured cell. Ours.
pub fn hindsight_ceiling(rows: &[&CellResult]) -> Option<f64> {
    let mut best: Vec<(String, f64)> = Vec::new();
    for r in rows {
        let ratio = if r.verdict_pl == Verdict::Reference { 1.0 } else { r.ratio_pl };
        if !ratio.is_finite() {
            continue;
        }
        let label = cell_label(r);
        match best.iter_mut().find(|(l, _)| *l == label) {
            Some((_, b)) => *b = b.max(ratio),
            None => best.push((label, ratio)),
        }
    }
    stats::geomean(best.into_iter().map(|(_, b)| b))
}

fn abs_summary(o: &mut String, rows: &[&CellResult], cores: usize) {
    let has = |s: &str| rows.iter().any(|r| r.strategy == s);
    if !has("abs") {
        return;
    }
    let _ = writeln!(o, "### ABS summary\n");
    let _ = writeln!(
        o,
        "| strategy | vs parking_lot ↑/≈/↓ | vs best: best or tied / slower | geomean vs parking_lot | CPU/msg vs parking_lot past the cores |"
    );
    let _ = writeln!(o, "|---|---|---|---:|---:|");
    for s in ABS_FAMILY {
        if !has(s) {
            continue;
        }
        let sm = summarise(rows, s, cores);
        let _ = writeln!(
            o,
            "| {s} | {}/{}/{} | {}/{} | {} | {} |",
            sm.vs_pl.0,
            sm.vs_pl.1,
            sm.vs_pl.2,
            sm.in_best.0,
            sm.in_best.1 - sm.in_best.0,
            sm.geomean_supported.map_or("-".into(), num),
            sm.cpu_past_cores.map_or("-".into(), num)
        );
    }
    if let Some(ceiling) = hindsight_ceiling(rows) {
        let raw = stats::geomean(
            rows.iter().filter(|r| r.strategy == "abs" && r.ratio_pl.is_finite()).map(|r| r.ratio_pl),
        );
        let _ = writeln!(
            o,
            "\nHindsight ceiling: {}. The geomean over cells of the highest ratio to `parking_lot` any strategy \
             measured in the cell (`parking_lot` counts 1.00): a lock that picked the best of these strategies in \
             each cell after the fact. Noise only lifts it. `abs`'s geomean of the same raw ratios (ties not \
             rounded to 1.00): {}.",
            num(ceiling),
            raw.map_or("-".into(), num)
        );
    }
    o.push('\n');
}

/// The ABS variants `abs` is paired with directly in [`abs_variants`].
const ABS_VARIANTS: [&str; 9] = [
    "abs-rocketmq",
    "abs-yield",
    "abs-spin",
    "abs-park",
    "abs-solo",
    "abs-no-solo",
    "abs-direct-handoff",
    "abs-no-quiet",
    "abs-8-yields",
];

/// `abs` and its variants, in the order the ABS tables list them.
const ABS_FAMILY: [&str; 10] = [
    "abs",
    "abs-rocketmq",
    "abs-yield",
    "abs-spin",
    "abs-park",
    "abs-solo",
    "abs-no-solo",
    "abs-direct-handoff",
    "abs-no-quiet",
    "abs-8-yields",
];

/// `abs` against each ABS variant of the run, paired per round in each cell: an ablation differs from
/// `abs` in one field, so its direct ratio says what that field does, with less noise than two ratios
/// to `parking_lot` (each has its own round-to-round spread).
fn abs_variants(o: &mut String, rows: &[&CellResult], rounds: &[RoundRow], margin: f64) {
    let has = |s: &str| rows.iter().any(|r| r.strategy == s);
    let variants: Vec<&str> = ABS_VARIANTS.into_iter().filter(|v| has(v)).collect();
    if !has("abs") || variants.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "### `abs` against its variants, paired per round
"
    );
    let _ = writeln!(
        o,
        "Throughput of `abs` over the variant's in the same round: Hodges-Lehmann estimate [95% interval] and \
         verdict (↑: `abs` faster, ↓: slower, ≈: within the margin).\n"
    );
    let _ = writeln!(
        o,
        "| cell | {} |",
        variants.iter().map(|v| format!("abs / {v}")).collect::<Vec<_>>().join(" | ")
    );
    let _ = writeln!(o, "|---|{}", "---:|".repeat(variants.len()));
    for label in cells(rows) {
        let Some(cell) = rows.iter().find(|r| cell_label(r) == label).map(|r| r.key()) else { continue };
        let line: Vec<String> = variants
            .iter()
            .map(|v| {
                let p = results::paired(&cell, rounds, "abs", v, margin);
                if p.n == 0 {
                    return "-".into();
                }
                let interval =
                    if p.lo.is_finite() { format!(" [{}-{}]", num(p.lo), num(p.hi)) } else { String::new() };
                format!("{}{interval}{}", num(p.estimate), arrow(p.verdict))
            })
            .collect();
        let _ = writeln!(o, "| {label} | {} |", line.join(" | "));
    }
    o.push('\n');
}

/// What `max_spinners: 0` / `max_active: 0` in a Debug-printed `AbsConfig` mean on a machine
/// with `cores` cores (`AbsConfig`'s documented rule), or `None` when neither is 0.
pub fn thread_limits_note(config_debug: &str, cores: usize) -> Option<String> {
    let is_zero = |field: &str| {
        config_debug.contains(&format!("{field}: 0,")) || config_debug.contains(&format!("{field}: 0 "))
    };
    let (spinners, active) = (is_zero("max_spinners"), is_zero("max_active"));
    if !spinners && !active {
        return None;
    }
    let cores = cores.max(1);
    let mut note = String::from(
        "In the calibrated bounds, `0` is not \"none\": it means \"derived from this machine's core count\" \
         (`std::thread::available_parallelism`, read once per process).",
    );
    if spinners {
        note += &format!(
            " At most `max_spinners` = cores - 1 (at least 1) waiters spin k at once: {} here. The others spin \
             `crowded_spins` before each yield, or yield at once while the lock's crowded-spin trial \
             (`crowded_trial`) finds that faster.",
            (cores - 1).max(1)
        );
    }
    if active {
        note += &format!(
            " At most `max_active` = cores waiters spin or yield at once, a newcomer beyond them parks \
             (entry cap): {cores} here."
        );
    }
    note += " `u32::MAX` means no limit.";
    Some(note)
}

fn tail_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => " lower",
        Verdict::Slower => " higher",
        Verdict::Tie => " ≈",
        _ => "",
    }
}

fn ns(x: Option<f64>) -> String {
    match x {
        Some(x) if x >= 10_000.0 => format!("{:.0}µs", x / 1e3),
        Some(x) if x >= 1_000.0 => format!("{:.1}µs", x / 1e3),
        Some(x) => format!("{x:.0}ns"),
        None => "-".into(),
    }
}

/// Acquire-latency tables at the target's highest thread count: p99.9 against `parking_lot`
/// with its verdict, then p50 / p99 / p99.9.
fn latency(o: &mut String, rows: &[&CellResult], order: &[String]) {
    let Some(top) = rows.iter().filter(|r| r.acquire_p999_ns.is_some()).map(|r| r.threads).max() else {
        return;
    };
    let at: Vec<&CellResult> = rows.iter().filter(|r| r.threads == top).copied().collect();
    let _ = writeln!(
        o,
        "### Acquire latency at {top} threads
"
    );
    let _ = writeln!(
        o,
        "Time from just before `lock()` to just after it returns, sampled on one acquisition in {every} per worker \
         (hdrhistogram, 3 significant digits), merged over a window's workers; the figures are medians over rounds \
         of each window's percentile. The clock read after `lock()` returns is the one read inside the critical \
         section (on sampled acquisitions only). p99.9 ratio: the paired ratio to `parking_lot`'s p99.9 over \
         rounds, estimated and judged by the same signed-rank rule and margin as throughput (below 1.00 = lower \
         tail latency): lower, ≈ (tie) or higher.\n",
        every = crate::latency::SAMPLE_EVERY
    );
    table(o, &at, order, |r| {
        if r.p999_verdict_pl == Verdict::Reference {
            ns(r.acquire_p999_ns)
        } else {
            format!("{}{}", r.p999_ratio_pl.map_or("-".into(), num), tail_word(r.p999_verdict_pl))
        }
    });
    let _ = writeln!(o, "p50 / p99 / p99.9:\n");
    table(o, &at, order, |r| {
        format!("{} / {} / {}", ns(r.acquire_p50_ns), ns(r.acquire_p99_ns), ns(r.acquire_p999_ns))
    });
    for s in ABS_FAMILY {
        let mine: Vec<&&CellResult> = at.iter().filter(|r| r.strategy == s).collect();
        if mine.is_empty() {
            continue;
        }
        let n = |v: Verdict| mine.iter().filter(|r| r.p999_verdict_pl == v).count();
        let _ = writeln!(
            o,
            "`{s}` p99.9 against `parking_lot` at {top} threads: lower/≈/higher {}/{}/{} of {} cells.\n",
            n(Verdict::Faster),
            n(Verdict::Tie),
            n(Verdict::Slower),
            mine.len()
        );
    }
}

fn problems(o: &mut String, rounds: &[RoundRow]) {
    let bad: Vec<&RoundRow> = rounds.iter().filter(|r| r.status != Status::Ok).collect();
    let _ = writeln!(o, "## Stalls and failures\n");
    if bad.is_empty() {
        let _ = writeln!(o, "None: every window put messages.\n");
        return;
    }
    let _ = writeln!(o, "Excluded from every median and ratio:\n");
    let _ = writeln!(o, "| cell | strategy | round | status | error |");
    let _ = writeln!(o, "|---|---|---:|---|---|");
    for r in bad {
        let status = if r.status == Status::Stalled { "stalled (0 messages)" } else { "failed" };
        let _ =
            writeln!(o, "| {} | {} | {} | {status} | {} |", r.key().label(), r.strategy, r.round, r.error);
    }
    o.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(threads: usize, strategy: &str, ratio_pl: f64, verdict_pl: Verdict) -> CellResult {
        CellResult {
            target: "lock-bound".into(),
            threads,
            size: 128,
            layout: "single".into(),
            topics: 1,
            flush: "async".into(),
            outside_ns: 0,
            strategy: strategy.into(),
            rounds_ok: 25,
            stalled: 0,
            failed: 0,
            msgs_per_s: 1e6,
            ratio_pl,
            ratio_pl_lo: f64::NAN,
            ratio_pl_hi: f64::NAN,
            ratio_pl_min: f64::NAN,
            ratio_pl_max: f64::NAN,
            verdict_pl,
            best: String::new(),
            ratio_best: f64::NAN,
            ratio_best_lo: f64::NAN,
            ratio_best_hi: f64::NAN,
            verdict_best: Verdict::Tie,
            cpu_ns_per_msg: f64::NAN,
            background_ns_per_msg: f64::NAN,
            cpu_ratio_pl: f64::NAN,
            abs_contended_pct: None,
            acquire_p50_ns: None,
            acquire_p99_ns: None,
            acquire_p999_ns: None,
            p999_ratio_pl: None,
            p999_verdict_pl: Verdict::NotAvailable,
        }
    }

    #[test]
    fn the_hindsight_ceiling_takes_each_cells_best_with_parking_lot_as_one() {
        let rows = [
            row(2, "parking_lot", f64::NAN, Verdict::Reference),
            row(2, "abs", 0.8, Verdict::Slower),
            row(2, "spin", 0.9, Verdict::Tie),
            row(4, "parking_lot", f64::NAN, Verdict::Reference),
            row(4, "abs", 1.21, Verdict::Faster),
            row(4, "spin", f64::NAN, Verdict::Tie),
        ];
        let refs: Vec<&CellResult> = rows.iter().collect();
        // Cell 2 t: parking_lot's 1.00 beats 0.8 and 0.9; cell 4 t: 1.21. sqrt(1.00 x 1.21) = 1.10.
        let ceiling = hindsight_ceiling(&refs).unwrap();
        assert!((ceiling - 1.1).abs() < 1e-12, "{ceiling}");
        assert_eq!(hindsight_ceiling(&[]), None);
    }

    #[test]
    fn zero_thread_limits_are_explained_with_this_machines_figures() {
        let cfg = "AbsConfig { k_init: 24, max_spinners: 0, max_active: 0, starve_after_us: 1000 }";
        let note = thread_limits_note(cfg, 2).unwrap();
        assert!(note.contains("waiters spin k at once: 1 here. The others spin `crowded_spins`"), "{note}");
        assert!(note.contains("(entry cap): 2 here"), "{note}");
        let calibrated = "AbsConfig { max_spinners: 0, max_active: 4294967295 }";
        let note = thread_limits_note(calibrated, 2).unwrap();
        assert!(!note.contains("max_active"), "{note}");
        let rocketmq = "AbsConfig { max_spinners: 4294967295, max_active: 4294967295 }";
        assert!(thread_limits_note(rocketmq, 2).is_none());
        assert!(thread_limits_note(&format!("{:?}", abslock::AbsConfig::ROCKETMQ), 8).is_none());
    }
}
