//! SVG plots (plotters), per target and message size: throughput ratio to `parking_lot`
//! versus threads, and workers' CPU per message versus threads; one line per strategy with
//! its spread as bars, the legend beside the data.

use crate::results::CellResult;
use plotters::prelude::*;
use std::path::Path;

/// Distinct colours (Tableau 10), one per strategy in column order.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// `128 B`, `1 KiB`, `16 KiB`: message sizes as the report writes them.
pub fn size_label(size: usize) -> String {
    if size >= 1024 && size.is_multiple_of(1024) {
        format!("{} KiB", size / 1024)
    } else {
        format!("{size} B")
    }
}

/// One line: a strategy's (threads, value, spread low, spread high) points.
#[derive(Debug, Clone)]
pub struct Line {
    /// Strategy name.
    pub name: String,
    /// (threads, value, low, high).
    pub points: Vec<(usize, f64, f64, f64)>,
}

/// What to plot.
#[derive(Debug, Clone, Copy)]
pub enum Metric {
    /// Median paired ratio to `parking_lot`, bars = 95% interval (min..max below 6 rounds).
    Ratio,
    /// Workers' CPU per message, ns (no bars).
    Cpu,
}

/// The lines of `metric` for `target` and `size` from `rows`, strategies in `order`.
pub fn lines(rows: &[CellResult], target: &str, size: usize, order: &[String], metric: Metric) -> Vec<Line> {
    order
        .iter()
        .map(|s| {
            let mut points: Vec<(usize, f64, f64, f64)> = rows
                .iter()
                .filter(|r| {
                    r.target == target
                        && r.size == size
                        && &r.strategy == s
                        && r.layout == "single"
                        && r.topics == 1
                        && r.flush == "async"
                })
                .filter_map(|r| {
                    let p = match metric {
                        Metric::Ratio => {
                            let (lo, hi) = if r.ratio_pl_lo.is_finite() {
                                (r.ratio_pl_lo, r.ratio_pl_hi)
                            } else {
                                (r.ratio_pl_min, r.ratio_pl_max)
                            };
                            (r.threads, r.ratio_pl, lo, hi)
                        }
                        Metric::Cpu => (r.threads, r.cpu_ns_per_msg, r.cpu_ns_per_msg, r.cpu_ns_per_msg),
                    };
                    (p.1.is_finite() && p.1 > 0.0).then_some(p)
                })
                .collect();
            points.sort_by_key(|p| p.0);
            Line { name: s.clone(), points }
        })
        .filter(|l| !l.points.is_empty())
        .collect()
}

/// A plot could not be drawn or written.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw {path}: {why}")]
pub struct PlotError {
    /// The SVG being written.
    pub path: String,
    /// plotters' error text.
    pub why: String,
}

/// Draws `lines` to `path`: x = threads (log 2), y = log scale; legend to the right.
///
/// # Errors
/// [`PlotError`] if nothing can be drawn or the file cannot be written.
pub fn draw(path: &Path, title: &str, y_label: &str, lines: &[Line]) -> Result<(), PlotError> {
    let err = |e: &dyn std::fmt::Debug| PlotError { path: path.display().to_string(), why: format!("{e:?}") };
    let values = lines.iter().flat_map(|l| l.points.iter().flat_map(|p| [p.1, p.2, p.3]));
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if hi <= 0.0 {
        return Err(err(&"no positive values"));
    }
    let max_t = lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)).max().unwrap_or(1).max(2);
    let root = SVGBackend::new(path, (860, 440)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (plot, legend) = root.split_horizontally(690);
    let mut chart = ChartBuilder::on(&plot)
        .caption(title, ("sans-serif", 17))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(-0.3f64..(max_t as f64).log2() + 0.3, ((lo / 1.3)..(hi * 1.3)).log_scale())
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("worker threads")
        .y_desc(y_label)
        .x_labels(8)
        .x_label_formatter(&|x| {
            let t = 2f64.powf(*x).round();
            if (x - t.log2()).abs() < 0.01 { format!("{t}") } else { String::new() }
        })
        .draw()
        .map_err(|e| err(&e))?;
    for (i, l) in lines.iter().enumerate() {
        let c = PALETTE[i % PALETTE.len()];
        let x = |t: usize| (t as f64).log2() + (i as f64 - lines.len() as f64 / 2.0) * 0.02;
        chart
            .draw_series(LineSeries::new(l.points.iter().map(|p| (x(p.0), p.1)), c.stroke_width(2)))
            .map_err(|e| err(&e))?;
        chart
            .draw_series(l.points.iter().map(|p| Circle::new((x(p.0), p.1), 3, c.filled())))
            .map_err(|e| err(&e))?;
        chart
            .draw_series(
                l.points
                    .iter()
                    .filter(|p| p.3 > p.2)
                    .map(|p| ErrorBar::new_vertical(x(p.0), p.2, p.1, p.3, c.stroke_width(1), 6)),
            )
            .map_err(|e| err(&e))?;
    }
    for (i, l) in lines.iter().enumerate() {
        let c = PALETTE[i % PALETTE.len()];
        let y = 40 + i as i32 * 22;
        legend.draw(&Rectangle::new([(8, y - 5), (26, y + 5)], c.filled())).map_err(|e| err(&e))?;
        legend.draw(&Text::new(l.name.clone(), (32, y - 7), ("sans-serif", 14))).map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
