//! The sweep's two CSV files (`csv` + `serde`): `rounds.csv`, one row per window (a
//! strategy in a round of a cell), and `results.csv`, one row per strategy and cell with the
//! medians, the paired ratios and the verdicts derived from the rounds.

use crate::grid::{Cell, flush_name, layout_name};
use crate::stats::{self, Paired, Verdict};
use crate::strategy::{REFERENCE, Strategy};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What became of one window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Measured.
    Ok,
    /// Put no message in its span (a stall): shown, excluded from every median.
    Stalled,
    /// A put or the setup failed (see `error`).
    Failed,
}

/// The columns that name a cell, shared by both files.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CellKey {
    /// `lock-bound` or `store`.
    pub target: String,
    /// Worker threads.
    pub threads: usize,
    /// Message body size, bytes.
    pub size: usize,
    /// `single` or `per-topic`.
    pub layout: String,
    /// Topics.
    pub topics: usize,
    /// `async` or `sync`.
    pub flush: String,
    /// Calibrated work outside the lock per put, ns (lock-bound; 0 for store).
    pub outside_ns: u64,
}

impl CellKey {
    /// The key of `cell` with `outside_ns` of outside work.
    pub fn of(cell: &Cell, outside_ns: u64) -> CellKey {
        CellKey {
            target: cell.target.name().into(),
            threads: cell.threads,
            size: cell.size,
            layout: layout_name(cell.layout).into(),
            topics: cell.topics,
            flush: flush_name(cell.flush).into(),
            outside_ns,
        }
    }

    /// `lock-bound t=4 1024B` (plus the scenario when not the default).
    pub fn label(&self) -> String {
        let mut s = format!("{} t={} {}B", self.target, self.threads, self.size);
        if self.layout != "single" || self.topics != 1 || self.flush != "async" {
            s += &format!(" {} x{} {}", self.layout, self.topics, self.flush);
        }
        if self.outside_ns > 0 {
            s += &format!(" +{}ns", self.outside_ns);
        }
        s
    }
}

/// One row of `rounds.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundRow {
    /// `lock-bound` or `store`.
    pub target: String,
    /// Worker threads.
    pub threads: usize,
    /// Message body size, bytes.
    pub size: usize,
    /// `single` or `per-topic`.
    pub layout: String,
    /// Topics.
    pub topics: usize,
    /// `async` or `sync`.
    pub flush: String,
    /// Calibrated work outside the lock per put, ns (lock-bound; 0 for store).
    pub outside_ns: u64,
    /// Round, from 0.
    pub round: u32,
    /// Position of this window in the round's random order, from 0.
    pub position: u32,
    /// Strategy name.
    pub strategy: String,
    /// What became of the window.
    pub status: Status,
    /// Messages put in the timed span.
    pub messages: u64,
    /// Timed span, s.
    pub seconds: f64,
    /// Messages per second.
    pub msgs_per_s: f64,
    /// Workers' own CPU per message, ns.
    pub cpu_ns_per_msg: f64,
    /// CPU of the process's other threads per message, ns (store threads).
    pub background_ns_per_msg: f64,
    /// Whether the span ended at the byte cap.
    pub capped: bool,
    /// ABS only: share of acquisitions that found the lock held, %.
    pub abs_contended_pct: Option<f64>,
    /// Acquire latency, median of the span's sampled acquisitions (`crate::latency`), ns.
    #[serde(default)]
    pub acquire_p50_ns: Option<f64>,
    /// Acquire latency, 99th percentile, ns.
    #[serde(default)]
    pub acquire_p99_ns: Option<f64>,
    /// Acquire latency, 99.9th percentile, ns.
    #[serde(default)]
    pub acquire_p999_ns: Option<f64>,
    /// Why the window failed.
    pub error: String,
}

/// One row of `results.csv`: a strategy in a cell, over all rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellResult {
    /// `lock-bound` or `store`.
    pub target: String,
    /// Worker threads.
    pub threads: usize,
    /// Message body size, bytes.
    pub size: usize,
    /// `single` or `per-topic`.
    pub layout: String,
    /// Topics.
    pub topics: usize,
    /// `async` or `sync`.
    pub flush: String,
    /// Calibrated work outside the lock per put, ns (lock-bound; 0 for store).
    pub outside_ns: u64,
    /// Strategy name.
    pub strategy: String,
    /// Rounds measured (neither stalled nor failed).
    pub rounds_ok: u32,
    /// Rounds that stalled (0 messages).
    pub stalled: u32,
    /// Rounds that failed.
    pub failed: u32,
    /// Median messages per second.
    pub msgs_per_s: f64,
    /// Typical ratio to `parking_lot` measured in the same round: the Hodges-Lehmann estimate
    /// over rounds (see [`crate::stats`]).
    pub ratio_pl: f64,
    /// 95% interval of that estimate (lower end; empty below 6 rounds).
    pub ratio_pl_lo: f64,
    /// Upper end.
    pub ratio_pl_hi: f64,
    /// Smallest per-round ratio to `parking_lot`.
    pub ratio_pl_min: f64,
    /// Largest.
    pub ratio_pl_max: f64,
    /// Verdict against `parking_lot`.
    pub verdict_pl: Verdict,
    /// The cell's best strategy (highest `ratio_pl`; `parking_lot` counts as 1).
    pub best: String,
    /// Hodges-Lehmann estimate of the per-round ratios to the best.
    pub ratio_best: f64,
    /// 95% interval, lower end.
    pub ratio_best_lo: f64,
    /// Upper end.
    pub ratio_best_hi: f64,
    /// Verdict against the best (`best` for the best itself).
    pub verdict_best: Verdict,
    /// Median workers' CPU per message, ns.
    pub cpu_ns_per_msg: f64,
    /// Median background CPU per message, ns.
    pub background_ns_per_msg: f64,
    /// Median of the per-round CPU-per-message ratios to `parking_lot`.
    pub cpu_ratio_pl: f64,
    /// ABS only: median share of contended acquisitions, %.
    pub abs_contended_pct: Option<f64>,
    /// Median over rounds of the window's median acquire latency, ns.
    #[serde(default)]
    pub acquire_p50_ns: Option<f64>,
    /// Median over rounds of the window's 99th-percentile acquire latency, ns.
    #[serde(default)]
    pub acquire_p99_ns: Option<f64>,
    /// Median over rounds of the window's 99.9th-percentile acquire latency, ns.
    #[serde(default)]
    pub acquire_p999_ns: Option<f64>,
    /// Typical per-round ratio of this p99.9 to `parking_lot`'s (below 1: lower latency): the
    /// inverse of the Hodges-Lehmann estimate the verdict judges.
    #[serde(default)]
    pub p999_ratio_pl: Option<f64>,
    /// Verdict on the p99.9 against `parking_lot`, judged on `parking_lot`'s p99.9 over this
    /// one's like a throughput ratio: `faster` = lower (better) tail latency, `slower` = higher.
    #[serde(default = "not_available")]
    pub p999_verdict_pl: Verdict,
}

fn not_available() -> Verdict {
    Verdict::NotAvailable
}

fn opt_series(
    rounds: &[RoundRow],
    strategy: &str,
    n: u32,
    f: impl Fn(&RoundRow) -> Option<f64>,
) -> Vec<Option<f64>> {
    series(rounds, strategy, n, |x| f(x).unwrap_or(f64::NAN))
        .into_iter()
        .map(|v| v.filter(|x| x.is_finite()))
        .collect()
}

macro_rules! keyed {
    ($t:ty) => {
        impl $t {
            /// The cell this row belongs to.
            pub fn key(&self) -> CellKey {
                CellKey {
                    target: self.target.clone(),
                    threads: self.threads,
                    size: self.size,
                    layout: self.layout.clone(),
                    topics: self.topics,
                    flush: self.flush.clone(),
                    outside_ns: self.outside_ns,
                }
            }
        }
    };
}
keyed!(RoundRow);
keyed!(CellResult);

/// Per-round values of one strategy in one cell (`None`: stalled or failed).
fn series(rounds: &[RoundRow], strategy: &str, n: u32, f: impl Fn(&RoundRow) -> f64) -> Vec<Option<f64>> {
    (0..n)
        .map(|r| {
            rounds.iter().find(|x| x.round == r && x.strategy == strategy && x.status == Status::Ok).map(&f)
        })
        .collect()
}

fn ratios(a: &[Option<f64>], b: &[Option<f64>]) -> Vec<f64> {
    a.iter().zip(b).filter_map(|(a, b)| Some(a.as_ref()? / b.as_ref()?)).filter(|x| x.is_finite()).collect()
}

fn some(v: &[Option<f64>]) -> Vec<f64> {
    v.iter().flatten().copied().collect()
}

/// Paired comparison of strategy `a` against `b` in one cell: the per-round throughput ratios
/// `a / b` over the rounds both finished, judged with `margin` as the verdicts against `parking_lot`
/// are ([`stats::judge`]; `NotAvailable` when no round pairs). Ours.
pub fn paired(cell: &CellKey, rounds: &[RoundRow], a: &str, b: &str, margin: f64) -> Paired {
    let mine: Vec<RoundRow> = rounds.iter().filter(|r| &r.key() == cell).cloned().collect();
    let n = mine.iter().map(|r| r.round + 1).max().unwrap_or(0);
    let thr = |s: &str| series(&mine, s, n, |x| x.msgs_per_s);
    stats::judge(&ratios(&thr(a), &thr(b)), margin)
}

/// Derives the `results.csv` rows of one cell from its rounds (all strategies, `rounds` rounds).
pub fn analyse(
    cell: &CellKey,
    strategies: &[Strategy],
    rounds: &[RoundRow],
    n: u32,
    margin: f64,
) -> Vec<CellResult> {
    let names: Vec<String> = strategies.iter().map(Strategy::name).collect();
    let thr = |s: &str| series(rounds, s, n, |x| x.msgs_per_s);
    let reference = REFERENCE.name();
    let pl = thr(&reference);
    let pl_cpu = series(rounds, &reference, n, |x| x.cpu_ns_per_msg);
    let pl_p999 = opt_series(rounds, &reference, n, |x| x.acquire_p999_ns);
    // The best is chosen by the paired estimate against `parking_lot` (1 for itself), not by
    // raw median throughput: pairing cancels what a round does to all strategies alike, so
    // the choice flips less between runs when two strategies are close.
    let best = names
        .iter()
        .filter_map(|s| {
            let estimate = if *s == reference {
                some(&pl).first().map(|_| 1.0)
            } else {
                stats::hodges_lehmann(&ratios(&thr(s), &pl)).map(|e| e.0)
            };
            Some((s.clone(), estimate?))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|b| b.0)
        .unwrap_or_default();
    let best_thr = thr(&best);
    names
        .iter()
        .map(|s| {
            let mine = thr(s);
            let count =
                |st: Status| rounds.iter().filter(|x| &x.strategy == s && x.status == st).count() as u32;
            let vs_pl: Paired = stats::judge(&ratios(&mine, &pl), margin);
            let vs_best = stats::judge(&ratios(&mine, &best_thr), margin);
            let cpu = series(rounds, s, n, |x| x.cpu_ns_per_msg);
            let p999 = opt_series(rounds, s, n, |x| x.acquire_p999_ns);
            let tail = stats::judge(&ratios(&pl_p999, &p999), margin);
            let q = |f: fn(&RoundRow) -> Option<f64>| stats::median(&some(&opt_series(rounds, s, n, f)));
            let abs: Vec<f64> = rounds
                .iter()
                .filter(|x| &x.strategy == s && x.status == Status::Ok)
                .filter_map(|x| x.abs_contended_pct)
                .collect();
            CellResult {
                target: cell.target.clone(),
                threads: cell.threads,
                size: cell.size,
                layout: cell.layout.clone(),
                topics: cell.topics,
                flush: cell.flush.clone(),
                outside_ns: cell.outside_ns,
                strategy: s.clone(),
                rounds_ok: count(Status::Ok),
                stalled: count(Status::Stalled),
                failed: count(Status::Failed),
                msgs_per_s: stats::median(&some(&mine)).unwrap_or(f64::NAN),
                ratio_pl: vs_pl.estimate,
                ratio_pl_lo: vs_pl.lo,
                ratio_pl_hi: vs_pl.hi,
                ratio_pl_min: vs_pl.min,
                ratio_pl_max: vs_pl.max,
                verdict_pl: if *s == reference { Verdict::Reference } else { vs_pl.verdict },
                best: best.clone(),
                ratio_best: vs_best.estimate,
                ratio_best_lo: vs_best.lo,
                ratio_best_hi: vs_best.hi,
                verdict_best: if *s == best { Verdict::Best } else { vs_best.verdict },
                cpu_ns_per_msg: stats::median(&some(&cpu)).unwrap_or(f64::NAN),
                background_ns_per_msg: stats::median(&some(&series(rounds, s, n, |x| {
                    x.background_ns_per_msg
                })))
                .unwrap_or(f64::NAN),
                cpu_ratio_pl: stats::median(&ratios(&cpu, &pl_cpu)).unwrap_or(f64::NAN),
                abs_contended_pct: stats::median(&abs),
                acquire_p50_ns: q(|x| x.acquire_p50_ns),
                acquire_p99_ns: q(|x| x.acquire_p99_ns),
                acquire_p999_ns: stats::median(&some(&p999)),
                p999_ratio_pl: tail.estimate.is_finite().then(|| 1.0 / tail.estimate),
                p999_verdict_pl: if *s == reference { Verdict::Reference } else { tail.verdict },
            }
        })
        .collect()
}

/// Why a results file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The file could not be opened or read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A row does not have the sweep's columns (a foreign or damaged CSV).
    #[error("{path} is not a sweep results.csv (row {row}): {why}")]
    Foreign {
        /// The file.
        path: String,
        /// 1-based data row.
        row: usize,
        /// What did not parse.
        why: String,
    },
    /// The file holds no rows.
    #[error("{0} holds no results")]
    Empty(String),
}

/// Writes `rows` to `path` with a header.
///
/// # Errors
/// The csv writer's error (I/O).
pub fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_path(path)?;
    for r in rows {
        w.serialize(r)?;
    }
    w.flush()?;
    Ok(())
}

/// Reads a `results.csv` written by [`write_csv`].
///
/// # Errors
/// [`ReadError`]: unreadable, foreign columns, or empty.
pub fn read_results(path: &Path) -> Result<Vec<CellResult>, ReadError> {
    let p = path.display().to_string();
    let mut r = csv::Reader::from_path(path).map_err(|e| match e.into_kind() {
        csv::ErrorKind::Io(source) => ReadError::Io { path: p.clone(), source },
        k => ReadError::Foreign { path: p.clone(), row: 0, why: format!("{k:?}") },
    })?;
    let mut out = Vec::new();
    for (i, row) in r.deserialize::<CellResult>().enumerate() {
        out.push(row.map_err(|e| ReadError::Foreign { path: p.clone(), row: i + 1, why: e.to_string() })?);
    }
    if out.is_empty() {
        return Err(ReadError::Empty(p));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Target;

    fn key() -> CellKey {
        CellKey::of(
            &Cell {
                target: Target::LockBound,
                threads: 4,
                size: 128,
                layout: abslock_store::Layout::Single,
                topics: 1,
                flush: abslock_store::FlushMode::ASYNC,
            },
            0,
        )
    }

    fn row(round: u32, strategy: &str, msgs_per_s: f64, status: Status) -> RoundRow {
        let k = key();
        RoundRow {
            target: k.target,
            threads: k.threads,
            size: k.size,
            layout: k.layout,
            topics: k.topics,
            flush: k.flush,
            outside_ns: k.outside_ns,
            round,
            position: 0,
            strategy: strategy.into(),
            status,
            messages: if status == Status::Ok { 100 } else { 0 },
            seconds: 0.1,
            msgs_per_s,
            cpu_ns_per_msg: 1e9 / msgs_per_s.max(1.0),
            background_ns_per_msg: 0.0,
            capped: false,
            abs_contended_pct: None,
            acquire_p50_ns: Some(100.0),
            acquire_p99_ns: Some(1000.0),
            acquire_p999_ns: Some(if strategy == "abs" { 2000.0 } else { 4000.0 }),
            error: String::new(),
        }
    }

    #[test]
    fn pairs_by_round_excludes_stalls_and_names_the_best() {
        let mut rounds = Vec::new();
        for r in 0..9 {
            // Drift hits both alike; abs stays 2x slower in every round.
            let drift = 1.0 + r as f64 * 0.3;
            rounds.push(row(r, "parking_lot", 1e6 * drift, Status::Ok));
            rounds.push(row(r, "abs", 0.5e6 * drift, Status::Ok));
        }
        rounds.push(row(9, "parking_lot", 1e6, Status::Ok));
        rounds.push(row(9, "abs", 0.0, Status::Stalled));
        let res = analyse(&key(), &[Strategy::Abs, Strategy::ParkingLot], &rounds, 10, 0.04);
        let abs = &res[0];
        assert_eq!((abs.rounds_ok, abs.stalled), (9, 1));
        assert!((abs.ratio_pl - 0.5).abs() < 1e-9);
        assert_eq!(abs.verdict_pl, Verdict::Slower);
        assert_eq!(abs.best, "parking_lot");
        assert_eq!(abs.verdict_best, Verdict::Slower);
        assert_eq!(res[1].verdict_pl, Verdict::Reference);
        assert_eq!(res[1].verdict_best, Verdict::Best);
        // abs's p99.9 is half parking_lot's in every round: lower tail latency, judged decisively.
        assert!((abs.p999_ratio_pl.unwrap() - 0.5).abs() < 1e-9, "{:?}", abs.p999_ratio_pl);
        assert_eq!(abs.p999_verdict_pl, Verdict::Faster);
        assert_eq!(abs.acquire_p50_ns, Some(100.0));
        assert_eq!(res[1].p999_verdict_pl, Verdict::Reference);
    }

    #[test]
    fn paired_compares_two_strategies_round_by_round_in_one_cell_only() {
        let mut rounds = Vec::new();
        for r in 0..8 {
            let drift = 1.0 + r as f64 * 0.5;
            rounds.push(row(r, "abs", 1.2e6 * drift, Status::Ok));
            rounds.push(row(r, "abs-spin", 1e6 * drift, Status::Ok));
        }
        rounds.push(row(8, "abs", 0.0, Status::Stalled));
        rounds.push(row(8, "abs-spin", 1e6, Status::Ok));
        // Another cell's rounds must not pair in.
        let mut other = row(0, "abs", 1.0, Status::Ok);
        other.threads = 16;
        rounds.push(other);
        let p = paired(&key(), &rounds, "abs", "abs-spin", 0.04);
        assert_eq!(p.n, 8);
        assert!((p.estimate - 1.2).abs() < 1e-9, "{p:?}");
        assert_eq!(p.verdict, Verdict::Faster);
        assert_eq!(paired(&key(), &rounds, "abs", "abs-park", 0.04).verdict, Verdict::NotAvailable);
    }

    #[test]
    fn csv_round_trips_and_foreign_files_are_typed_errors() {
        let dir = tempfile::tempdir().unwrap();
        let rounds: Vec<RoundRow> = (0..6)
            .flat_map(|r| [row(r, "parking_lot", 1e6, Status::Ok), row(r, "abs", 1e6, Status::Ok)])
            .collect();
        let res = analyse(&key(), &[Strategy::Abs, Strategy::ParkingLot], &rounds, 6, 0.04);
        let path = dir.path().join("results.csv");
        write_csv(&path, &res).unwrap();
        let back = read_results(&path).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[0].verdict_pl, Verdict::Tie);
        let foreign = dir.path().join("foreign.csv");
        std::fs::write(&foreign, "a,b\n1,2\n").unwrap();
        assert!(matches!(read_results(&foreign), Err(ReadError::Foreign { .. })));
        assert!(matches!(read_results(&dir.path().join("missing.csv")), Err(ReadError::Io { .. })));
    }
}
