//! Which windows of the adaptive lock end in park mode, and how often its waiters yield and park, with
//! and without `park_only_when_crowded` and with the yield budget of rounds 11-13.
//!
//! ```text
//! cargo run --release -p abslock-benches --example park_windows -- [CRITICAL_NS]
//! ```
//!
//! For 2, 4 and 16 threads (twice each), runs 2 000 000 acquisitions of a `~CRITICAL_NS` critical
//! section (default 100 ns of arithmetic, the `locks/contended` grid's unit) over a fresh `abs` lock
//! (the calibrated profile), a fresh `abs-park` lock (`park_only_when_crowded: false`, round 5's
//! rule) and a fresh `abs-8-yields` lock (`crowded_yields` and `park_yields` 8, rounds 11-13), with the
//! adaptation trace on, and prints per run: ns per acquisition (a single run, not a ranking:
//! `contended_rounds` ranks), contended acquisitions and waiters seen per acquisition, yields
//! and parks per acquisition, mode switches, and how many of the windows ended in park mode. It shows
//! the rule's effect on the lock's decisions (`docs/abs.md`, round 6), not its effect on time. Ours.

use abslock::{AbsMutexExt, AbsProfile, Calibrated, Mode, RawAbsLock};
use abslock_benches::ablations::{EightYields, ParkWhenUncrowded};
use abslock_benches::counter::bump_pool;
use abslock_benches::pool::units_per_ns;
use std::sync::Arc;

/// Acquisitions per run.
const ITERS: u64 = 2_000_000;

/// One run of `threads` threads over a fresh lock of profile `P`; prints one line.
fn run<P: AbsProfile>(name: &str, threads: usize, units: u64) {
    let m: Arc<lock_api::Mutex<RawAbsLock<P>, u64>> = Arc::new(lock_api::Mutex::new(0));
    // Room for every window's decision.
    m.enable_trace(usize::try_from(ITERS).unwrap_or(usize::MAX));
    let worker = Arc::clone(&m);
    let pool = bump_pool(threads, worker, units);
    let start = std::time::Instant::now();
    pool.run(ITERS);
    let elapsed = start.elapsed();
    let s = m.stats();
    let trace = m.trace();
    let park = trace.iter().filter(|p| p.mode == Mode::Park).count();
    let per = |x: u64| x as f64 / s.acquisitions.max(1) as f64;
    println!(
        "{name:12} threads {threads:2}: {:7.1} ns/acq, contended {:.3}, waiters {:5.2}, yields {:.4}, parks {:.4} per acq; {} mode switches; {park} of {} windows in park mode",
        elapsed.as_nanos() as f64 / ITERS as f64,
        per(s.contended),
        per(s.waiters_seen),
        per(s.yields),
        per(s.parks),
        s.mode_switches,
        trace.len(),
    );
}

fn main() {
    let critical_ns: f64 = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 100.0,
        Some(Ok(ns)) if ns >= 0.0 => ns,
        Some(_) => {
            eprintln!("usage: park_windows [CRITICAL_NS >= 0]");
            std::process::exit(2);
        }
    };
    // Calibrate once, outside any run.
    let _ = abslock::AbsConfig::calibrated();
    let units = (critical_ns * units_per_ns()).round() as u64;
    println!("critical section ~{critical_ns} ns ({units} units), {ITERS} acquisitions per run");
    for threads in [2, 4, 16] {
        for _ in 0..2 {
            run::<Calibrated>("abs", threads, units);
            run::<ParkWhenUncrowded>("abs-park", threads, units);
            run::<EightYields>("abs-8-yields", threads, units);
        }
    }
}
