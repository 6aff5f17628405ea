//! The `locks/contended` grid measured the way a ranking needs: every strategy in a fresh random order
//! in each round, for several rounds, each ratio paired with `parking_lot` measured in the same round.
//!
//! ```text
//! cargo run --release -p abslock-benches --example contended_rounds -- [ROUNDS] [STRATEGY,...]
//! ```
//!
//! Same threads (2, 4, 8, 16), critical sections (0, ~100 ns, ~1 us of arithmetic) and strategies as
//! the criterion bench `benches/locks.rs`; one sample runs a fixed batch of acquisitions spread over the
//! threads (about 60-250 ms, long enough to span many scheduler time slices at 16 threads). Prints a
//! Markdown table: per cell, `parking_lot`'s median time per acquisition (ns, all threads together),
//! then each strategy's median ratio to it with the smallest and largest round's ratio, and the median
//! ratio of process CPU time per acquisition. Ratios below 1 are faster than `parking_lot`.
//!
//! Ten ablations of `abs` ride along, so `docs/abs.md`'s reasons for its defaults can be re-run:
//! `abs-entry-cap` (the calibrated config with `max_active: 0`, at most as many waiters circulating as
//! cores, newcomers beyond them parking at once), `abs-no-bound` (`starve_after_us: u32::MAX`, no
//! starvation hand-off), `abs-yield` (`crowded_spins: 0`, a waiter past the canSpin limit always yields
//! at once), `abs-spin` (`crowded_trial: false`, such a waiter always spins `crowded_spins` first) and
//! `abs-park` (`park_only_when_crowded: false`, spin mode switches to park mode even when every waiter
//! has a spare core); and the experimental `abs-solo` (`AbsProfile::SOLO_RECHECK_US` 1000: waiters park at
//! once, releases wake nobody, one thread runs alone between starvation hand-offs), `abs-no-solo`
//! (`solo_recheck_us: 0`, no solo trial) and `abs-direct-handoff` (`AbsProfile::DIRECT_HANDOFF`: the
//! starvation bound hands the lock to the oldest sleeper while it is still asleep, rounds 2-9) and
//! `abs-no-quiet` (`AbsProfile::QUIET` false: no quiet regime, every release an RMW, rounds 1-12) and
//! `abs-8-yields` (`crowded_yields` and `park_yields` 8: every waiter parks after 8 yields, rounds 11-13).
//! Ours.

use abslock::{
    AbsConfig, AbsProfile, Calibrated, RawAbsLock, RawBackoffLock, RawCasSpinLock, RawSpinLock, RocketMq,
};
use abslock_benches::ablations::{
    DirectHandoff, EightYields, NoQuiet, NoSoloTrial, ParkWhenUncrowded, Solo, SpinWhenCrowded,
    YieldWhenCrowded,
};
use abslock_benches::counter::{Counter, bump_pool};
use abslock_benches::cpu::process_ns;
use abslock_benches::pool::units_per_ns;
use std::sync::{Arc, OnceLock};

/// The calibrated config with the entry cap on (`max_active: 0`, the number of cores).
enum EntryCap {}

impl AbsProfile for EntryCap {
    fn config() -> &'static AbsConfig {
        static C: OnceLock<AbsConfig> = OnceLock::new();
        C.get_or_init(|| AbsConfig { max_active: 0, ..*AbsConfig::calibrated() })
    }
}

/// The calibrated config without the starvation bound.
enum NoBound {}

impl AbsProfile for NoBound {
    fn config() -> &'static AbsConfig {
        static C: OnceLock<AbsConfig> = OnceLock::new();
        C.get_or_init(|| AbsConfig { starve_after_us: u32::MAX, ..*AbsConfig::calibrated() })
    }
}

/// One sample: (ns per acquisition, process CPU ns per acquisition).
type Sample = (f64, f64);

/// Runs `iters` acquisitions of `units` of work over `threads` threads with a fresh lock of type `M`.
fn sample<M: Counter>(threads: usize, units: u64, iters: u64) -> Sample {
    let m = Arc::new(M::make());
    let pool = bump_pool(threads, m, units);
    // A short warm-up batch: threads spawned, caches and the lock's policy settled.
    pool.run(iters / 10);
    let cpu0 = process_ns();
    let wall = pool.run(iters);
    let cpu1 = process_ns();
    let n = iters as f64;
    (wall.as_nanos() as f64 / n, cpu1.saturating_sub(cpu0) as f64 / n)
}

type Runner = fn(usize, u64, u64) -> Sample;

/// Every strategy of `locks/contended` and the ten ablations, `parking_lot` first (the peer of every
/// ratio).
const STRATEGIES: &[(&str, Runner)] = &[
    ("parking_lot", sample::<lock_api::Mutex<parking_lot::RawMutex, u64>>),
    ("cas-spin", sample::<lock_api::Mutex<RawCasSpinLock, u64>>),
    ("spin", sample::<lock_api::Mutex<RawSpinLock, u64>>),
    ("backoff-k1000", sample::<lock_api::Mutex<RawBackoffLock, u64>>),
    ("abs", sample::<lock_api::Mutex<RawAbsLock<Calibrated>, u64>>),
    ("abs-rocketmq", sample::<lock_api::Mutex<RawAbsLock<RocketMq>, u64>>),
    ("abs-entry-cap", sample::<lock_api::Mutex<RawAbsLock<EntryCap>, u64>>),
    ("abs-no-bound", sample::<lock_api::Mutex<RawAbsLock<NoBound>, u64>>),
    ("abs-yield", sample::<lock_api::Mutex<RawAbsLock<YieldWhenCrowded>, u64>>),
    ("abs-spin", sample::<lock_api::Mutex<RawAbsLock<SpinWhenCrowded>, u64>>),
    ("abs-park", sample::<lock_api::Mutex<RawAbsLock<ParkWhenUncrowded>, u64>>),
    ("abs-solo", sample::<lock_api::Mutex<RawAbsLock<Solo>, u64>>),
    ("abs-no-solo", sample::<lock_api::Mutex<RawAbsLock<NoSoloTrial>, u64>>),
    ("abs-direct-handoff", sample::<lock_api::Mutex<RawAbsLock<DirectHandoff>, u64>>),
    ("abs-no-quiet", sample::<lock_api::Mutex<RawAbsLock<NoQuiet>, u64>>),
    ("abs-8-yields", sample::<lock_api::Mutex<RawAbsLock<EightYields>, u64>>),
    ("std", sample::<std::sync::Mutex<u64>>),
    ("spin-crate", sample::<spin::Mutex<u64>>),
];

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = match args.next().map(|a| a.parse()) {
        None => 5,
        Some(Ok(r)) if r >= 1 => r,
        Some(_) => {
            eprintln!("usage: contended_rounds [ROUNDS >= 1] [STRATEGY,...]");
            std::process::exit(2);
        }
    };
    let wanted: Vec<String> =
        args.next().map(|s| s.split(',').map(str::to_owned).collect()).unwrap_or_default();
    if let Some(bad) = wanted.iter().find(|w| !STRATEGIES.iter().any(|(n, _)| n == w)) {
        let known: Vec<&str> = STRATEGIES.iter().map(|(n, _)| *n).collect();
        eprintln!("unknown strategy `{bad}`; known: {}", known.join(", "));
        std::process::exit(2);
    }
    let strategies: Vec<(&str, Runner)> = STRATEGIES
        .iter()
        .copied()
        .filter(|(n, _)| *n == "parking_lot" || wanted.is_empty() || wanted.iter().any(|w| w == n))
        .collect();
    // Calibrate ABS once, outside any measurement.
    let _ = abslock::AbsConfig::calibrated();
    let per_ns = units_per_ns();
    println!(
        "rounds: {rounds}; cells: ratio to parking_lot in the same round, median [min-max], then CPU ratio\n"
    );
    let mut header = String::from("| cell | parking_lot ns/acq |");
    let mut rule = String::from("|---|---:|");
    for (name, _) in &strategies[1..] {
        header += &format!(" {name} |");
        rule += "---:|";
    }
    println!("{header}\n{rule}");
    for (cs, cs_ns, iters) in
        [("cs-0ns", 0.0, 10_000_000), ("cs-100ns", 100.0, 1_500_000), ("cs-1us", 1000.0, 200_000)]
    {
        let units = (cs_ns * per_ns).round() as u64;
        for threads in [2usize, 4, 8, 16] {
            let mut ratio = vec![Vec::with_capacity(rounds); strategies.len()];
            let mut cpu = vec![Vec::with_capacity(rounds); strategies.len()];
            let mut peer_ns = Vec::with_capacity(rounds);
            for _ in 0..rounds {
                let mut order: Vec<usize> = (0..strategies.len()).collect();
                fastrand::shuffle(&mut order);
                let mut got = vec![(f64::NAN, f64::NAN); strategies.len()];
                for i in order {
                    got[i] = (strategies[i].1)(threads, units, iters);
                }
                peer_ns.push(got[0].0);
                for (i, &(t, c)) in got.iter().enumerate() {
                    ratio[i].push(t / got[0].0);
                    cpu[i].push(c / got[0].1);
                }
            }
            let mut line = format!("| {cs}/{threads} | {:.1} |", median(&peer_ns));
            for i in 1..strategies.len() {
                let lo = ratio[i].iter().copied().fold(f64::INFINITY, f64::min);
                let hi = ratio[i].iter().copied().fold(f64::NEG_INFINITY, f64::max);
                line += &format!(" {:.2} [{lo:.2}-{hi:.2}] cpu {:.2} |", median(&ratio[i]), median(&cpu[i]));
            }
            println!("{line}");
        }
    }
}
