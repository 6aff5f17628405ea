//! Aggregation for the report: medians over repetitions per cell, the best and lowest
//! of a row, ratios to the best and to a peer, and the noise floor.

use crate::grid::{Cell, FlushMode, Grid, Layout};
use crate::row::Row;
use crate::stats::{geometric_mean, median};
use crate::strategy::Strategy;
use std::collections::BTreeMap;

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

/// One scenario: the (layout, topics, flush) part of a key.
pub type Scenario = (Layout, usize, FlushMode);

pub(crate) fn scenarios(grid: &Grid) -> Vec<Scenario> {
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

pub(crate) fn key(s: Strategy, threads: usize, size: usize, sc: Scenario) -> Key {
    Key { strategy: s, threads, msg_size: size, layout: sc.0, topics: sc.1, flush: sc.2 }
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

/// Throughputs of a subject and its peer in one repetition of a cell.
type Pair = (Option<f64>, Option<f64>);

/// `subject` / `peer` throughput paired within each repetition (the two ran back to back,
/// so slow drift in the machine's load cancels), then the median over repetitions, per
/// (threads, size) cell of scenario `sc`, in grid order.
pub fn paired_ratios(
    rows: &[Row],
    grid: &Grid,
    sc: Scenario,
    subject: Strategy,
    peer: Strategy,
) -> Vec<(usize, usize, f64)> {
    // (threads, size, rep) -> (subject, peer) throughput.
    let mut per_rep: BTreeMap<(usize, usize, u32), Pair> = BTreeMap::new();
    for r in rows {
        let c = &r.cell;
        if (c.layout, c.topics, c.flush) != sc {
            continue;
        }
        let e = per_rep.entry((c.threads, c.msg_size, c.rep)).or_default();
        if c.strategy == subject {
            e.0 = Some(r.msgs_per_s);
        } else if c.strategy == peer {
            e.1 = Some(r.msgs_per_s);
        }
    }
    let mut out = Vec::new();
    for &size in &grid.sizes {
        for &t in &grid.threads {
            let ratios: Vec<f64> = per_rep
                .iter()
                .filter(|(k, _)| k.0 == t && k.1 == size)
                .filter_map(|(_, v)| match *v {
                    (Some(a), Some(b)) if b > 0.0 => Some(a / b),
                    _ => None,
                })
                .collect();
            if let Some(m) = median(&ratios) {
                out.push((t, size, m));
            }
        }
    }
    out
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
            rolls: None,
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
    fn paired_ratios_pair_within_a_repetition() {
        let mut g = Grid::default_grid();
        g.threads = vec![2];
        g.sizes = vec![128];
        let rows = vec![
            row(Strategy::Abs, 2, 128, 0, 2.0),
            row(Strategy::ParkingLot, 2, 128, 0, 4.0),
            row(Strategy::Abs, 2, 128, 1, 9.0),
            row(Strategy::ParkingLot, 2, 128, 1, 9.0),
            row(Strategy::Abs, 2, 128, 2, 3.0),
            row(Strategy::ParkingLot, 2, 128, 2, 4.0),
            row(Strategy::Abs, 2, 128, 3, 1.0), // no peer in rep 3: ignored
        ];
        let sc = (Layout::Single, 1, FlushMode::Async);
        // ratios 0.5, 1.0, 0.75 -> median 0.75
        assert_eq!(paired_ratios(&rows, &g, sc, Strategy::Abs, Strategy::ParkingLot), vec![(2, 128, 0.75)]);
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
