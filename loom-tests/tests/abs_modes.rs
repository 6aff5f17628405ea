//! ABS-specific models: the mode changes at any moment, including while the lock is held, and no
//! wake-up is ever lost. A lost wake-up shows up as a loom deadlock (every thread blocked).
#![cfg(abslock_loom)]

use abslock::{Mode, RawAbsLock};
use abslock_loom_tests::{Adaptive, ModelLock, ParkAtOnce, SmallSpin};
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;

struct Guarded<P: abslock::AbsProfile> {
    lock: RawAbsLock<P>,
    count: UnsafeCell<u32>,
}

// SAFETY: `count` is only touched while `lock` is held.
unsafe impl<P: abslock::AbsProfile> Sync for Guarded<P> {}

fn increment<P: abslock::AbsProfile>(g: &Guarded<P>) {
    g.lock.acquire();
    // SAFETY: we hold the lock.
    g.count.with_mut(|c| unsafe { *c += 1 });
    // SAFETY: acquired above.
    unsafe { g.lock.release() };
}

fn flip<P: abslock::AbsProfile>(lock: &RawAbsLock<P>) {
    let next = if lock.mode() == Mode::Spin { Mode::Park } else { Mode::Spin };
    lock.set_mode(next);
}

/// The policy switches at every acquisition (window 1) while a third thread forces switches, one of
/// them from inside the critical section.
#[test]
fn mode_switches_at_every_acquisition_keep_exclusion() {
    loom::model(|| {
        let g = Arc::new(Guarded::<Adaptive> { lock: RawAbsLock::new(), count: UnsafeCell::new(0) });
        let worker = {
            let g = Arc::clone(&g);
            thread::spawn(move || increment(&g))
        };
        let flipper = {
            let g = Arc::clone(&g);
            thread::spawn(move || flip(&g.lock))
        };
        g.lock.acquire();
        flip(&g.lock); // while held
        // SAFETY: we hold the lock.
        g.count.with_mut(|c| unsafe { *c += 1 });
        // SAFETY: acquired above.
        unsafe { g.lock.release() };
        worker.join().unwrap();
        flipper.join().unwrap();
        // SAFETY: all joined.
        assert_eq!(g.count.with(|c| unsafe { *c }), 2);
    });
}

/// A waiter parks in park mode; the mode flips back to spin before the holder unlocks. The waiter must
/// still be woken (the unlock reads the word, not the mode). `ParkAtOnce`, so the waiter can be asleep
/// before the flip (with a spin on the way, loom would run it again only once the holder blocks).
#[test]
fn parked_waiter_is_woken_after_flip_back_to_spin() {
    loom::model(|| {
        let g = Arc::new(Guarded::<ParkAtOnce> { lock: RawAbsLock::new(), count: UnsafeCell::new(0) });
        g.lock.set_mode(Mode::Park);
        g.lock.acquire();
        let waiter = {
            let g = Arc::clone(&g);
            thread::spawn(move || increment(&g))
        };
        g.lock.set_mode(Mode::Spin);
        // SAFETY: acquired above.
        unsafe { g.lock.release() };
        waiter.join().unwrap();
        // SAFETY: joined.
        assert_eq!(g.count.with(|c| unsafe { *c }), 1);
    });
}

/// Unlock races a thread that is about to park (between marking the word `PARKED` and sleeping).
#[test]
fn unlock_racing_a_thread_about_to_park() {
    loom::model(|| {
        let g = Arc::new(Guarded::<SmallSpin> { lock: RawAbsLock::new(), count: UnsafeCell::new(0) });
        g.lock.set_mode(Mode::Park);
        let a = {
            let g = Arc::clone(&g);
            thread::spawn(move || increment(&g))
        };
        let b = {
            let g = Arc::clone(&g);
            thread::spawn(move || increment(&g))
        };
        increment(&g);
        a.join().unwrap();
        b.join().unwrap();
        // SAFETY: joined.
        assert_eq!(g.count.with(|c| unsafe { *c }), 3);
        assert!(!g.lock.is_held());
    });
}

/// The main thread holds the lock while one waiter comes to wait (and may sleep) and a third thread
/// switches the solo regime to `to` (`set_solo` takes the lock, so it may get it while the waiter
/// sleeps); then the main thread releases. Starts in park mode, or with the regime on if `to` is off.
/// Every thread must finish: a stranded sleeper is a loom deadlock. At one preemption: solo sleepers'
/// re-checks loop (`ModelLock::BUSY_WAITS`).
fn switch_beside_a_waiter(to: bool) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(1);
    b.check(move || {
        let g = Arc::new(Guarded::<ParkAtOnce> { lock: RawAbsLock::new(), count: UnsafeCell::new(0) });
        if to {
            g.lock.set_mode(Mode::Park);
        } else {
            g.lock.set_solo(true);
        }
        g.lock.acquire();
        let waiter = {
            let g = Arc::clone(&g);
            thread::spawn(move || increment(&g))
        };
        let switcher = {
            let g = Arc::clone(&g);
            thread::spawn(move || g.lock.set_solo(to))
        };
        // SAFETY: acquired above.
        unsafe { g.lock.release() };
        waiter.join().unwrap();
        switcher.join().unwrap();
        // SAFETY: joined.
        assert_eq!(g.count.with(|c| unsafe { *c }), 1);
        assert_eq!(g.lock.solo(), to);
    });
}

/// A waiter sleeps in park mode without a re-check (no solo regime yet) when the regime is switched on;
/// from then on no release wakes anyone. The switch must wake the sleeper (to park again with a
/// re-check) or make its park invalid: otherwise it sleeps forever.
#[test]
fn solo_switched_on_over_a_sleeper_strands_nobody() {
    switch_beside_a_waiter(true);
}

/// Switched off while a solo sleeper re-checks: the releases wake again, and the sleeper gets the lock.
#[test]
fn solo_switched_off_under_a_sleeper_strands_nobody() {
    switch_beside_a_waiter(false);
}

/// The switch to the solo regime races two threads taking the lock (one may be about to park without a
/// re-check when the switch lands). At one preemption, as above.
#[test]
fn solo_switch_racing_waiters_keeps_exclusion_and_strands_nobody() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(1);
    b.check(|| {
        let g = Arc::new(Guarded::<ParkAtOnce> { lock: RawAbsLock::new(), count: UnsafeCell::new(0) });
        g.lock.set_mode(Mode::Park);
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let g = Arc::clone(&g);
                thread::spawn(move || increment(&g))
            })
            .collect();
        g.lock.set_solo(true);
        for w in workers {
            w.join().unwrap();
        }
        // SAFETY: joined.
        assert_eq!(g.count.with(|c| unsafe { *c }), 2);
        assert!(!g.lock.is_held());
    });
}
