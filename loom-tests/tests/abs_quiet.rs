//! The quiet regime: releases are plain stores while no thread waits, so no waiter may change a held
//! word. Each model starts the regime with the main thread's first acquisition (`Quiet`: window 1), then
//! lets waiters come while it is held. Exclusion must hold and every thread must finish (a stranded
//! sleeper is a loom deadlock). At one preemption: quiet sleepers' re-checks loop, as solo sleepers' do
//! (`ModelLock::BUSY_WAITS`).
#![cfg(abslock_loom)]

use abslock::RawAbsLock;
use abslock_loom_tests::{ModelLock, Quiet};
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;

struct Guarded {
    lock: RawAbsLock<Quiet>,
    count: UnsafeCell<u32>,
}

// SAFETY: `count` is only touched while `lock` is held.
unsafe impl Sync for Guarded {}

impl Guarded {
    /// A lock already in the quiet regime, held by the caller.
    fn held_in_quiet() -> Arc<Self> {
        let g = Arc::new(Guarded { lock: RawAbsLock::new(), count: UnsafeCell::new(0) });
        g.lock.acquire();
        assert!(g.lock.stats().quiet, "the first window had no waiter");
        g
    }

    fn bump(&self) {
        // SAFETY: the caller holds the lock.
        self.count.with_mut(|c| unsafe { *c += 1 });
    }

    fn total(&self) -> u32 {
        // SAFETY: called once every other thread is joined.
        self.count.with(|c| unsafe { *c })
    }
}

fn increment(g: &Guarded) {
    g.lock.acquire();
    g.bump();
    // SAFETY: acquired above.
    unsafe { g.lock.release() };
}

fn checked(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(1);
    b.max_branches = 100_000;
    b.check(f);
}

/// Two waiters come while the quiet holder works; its release races their registration.
#[test]
fn quiet_release_racing_two_waiters_keeps_exclusion_and_strands_nobody() {
    checked(|| {
        let g = Guarded::held_in_quiet();
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let g = Arc::clone(&g);
                thread::spawn(move || increment(&g))
            })
            .collect();
        g.bump();
        // SAFETY: acquired in `held_in_quiet`.
        unsafe { g.lock.release() };
        for w in workers {
            w.join().unwrap();
        }
        assert_eq!(g.total(), 3);
        assert!(!g.lock.is_held());
    });
}

/// `unlock_fair` from a quiet holder ends the regime and hands over to a waiter or frees the lock.
#[test]
fn quiet_fair_release_hands_over_or_frees() {
    checked(|| {
        let g = Guarded::held_in_quiet();
        let waiter = {
            let g = Arc::clone(&g);
            thread::spawn(move || increment(&g))
        };
        g.bump();
        // SAFETY: acquired in `held_in_quiet`.
        unsafe { g.lock.model_unlock_fair() };
        waiter.join().unwrap();
        assert_eq!(g.total(), 2);
        assert!(!g.lock.is_held());
    });
}
