//! `sweep`: which put-message lock wins a CommitLog's critical section, where, and by how much.
//!
//! Runs a grid of strategy x threads x message size (x layout, topics, flush mode),
//! each cell for a fixed time after a warm-up, repeated, and writes `results.csv`,
//! `report.md` and SVG plots under `--out` (default `target/sweep/`).
//!
//! ```text
//! cargo run --release -p abslock-benches --bin sweep              # default grid, ~11 min on 2 cores
//! cargo run --release -p abslock-benches --bin sweep -- --smoke   # tiny grid, seconds
//! ```

use abslock_benches::grid::{Grid, GridArgs};
use abslock_benches::machine;
use abslock_benches::registry::{RunContext, TargetKind};
use abslock_benches::report::{self, ReportInput};
use abslock_benches::ring::Ring;
use abslock_benches::run::run_grid;
use abslock_benches::store_target::STORE_AVAILABLE;
use abslock_benches::worker::CellTiming;
use abslock_benches::{outputs, progress};
use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Contention sweep over lock strategies for a CommitLog's put-message critical section.
#[derive(Debug, Parser)]
#[command(name = "sweep", version)]
struct Args {
    /// Tiny grid for CI (spin, abs, parking_lot; 1 and 4 threads; 128 B and 4 KiB; 1 rep; short cells).
    #[arg(long)]
    smoke: bool,
    /// Strategies, comma separated: cas-spin, spin, backoff-kN (e.g. backoff-k10), abs, abs-rocketmq, parking_lot, std,
    /// spin-crate (memcpy-limit is always measured). Default: all, with backoff-k10, -k100, -k1000.
    #[arg(long)]
    strategies: Option<String>,
    /// Worker thread counts, comma separated [default: 1,2,4,8,16].
    #[arg(long)]
    threads: Option<String>,
    /// Message body sizes in bytes, comma separated [default: 128,1024,4096,16384].
    #[arg(long)]
    sizes: Option<String>,
    /// Layouts: single (one log, one lock) and/or per-topic (one log and lock per topic) [default: single].
    #[arg(long)]
    layout: Option<String>,
    /// Topic counts, comma separated; messages go round robin over the topics [default: 1].
    #[arg(long)]
    topics: Option<String>,
    /// Flush modes: async and/or sync (group commit) [default: async].
    #[arg(long)]
    flush: Option<String>,
    /// Repetitions per cell; the report shows medians [default: 3, smoke 1].
    #[arg(long)]
    reps: Option<u32>,
    /// Measured window per cell, in ms [default: 180, smoke 60].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    cell_ms: Option<u64>,
    /// Warm-up per cell before measuring, in ms [default: 25, smoke 15]. Per-topic layouts with many
    /// topics need more: each topic's log is created on its first put.
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=60_000))]
    warmup_ms: Option<u64>,
    /// Output directory for results.csv, report.md and the SVG plots.
    #[arg(long, default_value = "target/sweep")]
    out: PathBuf,
    /// Directory under which the run's stores (and the warm ring) are created [default: /dev/shm when it
    /// exists (tmpfs: page faults stay cheap and msync is free, so flush costs are not measured; give a disk
    /// path for the flush question), else the system temp dir].
    #[arg(long)]
    store_dir: Option<PathBuf>,
    /// Keep the run directory and every cell's store instead of deleting them (each store holds what its
    /// cell wrote: use with a small grid, especially on tmpfs, which is RAM).
    #[arg(long)]
    keep: bool,
    /// Pin worker threads to cores round robin (core_affinity).
    #[arg(long)]
    pin: bool,
    /// Critical section: store (the real abslock-store put path) or emulated (the stand-in CommitLog).
    #[arg(long, value_parser = ["store", "emulated"])]
    target: Option<String>,
    /// Size of the warm ring the emulated log and memcpy limit write into, MiB.
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    ring_mib: u64,
    /// Commitlog segment size of the per-cell stores, MiB (per-topic layouts divide it by the topic count,
    /// down to 1 MiB). The default 512 holds a whole default cell, so no roll waits for the
    /// preallocation thread inside the measured window (see the report's rolls table).
    #[arg(long, default_value_t = abslock_benches::store_target::DEFAULT_SEGMENT_SIZE >> 20, value_parser = clap::value_parser!(u64).range(1..=4096))]
    segment_mib: u64,
    /// ABS decisions recorded per traced cell.
    #[arg(long, default_value_t = 4096)]
    trace_capacity: usize,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// Redraw the SVG plots in DIR from DIR/results.csv (and DIR/abs_trace.csv) without running
    /// anything.
    #[arg(long, value_name = "DIR")]
    replot: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("sweep: error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &Args) -> Result<ExitCode, String> {
    if let Some(dir) = &args.replot {
        return replot(dir);
    }
    let base = if args.smoke { Grid::smoke_grid() } else { Grid::default_grid() };
    let grid = Grid::parse(
        base,
        &GridArgs {
            strategies: args.strategies.clone(),
            threads: args.threads.clone(),
            sizes: args.sizes.clone(),
            layouts: args.layout.clone(),
            topics: args.topics.clone(),
            flushes: args.flush.clone(),
            reps: args.reps,
        },
    )
    .map_err(|e| e.to_string())?;
    let target = match args.target.as_deref() {
        Some("emulated") => TargetKind::Emulated,
        Some(_) => {
            if !STORE_AVAILABLE {
                return Err("--target store: the abslock-store put path is not available in this build; \
                            use --target emulated"
                    .into());
            }
            TargetKind::Store
        }
        None if STORE_AVAILABLE => TargetKind::Store,
        None => {
            eprintln!(
                "sweep: note: the real store is not available in this build; measuring the emulated CommitLog"
            );
            TargetKind::Emulated
        }
    };
    let timing = CellTiming {
        warmup: Duration::from_millis(args.warmup_ms.unwrap_or(if args.smoke { 15 } else { 25 })),
        measure: Duration::from_millis(args.cell_ms.unwrap_or(if args.smoke { 60 } else { 180 })),
    };
    let pin = if args.pin {
        let cores = core_affinity::get_core_ids().filter(|c| !c.is_empty());
        if cores.is_none() {
            eprintln!("sweep: warning: --pin: cannot list cores; running unpinned");
        }
        cores
    } else {
        None
    };

    std::fs::create_dir_all(&args.out)
        .map_err(|e| format!("cannot create --out {}: {e}", args.out.display()))?;
    let parent = args.store_dir.clone().unwrap_or_else(default_store_parent);
    std::fs::create_dir_all(&parent)
        .map_err(|e| format!("cannot create --store-dir {}: {e}", parent.display()))?;
    let store_dir = tempfile::Builder::new()
        .prefix("abslock-sweep-")
        .tempdir_in(&parent)
        .map_err(|e| format!("cannot create a run directory in {}: {e}", parent.display()))?;

    let machine = machine::detect();
    let clock_ns = abslock_benches::timed::clock_pair_ns();
    let load_start = machine::load_average().unwrap_or_else(|| "unknown".into());
    let t_start = Instant::now();
    let abs_cfg = abslock::AbsConfig::calibrated();
    let abs_config = format!(
        "k_init {}, k_min {}, k_max {}, max_yields {}, window {} acquisitions",
        abs_cfg.k_init, abs_cfg.k_min, abs_cfg.k_max, abs_cfg.max_yields, abs_cfg.window
    );
    let ring = Ring::create(store_dir.path(), "emulated-ring", (args.ring_mib as usize) << 20)
        .map_err(|e| format!("cannot create the warm ring in {}: {e}", store_dir.path().display()))?;

    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        let _ = ctrlc::set_handler(move || {
            if stop.swap(true, Ordering::SeqCst) {
                eprintln!("\nsweep: second Ctrl-C, exiting without writing outputs");
                std::process::exit(130);
            }
            eprintln!("\nsweep: Ctrl-C: stopping after the current cell (Ctrl-C again to abort)");
        });
    }

    let ctx = RunContext {
        ring: Arc::new(ring),
        target,
        store_dir: store_dir.path().to_path_buf(),
        segment_size: args.segment_mib << 20,
        keep: args.keep,
        timing,
        pin,
        trace_capacity: args.trace_capacity,
    };
    let cells = grid.cells().len() as u64;
    if args.keep && cells > 50 {
        eprintln!(
            "sweep: warning: --keep with {cells} cells keeps every cell's store; watch the space in {}",
            parent.display()
        );
    }
    let pb = progress::bar(cells, args.quiet);
    let outcome = run_grid(&grid, &ctx, &stop, &pb);
    let wall = t_start.elapsed().as_secs_f64();
    drop(ctx);

    let command = format!(
        "cargo run --release -p abslock-benches --bin sweep{}",
        std::env::args().skip(1).fold(String::new(), |acc, a| acc + " " + &a).replacen(' ', " -- ", 1)
    );
    let plots = outputs::write_plots(&args.out, &grid, &outcome);
    outputs::write_csvs(&args.out, &outcome)?;
    let input = ReportInput {
        machine: &machine,
        command: command.trim_end(),
        pinned: args.pin,
        target: target.name(),
        grid: &grid,
        outcome: &outcome,
        wall_seconds: wall,
        warmup_ms: timing.warmup.as_millis() as u64,
        measure_ms: timing.measure.as_millis() as u64,
        load: (load_start, machine::load_average().unwrap_or_else(|| "unknown".into())),
        abs_config,
        notes: vec![
            format!(
                "Acquire-latency samples include two clock reads, {clock_ns} ns (median) on this machine: \
                 an uncontended acquisition reads as about that"
            ),
            format!(
                "Stores created under {} ({}); commitlog segments of {} MiB, preallocated and warmed by the store",
                parent.display(),
                if parent.starts_with("/dev/shm") {
                    "tmpfs: msync is free, flush cost not measured"
                } else {
                    "as given"
                },
                args.segment_mib
            ),
        ],
        plots,
    };
    let report_path = args.out.join("report.md");
    std::fs::write(&report_path, report::render(&input))
        .map_err(|e| format!("cannot write {}: {e}", report_path.display()))?;

    if args.keep {
        let kept = store_dir.keep();
        eprintln!("sweep: kept the run directory {}", kept.display());
    }
    eprintln!(
        "sweep: {} cells in {wall:.1} s ({} failed); wrote {}/results.csv, report.md and plots",
        outcome.rows.len(),
        outcome.failures.len(),
        args.out.display()
    );
    Ok(if outcome.interrupted {
        ExitCode::from(130)
    } else if outcome.rows.is_empty() || !outcome.failures.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `--replot DIR`: the plots again from the files a run left in `dir`.
fn replot(dir: &std::path::Path) -> Result<ExitCode, String> {
    let csv_path = dir.join("results.csv");
    let text =
        std::fs::read_to_string(&csv_path).map_err(|e| format!("cannot read {}: {e}", csv_path.display()))?;
    let rows = abslock_benches::csv::read_csv(&text).map_err(|e| e.to_string())?;
    let grid = outputs::grid_of(&rows)
        .ok_or_else(|| format!("{} holds no lock strategy rows", csv_path.display()))?;
    let traces = std::fs::read_to_string(dir.join("abs_trace.csv"))
        .map(|t| outputs::read_traces(&t, &rows))
        .unwrap_or_default();
    let outcome =
        abslock_benches::run::SweepOutcome { rows, traces, failures: Vec::new(), interrupted: false };
    for (_, file) in outputs::write_plots(dir, &grid, &outcome) {
        eprintln!("sweep: wrote {}", dir.join(file).display());
    }
    Ok(ExitCode::SUCCESS)
}

/// `/dev/shm` if it is a directory, else the system temp dir.
fn default_store_parent() -> PathBuf {
    let shm = PathBuf::from("/dev/shm");
    if shm.is_dir() { shm } else { std::env::temp_dir() }
}
