//! `results.csv`: one line per measured cell. The first 18 columns are exactly
//! issue 4's list, in its order; extra columns follow `abs_final_k`.

use crate::row::Row;
use std::io::{self, Write};

/// The column names, in order. The first 18 are fixed by issue 4; do not reorder.
pub const HEADER: &[&str] = &[
    "strategy",
    "threads",
    "msg_size",
    "layout",
    "topics",
    "flush",
    "rep",
    "messages",
    "seconds",
    "msgs_per_s",
    "mb_per_s",
    "cpu_s_per_million",
    "jain",
    "p50_ns",
    "p99_ns",
    "p999_ns",
    "abs_switches",
    "abs_final_k",
    // Extras (ours):
    "hold_p50_ns",
    "hold_p99_ns",
    "min_thread_msgs",
    "max_thread_msgs",
    "abs_parks",
    "abs_contended_ratio",
    "abs_final_mode",
    "flushes",
    "msgs_per_flush",
    "rolls",
    "cores_used",
    "pinned",
    "target",
];

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn optf(v: Option<f64>, digits: usize) -> String {
    v.map(|v| format!("{v:.digits$}")).unwrap_or_default()
}

/// The CSV fields of `row`, in [`HEADER`] order. No field contains a comma or quote
/// (all are numbers or fixed names), so no quoting is needed.
pub fn fields(row: &Row) -> Vec<String> {
    let c = &row.cell;
    vec![
        c.strategy.name(),
        c.threads.to_string(),
        c.msg_size.to_string(),
        c.layout.name().to_string(),
        c.topics.to_string(),
        c.flush.name().to_string(),
        c.rep.to_string(),
        row.messages.to_string(),
        format!("{:.6}", row.seconds),
        format!("{:.1}", row.msgs_per_s),
        format!("{:.3}", row.mb_per_s),
        optf(row.cpu_s_per_million, 4),
        optf(row.jain, 4),
        opt(row.p50_ns),
        opt(row.p99_ns),
        opt(row.p999_ns),
        opt(row.abs_switches),
        opt(row.abs_final_k),
        opt(row.hold_p50_ns),
        opt(row.hold_p99_ns),
        row.min_thread_msgs.to_string(),
        row.max_thread_msgs.to_string(),
        opt(row.abs_parks),
        optf(row.abs_contended_ratio, 4),
        opt(row.abs_final_mode),
        opt(row.flushes),
        optf(row.msgs_per_flush, 2),
        opt(row.rolls),
        optf(row.cores_used, 3),
        row.pinned.to_string(),
        row.target.to_string(),
    ]
}

/// Writes the header and every row.
///
/// # Errors
/// The writer's I/O error.
pub fn write_csv(mut w: impl Write, rows: &[Row]) -> io::Result<()> {
    writeln!(w, "{}", HEADER.join(","))?;
    for r in rows {
        writeln!(w, "{}", fields(r).join(","))?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{Cell, FlushMode, Layout};
    use crate::strategy::Strategy;
    use crate::timed::Samples;
    use crate::worker::CellOutcome;

    #[test]
    fn header_starts_with_the_issue_columns_in_order() {
        let issue = "strategy,threads,msg_size,layout,topics,flush,rep,messages,seconds,msgs_per_s,mb_per_s,\
                     cpu_s_per_million,jain,p50_ns,p99_ns,p999_ns,abs_switches,abs_final_k";
        let issue: Vec<&str> = issue.split(',').collect();
        assert_eq!(&HEADER[..issue.len()], issue.as_slice());
        let mut uniq = HEADER.to_vec();
        uniq.sort();
        uniq.dedup();
        assert_eq!(uniq.len(), HEADER.len(), "duplicate column");
    }

    #[test]
    fn rows_have_one_field_per_column_and_blanks_where_not_applicable() {
        let cell = Cell {
            strategy: Strategy::ParkingLot,
            threads: 4,
            msg_size: 1024,
            layout: Layout::Single,
            topics: 1,
            flush: FlushMode::Async,
            rep: 2,
        };
        let o = CellOutcome {
            messages: 2_000_000,
            seconds: 0.5,
            cpu_seconds: 1.0,
            per_thread: vec![500_000; 4],
            samples: Samples::new(),
            abs: None,
            trace: vec![],
            flushes: None,
            rolls: None,
        };
        let row = Row::from_outcome(cell, &o, false, "emulated");
        let f = fields(&row);
        assert_eq!(f.len(), HEADER.len());
        let get = |name: &str| f[HEADER.iter().position(|h| *h == name).unwrap()].clone();
        assert_eq!(get("strategy"), "parking_lot");
        assert_eq!(get("msgs_per_s"), "4000000.0");
        assert_eq!(get("mb_per_s"), "4096.000");
        assert_eq!(get("cpu_s_per_million"), "0.5000");
        assert_eq!(get("jain"), "1.0000");
        assert_eq!(get("abs_switches"), "");
        assert_eq!(get("p99_ns"), "");
        let mut out = Vec::new();
        write_csv(&mut out, &[row]).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.starts_with("strategy,threads,msg_size,"));
    }
}
