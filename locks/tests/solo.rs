//! The solo restriction (`AbsProfile::SOLO_RECHECK_US`): waiters park at once and no release wakes them,
//! so a sleeper comes back only by the starvation bound's hand-off or by its own timed re-check. These
//! tests check that nobody is stranded, that exclusion and the count hold, and that a timed lock still
//! gives up at its own deadline. No timing decides a verdict: a stranded thread hangs the test.
#![cfg(not(abslock_loom))]

mod common;

use abslock::{AbsConfig, AbsMutexExt, AbsProfile, RawAbsLock};
use std::time::Duration;

/// Solo with the calibrated bounds (starvation bound 1 ms), re-checking every 200 us.
enum Solo {}

impl AbsProfile for Solo {
    const SOLO_RECHECK_US: u32 = 200;
    fn config() -> &'static AbsConfig {
        AbsConfig::calibrated()
    }
}

/// Solo with a starvation bound of 0: every release over sleepers hands the lock to the oldest.
enum SoloImpatient {}

impl AbsProfile for SoloImpatient {
    const SOLO_RECHECK_US: u32 = 200;
    fn config() -> &'static AbsConfig {
        static C: std::sync::OnceLock<AbsConfig> = std::sync::OnceLock::new();
        C.get_or_init(|| AbsConfig { starve_after_us: 0, ..*AbsConfig::calibrated() })
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
    let hog_rounds = common::hog_against(&m, OTHERS, EACH, true);
    assert_eq!(*m.lock(), OTHERS * EACH + hog_rounds);
}

#[test]
fn the_bound_hands_a_solo_sleeper_the_lock() {
    // Bound 0: the test thread's first release happens over a sleeper (it holds the lock until one
    // sleeps), so it must hand the lock over, whatever the re-checks do.
    let m = lock_api::Mutex::<RawAbsLock<SoloImpatient>, u64>::new(0);
    let hog_rounds = common::hog_against(&m, 7, 50, true);
    assert_eq!(*m.lock(), 7 * 50 + hog_rounds);
    let stats = m.stats();
    assert!(stats.handoffs > 0, "the bound never handed over: {stats:?}");
}

#[test]
fn a_timed_lock_outlives_its_rechecks_and_takes_the_lock_when_it_is_released() {
    let m = lock_api::Mutex::<RawAbsLock<SoloNoBound>, u64>::new(0);
    let guard = m.lock();
    std::thread::scope(|s| {
        // A deadline no run reaches: a timed lock that took a re-check (200 us) for its own deadline
        // would give up long before the release below.
        let timed = s.spawn(|| m.try_lock_for(Duration::from_secs(600)).map(|mut g| *g += 1).is_some());
        while m.sleepers() == 0 && !timed.is_finished() {
            std::thread::yield_now();
        }
        // Hold on while ~25 re-check periods pass (a busy wait on the clock, not on a state: nothing here
        // can observe a re-check), so a waiter that gave up at a re-check would have done so by now.
        let until = std::time::Instant::now() + Duration::from_millis(5);
        while std::time::Instant::now() < until {
            std::hint::spin_loop();
        }
        drop(guard);
        assert!(timed.join().unwrap(), "the timed lock gave up before its deadline");
    });
    assert_eq!(*m.lock(), 1);
    assert_eq!(m.stats().timeouts, 0);
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
