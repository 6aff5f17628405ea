//! `results.csv`: one line per measured cell. The first 18 columns are exactly
//! issue 4's list, in its order; extra columns follow `abs_final_k`.

use crate::grid::{Cell, FlushMode, Layout};
use crate::row::Row;
use crate::strategy::Strategy;
use std::collections::HashMap;
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

/// Why a `results.csv` could not be read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CsvError {
    /// The header lacks one of the columns issue 4 fixes.
    #[error("results.csv header lacks column `{0}`; is this a sweep results.csv?")]
    MissingColumn(&'static str),
    /// A field does not parse.
    #[error("results.csv line {line}: bad {column} `{value}`")]
    BadField {
        /// 1-based line number.
        line: usize,
        /// Column name.
        column: String,
        /// The field as found.
        value: String,
    },
}

/// Reads rows written by [`write_csv`] (columns found by name, so files from older
/// sweeps without the later extra columns still read; missing extras read as empty).
///
/// # Errors
/// [`CsvError`] naming the missing column or the line and field that does not parse.
pub fn read_csv(text: &str) -> Result<Vec<Row>, CsvError> {
    let mut lines = text.lines().enumerate();
    let Some((_, header)) = lines.next() else {
        return Err(CsvError::MissingColumn(HEADER[0]));
    };
    let idx: HashMap<&str, usize> = header.split(',').enumerate().map(|(i, h)| (h.trim(), i)).collect();
    for required in &HEADER[..18] {
        if !idx.contains_key(required) {
            return Err(CsvError::MissingColumn(required));
        }
    }
    let mut rows = Vec::new();
    for (n, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        let field = |name: &str| idx.get(name).and_then(|&i| f.get(i)).map_or("", |v| v.trim());
        let bad = |name: &str| CsvError::BadField {
            line: n + 1,
            column: name.to_string(),
            value: field(name).to_string(),
        };
        let req = |name: &str| -> Result<f64, CsvError> { field(name).parse::<f64>().map_err(|_| bad(name)) };
        let opt = |name: &str| -> Result<Option<f64>, CsvError> {
            match field(name) {
                "" => Ok(None),
                v => v.parse::<f64>().map(Some).map_err(|_| bad(name)),
            }
        };
        let opt_u = |name: &str| -> Result<Option<u64>, CsvError> { Ok(opt(name)?.map(|v| v as u64)) };
        let cell = Cell {
            strategy: field("strategy").parse::<Strategy>().map_err(|_| bad("strategy"))?,
            threads: req("threads")? as usize,
            msg_size: req("msg_size")? as usize,
            layout: field("layout").parse::<Layout>().map_err(|_| bad("layout"))?,
            topics: req("topics")? as usize,
            flush: field("flush").parse::<FlushMode>().map_err(|_| bad("flush"))?,
            rep: req("rep")? as u32,
        };
        rows.push(Row {
            cell,
            messages: req("messages")? as u64,
            seconds: req("seconds")?,
            msgs_per_s: req("msgs_per_s")?,
            mb_per_s: req("mb_per_s")?,
            cpu_s_per_million: opt("cpu_s_per_million")?,
            jain: opt("jain")?,
            p50_ns: opt_u("p50_ns")?,
            p99_ns: opt_u("p99_ns")?,
            p999_ns: opt_u("p999_ns")?,
            abs_switches: opt_u("abs_switches")?,
            abs_final_k: opt("abs_final_k")?.map(|v| v as u32),
            hold_p50_ns: opt_u("hold_p50_ns")?,
            hold_p99_ns: opt_u("hold_p99_ns")?,
            min_thread_msgs: opt_u("min_thread_msgs")?.unwrap_or(0),
            max_thread_msgs: opt_u("max_thread_msgs")?.unwrap_or(0),
            abs_parks: opt_u("abs_parks")?,
            abs_contended_ratio: opt("abs_contended_ratio")?,
            abs_final_mode: match field("abs_final_mode") {
                "spin" => Some("spin"),
                "park" => Some("park"),
                _ => None,
            },
            flushes: opt_u("flushes")?,
            msgs_per_flush: opt("msgs_per_flush")?,
            rolls: opt_u("rolls")?,
            cores_used: opt("cores_used")?,
            pinned: field("pinned") == "true",
            target: if field("target") == "emulated" { "emulated" } else { "store" },
        });
    }
    Ok(rows)
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
        write_csv(&mut out, std::slice::from_ref(&row)).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.starts_with("strategy,threads,msg_size,"));
        let back = read_csv(&text).unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].cell, row.cell);
        assert_eq!(back[0].messages, row.messages);
        assert_eq!(back[0].jain, Some(1.0));
        assert_eq!(back[0].target, "emulated");
    }

    #[test]
    fn reading_names_the_missing_column_or_bad_field() {
        assert_eq!(read_csv("strategy,threads\n"), Err(CsvError::MissingColumn("msg_size")));
        let header = HEADER[..18].join(",");
        let line = "abs,x,128,single,1,async,0,1,1,1,1,,,,,,,";
        match read_csv(&format!("{header}\n{line}\n")) {
            Err(CsvError::BadField { line, column, value }) => {
                assert_eq!((line, column.as_str(), value.as_str()), (2, "threads", "x"));
            }
            other => panic!("expected BadField, got {other:?}"),
        }
    }
}
