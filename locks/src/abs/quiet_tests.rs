//! The quiet regime (`QUIET`): when it starts and ends, what a release writes under it, and that a
//! waiter never changes a held quiet word. Windows are ended by hand (`ManualWindows`), threads wait for
//! states by polling the lock's registers, and no verdict depends on timing.

use super::crowding_tests::ManualWindows;
use super::solo_word_tests::window_with_waiters;
use super::*;

/// A full window of uncontended acquisitions, ended by hand while held; leaves the lock free.
fn quiet_window(lock: &RawAbsLock<ManualWindows>) {
    window_with_waiters(lock, 0);
}

fn word(lock: &RawAbsLock<ManualWindows>) -> u32 {
    lock.hot.state.load(Ordering::Relaxed)
}

/// Polls (no sleep) until `lock`'s register shows `n` threads in the slow path.
fn until_waiting(lock: &RawAbsLock<ManualWindows>, n: u32) {
    while lock.busy.waiters.load(Ordering::Relaxed) / WAITER != n {
        std::thread::yield_now();
    }
}

#[test]
fn a_window_without_waiters_starts_the_regime_and_a_waiter_ends_it() {
    let lock = RawAbsLock::<ManualWindows>::new();
    quiet_window(&lock);
    assert!(lock.stats().quiet);
    assert_eq!(word(&lock), QUIET, "the quiet release stores the free word, keeping the regime");
    lock.raw_lock();
    assert_eq!(word(&lock), LOCKED | QUIET);
    std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            lock.raw_lock();
            // SAFETY: locked on the line above, by this thread.
            unsafe { lock.raw_unlock() };
        });
        until_waiting(&lock, 1);
        // SAFETY: locked above, by this thread.
        unsafe { lock.raw_unlock() };
        waiter.join().unwrap();
    });
    let stats = lock.stats();
    assert_eq!(stats.contended, 1);
    assert!(!stats.quiet, "the waiter's acquisition ends the regime");
    assert_eq!(word(&lock), 0, "and its release is the CAS to a free word");
    // The window that held the contended acquisition does not start the regime; the next quiet one does.
    quiet_window(&lock);
    assert!(!lock.stats().quiet);
    quiet_window(&lock);
    assert!(lock.stats().quiet);
}

/// Takes `lock` in the quiet regime, lets a second thread come to wait until it sleeps (with a
/// re-check: counted in the slow path and not active), runs `while_asleep`, then releases the lock with
/// `release` and joins the waiter, which takes the lock once and releases it.
fn with_a_quiet_sleeper(
    lock: &RawAbsLock<ManualWindows>,
    while_asleep: impl FnOnce(),
    release: unsafe fn(&RawAbsLock<ManualWindows>),
) {
    quiet_window(lock);
    lock.raw_lock();
    std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            lock.raw_lock();
            // SAFETY: locked on the line above, by this thread.
            unsafe { lock.raw_unlock() };
        });
        while lock.sleepers() != 1 {
            std::thread::yield_now();
        }
        while_asleep();
        // SAFETY: locked above, by this thread; `release` is one of the lock's releases.
        unsafe { release(lock) };
        waiter.join().unwrap();
    });
}

#[test]
fn a_waiter_out_of_spins_sleeps_without_touching_a_quiet_word() {
    let lock = RawAbsLock::<ManualWindows>::new();
    with_a_quiet_sleeper(
        &lock,
        || assert_eq!(word(&lock), LOCKED | QUIET, "no `PARKED` on a held quiet word"),
        RawAbsLock::raw_unlock,
    );
    let stats = lock.stats();
    assert!(stats.parks >= 1);
    assert!(!stats.quiet);
    assert_eq!(word(&lock), 0);
}

/// A guard may be unlocked on another thread (`GuardSend`), which leaves the locking thread's hint
/// behind: a later release on that thread must not trust it once the regime has ended.
#[test]
fn a_stale_hint_is_not_trusted() {
    let lock = RawAbsLock::<ManualWindows>::new();
    quiet_window(&lock);
    lock.raw_lock();
    std::thread::scope(|s| {
        // SAFETY: the lock is held, and its guard is passed to this thread.
        s.spawn(|| unsafe { lock.raw_unlock() }).join().unwrap();
        assert_eq!(word(&lock), QUIET, "released by the other thread's CAS, the regime kept");
        // Switching the solo regime on ends the quiet one.
        s.spawn(|| lock.set_solo(true)).join().unwrap();
        assert!(!lock.stats().quiet);
        assert_eq!(word(&lock), SOLO);
        // Locked elsewhere, its guard passed back to this thread, whose hint names this lock.
        s.spawn(|| lock.raw_lock()).join().unwrap();
    });
    // SAFETY: the lock is held, and its guard was passed to this thread.
    unsafe { lock.raw_unlock() };
    assert_eq!(word(&lock), SOLO, "released by the CAS, with no `QUIET` made up");
}

/// Quiet sleepers set no `PARKED`, yet `bump` must see them and a fair unlock must hand one the lock.
#[test]
fn a_fair_unlock_hands_the_lock_to_a_quiet_sleeper() {
    let lock = RawAbsLock::<ManualWindows>::new();
    with_a_quiet_sleeper(
        &lock,
        || assert!(lock.bump_due(), "a quiet sleeper is a reason to bump"),
        RawAbsLock::raw_unlock_fair,
    );
    let stats = lock.stats();
    assert_eq!(stats.handoffs, 1, "handed over, not freed");
    assert!(!stats.quiet);
    assert_eq!(word(&lock), 0);
}
