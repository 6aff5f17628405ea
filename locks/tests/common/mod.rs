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

/// A hog re-takes `m` in a tight loop while `others` threads each need `each` acquisitions, and stops
/// once they are all done; returns how many acquisitions the hog made. With `hold_until_asleep`, the
/// calling thread holds the lock at the start until one of the others sleeps on it (or all are done),
/// so at least one release happens over a sleeper whatever the scheduler does. A panic in a thread
/// stops the hog and is resumed here, so a failure fails instead of hanging.
pub fn hog_against<P: abslock::AbsProfile>(
    m: &Mutex<RawAbsLock<P>, u64>,
    others: u64,
    each: u64,
    hold_until_asleep: bool,
) -> u64 {
    use abslock::AbsMutexExt;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let start_guard = hold_until_asleep.then(|| m.lock());
    let others_done = AtomicBool::new(false);
    let hog_rounds = AtomicU64::new(0);
    std::thread::scope(|s| {
        let threads: Vec<_> = (0..others)
            .map(|_| {
                s.spawn(|| {
                    for _ in 0..each {
                        *m.lock() += 1;
                    }
                })
            })
            .collect();
        if let Some(guard) = start_guard {
            while m.sleepers() == 0 && !threads.iter().all(|t| t.is_finished()) {
                std::thread::yield_now();
            }
            drop(guard);
        }
        s.spawn(|| {
            while !others_done.load(Ordering::Relaxed) {
                *m.lock() += 1;
                hog_rounds.fetch_add(1, Ordering::Relaxed);
            }
        });
        let joined: Vec<_> = threads.into_iter().map(|t| t.join()).collect();
        others_done.store(true, Ordering::Relaxed);
        for result in joined {
            if let Err(panic) = result {
                std::panic::resume_unwind(panic);
            }
        }
    });
    hog_rounds.load(Ordering::Relaxed)
}

/// Keeps the type names used so the imports are checked.
pub fn _types(_: RawSpinLock, _: RawCasSpinLock, _: RawBackoffLock, _: RawAbsLock, _: RawAbsLock<RocketMq>) {}
