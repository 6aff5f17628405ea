//! Small pure statistics: Jain's fairness index, median, percentiles, geometric mean.

/// Jain's fairness index of per-thread counts: `(Σx)² / (n · Σx²)`.
///
/// 1.0 when every thread got the same share, `1/n` when one thread got everything.
/// Returns `None` for an empty slice or when every count is zero (undefined).
/// Source: R. Jain, D. Chiu, W. Hawe, "A Quantitative Measure of Fairness and
/// Discrimination for Resource Allocation in Shared Computer Systems", DEC TR-301, 1984.
pub fn jain_index(counts: &[u64]) -> Option<f64> {
    if counts.is_empty() {
        return None;
    }
    let sum: f64 = counts.iter().map(|&c| c as f64).sum();
    let sum_sq: f64 = counts.iter().map(|&c| (c as f64) * (c as f64)).sum();
    if sum_sq == 0.0 {
        return None;
    }
    Some(sum * sum / (counts.len() as f64 * sum_sq))
}

/// The median of `values` (mean of the two middle values for an even count).
/// NaNs are ignored; `None` when nothing is left.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}

/// The nearest-rank `q`-quantile (`q` in `0.0..=1.0`, clamped) of `values`.
/// NaNs are ignored; `None` when nothing is left.
pub fn percentile(values: &[f64], q: f64) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let q = q.clamp(0.0, 1.0);
    let rank = (q * v.len() as f64).ceil() as usize;
    Some(v[rank.saturating_sub(1).min(v.len() - 1)])
}

/// The geometric mean of positive `values`; `None` if empty or any value is not
/// finite and positive (a ratio of zero has no log).
pub fn geometric_mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|&x| !(x.is_finite() && x > 0.0)) {
        return None;
    }
    let mean_ln = values.iter().map(|x| x.ln()).sum::<f64>() / values.len() as f64;
    Some(mean_ln.exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn jain_is_one_for_equal_shares_and_one_over_n_for_a_monopoly() {
        assert!(close(jain_index(&[7, 7, 7, 7]).unwrap(), 1.0));
        assert!(close(jain_index(&[10, 0, 0, 0]).unwrap(), 0.25));
        // (1+3)^2 / (2 * (1+9)) = 16/20
        assert!(close(jain_index(&[1, 3]).unwrap(), 0.8));
        assert_eq!(jain_index(&[]), None);
        assert_eq!(jain_index(&[0, 0]), None);
    }

    #[test]
    fn median_handles_odd_even_and_nan() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[f64::NAN, 5.0]), Some(5.0));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn percentile_is_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.5), Some(50.0));
        assert_eq!(percentile(&v, 0.99), Some(99.0));
        assert_eq!(percentile(&v, 1.0), Some(100.0));
        assert_eq!(percentile(&v, 0.0), Some(1.0));
        assert_eq!(percentile(&[], 0.5), None);
    }

    #[test]
    fn geometric_mean_of_ratios() {
        assert!(close(geometric_mean(&[2.0, 0.5]).unwrap(), 1.0));
        assert!(close(geometric_mean(&[4.0, 1.0]).unwrap(), 2.0));
        assert_eq!(geometric_mean(&[1.0, 0.0]), None);
        assert_eq!(geometric_mean(&[]), None);
    }
}
