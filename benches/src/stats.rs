//! The test behind every verdict: the Wilcoxon signed-rank test on the logs of the paired
//! per-round ratios, with its Hodges-Lehmann estimate and confidence interval, and an
//! equivalence margin of `1 ± margin` around it.
//!
//! A strategy is **faster** than its peer when the 95% interval's lower end is above
//! `1 + margin`, **slower** when its upper end is below `1 / (1 + margin)`, and a **tie**
//! otherwise (equal within the margin, or not separable with these rounds): "faster by more
//! than the margin, at 95%". The signed-rank interval is the sign test's (order statistics of
//! the ratios themselves) made shorter for the same coverage by using the ranks of the
//! ratios' distances from the centre too, so more real differences come out decisive while a
//! cell's verdict moves no more between runs (measured by resampling the rounds of four
//! default runs: the two give the same agreement between replicates, this one 1-4 points
//! more decisive verdicts on the lock-bound target and 5-9 points on the store target). A rule that instead asks only the estimate to be outside the
//! margin and the interval to exclude 1 is more decisive still but agreed less between
//! replicates, so it is not used.
//!
//! A reader checks a verdict from the per-round ratios in `rounds.csv`: take the natural
//! log of each round's ratio (`n` rounds), form the `n(n+1)/2` pairwise means
//! `(l_i + l_j) / 2` for `i <= j` (the Walsh averages) and sort them; the estimate is
//! `exp` of their median, and the 95% interval runs from `exp` of the `(c+1)`-th smallest to
//! `exp` of the `(c+1)`-th largest, where `c` is the largest signed-rank count with
//! `P(W <= c) <= 2.5%` ([`wilcoxon_c`]). With the default 15 rounds there are 120 means and
//! `c = 25`: the 26th smallest to the 26th largest (95.2% coverage). Below 6 rounds no
//! interval reaches 95% and every verdict is a tie. The interval needs the log ratios to be
//! symmetric about their centre; with the strategies in a fresh random order in every round,
//! a strategy equal to its peer gives exactly that (each round's ratio and its inverse are
//! equally likely). Source: Hollander, Wolfe and Chicken, "Nonparametric Statistical
//! Methods", 3rd ed., 3.1-3.3 (signed-rank test, Hodges-Lehmann estimator, Tukey's Walsh
//! average interval); the margin is ours.

use serde::{Deserialize, Serialize};

/// Confidence the interval must reach.
pub const CONFIDENCE: f64 = 0.95;

/// A verdict of one strategy against a peer in one cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Higher throughput, beyond the margin, at 95%.
    Faster,
    /// Within the margin, or not separable.
    Tie,
    /// Lower throughput, beyond the margin, at 95%.
    Slower,
    /// The strategy is the cell's best (the verdict against the best).
    Best,
    /// The strategy is the reference itself (the verdict against `parking_lot`).
    #[serde(rename = "ref")]
    Reference,
    /// No round with both strategies measured.
    #[serde(rename = "n/a")]
    NotAvailable,
}

impl Verdict {
    /// Whether the verdict is decisive (faster or slower).
    pub fn is_decisive(&self) -> bool {
        matches!(self, Verdict::Faster | Verdict::Slower)
    }

    /// The verdict for agreement between runs: `best` and `tie` against the best both say
    /// "not slower than the best", so they agree.
    pub fn canonical(&self) -> Verdict {
        match self {
            Verdict::Best => Verdict::Tie,
            v => *v,
        }
    }

    /// The word used in the report and the CSV.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Tie => "tie",
            Verdict::Slower => "slower",
            Verdict::Best => "best",
            Verdict::Reference => "ref",
            Verdict::NotAvailable => "n/a",
        }
    }
}

/// The median of `v` (mean of the middle two for an even count); `None` if empty.
pub fn median(v: &[f64]) -> Option<f64> {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return None;
    }
    s.sort_by(f64::total_cmp);
    let n = s.len();
    Some(if n % 2 == 1 { s[n / 2] } else { (s[n / 2 - 1] + s[n / 2]) / 2.0 })
}

/// The number of sign vectors of `n` ranks whose positive ranks sum to each `w`
/// (`0..=n(n+1)/2`): the exact null distribution of the signed-rank statistic, times `2^n`.
fn signed_rank_counts(n: usize) -> Vec<f64> {
    let top = n * (n + 1) / 2;
    let mut counts = vec![0.0f64; top + 1];
    counts[0] = 1.0;
    for rank in 1..=n {
        for w in (rank..=top).rev() {
            counts[w] += counts[w - rank];
        }
    }
    counts
}

/// The largest `c` with `P(W <= c) <= (1 - CONFIDENCE) / 2` for the signed-rank statistic
/// `W` of `n` pairs: the interval of the Hodges-Lehmann estimate runs from the `(c+1)`-th
/// smallest to the `(c+1)`-th largest Walsh average. `None` when even `W = 0` is too likely
/// (`n < 6`).
pub fn wilcoxon_c(n: usize) -> Option<usize> {
    if n == 0 {
        return None;
    }
    let counts = signed_rank_counts(n);
    let total = 2f64.powi(n as i32);
    let tail = (1.0 - CONFIDENCE) / 2.0;
    let mut cumulative = 0.0;
    let mut c = None;
    for (w, count) in counts.iter().enumerate() {
        cumulative += count;
        if cumulative / total <= tail {
            c = Some(w);
        } else {
            break;
        }
    }
    c
}

/// The Walsh averages of `v`, `(v_i + v_j) / 2` for `i <= j`, sorted.
fn walsh_averages(v: &[f64]) -> Vec<f64> {
    let mut w = Vec::with_capacity(v.len() * (v.len() + 1) / 2);
    for (i, a) in v.iter().enumerate() {
        for b in &v[i..] {
            w.push((a + b) / 2.0);
        }
    }
    w.sort_by(f64::total_cmp);
    w
}

/// The Hodges-Lehmann estimate of the typical ratio in `ratios` (positive, finite; others
/// are skipped) and its 95% interval, computed on logs and mapped back: `None` when no
/// ratio is usable, an interval of `None` below 6 ratios.
pub fn hodges_lehmann(ratios: &[f64]) -> Option<(f64, Option<(f64, f64)>)> {
    let logs: Vec<f64> = ratios.iter().filter(|x| x.is_finite() && **x > 0.0).map(|x| x.ln()).collect();
    let w = walsh_averages(&logs);
    let estimate = median(&w)?.exp();
    let interval = wilcoxon_c(logs.len()).map(|c| (w[c].exp(), w[w.len() - 1 - c].exp()));
    Some((estimate, interval))
}

/// A paired comparison: the estimated ratio, its interval, the spread, and the verdict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Paired {
    /// Hodges-Lehmann estimate of the per-round ratio (see the module docs).
    pub estimate: f64,
    /// Lower end of the 95% interval (NaN below 6 rounds).
    pub lo: f64,
    /// Upper end of the interval.
    pub hi: f64,
    /// Smallest per-round ratio.
    pub min: f64,
    /// Largest per-round ratio.
    pub max: f64,
    /// Rounds that paired.
    pub n: usize,
    /// The verdict.
    pub verdict: Verdict,
}

/// Judges per-round `ratios` (strategy / peer) with an equivalence `margin` (0.04 = 4%).
pub fn judge(ratios: &[f64], margin: f64) -> Paired {
    let nan = f64::NAN;
    let Some((estimate, interval)) = hodges_lehmann(ratios) else {
        return Paired {
            estimate: nan,
            lo: nan,
            hi: nan,
            min: nan,
            max: nan,
            n: 0,
            verdict: Verdict::NotAvailable,
        };
    };
    let usable = || ratios.iter().copied().filter(|x| x.is_finite() && *x > 0.0);
    let min = usable().fold(f64::INFINITY, f64::min);
    let max = usable().fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi, verdict) = match interval {
        Some((lo, hi)) if lo > 1.0 + margin => (lo, hi, Verdict::Faster),
        Some((lo, hi)) if hi < 1.0 / (1.0 + margin) => (lo, hi, Verdict::Slower),
        Some((lo, hi)) => (lo, hi, Verdict::Tie),
        None => (nan, nan, Verdict::Tie),
    };
    Paired { estimate, lo, hi, min, max, n: usable().count(), verdict }
}

/// Geometric mean of positive finite values; `None` if there are none.
pub fn geomean(v: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (sum, n) = v
        .into_iter()
        .filter(|x| x.is_finite() && *x > 0.0)
        .fold((0.0, 0usize), |(s, n), x| (s + x.ln(), n + 1));
    (n > 0).then(|| (sum / n as f64).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn the_signed_rank_critical_values_match_the_tables() {
        // Two-sided 5% critical values of the signed-rank statistic (Hollander, Wolfe and
        // Chicken, table A.4; also scipy.stats.wilcoxon's exact distribution).
        assert_eq!(wilcoxon_c(5), None, "P(W = 0) = 1/32 > 2.5%");
        assert_eq!(wilcoxon_c(6), Some(0));
        assert_eq!(wilcoxon_c(8), Some(3));
        assert_eq!(wilcoxon_c(10), Some(8));
        assert_eq!(wilcoxon_c(15), Some(25));
        assert_eq!(wilcoxon_c(20), Some(52));
        let counts = signed_rank_counts(4);
        assert_eq!(counts.iter().sum::<f64>(), 16.0);
        assert_eq!(counts[5], 2.0, "{{1,4}} and {{2,3}}");
    }

    #[test]
    fn the_estimate_is_the_median_of_walsh_averages() {
        let (est, interval) = hodges_lehmann(&[1.0, 2.0, 4.0]).unwrap();
        // logs 0, l, 2l (l = ln 2): Walsh averages 0, l/2, l, l, 3l/2, 2l; median l.
        assert!((est - 2.0).abs() < 1e-12);
        assert_eq!(interval, None, "3 rounds");
        let r = [1.10, 1.20, 1.15, 1.30, 1.05, 1.25, 1.18, 1.22, 1.12];
        let (est, interval) = hodges_lehmann(&r).unwrap();
        let (lo, hi) = interval.unwrap();
        assert!(lo < est && est < hi && lo > 1.0, "{lo} {est} {hi}");
        assert_eq!(hodges_lehmann(&[f64::NAN, 0.0]), None);
    }

    #[test]
    fn verdicts_need_the_interval_outside_the_margin() {
        let fast = [1.3, 1.2, 1.25, 1.4, 1.1, 1.3, 1.28, 1.22, 1.31];
        assert_eq!(judge(&fast, 0.04).verdict, Verdict::Faster);
        let slow: Vec<f64> = fast.iter().map(|x| 1.0 / x).collect();
        assert_eq!(judge(&slow, 0.04).verdict, Verdict::Slower);
        // With the default 15 rounds, a wild round on each side barely moves the estimate and
        // keeps the interval above the margin (the low one makes 14 of the 120 pairwise means
        // fall below it; 25 may).
        let outliers = [0.5, 1.3, 1.2, 1.25, 1.4, 1.1, 1.3, 1.28, 9.0, 1.15, 1.22, 1.35, 1.18, 1.27, 1.3];
        let p = judge(&outliers, 0.04);
        assert_eq!(p.verdict, Verdict::Faster, "{p:?}");
        assert!((1.2..1.3).contains(&p.estimate), "{p:?}");
        // Clearly different from 1 but by less than the margin: equal in practice.
        let near = [1.03, 1.025, 1.03, 1.02, 1.035, 1.03, 1.025, 1.03, 1.03];
        let p = judge(&near, 0.04);
        assert!(p.lo > 1.0, "separable from 1: {p:?}");
        assert_eq!(p.verdict, Verdict::Tie, "inside the margin");
        // Beyond the margin by the estimate, but the interval reaches into it.
        let wide = [1.12, 1.02, 1.15, 1.01, 1.10, 1.03, 1.09, 1.05, 1.08];
        let p = judge(&wide, 0.04);
        assert!(p.estimate > 1.04 && p.lo < 1.04, "{p:?}");
        assert_eq!(p.verdict, Verdict::Tie);
        assert_eq!(judge(&fast[..5], 0.04).verdict, Verdict::Tie, "too few rounds");
        assert_eq!(judge(&[], 0.04).verdict, Verdict::NotAvailable);
    }

    #[test]
    fn geomean_skips_non_positive() {
        assert!((geomean([2.0, 8.0]).unwrap() - 4.0).abs() < 1e-12);
        assert_eq!(geomean([0.0, f64::NAN]), None);
    }
}
