//! The report's analysis sections: where each strategy wins, the ABS summary, and the
//! layout and flush comparisons (written only when the grid includes them).

use super::aggregate::{Key, Scenario, best, key, medians, noise_floor, paired_ratios, relative_summary};
use super::format::{rate, ratio_cell, scenario_name, size_name, strategy_header};
use crate::grid::{FlushMode, Grid, Layout};
use crate::row::Row;
use crate::stats::geometric_mean;
use crate::strategy::Strategy;
use std::collections::BTreeMap;
use std::fmt::Write as _;

pub(crate) fn render_wins(o: &mut String, tput: &BTreeMap<Key, f64>, g: &Grid, sc: Scenario, cores: usize) {
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

pub(crate) fn render_abs(o: &mut String, rows: &[Row], tput: &BTreeMap<Key, f64>, g: &Grid, sc: Scenario) {
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
        let paired = paired_ratios(rows, g, sc, subject, Strategy::ParkingLot);
        if !paired.is_empty() {
            let vals: Vec<f64> = paired.iter().map(|p| p.2).collect();
            let _ = writeln!(
                o,
                "- Paired with parking_lot within each repetition (run back to back; median over repetitions): \
                 geometric mean {}, cells at >= 0.95 of parking_lot: {} of {}.",
                geometric_mean(&vals).map_or("-".into(), |v| format!("{v:.3}")),
                vals.iter().filter(|&&v| v >= 0.95).count(),
                vals.len()
            );
        }
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

pub(crate) fn render_layout(o: &mut String, tput: &BTreeMap<Key, f64>, g: &Grid) {
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

pub(crate) fn render_flush(o: &mut String, rows: &[Row], tput: &BTreeMap<Key, f64>, g: &Grid) {
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
