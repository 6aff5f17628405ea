//! Starvation bound: one thread re-acquires the lock in a tight loop while 15 others each need 1000
//! acquisitions, on however many cores there are (2 on the project's machine). All 15 finish, and the
//! hand-off counter shows the bound acted: sleepers past it were handed the lock by an unlock.
//!
//! No timing decides the verdict: the hog runs until the others are done.
#![cfg(not(abslock_loom))]

use abslock::{AbsMutex, AbsMutexExt};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

const OTHERS: u64 = 15;
const EACH: u64 = 1000;

#[test]
fn fifteen_threads_finish_against_a_tight_loop_hog_and_hand_offs_happen() {
    let m = AbsMutex::new(0_u64);
    let others_done = AtomicBool::new(false);
    let hog_rounds = AtomicU64::new(0);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !others_done.load(Ordering::Relaxed) {
                *m.lock() += 1;
                hog_rounds.fetch_add(1, Ordering::Relaxed);
            }
        });
        let others: Vec<_> = (0..OTHERS)
            .map(|_| {
                s.spawn(|| {
                    for _ in 0..EACH {
                        *m.lock() += 1;
                    }
                })
            })
            .collect();
        for t in others {
            t.join().unwrap();
        }
        others_done.store(true, Ordering::Relaxed);
    });
    let stats = m.stats();
    assert_eq!(*m.lock(), OTHERS * EACH + hog_rounds.load(Ordering::Relaxed));
    assert!(stats.handoffs > 0, "the starvation bound never handed the lock over: {stats:?}");
    assert!(stats.parks >= stats.handoffs, "every hand-off goes to a parked thread: {stats:?}");
}
