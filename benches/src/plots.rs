//! SVG plots (plotters): throughput and CPU versus threads per message size, one
//! line per strategy; ABS k and mode over acquisitions for one traced cell.

use crate::sweep_lock::TracePoint;
use plotters::prelude::*;
use std::path::Path;

/// A plot could not be drawn or written.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw {path}: {why}")]
pub struct PlotError {
    /// The SVG being written.
    pub path: String,
    /// plotters' error text.
    pub why: String,
}

fn err(path: &Path, e: impl std::fmt::Debug) -> PlotError {
    PlotError { path: path.display().to_string(), why: format!("{e:?}") }
}

/// One line of a plot: a name and its (x, y) points (x ascending).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend label (strategy name).
    pub name: String,
    /// Points.
    pub points: Vec<(f64, f64)>,
}

/// Range of positive values with some headroom, for log axes; `None` if no positive value.
pub fn log_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    (hi > 0.0).then(|| (lo / 1.5, hi * 1.5))
}

/// Labels an x position (log2 of a thread count) with the thread count when it is a whole power of two.
fn thread_label(x: &f64) -> String {
    let r = x.round();
    if (x - r).abs() < 1e-6 && r >= 0.0 { format!("{}", 2f64.powf(r) as u64) } else { String::new() }
}

/// An axis number with about three significant digits and no needless zeros.
pub fn axis_number(v: f64) -> String {
    let a = v.abs();
    if a < 1e-12 {
        return "0".into();
    }
    let s = if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.01 {
        format!("{v:.3}")
    } else {
        format!("{v:.1e}")
    };
    if s.contains('.') && !s.contains('e') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Draws `series` against threads (log2-spaced x axis) with a linear y axis from 0 to `path` (SVG).
///
/// # Errors
/// [`PlotError`] if there is nothing positive to draw or the file cannot be written.
pub fn lines_vs_threads(path: &Path, title: &str, y_desc: &str, series: &[Series]) -> Result<(), PlotError> {
    let Some((_, y1)) = log_range(series.iter().flat_map(|s| s.points.iter().map(|p| p.1))) else {
        return Err(err(path, "no positive values"));
    };
    // Linear y from 0: ratios between strategies read directly as heights.
    let y1 = y1 / 1.5 * 1.1;
    // x is log2(threads), so 1, 2, 4, 8, 16 are evenly spaced and labelled as thread counts.
    let xmax = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).fold(1.0f64, f64::max).log2();
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(path, e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.25f64..xmax + 0.25, 0f64..y1)
        .map_err(|e| err(path, e))?;
    chart
        .configure_mesh()
        .x_desc("worker threads")
        .y_desc(y_desc)
        .x_labels(xmax as usize + 2)
        .x_label_formatter(&thread_label)
        .y_labels(12)
        .y_label_formatter(&|v| axis_number(*v))
        .draw()
        .map_err(|e| err(path, e))?;
    for (i, s) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .copied()
            .filter(|p| p.0 > 0.0 && p.1 >= 0.0)
            .map(|(x, y)| (x.log2(), y))
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(|e| err(path, e))?
            .label(s.name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart
            .draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled())))
            .map_err(|e| err(path, e))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(path, e))?;
    root.present().map_err(|e| err(path, e))
}

/// Draws an ABS trace: k (log axis) and mode (spin/park) against acquisitions.
///
/// # Errors
/// [`PlotError`] if the trace is empty or the file cannot be written.
pub fn abs_trace(path: &Path, title: &str, points: &[TracePoint]) -> Result<(), PlotError> {
    if points.is_empty() {
        return Err(err(path, "empty trace"));
    }
    let x1 = points.iter().map(|p| p.acquisition).max().unwrap_or(1).max(1) as f64;
    let kmax = points.iter().map(|p| p.k).max().unwrap_or(1).max(1) as f64;
    let root = SVGBackend::new(path, (900, 620)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(path, e))?;
    let (top, bottom) = root.split_vertically(430);
    let mut k_chart = ChartBuilder::on(&top)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..x1, (0.8f64..kmax * 1.5).log_scale())
        .map_err(|e| err(path, e))?;
    k_chart
        .configure_mesh()
        .y_desc("k (spins before yielding)")
        .x_label_formatter(&|v| axis_number(*v))
        .y_label_formatter(&|v| axis_number(*v))
        .draw()
        .map_err(|e| err(path, e))?;
    let step = |f: &dyn Fn(&TracePoint) -> f64| {
        let mut v = Vec::with_capacity(points.len() * 2);
        for (i, p) in points.iter().enumerate() {
            if i > 0 {
                v.push((p.acquisition as f64, f(&points[i - 1])));
            }
            v.push((p.acquisition as f64, f(p)));
        }
        v
    };
    k_chart
        .draw_series(LineSeries::new(step(&|p| f64::from(p.k.max(1))), BLUE.stroke_width(2)))
        .map_err(|e| err(path, e))?;
    let mut m_chart = ChartBuilder::on(&bottom)
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..x1, -0.2f64..1.2f64)
        .map_err(|e| err(path, e))?;
    m_chart
        .configure_mesh()
        .x_desc("acquisitions")
        .y_desc("mode (0 spin, 1 park)")
        .y_labels(3)
        .x_label_formatter(&|v| axis_number(*v))
        .draw()
        .map_err(|e| err(path, e))?;
    m_chart
        .draw_series(LineSeries::new(step(&|p| if p.parking { 1.0 } else { 0.0 }), RED.stroke_width(2)))
        .map_err(|e| err(path, e))?;
    root.present().map_err(|e| err(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_labels_are_short() {
        assert_eq!(axis_number(2.5), "2.5");
        assert_eq!(axis_number(0.125), "0.125");
        assert_eq!(axis_number(120.0), "120");
        assert_eq!(axis_number(12.0), "12");
        assert_eq!(axis_number(0.0), "0");
        assert_eq!(thread_label(&3.0), "8");
        assert_eq!(thread_label(&0.0), "1");
        assert_eq!(thread_label(&1.5), "");
    }

    #[test]
    fn log_range_ignores_non_positive() {
        assert_eq!(log_range([0.0, -1.0, f64::NAN].into_iter()), None);
        let (lo, hi) = log_range([2.0, 0.0, 8.0].into_iter()).unwrap();
        assert!(lo < 2.0 && hi > 8.0);
    }

    #[test]
    fn plots_are_written_as_svg() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.svg");
        let s = vec![Series { name: "abs".into(), points: vec![(1.0, 5.0), (2.0, 7.0), (16.0, 3.0)] }];
        lines_vs_threads(&p, "throughput", "Mmsg/s", &s).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.starts_with("<svg") && text.contains("abs"));
        let t = dir.path().join("k.svg");
        let pts = [
            TracePoint { acquisition: 1024, k: 100, parking: false },
            TracePoint { acquisition: 2048, k: 200, parking: true },
        ];
        abs_trace(&t, "trace", &pts).unwrap();
        assert!(std::fs::read_to_string(&t).unwrap().contains("<svg"));
        assert!(abs_trace(&t, "trace", &[]).is_err());
    }
}
