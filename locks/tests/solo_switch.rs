//! The solo regime switched at run time (`RawAbsLock::set_solo`, which takes the lock to switch, and
//! the solo trial that `AbsConfig::solo_recheck_us` turns on): a sleeper that went to sleep without a
//! re-check is woken by the switch, releases wake again once it is off, exclusion and the count hold
//! while the regime is switched on and off (by `set_solo` and by the trial), and a lock whose config
//! runs no trial never switches. No timing decides a verdict: a stranded thread hangs the test.
#![cfg(not(abslock_loom))]

mod common;

use abslock::{AbsConfig, AbsMutexExt, AbsProfile, Mode, RawAbsLock};
use std::sync::OnceLock;

/// Calibrated bounds without a starvation bound (only a release or a re-check brings a sleeper back),
/// waiters in park mode sleeping at once, a re-check every 200 us under the solo regime.
enum ParkAtOnce {}

impl AbsProfile for ParkAtOnce {
    fn config() -> &'static AbsConfig {
        static C: OnceLock<AbsConfig> = OnceLock::new();
        C.get_or_init(|| AbsConfig {
            starve_after_us: u32::MAX,
            park_spins: 0,
            park_yields: 0,
            solo_recheck_us: 200,
            ..*AbsConfig::calibrated()
        })
    }
}

/// [`ParkAtOnce`] with a re-check period of 10 minutes: under the regime only a hand-off brings a
/// sleeper back in a test's lifetime.
enum ParkNoRecheck {}

impl AbsProfile for ParkNoRecheck {
    fn config() -> &'static AbsConfig {
        static C: OnceLock<AbsConfig> = OnceLock::new();
        C.get_or_init(|| AbsConfig { solo_recheck_us: 600_000_000, ..*ParkAtOnce::config() })
    }
}

/// [`ParkAtOnce`] without the solo trial (`solo_recheck_us: 0`): only `set_solo` switches the regime, so
/// a test can assert the last switch stands (with the trial on, a trial that ends after it may switch
/// the regime back: a run that lasted ~0.1 s failed that way about half the time).
enum ParkAtOnceNoTrial {}

impl AbsProfile for ParkAtOnceNoTrial {
    fn config() -> &'static AbsConfig {
        static C: OnceLock<AbsConfig> = OnceLock::new();
        C.get_or_init(|| AbsConfig { solo_recheck_us: 0, ..*ParkAtOnce::config() })
    }
}

/// The calibrated config with short windows checked often, so a short run holds many solo trials.
enum QuickTrials {}

impl AbsProfile for QuickTrials {
    const CHECK_INTERVAL: u64 = 64;
    fn config() -> &'static AbsConfig {
        static C: OnceLock<AbsConfig> = OnceLock::new();
        C.get_or_init(|| AbsConfig { window: 64, ..*AbsConfig::calibrated() })
    }
}

/// [`QuickTrials`] without the trial.
enum QuickNoTrial {}

impl AbsProfile for QuickNoTrial {
    const CHECK_INTERVAL: u64 = 64;
    fn config() -> &'static AbsConfig {
        static C: OnceLock<AbsConfig> = OnceLock::new();
        C.get_or_init(|| AbsConfig { window: 64, solo_recheck_us: 0, ..*AbsConfig::calibrated() })
    }
}

/// The main thread holds `m` while a switcher (`set_solo(to)`) comes to sleep first and three waiters
/// after it; a fair unlock then hands the switcher the lock while the three sleep, so the switch lands
/// over sleepers. Returns after all have finished; a stranded waiter hangs the test.
fn switch_over_three_sleepers<P: AbsProfile>(m: &lock_api::Mutex<RawAbsLock<P>, u64>, to: bool) {
    let guard = m.lock();
    std::thread::scope(|s| {
        let switcher = s.spawn(|| m.set_solo(to));
        while m.sleepers() < 1 {
            std::thread::yield_now();
        }
        let waiters: Vec<_> = (0..3).map(|_| s.spawn(|| *m.lock() += 1)).collect();
        while m.sleepers() < 4 {
            std::thread::yield_now();
        }
        lock_api::MutexGuard::unlock_fair(guard);
        switcher.join().unwrap();
        assert_eq!(m.solo(), to);
        for w in waiters {
            w.join().unwrap();
        }
    });
    assert_eq!(*m.lock(), 3);
    let stats = m.stats();
    assert!(stats.parks >= 4, "the waiters never slept: {stats:?}");
    assert_eq!(stats.handoffs, 1, "only the fair unlock hands off: {stats:?}");
}

#[test]
fn switching_solo_on_wakes_sleepers_that_have_no_recheck() {
    // The three sleep in park mode without a re-check, and there is no bound: once the switcher releases
    // under the regime, waking nobody, only the switch's own wake-up can bring them back.
    let m = lock_api::Mutex::<RawAbsLock<ParkAtOnce>, u64>::new(0);
    m.set_mode(Mode::Park);
    switch_over_three_sleepers(&m, true);
    assert!(m.stats().solo);
}

#[test]
fn switching_solo_off_lets_releases_wake_again() {
    // The three sleep under the regime with a 10-minute re-check, so only releases that wake again can
    // bring them back.
    let m = lock_api::Mutex::<RawAbsLock<ParkNoRecheck>, u64>::new(0);
    m.set_solo(true);
    switch_over_three_sleepers(&m, false);
    assert!(!m.stats().solo);
}

#[test]
fn the_count_holds_while_the_regime_is_switched_back_and_forth() {
    const THREADS: usize = 4;
    const SWITCHES: usize = 200;
    let each = common::scaled(20_000);
    let m = lock_api::Mutex::<RawAbsLock<ParkAtOnceNoTrial>, u64>::new(0);
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..SWITCHES {
                m.set_solo(i % 2 == 0);
            }
        });
        for _ in 0..THREADS {
            s.spawn(|| {
                for _ in 0..each {
                    *m.lock() += 1;
                }
            });
        }
    });
    assert_eq!(*m.lock(), THREADS as u64 * each);
    assert!(!m.solo(), "the last switch was to off");
    // Each switch took the lock once.
    assert_eq!(m.stats().acquisitions, THREADS as u64 * each + SWITCHES as u64 + 1);
}

#[test]
fn the_count_holds_while_the_trial_switches_the_regime() {
    const THREADS: usize = 4;
    let each = common::scaled(50_000);
    let m = lock_api::Mutex::<RawAbsLock<QuickTrials>, u64>::new(0);
    m.enable_trace(1 << 16);
    assert_eq!(common::hammer(&m, THREADS, each), THREADS as u64 * each);
    // Whether a trial ran depends on timing (an arm lasts 0.75 ms), so only the trace's length, not the
    // regime's windows, is asserted: the exact count above is the verdict.
    assert!(!m.trace().is_empty());
}

#[test]
fn without_the_trial_the_regime_never_runs() {
    const THREADS: usize = 4;
    let each = common::scaled(20_000);
    let m = lock_api::Mutex::<RawAbsLock<QuickNoTrial>, u64>::new(0);
    m.enable_trace(1 << 16);
    assert_eq!(common::hammer(&m, THREADS, each), THREADS as u64 * each);
    let trace = m.trace();
    assert!(!trace.is_empty());
    assert!(trace.iter().all(|p| !p.solo));
    assert!(!m.stats().solo);
}
