//! `sweep compare A/results.csv B/results.csv`: per strategy and cell, both runs' verdicts
//! (against `parking_lot` and against the cell's best) and whether they agree; then the
//! overall agreement and, per target, the share of decisive verdicts in each run (agreement
//! bought with ties would show as a low decisive share).

use crate::results::{CellKey, CellResult};
use crate::stats::Verdict;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Why two results files cannot be compared.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompareError {
    /// A file could not be read or is not a sweep results.csv.
    #[error(transparent)]
    Read(#[from] crate::results::ReadError),
    /// The files cover different cells or strategies.
    #[error(
        "the two runs cover different grids: {only_a} rows only in A (e.g. {example_a}), {only_b} only in B \
         (e.g. {example_b}); compare runs of the same command"
    )]
    DifferentGrids {
        /// Rows only in A.
        only_a: usize,
        /// Rows only in B.
        only_b: usize,
        /// One of them.
        example_a: String,
        /// One of them.
        example_b: String,
    },
}

/// Agreement counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Verdict pairs compared.
    pub total: usize,
    /// Pairs that agree.
    pub agree: usize,
}

impl Tally {
    /// Agreement in percent (100 when nothing was compared).
    pub fn percent(&self) -> f64 {
        if self.total == 0 { 100.0 } else { 100.0 * self.agree as f64 / self.total as f64 }
    }
}

/// The comparison of two runs.
#[derive(Debug, Clone, Default)]
pub struct Comparison {
    /// One line per strategy and cell.
    pub lines: Vec<String>,
    /// Verdicts against `parking_lot`.
    pub vs_reference: Tally,
    /// Verdicts against the best.
    pub vs_best: Tally,
    /// Per target: (decisive verdicts against `parking_lot` in A, in B, verdicts per run).
    pub decisive: BTreeMap<String, (usize, usize, usize)>,
    /// Verdict pairs where one run says faster and the other slower (the rest of the
    /// disagreements are a decisive verdict against a tie).
    pub contradictions: usize,
}

impl Comparison {
    /// Both kinds of verdict together.
    pub fn overall(&self) -> Tally {
        Tally {
            total: self.vs_reference.total + self.vs_best.total,
            agree: self.vs_reference.agree + self.vs_best.agree,
        }
    }
}

type Key = (CellKey, String);

fn index(rows: &[CellResult]) -> BTreeMap<Key, &CellResult> {
    rows.iter().map(|r| ((r.key(), r.strategy.clone()), r)).collect()
}

/// Compares two runs' results.
///
/// # Errors
/// [`CompareError::DifferentGrids`] when the rows do not match one to one.
pub fn compare(a: &[CellResult], b: &[CellResult]) -> Result<Comparison, CompareError> {
    let (ia, ib) = (index(a), index(b));
    let ka: BTreeSet<&Key> = ia.keys().collect();
    let kb: BTreeSet<&Key> = ib.keys().collect();
    if ka != kb {
        let only_a: Vec<&&Key> = ka.difference(&kb).collect();
        let only_b: Vec<&&Key> = kb.difference(&ka).collect();
        let ex = |v: &[&&Key]| v.first().map_or("-".to_string(), |k| format!("{} {}", k.0.label(), k.1));
        return Err(CompareError::DifferentGrids {
            only_a: only_a.len(),
            only_b: only_b.len(),
            example_a: ex(&only_a),
            example_b: ex(&only_b),
        });
    }
    let mut c = Comparison::default();
    for (key, ra) in &ia {
        let rb = ib[key];
        let same_pl = ra.verdict_pl == rb.verdict_pl;
        let same_best = ra.verdict_best.canonical() == rb.verdict_best.canonical();
        if ra.verdict_pl != Verdict::Reference {
            c.vs_reference.total += 1;
            c.vs_reference.agree += usize::from(same_pl);
            let d = c.decisive.entry(key.0.target.clone()).or_default();
            d.0 += usize::from(ra.verdict_pl.is_decisive());
            d.1 += usize::from(rb.verdict_pl.is_decisive());
            d.2 += 1;
        }
        c.vs_best.total += 1;
        c.vs_best.agree += usize::from(same_best);
        let opposite = |x: Verdict, y: Verdict| {
            matches!((x, y), (Verdict::Faster, Verdict::Slower) | (Verdict::Slower, Verdict::Faster))
        };
        c.contradictions += usize::from(opposite(ra.verdict_pl, rb.verdict_pl))
            + usize::from(opposite(ra.verdict_best, rb.verdict_best));
        let mark = |same: bool| if same { "agree" } else { "DIFFER" };
        c.lines.push(format!(
            "{:<34} {:<13} vs parking_lot {:>6} {:>6} {:<6}  vs best {:>6} {:>6} {}",
            key.0.label(),
            key.1,
            ra.verdict_pl.word(),
            rb.verdict_pl.word(),
            mark(same_pl || ra.verdict_pl == Verdict::Reference),
            ra.verdict_best.word(),
            rb.verdict_best.word(),
            mark(same_best),
        ));
    }
    Ok(c)
}

/// The text `sweep compare` prints.
pub fn render(c: &Comparison) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{:<34} {:<13} verdicts: A B agreement", "cell", "strategy");
    for l in &c.lines {
        let _ = writeln!(s, "{l}");
    }
    let t = |x: &Tally| format!("{}/{} ({:.1}%)", x.agree, x.total, x.percent());
    let _ = writeln!(s, "\nagreement vs parking_lot: {}", t(&c.vs_reference));
    let _ = writeln!(s, "agreement vs best:        {}", t(&c.vs_best));
    let _ = writeln!(s, "agreement overall:        {}", t(&c.overall()));
    let _ = writeln!(
        s,
        "contradictions (faster in one run, slower in the other): {}; every other difference is decisive against tie",
        c.contradictions
    );
    for (target, (da, db, n)) in &c.decisive {
        let pct = |d: &usize| 100.0 * *d as f64 / (*n).max(1) as f64;
        let _ = writeln!(
            s,
            "decisive verdicts vs parking_lot, {target}: A {da}/{n} ({:.0}%), B {db}/{n} ({:.0}%)",
            pct(da),
            pct(db)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{Cell, Target};
    use crate::results::{RoundRow, Status, analyse};
    use crate::strategy::Strategy;

    fn run(abs_ratio: f64) -> Vec<CellResult> {
        let cell = Cell {
            target: Target::LockBound,
            threads: 2,
            size: 128,
            layout: abslock_store::Layout::Single,
            topics: 1,
            flush: abslock_store::FlushMode::ASYNC,
        };
        let key = CellKey::of(&cell, 0);
        let row = |round: u32, strategy: &str, msgs_per_s: f64| RoundRow {
            target: key.target.clone(),
            threads: key.threads,
            size: key.size,
            layout: key.layout.clone(),
            topics: key.topics,
            flush: key.flush.clone(),
            outside_ns: 0,
            round,
            position: 0,
            strategy: strategy.into(),
            status: Status::Ok,
            messages: 1,
            seconds: 1.0,
            msgs_per_s,
            cpu_ns_per_msg: 1.0,
            background_ns_per_msg: 0.0,
            capped: false,
            abs_contended_pct: None,
            acquire_p50_ns: None,
            acquire_p99_ns: None,
            acquire_p999_ns: None,
            error: String::new(),
        };
        let rounds: Vec<RoundRow> =
            (0..9).flat_map(|r| [row(r, "parking_lot", 1e6), row(r, "abs", 1e6 * abs_ratio)]).collect();
        analyse(&key, &[Strategy::Abs, Strategy::ParkingLot], &rounds, 9, 0.04)
    }

    #[test]
    fn agreement_counts_and_contradictions() {
        let same = compare(&run(0.5), &run(0.5)).unwrap();
        assert_eq!(same.overall(), Tally { total: 3, agree: 3 });
        assert_eq!(same.contradictions, 0);
        let flipped = compare(&run(0.5), &run(2.0)).unwrap();
        assert_eq!(flipped.vs_reference, Tally { total: 1, agree: 0 });
        assert_eq!(flipped.contradictions, 1, "abs slower in one run, faster in the other");
        assert_eq!(flipped.decisive["lock-bound"], (1, 1, 1));
        let other = compare(&run(0.5), &run(0.5)[..1]).unwrap_err();
        assert!(matches!(other, CompareError::DifferentGrids { only_a: 1, only_b: 0, .. }));
    }
}
