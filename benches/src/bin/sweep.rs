//! `sweep`: which put-message lock wins a CommitLog's critical section, where, and by how
//! much, with verdicts that reproduce.
//!
//! ```text
//! cargo run --release -p abslock-benches --bin sweep              # default run, both targets, < 4 min on 2 cores
//! cargo run --release -p abslock-benches --bin sweep -- --smoke   # tiny grid, seconds
//! cargo run --release -p abslock-benches --bin sweep -- compare A/results.csv B/results.csv
//! ```

use abslock_benches::grid::{self, Target, TargetGrid};
use abslock_benches::registry::{self, Targets};
use abslock_benches::run::{self, Plan};
use abslock_benches::strategy::Strategy;
use abslock_benches::target::lock_bound::{LockBound, WARM_SEGMENTS};
use abslock_benches::target::slack;
use abslock_benches::target::store::{STORE_SEGMENTS_MAX, StoreTarget, record_len};
use abslock_benches::window::WindowSpec;
use abslock_benches::{compare, machine, outputs, plots, report, results, trace};
use abslock_store::{FlushMode, Layout};
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Contention sweep over lock strategies for a CommitLog's put-message critical section.
#[derive(Debug, Parser)]
#[command(name = "sweep", version, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Compare two runs' verdicts cell by cell and print the agreement.
    Compare {
        /// The first run's results.csv.
        a: PathBuf,
        /// The second run's results.csv.
        b: PathBuf,
    },
}

#[derive(Debug, Args)]
struct RunArgs {
    /// Tiny grid for CI: both targets, 2-3 strategies, 1 and 4 threads, 3 rounds of short windows.
    #[arg(long)]
    smoke: bool,
    /// Targets, comma separated [default: lock-bound,store].
    #[arg(long, value_enum, value_delimiter = ',')]
    targets: Vec<Target>,
    /// Strategies, comma separated: cas-spin, spin, backoff-kN (e.g. backoff-k100), abs, abs-rocketmq,
    /// abs-yield (ablation: crowded_spins 0), abs-spin (ablation: crowded_trial false), abs-park
    /// (ablation: park_only_when_crowded false), abs-solo (ablation: the solo restriction always on),
    /// abs-no-solo (ablation: no solo trial, the regime never on), abs-direct-handoff (ablation: the
    /// starvation bound hands the lock to a sleeper directly), abs-no-quiet (ablation: no quiet regime,
    /// every release an RMW), abs-8-yields (ablation: a waiter parks after 8 yields, rounds 11-13),
    /// parking_lot, std, spin-crate,
    /// sequencer, combining (parking_lot is always added: every ratio pairs with it) [default
    /// lock-bound: cas-spin,spin,backoff-k100,abs,abs-rocketmq,parking_lot,std,sequencer,combining; store:
    /// cas-spin,abs,abs-rocketmq,parking_lot,std,sequencer,combining].
    #[arg(long, value_delimiter = ',', value_parser = parse_strategy)]
    strategies: Vec<Strategy>,
    /// Worker thread counts, comma separated, 1-1024 [default lock-bound: 1,2,4,8,16; store: 1,4,16].
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: Vec<u16>,
    /// Message body sizes in bytes, comma separated, 1-4194304 [default lock-bound: 128,1024,16384; store: 128,1024].
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=4_194_304))]
    sizes: Vec<u32>,
    /// Store target layouts: single (one log, one lock) and/or per-topic (one log and lock per topic) [default: single].
    #[arg(long, value_delimiter = ',', value_parser = parse_layout)]
    layout: Vec<Layout>,
    /// Store target topic counts, comma separated, 1-4096; messages go round robin over them [default: 1].
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u16).range(1..=4096))]
    topics: Vec<u16>,
    /// Store target flush modes: async and/or sync (group commit) [default: async].
    #[arg(long, value_delimiter = ',', value_parser = parse_flush)]
    flush: Vec<FlushMode>,
    /// Rounds per cell, 2-1000; verdicts need at least 6 (below, every verdict is a tie) [default: 25, smoke 3].
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..=1000))]
    rounds: Option<u32>,
    /// Longest timed span per window, ms, 1-60000 [default: 30, smoke 10].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=60_000))]
    cell_ms: Option<u64>,
    /// Warm-up per window before the timed span, ms, 0-10000 [default: 5, smoke 2].
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=10_000))]
    warmup_ms: Option<u64>,
    /// Calibrated work outside the lock per put on the lock-bound target, ns, 0-1000000.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    outside_ns: u64,
    /// Equivalence margin of the verdicts, percent, 0-50: a verdict needs the 95% interval outside 1 ± margin.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u8).range(0..=50))]
    tie_margin_pct: u8,
    /// Commitlog segment size, MiB, 1-4096: lock-bound warms 16 per run; the store target warms one of 4x this per run
    /// and starts every single-layout window on it (per-topic: fresh segments per window, sized to the cell's rate, at
    /// most 4x this divided among topics) [default: 32, smoke 8].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=4096))]
    segment_mib: Option<u64>,
    /// Existing directory for the run's stores [default: /dev/shm when it exists (tmpfs: flush costs are not
    /// measured), else the system temp dir]. Never created by the sweep.
    #[arg(long)]
    store_dir: Option<PathBuf>,
    /// Output directory for rounds.csv, results.csv, report.md and the plots (an earlier run's files there are
    /// replaced).
    #[arg(long, default_value = "target/sweep")]
    out: PathBuf,
    /// Pin worker threads to cores round robin.
    #[arg(long)]
    pin: bool,
    /// Seed of the random round orders [default: from the clock].
    #[arg(long)]
    seed: Option<u64>,
    /// No per-cell progress lines.
    #[arg(long)]
    quiet: bool,
}

fn parse_strategy(s: &str) -> Result<Strategy, String> {
    s.parse::<Strategy>().map_err(|e| e.to_string())
}

fn parse_layout(s: &str) -> Result<Layout, String> {
    match s {
        "single" => Ok(Layout::Single),
        "per-topic" => Ok(Layout::PerTopic),
        _ => Err("expected single or per-topic".into()),
    }
}

fn parse_flush(s: &str) -> Result<FlushMode, String> {
    match s {
        "async" => Ok(FlushMode::ASYNC),
        "sync" => Ok(FlushMode::SYNC),
        _ => Err("expected async or sync".into()),
    }
}

/// A run that cannot start or finish: message to stderr, exit code 2.
struct Fatal(String);

impl<E: std::fmt::Display> From<E> for Fatal {
    fn from(e: E) -> Self {
        Fatal(e.to_string())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Some(Command::Compare { a, b }) => run_compare(a, b),
        None => run_sweep(&cli.run),
    };
    result.unwrap_or_else(|Fatal(e)| {
        eprintln!("sweep: error: {e}");
        ExitCode::from(2)
    })
}

fn run_compare(a: &Path, b: &Path) -> Result<ExitCode, Fatal> {
    let ra = results::read_results(a)?;
    let rb = results::read_results(b)?;
    let c = compare::compare(&ra, &rb)?;
    print!("{}", compare::render(&c));
    Ok(ExitCode::SUCCESS)
}

fn sorted<T: Into<usize> + Copy>(v: &[T], default: &[usize]) -> Vec<usize> {
    if v.is_empty() {
        default.to_vec()
    } else {
        grid::sorted(&v.iter().map(|&x| x.into()).collect::<Vec<_>>())
    }
}

fn dedup<T: PartialEq + Copy>(v: &[T], default: &[T]) -> Vec<T> {
    let mut out = Vec::new();
    for &x in if v.is_empty() { default } else { v } {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

/// The grids the flags ask for.
fn grids(a: &RunArgs) -> Vec<TargetGrid> {
    let targets = dedup(&a.targets, &[Target::LockBound, Target::Store]);
    targets
        .into_iter()
        .map(|target| {
            let (strategies, threads, sizes): (Vec<Strategy>, &[usize], &[usize]) = match (target, a.smoke) {
                (Target::LockBound, false) => {
                    (grid::LOCK_BOUND_STRATEGIES.to_vec(), &[1, 2, 4, 8, 16], &[128, 1024, 16384])
                }
                (Target::Store, false) => (grid::STORE_STRATEGIES.to_vec(), &[1, 4, 16], &[128, 1024]),
                (Target::LockBound, true) => {
                    (vec![Strategy::Spin, Strategy::Abs, Strategy::ParkingLot], &[1, 4], &[128, 4096])
                }
                (Target::Store, true) => (vec![Strategy::Abs, Strategy::ParkingLot], &[1, 4], &[128]),
            };
            let strategies = if a.strategies.is_empty() { strategies } else { a.strategies.clone() };
            let store = target == Target::Store;
            TargetGrid {
                target,
                strategies: grid::with_reference(&strategies),
                threads: sorted(&a.threads, threads),
                sizes: grid::sorted(&if a.sizes.is_empty() {
                    sizes.to_vec()
                } else {
                    a.sizes.iter().map(|&s| s as usize).collect()
                }),
                layouts: if store { dedup(&a.layout, &[Layout::Single]) } else { vec![Layout::Single] },
                topics: if store { sorted(&a.topics, &[1]) } else { vec![1] },
                flushes: if store { dedup(&a.flush, &[FlushMode::ASYNC]) } else { vec![FlushMode::ASYNC] },
            }
        })
        .collect()
}

/// `/dev/shm` if it is a directory, else the system temp dir.
fn default_store_parent() -> PathBuf {
    let shm = PathBuf::from("/dev/shm");
    if shm.is_dir() { shm } else { std::env::temp_dir() }
}

/// Free bytes for an unprivileged user in the file system holding `dir`.
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: `c` is a NUL-terminated path and `st` points to writable memory the size of `statvfs`.
    let rc = unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: statvfs returned 0, so it filled the struct (zeroed beforehand anyway).
    let st = unsafe { st.assume_init() };
    Some(st.f_bavail * st.f_frsize)
}

/// The commit this binary was built from (`build.rs`), and the checkout's own if it differs: a binary kept
/// from an earlier build and run from a later checkout must not report the later commit as the code that
/// ran.
fn git_commit() -> String {
    let built = env!("ABSLOCK_BUILD_COMMIT");
    let run = |args: &[&str]| {
        std::process::Command::new("git")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match run(&["rev-parse", "--short", "HEAD"]) {
        Some(head) if !head.is_empty() && !built.starts_with(head.as_str()) => {
            format!("{built} (binary; the checkout it ran from is at {head})")
        }
        _ => built.to_string(),
    }
}

/// One traced `abs` window in the most contended lock-bound cell, after the grid: the
/// cell and the lock's decisions (`None`, with a warning, if it fails or there is no such cell).
fn traced_abs(
    plan: &Plan,
    targets: &Targets,
    abort: &AtomicBool,
) -> Option<(grid::Cell, Vec<abslock::TracePoint>)> {
    let cell = trace::most_contended(&plan.grids)?;
    let spec = WindowSpec {
        threads: cell.threads,
        warmup: plan.warmup,
        measure: plan.measure,
        pin: plan.pin.clone(),
    };
    match registry::traced_window(Strategy::Abs, &cell, targets, &spec, abort, trace::TRACE_CAPACITY) {
        Ok(o) => Some((cell, o.trace)),
        Err(e) => {
            eprintln!("sweep: warning: the traced abs window failed: {e}");
            None
        }
    }
}

fn run_sweep(a: &RunArgs) -> Result<ExitCode, Fatal> {
    // Everything that can be checked without writing is checked first.
    let grids = grids(a);
    let segment_mib = a.segment_mib.unwrap_or(if a.smoke { 8 } else { 32 });
    let segment = segment_mib << 20;
    let max_threads = grids.iter().flat_map(|g| g.threads.iter().copied()).max().unwrap_or(1);
    let max_size = grids.iter().flat_map(|g| g.sizes.iter().copied()).max().unwrap_or(1);
    let need_slack = 4 * slack(max_threads, record_len(max_size));
    if need_slack > segment {
        return Err(Fatal(format!(
            "--segment-mib {segment_mib} is too small for {max_threads} threads of {max_size}-byte messages: \
             raise --segment-mib to at least {} MiB",
            need_slack.div_ceil(1 << 20)
        )));
    }
    let store_parent = match &a.store_dir {
        Some(d) if !d.is_dir() => {
            return Err(Fatal(format!(
                "--store-dir {}: not an existing directory (the sweep never creates it; create it or pick another)",
                d.display()
            )));
        }
        Some(d) => d.clone(),
        None => default_store_parent(),
    };
    let explicit_store_dir = a.store_dir.is_some();
    let targets_run: Vec<Target> = grids.iter().map(|g| g.target).collect();
    let has = |t: Target| targets_run.contains(&t);
    let topics_max = grids.iter().flat_map(|g| g.topics.iter().copied()).max().unwrap_or(1) as u64;
    let need = if has(Target::LockBound) { WARM_SEGMENTS as u64 * segment } else { 0 }
        + if has(Target::Store) {
            let per_topic = grids.iter().any(|g| g.layouts.contains(&Layout::PerTopic));
            STORE_SEGMENTS_MAX * segment
                + if per_topic { (STORE_SEGMENTS_MAX * segment).max(topics_max << 20) } else { 0 }
                + (64 << 20)
        } else {
            0
        };
    let mut store_parent = store_parent;
    if !explicit_store_dir
        && free_bytes(&store_parent).is_some_and(|f| f < need)
        && store_parent != std::env::temp_dir()
    {
        eprintln!(
            "sweep: note: {} has less than the {} MiB the run needs; using {}",
            store_parent.display(),
            need >> 20,
            std::env::temp_dir().display()
        );
        store_parent = std::env::temp_dir();
    }
    if let Some(free) = free_bytes(&store_parent)
        && free < need
    {
        return Err(Fatal(format!(
            "{} has {} MiB free, the run needs about {} MiB ({} warm lock-bound segments and one store segment of \
             --segment-mib {segment_mib}): lower --segment-mib or pass --store-dir on a larger file system",
            store_parent.display(),
            free >> 20,
            need >> 20,
            if has(Target::LockBound) { WARM_SEGMENTS } else { 0 },
        )));
    }
    outputs::check_writable(&a.out)?;
    let run_dir =
        tempfile::Builder::new().prefix("abslock-sweep-").tempdir_in(&store_parent).map_err(|e| {
            format!("--store-dir {}: cannot create the run directory: {e}", store_parent.display())
        })?;

    // Signals: the first ends the window in progress and the run (outputs of finished cells
    // are written); the second removes the run's stores and exits at once.
    let abort = Arc::new(AtomicBool::new(false));
    let cleanup: Arc<Mutex<Option<PathBuf>>> = Arc::new(Mutex::new(Some(run_dir.path().to_path_buf())));
    {
        let (abort, cleanup) = (Arc::clone(&abort), Arc::clone(&cleanup));
        ctrlc::set_handler(move || {
            if abort.swap(true, Ordering::SeqCst) {
                if let Some(d) = cleanup.lock().unwrap_or_else(PoisonError::into_inner).take() {
                    let _ = std::fs::remove_dir_all(d);
                }
                eprintln!("\nsweep: second signal: stores removed, exiting without outputs");
                std::process::exit(130);
            }
            eprintln!("\nsweep: signal: stopping now (again to exit at once)");
        })?;
    }

    let rounds = a.rounds.unwrap_or(if a.smoke { 3 } else { 25 });
    let plan = Plan {
        grids,
        rounds,
        warmup: Duration::from_millis(a.warmup_ms.unwrap_or(if a.smoke { 2 } else { 5 })),
        measure: Duration::from_millis(a.cell_ms.unwrap_or(if a.smoke { 10 } else { 30 })),
        pin: if a.pin { core_affinity::get_core_ids().filter(|c| !c.is_empty()) } else { None },
        outside_ns: a.outside_ns,
        margin: f64::from(a.tie_margin_pct) / 100.0,
        seed: a.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        }),
        quiet: a.quiet,
    };
    if a.pin && plan.pin.is_none() {
        eprintln!("sweep: warning: --pin: cannot list cores; running unpinned");
    }
    if rounds < 6 {
        eprintln!("sweep: note: {rounds} rounds: no 95% interval exists below 6, so every verdict is a tie");
    }
    let abs_calibrated = format!("{:?}", abslock::AbsConfig::calibrated());
    let abs_rocketmq = format!("{:?}", abslock::AbsConfig::ROCKETMQ);
    let est = plan.estimate(segment_mib);
    eprintln!(
        "sweep: {} cells, {} windows ({} rounds); estimated {:.0} s; stores in {}; outputs to {}",
        plan.grids.iter().map(|g| g.cells().len()).sum::<usize>(),
        plan.windows(),
        rounds,
        est.as_secs_f64(),
        run_dir.path().display(),
        a.out.display()
    );
    eprintln!("sweep: ABS calibrated bounds: {abs_calibrated}");

    let t_start = Instant::now();
    let load_start = machine::load_average().unwrap_or_else(|| "unknown".into());
    let outside_units = if a.outside_ns > 0 {
        (a.outside_ns as f64 * abslock_benches::pool::units_per_ns()).round() as u64
    } else {
        0
    };
    let targets = Targets {
        lock_bound: if has(Target::LockBound) {
            Some(LockBound::create(run_dir.path(), segment, outside_units)?)
        } else {
            None
        },
        store: has(Target::Store)
            .then(|| StoreTarget::new(run_dir.path().to_path_buf(), STORE_SEGMENTS_MAX * segment)),
    };
    let output = run::run(&plan, &targets, &abort);
    let wall = t_start.elapsed().as_secs_f64();
    let traced = if output.interrupted { None } else { traced_abs(&plan, &targets, &abort) };
    drop(targets);
    // The stores go now; the signal handler has nothing left to remove.
    cleanup.lock().unwrap_or_else(PoisonError::into_inner).take();
    drop(run_dir);

    let m = machine::detect();
    let command =
        std::iter::once("sweep".to_string()).chain(std::env::args().skip(1)).collect::<Vec<_>>().join(" ");
    let ctx = report::Context {
        command,
        commit: git_commit(),
        machine: m.to_string(),
        cores: m.cores,
        load: (load_start, machine::load_average().unwrap_or_else(|| "unknown".into())),
        wall_s: wall,
        rounds,
        warmup_ms: plan.warmup.as_millis() as u64,
        measure_ms: plan.measure.as_millis() as u64,
        margin_pct: f64::from(a.tie_margin_pct),
        abs_calibrated,
        abs_rocketmq,
        notes: vec![
            format!(
                "Stores under {} ({}); segments of {segment_mib} MiB; lock-bound: {WARM_SEGMENTS} warm segments reused \
                 by every window, outside work {} ns per put; store: every single-layout window starts a new store on the same warm {} MiB segment (zeroed between windows; per-topic: fresh segments per window sized to the cell's rate), no roll inside a window",
                store_parent.display(),
                if store_parent.starts_with("/dev/shm") {
                    "tmpfs: msync is free, flush cost not measured"
                } else {
                    "as given"
                },
                a.outside_ns,
                STORE_SEGMENTS_MAX * segment_mib
            ),
            format!("Round orders from seed {}", plan.seed),
        ],
        interrupted: output.interrupted,
    };
    outputs::clear_stale(&a.out)
        .map_err(|e| format!("--out {}: cannot clear earlier outputs: {e}", a.out.display()))?;
    outputs::write_csvs(&a.out, &output.rounds, &output.results)?;
    let order = report::strategy_order(&output.results);
    let target_names: Vec<&str> = plan.grids.iter().map(|g| g.target.name()).collect();
    let mut plots = outputs::write_plots(&a.out, &output.results, &target_names, &order);
    if let Some((cell, points)) = traced {
        let points_in = match trace::write_csv(&a.out.join(trace::TRACE_CSV), &points) {
            Ok(()) => format!("; points in {}", trace::TRACE_CSV),
            Err(e) => {
                eprintln!("sweep: warning: {e}");
                String::new()
            }
        };
        let caption = format!(
            "abs adaptation: k and mode over acquisitions, lock-bound, {} threads, {} (one extra window after the \
             grid, not measured; {} decisions, after {} of them crowded waiters yielded at once and after {} the \
             solo regime ran{points_in})",
            cell.threads,
            plots::size_label(cell.size),
            points.len(),
            trace::crowded_yield_count(&points),
            trace::solo_count(&points),
        );
        let title = format!(
            "abs: k and mode, lock-bound, {} threads, {}",
            cell.threads,
            plots::size_label(cell.size)
        );
        match trace::draw(&a.out.join(trace::TRACE_SVG), &title, &points) {
            Ok(()) => plots.push((caption, trace::TRACE_SVG.to_string())),
            Err(e) => eprintln!("sweep: warning: {e}"),
        }
    }
    let report_path = a.out.join("report.md");
    std::fs::write(&report_path, report::render(&ctx, &output.results, &output.rounds, &plots))
        .map_err(|e| format!("cannot write {}: {e}", report_path.display()))?;
    let failed = output.rounds.iter().filter(|r| r.status == results::Status::Failed).count();
    let stalled = output.rounds.iter().filter(|r| r.status == results::Status::Stalled).count();
    eprintln!(
        "sweep: {} cells in {wall:.1} s (estimated {:.0} s); {} windows, {stalled} stalled, {failed} failed; wrote {}",
        output.cells,
        est.as_secs_f64(),
        output.rounds.len(),
        report_path.display()
    );
    Ok(if output.interrupted {
        ExitCode::from(130)
    } else if failed > 0 || output.cells == 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
