//! `RawBackoffLock` spins exactly k times before each yield (counted through its statistics), and k = 0
//! yields at once.
#![cfg(not(abslock_loom))]

use abslock::{BackoffMutex, RawBackoffLock};
use std::sync::atomic::{AtomicBool, Ordering};

/// Makes contended acquisitions: the main thread holds the lock while a waiter enters `lock`.
fn contend(k: u32, wanted: u64) -> abslock::BackoffStats {
    let m = BackoffMutex::from_raw(RawBackoffLock::with_k(k), ());
    for _ in 0..10_000 {
        // SAFETY: statistics only.
        if unsafe { m.raw() }.stats().contended >= wanted {
            break;
        }
        let held = m.lock();
        let started = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                started.store(true, Ordering::Release);
                drop(m.lock());
            });
            while !started.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
            for _ in 0..50 {
                std::thread::yield_now();
            }
            drop(held);
        });
    }
    // SAFETY: statistics only.
    unsafe { m.raw() }.stats()
}

#[test]
fn spins_per_yield_is_exactly_k() {
    for k in [1_u32, 10, 100, 1000] {
        let s = contend(k, 5);
        assert!(s.contended >= 5, "k={k}: no contended acquisition was produced: {s:?}");
        let k = u64::from(k);
        // Each contended acquisition runs full rounds of k spins then a yield, and at most one partial round.
        assert!(s.spins >= s.yields * k, "k={k}: fewer than k spins before a yield: {s:?}");
        assert!(s.spins <= (s.yields + s.contended) * k, "k={k}: more than k spins before a yield: {s:?}");
    }
}

#[test]
fn k_zero_yields_without_spinning() {
    let s = contend(0, 5);
    assert!(s.contended >= 5, "{s:?}");
    assert_eq!(s.spins, 0, "{s:?}");
    assert!(s.yields >= s.contended, "{s:?}");
}
