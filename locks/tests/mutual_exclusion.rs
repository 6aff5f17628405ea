//! Every strategy keeps a shared counter exact under contention, oversubscribed (8 threads, 2 cores).
#![cfg(not(abslock_loom))]

mod common;

use lock_api::{Mutex, RawMutex};

fn counter_is_exact<R: RawMutex + Send + Sync>(name: &str, make: fn() -> R) {
    let per_thread = common::scaled(20_000);
    let m = Mutex::from_raw(make(), 0_u64);
    assert_eq!(common::hammer(&m, 8, per_thread), 8 * per_thread, "{name}");
    assert!(!m.is_locked(), "{name} left locked");
}

#[test]
fn every_strategy_keeps_the_count_exact() {
    for_each_strategy!(counter_is_exact);
}
