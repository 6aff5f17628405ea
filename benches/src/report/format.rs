//! Table cell formatting for the report: significant digits, rates with units, the
//! best-in-bold ratio cells, and the names of sizes and scenarios.

use super::aggregate::Scenario;
use crate::grid::Layout;
use crate::strategy::Strategy;
use std::fmt::Write as _;

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

pub(crate) fn scenario_name(sc: Scenario) -> String {
    let topics = if sc.1 == 1 { "1 topic".to_string() } else { format!("{} topics", sc.1) };
    let log = match sc.0 {
        Layout::Single => "single log",
        Layout::PerTopic => "one log per topic",
    };
    format!("{log}, {topics}, {} flush", sc.2)
}

pub(crate) fn size_name(size: usize) -> String {
    if size >= 1024 && size.is_multiple_of(1024) {
        format!("{} KiB", size / 1024)
    } else {
        format!("{size} B")
    }
}

pub(crate) fn strategy_header(out: &mut String, first: &str, strategies: &[Strategy]) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
