//! 1 000 000 uncontended `try_lock`/`unlock` pairs all succeed, for every strategy (`try_lock` uses a strong
//! CAS, so it never fails spuriously on a free lock).
#![cfg(not(abslock_loom))]

mod common;

use lock_api::{Mutex, RawMutex};

fn million_try_locks_succeed<R: RawMutex + Send + Sync>(name: &str, make: fn() -> R) {
    let m = Mutex::from_raw(make(), 0_u64);
    for i in 0..1_000_000_u64 {
        match m.try_lock() {
            Some(mut g) => *g += 1,
            None => panic!("{name}: try_lock failed on a free lock at pair {i}"),
        }
    }
    assert_eq!(*m.lock(), 1_000_000, "{name}");
}

fn try_lock_fails_while_held<R: RawMutex + Send + Sync>(name: &str, make: fn() -> R) {
    let m = Mutex::from_raw(make(), ());
    let held = m.lock();
    std::thread::scope(|s| {
        s.spawn(|| assert!(m.try_lock().is_none(), "{name}: try_lock succeeded on a held lock"));
    });
    drop(held);
    assert!(m.try_lock().is_some(), "{name}");
}

#[test]
fn every_strategy_succeeds_a_million_times() {
    for_each_strategy!(million_try_locks_succeed);
}

#[test]
fn every_strategy_refuses_try_lock_while_held() {
    for_each_strategy!(try_lock_fails_while_held);
}

#[test]
fn abs_counts_every_try_lock_as_an_uncontended_acquisition() {
    let m = abslock::AbsMutex::new(());
    for _ in 0..10_000 {
        drop(m.try_lock().expect("free"));
    }
    // SAFETY: raw() is only used to read statistics, never to unlock.
    let stats = unsafe { m.raw() }.stats();
    assert_eq!((stats.acquisitions, stats.contended, stats.spins, stats.parks), (10_000, 0, 0, 0));
}
