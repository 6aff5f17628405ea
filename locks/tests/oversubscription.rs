//! Oversubscription smoke: 4 x cores threads, a critical section of a few microseconds. Every thread gets
//! the lock; ABS switches to parking under the load and returns to spinning when one thread is left.
//!
//! No timing decides the verdict: the workers run until they have seen the switch (or a generous cap
//! on acquisitions, after which the assertion reports what happened).
#![cfg(not(abslock_loom))]

use abslock::{AbsConfig, AbsProfile, AbsRocketMqMutex, MeasuredCosts, Mode, RawAbsLock};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A critical section of about `d` of CPU work (the spin is the work, not a wait for a state).
fn busy(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// The two scenarios run one at a time: run side by side (the test harness's default), each one's 4 x cores
/// threads loaded the other's cores, and RocketMQ's rule, which parks only after spins of k_max run out,
/// once never switched within the cap (1 failure in about 12 full test runs; 0 in 16 runs alone).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn threads() -> usize {
    4 * std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// Runs the scenario; returns the lock's statistics once it is spinning again.
fn run<P: abslock::AbsProfile>(m: &lock_api::Mutex<RawAbsLock<P>, Vec<u64>>, cap: u64) -> abslock::AbsStats {
    let _one_at_a_time = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let threads = threads();
    let parked_seen = AtomicBool::new(false);
    std::thread::scope(|s| {
        for t in 0..threads {
            let parked_seen = &parked_seen;
            s.spawn(move || {
                let mut mine = 0_u64;
                while mine < cap && !(parked_seen.load(Ordering::Relaxed) && mine > 0) {
                    let mut g = m.lock();
                    g[t] += 1;
                    busy(Duration::from_micros(3));
                    drop(g);
                    mine += 1;
                    // SAFETY: statistics only.
                    if unsafe { m.raw() }.mode() == Mode::Park {
                        parked_seen.store(true, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    let counts = m.lock().clone();
    assert!(counts.iter().all(|&c| c > 0), "a thread never got the lock: {counts:?}");
    // SAFETY: statistics only.
    let raw = unsafe { m.raw() };
    let stats = raw.stats();
    assert!(parked_seen.load(Ordering::Relaxed), "never switched to parking: {stats:?}");
    assert!(stats.mode_switches >= 1, "{stats:?}");

    // Load drops to one thread: the next windows see no waiters and the lock spins again.
    for _ in 0..4 * u64::from(P::config().window) {
        if raw.mode() == Mode::Spin {
            break;
        }
        m.lock()[0] += 1;
    }
    assert_eq!(raw.mode(), Mode::Spin, "did not return to spinning: {:?}", raw.stats());
    raw.stats()
}

/// The calibrated rule applied to the reference costs (`k_max` 208), not to a measurement: measured
/// while other tests load both cores, the yield's cost (and so every bound) comes out higher, and
/// before round 11 a load-inflated hand-off once gave `k_max` near 17 000, which k never reached within
/// the cap. The policy under test is the same; only the bounds are fixed.
enum ReferenceBounds {}

impl AbsProfile for ReferenceBounds {
    fn config() -> &'static AbsConfig {
        static C: std::sync::OnceLock<AbsConfig> = std::sync::OnceLock::new();
        C.get_or_init(|| AbsConfig::from_costs(&MeasuredCosts::REFERENCE))
    }
}

#[test]
fn calibrated_abs_parks_when_oversubscribed_and_spins_again_alone() {
    let stats = run(&lock_api::Mutex::<RawAbsLock<ReferenceBounds>, _>::new(vec![0; threads()]), 200_000);
    assert!(stats.mode_switches >= 2, "to park and back: {stats:?}");
}

/// RocketMQ's rule parks only after windows in which spins of `k_max` (10 000 pauses) ran out; on a
/// 2-core VM whose pause takes 14 ns that spin lasts ~140 us, long enough that in one full test run in
/// several no window of the first 200 000 acquisitions per thread ran out often enough. The cap is
/// only the give-up point: a run ends at the first switch.
#[test]
fn rocketmq_abs_parks_when_oversubscribed_and_spins_again_alone() {
    let stats = run(&AbsRocketMqMutex::new(vec![0; threads()]), 2_000_000);
    assert!(stats.mode_switches >= 2, "to park and back: {stats:?}");
}
