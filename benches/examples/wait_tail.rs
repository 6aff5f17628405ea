//! How long the unluckiest waiters wait: every acquisition's wait, and each thread's longest, under a
//! `lock-bound`-like critical section (copy SIZE bytes into a 64 MiB buffer at an advancing offset).
//!
//! ```text
//! cargo run --release -p abslock-benches --example wait_tail -- [THREADS] [SIZE] [ROUNDS] [SECS]
//! ```
//!
//! Defaults: 16 threads, 1024 bytes, 3 rounds of 1 s per strategy. Every round runs `abs`,
//! `abs-no-bound` (`starve_after_us: u32::MAX`), `abs-rocketmq` and `parking_lot` once each, in a fresh
//! random order. Each thread times every acquisition (from just before `lock()` to just after it returns,
//! ns) into its own histogram and keeps its longest wait. Prints per strategy and round: acquisitions per
//! second and its ratio to `parking_lot`'s in the same round, the p99, p99.9 and p99.99 of all
//! acquisitions' waits, and the median and largest of the threads' longest waits.
//!
//! An acquisition that returns after the run's end is not counted, and its wait is timed up to the
//! run's end only: after it the other threads stop taking the lock one by one, so the last waiters wait
//! for the run's teardown, not their turn. Under `abs`'s solo regime, where no release wakes a sleeper,
//! that wait is a sleeper's whole re-check period (15 ms with 15 threads waiting), which earlier
//! versions of this example reported as every thread's longest wait (`docs/abs.md`, round 16).
//!
//! Why beside the sweep: the sweep samples one acquisition in 64 per thread, so its p99.9 weighs threads
//! by how often they acquire, and a thread that the lock keeps asleep (the one a starvation bound is
//! for) adds few samples. The threads' longest waits measure the bound itself. Ours.

use abslock::{AbsConfig, AbsProfile, RawAbsLock, RocketMq};
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The buffer the critical section writes into, bytes.
const BUF: usize = 64 << 20;
/// Largest wait a histogram holds, ns (60 s).
const MAX_WAIT_NS: u64 = 60_000_000_000;

/// The calibrated config without a starvation bound.
enum NoBound {}

impl AbsProfile for NoBound {
    fn config() -> &'static AbsConfig {
        static C: OnceLock<AbsConfig> = OnceLock::new();
        C.get_or_init(|| AbsConfig { starve_after_us: u32::MAX, ..*AbsConfig::calibrated() })
    }
}

/// One strategy's run: acquisitions, all waits, and each thread's longest wait (ns, sorted).
struct Run {
    acquisitions: u64,
    waits: Histogram<u64>,
    longest: Vec<u64>,
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_WAIT_NS, 3).expect("static bounds are valid")
}

fn run<R: lock_api::RawMutex + Send + Sync + 'static>(threads: usize, size: usize, secs: f64) -> Run {
    // Written once before timing: a zeroed allocation's pages are mapped on first write, and a page
    // fault inside the critical section would land in the waits (the sweep warms its segments too).
    let mut buf = vec![0_u8; BUF];
    buf.fill(1);
    let m = Arc::new(lock_api::Mutex::<R, (Vec<u8>, usize)>::new((buf, 0)));
    let stop = Arc::new(AtomicBool::new(false));
    // When the run ended: set before `stop`, so a worker that sees `stop` reads it.
    let ended = Arc::new(OnceLock::<Instant>::new());
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let (m, stop, ended) = (Arc::clone(&m), Arc::clone(&stop), Arc::clone(&ended));
            std::thread::spawn(move || {
                let record = vec![7_u8; size];
                let (mut waits, mut n, mut longest) = (histogram(), 0_u64, 0_u64);
                while !stop.load(Ordering::Relaxed) {
                    let t0 = Instant::now();
                    let mut guard = m.lock();
                    let mut wait = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(MAX_WAIT_NS);
                    let late = stop.load(Ordering::Acquire);
                    if late && let Some(end) = ended.get() {
                        // Only the part of the wait inside the run.
                        let inside = end.saturating_duration_since(t0).as_nanos();
                        wait = wait.min(u64::try_from(inside).unwrap_or(MAX_WAIT_NS));
                    }
                    let (buf, offset) = &mut *guard;
                    let at = if *offset + size > BUF { 0 } else { *offset };
                    buf[at..at + size].copy_from_slice(&record);
                    *offset = at + size;
                    drop(guard);
                    waits.saturating_record(wait.max(1));
                    longest = longest.max(wait);
                    if late {
                        // Returned after the run's end: not one of the run's acquisitions.
                        break;
                    }
                    n += 1;
                }
                (waits, n, longest)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs_f64(secs));
    let _ = ended.set(Instant::now());
    stop.store(true, Ordering::Release);
    let mut all = Run { acquisitions: 0, waits: histogram(), longest: Vec::with_capacity(threads) };
    for worker in workers {
        let (waits, n, longest) = worker.join().expect("a worker panicked");
        all.waits.add(waits).expect("same bounds");
        all.acquisitions += n;
        all.longest.push(longest);
    }
    all.longest.sort_unstable();
    all
}

fn us(ns: u64) -> String {
    format!("{:.0}", ns as f64 / 1000.0)
}

fn main() {
    let arg = |i: usize, default: f64| -> f64 {
        match std::env::args().nth(i).map(|a| a.parse::<f64>()) {
            None => default,
            Some(Ok(v)) if v > 0.0 => v,
            Some(_) => {
                eprintln!("usage: wait_tail [THREADS] [SIZE] [ROUNDS] [SECS], each > 0");
                std::process::exit(2);
            }
        }
    };
    let (threads, size, rounds, secs) =
        (arg(1, 16.0) as usize, (arg(2, 1024.0) as usize).min(BUF), arg(3, 3.0) as usize, arg(4, 1.0));
    type RunFn = fn(usize, usize, f64) -> Run;
    let strategies: [(&str, RunFn); 4] = [
        ("parking_lot", run::<parking_lot::RawMutex>),
        ("abs", run::<RawAbsLock>),
        ("abs-no-bound", run::<RawAbsLock<NoBound>>),
        ("abs-rocketmq", run::<RawAbsLock<RocketMq>>),
    ];
    println!(
        "{threads} threads, {size} B per critical section, {rounds} rounds of {secs} s per strategy; waits in us"
    );
    println!(
        "| round | strategy | acq/s (M) | vs parking_lot | p99 | p99.9 | p99.99 | threads' longest: median | max |"
    );
    println!("|---:|---|---:|---:|---:|---:|---:|---:|---:|");
    for round in 1..=rounds {
        let mut order: Vec<usize> = (0..strategies.len()).collect();
        fastrand::shuffle(&mut order);
        let mut got: Vec<Option<Run>> = (0..strategies.len()).map(|_| None).collect();
        for i in order {
            got[i] = Some((strategies[i].1)(threads, size, secs));
        }
        let peer = got[0].as_ref().map_or(1, |r| r.acquisitions.max(1));
        for (i, r) in got.iter().enumerate() {
            let Some(r) = r else { continue };
            let q = |p: f64| us(r.waits.value_at_quantile(p));
            println!(
                "| {round} | {} | {:.2} | {:.2} | {} | {} | {} | {} | {} |",
                strategies[i].0,
                r.acquisitions as f64 / secs / 1e6,
                r.acquisitions as f64 / peer as f64,
                q(0.99),
                q(0.999),
                q(0.9999),
                us(r.longest[r.longest.len() / 2]),
                us(*r.longest.last().unwrap_or(&0)),
            );
        }
    }
}
