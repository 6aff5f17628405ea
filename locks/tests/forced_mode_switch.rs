//! Mode switches forced about every 1000 acquisitions, by the holder and by an outside thread, while
//! 8 threads do 50 000 guarded increments each: the count is exact and nothing hangs (no lost wake-up
//! when a parked waiter sees the mode flip back to spinning).
#![cfg(not(abslock_loom))]

use abslock::{AbsMutex, AbsRocketMqMutex, Mode, RawAbsLock};
use std::sync::atomic::{AtomicBool, Ordering};

fn flip(lock: &RawAbsLock<impl abslock::AbsProfile>) {
    let next = if lock.mode() == Mode::Spin { Mode::Park } else { Mode::Spin };
    lock.set_mode(next);
}

fn run<P: abslock::AbsProfile>(m: &lock_api::Mutex<RawAbsLock<P>, u64>) {
    const THREADS: u64 = 8;
    const PER_THREAD: u64 = 50_000;
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(|| {
                    for _ in 0..PER_THREAD {
                        let mut g = m.lock();
                        *g += 1;
                        if (*g).is_multiple_of(1000) {
                            // SAFETY: raw() is used to change the waiting policy only.
                            flip(unsafe { lock_api::Mutex::raw(m) });
                        }
                    }
                })
            })
            .collect();
        // An outside thread flips too, while the lock is held by someone else.
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                // SAFETY: as above.
                flip(unsafe { m.raw() });
                std::thread::yield_now();
            }
        });
        // Join every worker before judging, and stop the flipper either way: a worker's panic fails the
        // test instead of leaving the flipper running forever.
        let joined: Vec<_> = workers.into_iter().map(|w| w.join()).collect();
        done.store(true, Ordering::Relaxed);
        for result in joined {
            if let Err(panic) = result {
                std::panic::resume_unwind(panic);
            }
        }
    });
    assert_eq!(*m.lock(), THREADS * PER_THREAD);
    // SAFETY: statistics only.
    let stats = unsafe { m.raw() }.stats();
    assert!(stats.mode_switches >= THREADS * PER_THREAD / 1000, "{stats:?}");
}

#[test]
fn calibrated_abs_survives_forced_switches() {
    run(&AbsMutex::new(0));
}

#[test]
fn rocketmq_abs_survives_forced_switches() {
    run(&AbsRocketMqMutex::new(0));
}
