//! The progress bar on stderr (indicatif): cells done, elapsed, ETA, current cell.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Creates a bar for `cells` cells drawing on stderr (hidden when `quiet`).
pub fn bar(cells: u64, quiet: bool) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(
        Some(cells),
        if quiet { ProgressDrawTarget::hidden() } else { ProgressDrawTarget::stderr() },
    );
    if let Ok(style) =
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} cells, eta {eta} {msg}")
    {
        pb.set_style(style.progress_chars("=> "));
    }
    pb
}
