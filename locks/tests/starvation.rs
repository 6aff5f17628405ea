//! Starvation bound: one thread re-acquires the lock in a tight loop while 15 others each need 1000
//! acquisitions, on however many cores there are (2 on the project's machine). All 15 finish, with the
//! default bound and with a bound of 0 us (every sleeper turns starving at once), and the count is exact.
//! Whether anyone sleeps here depends on scheduling, so the hand-off itself is checked where it can be
//! forced: `a_starving_sleeper_is_handed_the_lock` in `locks/src/abs/lock.rs`.
//!
//! No timing decides the verdict: the hog runs until the others are done.
#![cfg(not(abslock_loom))]

use abslock::{AbsConfig, AbsMutexExt, AbsProfile, Calibrated, RawAbsLock};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

const OTHERS: u64 = 15;
const EACH: u64 = 1000;

/// The calibrated profile with a starvation bound of 0 us.
enum Impatient {}

impl AbsProfile for Impatient {
    fn config() -> &'static AbsConfig {
        static C: std::sync::OnceLock<AbsConfig> = std::sync::OnceLock::new();
        C.get_or_init(|| AbsConfig { starve_after_us: 0, ..*AbsConfig::calibrated() })
    }
}

/// Runs the scenario; returns the lock's statistics.
fn hog_against_fifteen<P: AbsProfile>() -> abslock::AbsStats {
    let m = lock_api::Mutex::<RawAbsLock<P>, u64>::new(0);
    let others_done = AtomicBool::new(false);
    let hog_rounds = AtomicU64::new(0);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !others_done.load(Ordering::Relaxed) {
                *m.lock() += 1;
                hog_rounds.fetch_add(1, Ordering::Relaxed);
            }
        });
        let others: Vec<_> = (0..OTHERS)
            .map(|_| {
                s.spawn(|| {
                    for _ in 0..EACH {
                        *m.lock() += 1;
                    }
                })
            })
            .collect();
        // Stop the hog whatever happened, then judge: a panic fails the test instead of hanging it.
        let joined: Vec<_> = others.into_iter().map(|t| t.join()).collect();
        others_done.store(true, Ordering::Relaxed);
        for result in joined {
            if let Err(panic) = result {
                std::panic::resume_unwind(panic);
            }
        }
    });
    let stats = m.stats();
    assert_eq!(*m.lock(), OTHERS * EACH + hog_rounds.load(Ordering::Relaxed));
    assert!(stats.handoffs <= stats.contended, "{stats:?}");
    stats
}

#[test]
fn fifteen_threads_finish_against_a_tight_loop_hog() {
    hog_against_fifteen::<Calibrated>();
}

#[test]
fn fifteen_threads_finish_with_a_zero_bound() {
    hog_against_fifteen::<Impatient>();
}
