//! What the starvation bound costs, and how the heir changed it: `abs` with bounds of 250 us, 1000 us
//! (the default in rounds 10-14; 500 us since round 15) and none, each with the heir (the oldest sleeper woken with the lock released, handed
//! the lock only once it runs and asks) and with the direct hand-off of rounds 2-9
//! (`AbsProfile::DIRECT_HANDOFF`: the lock passed to the sleeper while it is still asleep).
//!
//! ```text
//! cargo run --release -p abslock-benches --example handoff_cost -- [CS_NS] [THREADS] [ROUNDS]
//! ```
//!
//! Defaults: a 100 ns critical section, 16 threads, 9 rounds. One sample is 1.5 million acquisitions
//! over the threads (the `locks/contended` pool). Every round runs each variant once, in a fresh random
//! order; prints per variant the median over rounds of its time per acquisition over `parking_lot`'s in
//! the same round, the smallest and largest round's ratio, and the median number of acquisitions the
//! bound made (`AbsStats::handoffs`: sleepers woken as heirs and, since round 15, yielders that asked as
//! heirs past the bound). The cost of one hand-off is then (ratio - the ratio without a
//! bound) x the sample's time / hand-offs. Ours.

use abslock::{AbsConfig, AbsMutexExt, AbsProfile, RawAbsLock};
use abslock_benches::counter::bump_pool;
use abslock_benches::pool::units_per_ns;
use std::sync::{Arc, OnceLock};

/// The calibrated config with the starvation bound `B` us (`u32::MAX`: none), the heir unless `D`.
enum Bound<const B: u32, const D: bool> {}

impl<const B: u32, const D: bool> AbsProfile for Bound<B, D> {
    const DIRECT_HANDOFF: bool = D;
    fn config() -> &'static AbsConfig {
        // One static per bound: a static in a generic item is shared by every instance.
        static B250: OnceLock<AbsConfig> = OnceLock::new();
        static B1000: OnceLock<AbsConfig> = OnceLock::new();
        static NONE: OnceLock<AbsConfig> = OnceLock::new();
        let cell = match B {
            250 => &B250,
            1000 => &B1000,
            u32::MAX => &NONE,
            _ => panic!("add a static for the bound {B}"),
        };
        cell.get_or_init(|| AbsConfig { starve_after_us: B, ..*AbsConfig::calibrated() })
    }
}

/// One sample: (ns per acquisition, hand-offs by the bound).
type Sample = (f64, u64);

fn abs<const B: u32, const D: bool>(threads: usize, units: u64, iters: u64) -> Sample {
    let m = Arc::new(lock_api::Mutex::<RawAbsLock<Bound<B, D>>, u64>::new(0));
    let pool = bump_pool(threads, Arc::clone(&m), units);
    pool.run(iters / 10);
    let before = m.stats().handoffs;
    let wall = pool.run(iters);
    (wall.as_nanos() as f64 / iters as f64, m.stats().handoffs - before)
}

fn parking_lot(threads: usize, units: u64, iters: u64) -> Sample {
    let m = Arc::new(lock_api::Mutex::<parking_lot::RawMutex, u64>::new(0));
    let pool = bump_pool(threads, m, units);
    pool.run(iters / 10);
    (pool.run(iters).as_nanos() as f64 / iters as f64, 0)
}

type Runner = fn(usize, u64, u64) -> Sample;

const VARIANTS: &[(&str, Runner)] = &[
    ("parking_lot", parking_lot),
    ("abs (heir, 1000 us)", abs::<1000, false>),
    ("abs-direct-handoff (1000 us)", abs::<1000, true>),
    ("heir, 250 us", abs::<250, false>),
    ("direct, 250 us", abs::<250, true>),
    ("no bound", abs::<{ u32::MAX }, false>),
];

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<f64>());
    let mut next = |default: f64| match args.next() {
        None => default,
        Some(Ok(v)) if v >= 0.0 => v,
        Some(_) => {
            eprintln!("usage: handoff_cost [CS_NS] [THREADS] [ROUNDS]");
            std::process::exit(2);
        }
    };
    let (cs_ns, threads, rounds) = (next(100.0), next(16.0).max(1.0) as usize, next(9.0).max(1.0) as usize);
    let _ = AbsConfig::calibrated();
    let units = (cs_ns * units_per_ns()).round() as u64;
    let iters = 1_500_000;
    let mut ratio = vec![Vec::new(); VARIANTS.len()];
    let mut handoffs = vec![Vec::new(); VARIANTS.len()];
    let mut peer_ns = Vec::new();
    for _ in 0..rounds {
        let mut order: Vec<usize> = (0..VARIANTS.len()).collect();
        fastrand::shuffle(&mut order);
        let mut got = vec![(f64::NAN, 0); VARIANTS.len()];
        for i in order {
            got[i] = (VARIANTS[i].1)(threads, units, iters);
        }
        peer_ns.push(got[0].0);
        for (i, &(ns, h)) in got.iter().enumerate() {
            ratio[i].push(ns / got[0].0);
            handoffs[i].push(h as f64);
        }
    }
    println!(
        "critical section {cs_ns} ns, {threads} threads, {rounds} rounds of {iters} acquisitions; parking_lot {:.1} ns/acq (median)\n",
        median(&mut peer_ns)
    );
    println!("| variant | time / parking_lot, median [min-max] | hand-offs per sample (median) |");
    println!("|---|---:|---:|");
    for (i, (name, _)) in VARIANTS.iter().enumerate().skip(1) {
        let lo = ratio[i].iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ratio[i].iter().copied().fold(f64::NEG_INFINITY, f64::max);
        println!(
            "| {name} | {:.3} [{lo:.2}-{hi:.2}] | {:.0} |",
            median(&mut ratio[i]),
            median(&mut handoffs[i])
        );
    }
}
