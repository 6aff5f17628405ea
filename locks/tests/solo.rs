//! The solo restriction (`AbsProfile::SOLO_RECHECK_US`): waiters park at once and no release wakes them,
//! so a sleeper comes back only by the starvation bound's hand-off or by its own timed re-check. These
//! tests check that nobody is stranded, that exclusion and the count hold, and that a timed lock still
//! gives up at its own deadline. No timing decides a verdict: a stranded thread hangs the test.
#![cfg(not(abslock_loom))]

use abslock::{AbsConfig, AbsMutexExt, AbsProfile, RawAbsLock};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// Solo with the calibrated bounds (starvation bound 1 ms), re-checking every 200 us.
enum Solo {}

impl AbsProfile for Solo {
    const SOLO_RECHECK_US: u32 = 200;
    fn config() -> &'static AbsConfig {
        AbsConfig::calibrated()
    }
}

/// Solo without a starvation bound: only the re-check brings a sleeper back.
enum SoloNoBound {}

impl AbsProfile for SoloNoBound {
    const SOLO_RECHECK_US: u32 = 200;
    fn config() -> &'static AbsConfig {
        static C: std::sync::OnceLock<AbsConfig> = std::sync::OnceLock::new();
        C.get_or_init(|| AbsConfig { starve_after_us: u32::MAX, ..*AbsConfig::calibrated() })
    }
}

#[test]
fn sleepers_take_a_lock_left_free_by_their_own_recheck() {
    let m = lock_api::Mutex::<RawAbsLock<SoloNoBound>, u64>::new(0);
    let guard = m.lock();
    std::thread::scope(|s| {
        let waiters: Vec<_> = (0..3).map(|_| s.spawn(|| *m.lock() += 1)).collect();
        while m.sleepers() < 3 {
            std::thread::yield_now();
        }
        // Released over three sleepers, and the holder never comes back: no release wakes anyone, and
        // there is no bound to hand the lock over, so only the sleepers' re-checks can let them in.
        drop(guard);
        for w in waiters {
            w.join().unwrap();
        }
    });
    assert_eq!(*m.lock(), 3);
    let stats = m.stats();
    assert!(stats.parks >= 3, "the waiters never slept: {stats:?}");
    assert_eq!(stats.handoffs, 0, "no bound, so no hand-off: {stats:?}");
}

#[test]
fn exclusion_and_the_count_hold_under_contention() {
    const THREADS: u64 = 8;
    const EACH: u64 = 5000;
    let m = lock_api::Mutex::<RawAbsLock<Solo>, u64>::new(0);
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                for _ in 0..EACH {
                    let mut g = m.lock();
                    // A read-modify-write spread over the critical section: a second holder would lose
                    // an update.
                    let v = *g;
                    std::hint::black_box(&mut *g);
                    *g = v + 1;
                }
            });
        }
    });
    assert_eq!(*m.lock(), THREADS * EACH);
    let stats = m.stats();
    assert_eq!(stats.acquisitions, THREADS * EACH + 1);
    assert_eq!(stats.spins + stats.yields, 0, "solo waiters neither spin nor yield: {stats:?}");
}

#[test]
fn others_finish_against_a_tight_loop_hog() {
    const OTHERS: u64 = 7;
    const EACH: u64 = 50;
    let m = lock_api::Mutex::<RawAbsLock<Solo>, u64>::new(0);
    let others_done = AtomicBool::new(false);
    let hog_rounds = AtomicU64::new(0);
    std::thread::scope(|s| {
        let others: Vec<_> = (0..OTHERS)
            .map(|_| {
                s.spawn(|| {
                    for _ in 0..EACH {
                        *m.lock() += 1;
                    }
                })
            })
            .collect();
        s.spawn(|| {
            while !others_done.load(Ordering::Relaxed) {
                *m.lock() += 1;
                hog_rounds.fetch_add(1, Ordering::Relaxed);
            }
        });
        let joined: Vec<_> = others.into_iter().map(|t| t.join()).collect();
        others_done.store(true, Ordering::Relaxed);
        for result in joined {
            if let Err(panic) = result {
                std::panic::resume_unwind(panic);
            }
        }
    });
    assert_eq!(*m.lock(), OTHERS * EACH + hog_rounds.load(Ordering::Relaxed));
}

#[test]
fn a_timed_lock_gives_up_at_its_own_deadline_and_succeeds_on_a_free_lock() {
    let m = lock_api::Mutex::<RawAbsLock<Solo>, u64>::new(0);
    let guard = m.lock();
    std::thread::scope(|s| {
        // Held throughout: several re-checks (200 us) pass inside the 5 ms, none may succeed.
        let timed = s.spawn(|| m.try_lock_for(Duration::from_millis(5)).is_some());
        assert!(!timed.join().unwrap(), "a timed lock succeeded on a held lock");
    });
    drop(guard);
    assert!(m.try_lock_for(Duration::from_millis(5)).is_some());
    assert_eq!(m.stats().timeouts, 1);
}
