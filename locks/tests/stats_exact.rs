//! Statistics stay exact under contention: every lock, try_lock and timed lock that succeeded is one
//! acquisition; every contended acquisition's spins, yields and parks are counted once, by the waiter
//! itself when it holds the lock; the contention measure only grows while threads wait.
#![cfg(not(abslock_loom))]

use abslock::{AbsMutex, AbsMutexExt, AbsRocketMqMutex, RawAbsLock};
use std::time::Duration;

const THREADS: u64 = 16;
const EACH: u64 = 5000;

fn hammer<P: abslock::AbsProfile>(m: &lock_api::Mutex<RawAbsLock<P>, u64>) -> u64 {
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..THREADS)
            .map(|i| {
                s.spawn(move || {
                    let mut extra = 0;
                    for j in 0..EACH {
                        match (i + j) % 4 {
                            0 => match m.try_lock() {
                                Some(mut g) => *g += 1,
                                None => extra += 1,
                            },
                            1 => *m.try_lock_for(Duration::from_secs(3600)).unwrap() += 1,
                            _ => *m.lock() += 1,
                        }
                    }
                    extra
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).sum()
    })
}

fn check<P: abslock::AbsProfile>(m: &lock_api::Mutex<RawAbsLock<P>, u64>) {
    let failed_try = hammer(m);
    let stats = m.stats();
    let done = *m.lock();
    assert_eq!(done, THREADS * EACH - failed_try);
    assert_eq!(stats.acquisitions, done, "{stats:?}");
    assert!(stats.contended <= stats.acquisitions, "{stats:?}");
    assert!(stats.handoffs <= stats.contended, "{stats:?}");
    assert_eq!(stats.timeouts, 0, "{stats:?}");
    if stats.contended > 0 {
        assert!(stats.waiters_seen > 0, "{stats:?}");
    }
    assert_eq!(m.sleepers(), 0);
    // Idle: a further uncontended acquisition adds exactly one and nothing else.
    drop(m.lock());
    let after = m.stats();
    assert_eq!(after.acquisitions, stats.acquisitions + 2);
    assert_eq!(
        (after.contended, after.spins, after.yields, after.parks),
        (stats.contended, stats.spins, stats.yields, stats.parks)
    );
}

#[test]
fn calibrated_stats_are_exact_under_contention() {
    check(&AbsMutex::new(0));
}

#[test]
fn rocketmq_stats_are_exact_under_contention() {
    check(&AbsRocketMqMutex::new(0));
}
