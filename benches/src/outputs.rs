//! The output directory: checked writable before the first cell, cleared of an earlier
//! run's files before this run's are written (so a narrower run never leaves stale plots
//! beside its own), then `rounds.csv`, `results.csv`, the plots and `report.md`.

use crate::plots::{self, Metric};
use crate::results::{self, CellResult, RoundRow};
use std::path::{Path, PathBuf};

/// Why the output directory cannot be used or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// `--out` cannot be created or written.
    #[error("--out {path}: not writable: {source}")]
    NotWritable {
        /// The directory.
        path: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A CSV could not be written.
    #[error("cannot write {path}: {source}")]
    Csv {
        /// The file.
        path: String,
        /// The csv error.
        #[source]
        source: csv::Error,
    },
    /// The report could not be written.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// Creates `out` if missing and proves it writable with a probe file (removed again).
///
/// # Errors
/// [`OutputError::NotWritable`].
pub fn check_writable(out: &Path) -> Result<(), OutputError> {
    let fail = |source| OutputError::NotWritable { path: out.display().to_string(), source };
    std::fs::create_dir_all(out).map_err(fail)?;
    let probe = tempfile::Builder::new().prefix(".sweep-probe-").tempfile_in(out).map_err(fail)?;
    drop(probe);
    Ok(())
}

/// Whether `name` is a file a sweep run writes (this version's or an earlier one's).
pub fn is_sweep_output(name: &str) -> bool {
    matches!(name, "results.csv" | "rounds.csv" | "report.md" | "abs_trace.csv")
        || (name.ends_with(".svg")
            && ["throughput_", "cpu_", "abs_trace", "lock-bound-", "store-"]
                .iter()
                .any(|p| name.starts_with(p)))
}

/// Removes an earlier run's outputs from `out`.
///
/// # Errors
/// The OS error of a listing or removal.
pub fn clear_stale(out: &Path) -> std::io::Result<()> {
    for e in std::fs::read_dir(out)? {
        let e = e?;
        if e.file_type()?.is_file() && e.file_name().to_str().is_some_and(is_sweep_output) {
            std::fs::remove_file(e.path())?;
        }
    }
    Ok(())
}

/// Writes both CSVs; returns their paths.
///
/// # Errors
/// [`OutputError::Csv`].
pub fn write_csvs(out: &Path, rounds: &[RoundRow], res: &[CellResult]) -> Result<Vec<PathBuf>, OutputError> {
    let mut paths = Vec::new();
    let p = out.join("rounds.csv");
    results::write_csv(&p, rounds)
        .map_err(|source| OutputError::Csv { path: p.display().to_string(), source })?;
    paths.push(p);
    let p = out.join("results.csv");
    results::write_csv(&p, res)
        .map_err(|source| OutputError::Csv { path: p.display().to_string(), source })?;
    paths.push(p);
    Ok(paths)
}

/// Draws every plot; returns (caption, file name) of those written, warnings to stderr.
pub fn write_plots(
    out: &Path,
    res: &[CellResult],
    targets: &[&str],
    order: &[String],
) -> Vec<(String, String)> {
    let mut written = Vec::new();
    for target in targets {
        let mut sizes: Vec<usize> = res.iter().filter(|r| &r.target == target).map(|r| r.size).collect();
        sizes.sort_unstable();
        sizes.dedup();
        for size in sizes {
            for (metric, stem, what, y) in [
                (
                    Metric::Ratio,
                    "ratio",
                    "throughput / parking_lot (median, 95% interval)",
                    "ratio to parking_lot",
                ),
                (Metric::Cpu, "cpu", "workers' CPU per message (median)", "CPU ns per message"),
            ] {
                let lines = plots::lines(res, target, size, order, metric);
                if lines.is_empty() {
                    continue;
                }
                let file = format!("{target}-{stem}-{size}.svg");
                let caption = format!("{target}, {}: {what}", plots::size_label(size));
                match plots::draw(&out.join(&file), &caption, y, &lines) {
                    Ok(()) => written.push((caption, file)),
                    Err(e) => eprintln!("sweep: warning: {e}"),
                }
            }
        }
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_outputs_go_and_other_files_stay() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["results.csv", "throughput_4096.svg", "store-ratio-128.svg", "notes.md", "mine.svg"] {
            std::fs::write(dir.path().join(f), "x").unwrap();
        }
        clear_stale(dir.path()).unwrap();
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, vec!["mine.svg", "notes.md"]);
    }
}
