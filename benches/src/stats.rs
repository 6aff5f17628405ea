//! The test behind every verdict: a distribution-free confidence interval for the median
//! of the paired per-round ratios (the sign test inverted: order statistics `k` and
//! `n + 1 - k`), compared with an equivalence band of `1 ± margin`.
//!
//! A strategy is **faster** than its peer when the interval's lower end is above
//! `1 + margin`, **slower** when its upper end is below `1 / (1 + margin)`, and a **tie**
//! otherwise (equal within the margin, or not separable with these rounds). A reader checks
//! a verdict from the per-round ratios in `rounds.csv`: with the default 15 rounds the
//! interval runs from the 4th smallest to the 4th largest ratio (96.5% coverage); with 9
//! rounds from the 2nd to the 2nd largest; with 6-8 rounds from the smallest to the largest;
//! below 6 rounds no interval reaches 95% and every verdict is a tie. Source: the sign-test interval for a median (e.g. Conover, "Practical
//! Nonparametric Statistics", 3.2); the margin is ours.

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

/// P(B <= j) for B ~ Binomial(n, 1/2).
fn binomial_cdf_half(n: usize, j: usize) -> f64 {
    let mut c = 1.0f64; // C(n, 0)
    let mut sum = 0.0;
    for i in 0..=j.min(n) {
        if i > 0 {
            c = c * (n - i + 1) as f64 / i as f64;
        }
        sum += c;
    }
    sum / 2f64.powi(n as i32)
}

/// The largest `k >= 1` for which `[x_(k), x_(n+1-k)]` covers the median with at least
/// [`CONFIDENCE`]; `None` when even `[min, max]` falls short (n < 6).
pub fn order_statistic_k(n: usize) -> Option<usize> {
    let mut best = None;
    for k in 1..=n.div_ceil(2) {
        if 1.0 - 2.0 * binomial_cdf_half(n, k - 1) >= CONFIDENCE {
            best = Some(k);
        } else {
            break;
        }
    }
    best
}

/// The 95% interval for the median of `ratios`, `None` with fewer than 6.
pub fn median_interval(ratios: &[f64]) -> Option<(f64, f64)> {
    let mut s: Vec<f64> = ratios.iter().copied().filter(|x| x.is_finite()).collect();
    s.sort_by(f64::total_cmp);
    let k = order_statistic_k(s.len())?;
    Some((s[k - 1], s[s.len() - k]))
}

/// A paired comparison: median ratio, its interval, the spread, and the verdict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Paired {
    /// Median of the per-round ratios.
    pub median: f64,
    /// The 95% interval (NaN when too few rounds).
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
    let Some(median) = median(ratios) else {
        let nan = f64::NAN;
        return Paired {
            median: nan,
            lo: nan,
            hi: nan,
            min: nan,
            max: nan,
            n: 0,
            verdict: Verdict::NotAvailable,
        };
    };
    let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let max = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi, verdict) = match median_interval(ratios) {
        Some((lo, hi)) if lo > 1.0 + margin => (lo, hi, Verdict::Faster),
        Some((lo, hi)) if hi < 1.0 / (1.0 + margin) => (lo, hi, Verdict::Slower),
        Some((lo, hi)) => (lo, hi, Verdict::Tie),
        None => (f64::NAN, f64::NAN, Verdict::Tie),
    };
    Paired { median, lo, hi, min, max, n: ratios.len(), verdict }
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
    fn order_statistics_follow_the_binomial() {
        assert_eq!(order_statistic_k(5), None, "2/32 = 6.25% > 5%");
        assert_eq!(order_statistic_k(6), Some(1));
        assert_eq!(order_statistic_k(8), Some(1), "[x2, x7] covers 93.0%");
        assert_eq!(order_statistic_k(9), Some(2), "[x2, x8] covers 96.1%");
        assert_eq!(order_statistic_k(12), Some(3));
        assert_eq!(order_statistic_k(15), Some(4), "[x4, x12] covers 96.5%");
        assert!((binomial_cdf_half(9, 1) - 10.0 / 512.0).abs() < 1e-12);
    }

    #[test]
    fn verdicts_need_the_interval_outside_the_margin() {
        let fast = [1.3, 1.2, 1.25, 1.4, 1.1, 1.3, 1.28, 1.22, 1.31];
        assert_eq!(judge(&fast, 0.04).verdict, Verdict::Faster);
        let slow: Vec<f64> = fast.iter().map(|x| 1.0 / x).collect();
        assert_eq!(judge(&slow, 0.04).verdict, Verdict::Slower);
        // One wild round on each side is tolerated with 9 rounds.
        let outliers = [0.5, 1.3, 1.2, 1.25, 1.4, 1.1, 1.3, 1.28, 9.0];
        assert_eq!(judge(&outliers, 0.04).verdict, Verdict::Faster);
        let near = [1.03, 1.05, 1.06, 1.02, 1.04, 1.05, 1.03, 1.06, 1.05];
        assert_eq!(judge(&near, 0.04).verdict, Verdict::Tie, "inside the margin");
        assert_eq!(judge(&fast[..5], 0.04).verdict, Verdict::Tie, "too few rounds");
        assert_eq!(judge(&[], 0.04).verdict, Verdict::NotAvailable);
    }

    #[test]
    fn geomean_skips_non_positive() {
        assert!((geomean([2.0, 8.0]).unwrap() - 4.0).abs() < 1e-12);
        assert_eq!(geomean([0.0, f64::NAN]), None);
    }
}
