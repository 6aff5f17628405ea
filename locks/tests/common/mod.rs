//! Shared helpers: run one check against every strategy.

#![allow(dead_code)]

use abslock::{RawAbsLock, RawBackoffLock, RawCasSpinLock, RawSpinLock, RocketMq};
use lock_api::{Mutex, RawMutex};

/// Calls `$check::<R>(name, make)` for every strategy of the crate.
#[macro_export]
macro_rules! for_each_strategy {
    ($check:ident) => {{
        $check::<abslock::RawSpinLock>("spin", abslock::RawSpinLock::new);
        $check::<abslock::RawCasSpinLock>("cas-spin", abslock::RawCasSpinLock::new);
        $check::<abslock::RawBackoffLock>("backoff-k0", || abslock::RawBackoffLock::with_k(0));
        $check::<abslock::RawBackoffLock>("backoff-k10", || abslock::RawBackoffLock::with_k(10));
        $check::<abslock::RawBackoffLock>("backoff-k1000", || abslock::RawBackoffLock::with_k(1000));
        $check::<abslock::RawAbsLock>("abs", abslock::RawAbsLock::new);
        $check::<abslock::RawAbsLock<abslock::RocketMq>>("abs-rocketmq", abslock::RawAbsLock::new);
    }};
}

/// Iterations scaled down in debug builds, up with `ABSLOCK_LONG=1`.
pub fn scaled(n: u64) -> u64 {
    if std::env::var_os("ABSLOCK_LONG").is_some() { n * 10 } else { n }
}

/// `threads` threads each add 1 under the lock `per_thread` times; returns the final count.
pub fn hammer<R: RawMutex + Send + Sync>(m: &Mutex<R, u64>, threads: usize, per_thread: u64) -> u64 {
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                for _ in 0..per_thread {
                    *m.lock() += 1;
                }
            });
        }
    });
    *m.lock()
}

/// Keeps the type names used so the imports are checked.
pub fn _types(_: RawSpinLock, _: RawCasSpinLock, _: RawBackoffLock, _: RawAbsLock, _: RawAbsLock<RocketMq>) {}
