//! The ABS adaptation trace: after the grid, one extra window of `abs` (not measured, not in
//! any median) in the most contended lock-bound cell with the lock's trace on
//! (`abslock::RawAbsLock::enable_trace`), drawn as k and mode over acquisitions
//! (`abslock::TracePoint`: one point per adaptation window). Ours.

use crate::grid::{Cell, Target, TargetGrid};
use crate::plots::PlotError;
use crate::strategy::Strategy;
use abslock::{Mode, TracePoint};
use plotters::prelude::*;
use std::path::Path;

/// Decisions kept per traced window (one per adaptation window of the lock).
pub const TRACE_CAPACITY: usize = 4096;

/// The SVG's file name in `--out`.
pub const TRACE_SVG: &str = "abs_trace.svg";

/// The same points as CSV in `--out` (`acquisition,k,mode,crowded_yield,solo`), for figures the plot
/// does not show, such as the crowded-spin and solo trials' choices.
pub const TRACE_CSV: &str = "abs_trace.csv";

/// One CSV row of the trace.
#[derive(serde::Serialize)]
struct TraceRow {
    acquisition: u64,
    k: u32,
    mode: &'static str,
    crowded_yield: bool,
    solo: bool,
}

/// Writes `points` to `path` as CSV, one row per adaptation decision under a header (an empty trace
/// writes an empty file: the header goes out with the first row).
///
/// # Errors
/// A message naming the file when it cannot be written.
pub fn write_csv(path: &Path, points: &[TracePoint]) -> Result<(), String> {
    let why = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", path.display());
    let mut w = csv::Writer::from_path(path).map_err(|e| why(&e))?;
    for p in points {
        w.serialize(TraceRow {
            acquisition: p.acquisition,
            k: p.k,
            mode: p.mode.as_str(),
            crowded_yield: p.crowded_yield,
            solo: p.solo,
        })
        .map_err(|e| why(&e))?;
    }
    w.flush().map_err(|e| why(&e))
}

/// How many of `points` left crowded waiters yielding at once (the crowded-spin trial chose yielding).
pub fn crowded_yield_count(points: &[TracePoint]) -> usize {
    points.iter().filter(|p| p.crowded_yield).count()
}

/// How many of `points` left the solo regime on (the solo trial chose it, or one of its solo arms ran).
pub fn solo_count(points: &[TracePoint]) -> usize {
    points.iter().filter(|p| p.solo).count()
}

/// The most contended lock-bound cell that runs `abs`: the most threads, then the smallest
/// message (the shortest critical section, so the most acquisitions per second meet a
/// holder). `None` when no lock-bound grid runs `abs`.
pub fn most_contended(grids: &[TargetGrid]) -> Option<Cell> {
    grids
        .iter()
        .filter(|g| g.target == Target::LockBound && g.strategies.contains(&Strategy::Abs))
        .flat_map(TargetGrid::cells)
        .max_by_key(|c| (c.threads, std::cmp::Reverse(c.size)))
}

/// Draws `points` to `path`: k over acquisitions as a step line, each decision a dot coloured
/// by the mode it chose (spin, park); legend beside the data.
///
/// # Errors
/// [`PlotError`] when there is no point or the file cannot be written.
pub fn draw(path: &Path, title: &str, points: &[TracePoint]) -> Result<(), PlotError> {
    let err = |e: &dyn std::fmt::Debug| PlotError { path: path.display().to_string(), why: format!("{e:?}") };
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return Err(err(&"the trace is empty"));
    };
    let x0 = first.acquisition as f64;
    let x1 = (last.acquisition as f64).max(x0 + 1.0);
    let k_max = points.iter().map(|p| p.k).max().unwrap_or(1).max(1) as f64;
    let root = SVGBackend::new(path, (860, 440)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (plot, legend) = root.split_horizontally(690);
    let mut chart = ChartBuilder::on(&plot)
        .caption(title, ("sans-serif", 17))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x0..x1, 0f64..k_max * 1.1)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("acquisitions since the lock was created")
        .y_desc("k (spin bound, pauses)")
        .draw()
        .map_err(|e| err(&e))?;
    let line = RGBColor(127, 127, 127);
    let step = points.windows(2).flat_map(|w| {
        let x = w[1].acquisition as f64;
        [(x, f64::from(w[0].k)), (x, f64::from(w[1].k))]
    });
    chart
        .draw_series(LineSeries::new(
            std::iter::once((x0, f64::from(first.k))).chain(step),
            line.stroke_width(1),
        ))
        .map_err(|e| err(&e))?;
    let colour = |m: Mode| if m == Mode::Park { RGBColor(255, 127, 14) } else { RGBColor(31, 119, 180) };
    chart
        .draw_series(
            points
                .iter()
                .map(|p| Circle::new((p.acquisition as f64, f64::from(p.k)), 3, colour(p.mode).filled())),
        )
        .map_err(|e| err(&e))?;
    for (i, (name, c)) in
        [("k", line), ("mode: spin", colour(Mode::Spin)), ("mode: park", colour(Mode::Park))]
            .into_iter()
            .enumerate()
    {
        let y = 40 + i as i32 * 22;
        legend.draw(&Rectangle::new([(8, y - 5), (26, y + 5)], c.filled())).map_err(|e| err(&e))?;
        legend.draw(&Text::new(name, (32, y - 7), ("sans-serif", 14))).map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_contended_cell_has_the_most_threads_and_the_smallest_size() {
        let grid = TargetGrid {
            target: Target::LockBound,
            strategies: vec![Strategy::Abs, Strategy::ParkingLot],
            threads: vec![1, 16, 4],
            sizes: vec![1024, 128],
            layouts: vec![abslock_store::Layout::Single],
            topics: vec![1],
            flushes: vec![abslock_store::FlushMode::ASYNC],
        };
        let c = most_contended(std::slice::from_ref(&grid)).unwrap();
        assert_eq!((c.threads, c.size), (16, 128));
        let no_abs = TargetGrid { strategies: vec![Strategy::ParkingLot], ..grid };
        assert!(most_contended(&[no_abs]).is_none());
    }

    #[test]
    fn draws_a_trace_and_refuses_an_empty_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(TRACE_SVG);
        let pts: Vec<TracePoint> = (1..20)
            .map(|i| TracePoint {
                acquisition: i * 256,
                k: (i as u32 % 5) * 10,
                mode: if i % 7 == 0 { Mode::Park } else { Mode::Spin },
                crowded_yield: i % 3 == 0,
                solo: i % 4 == 0,
            })
            .collect();
        draw(&path, "trace", &pts).unwrap();
        let csv_path = dir.path().join(TRACE_CSV);
        write_csv(&csv_path, &pts).unwrap();
        let text = std::fs::read_to_string(&csv_path).unwrap();
        assert_eq!(text.lines().next(), Some("acquisition,k,mode,crowded_yield,solo"));
        assert_eq!(text.lines().count(), 1 + pts.len());
        assert!(
            text.contains("1792,20,park,false,false") && text.contains("768,30,spin,true,false"),
            "{text}"
        );
        assert_eq!(crowded_yield_count(&pts), 6);
        assert_eq!(solo_count(&pts), 4);
        assert!(std::fs::read_to_string(&path).unwrap().contains("<svg"));
        assert!(draw(&path, "trace", &[]).is_err());
    }
}
