//! Stress (not timed) for every strategy: 16 threads on 2 cores, random critical-section lengths, random
//! `try_lock`, panics inside the critical section caught with `catch_unwind`, a fixed number of
//! operations per thread. The protected counter is exact and every thread completes its operations (no
//! thread starves forever). `ABSLOCK_LONG=1` runs ten times more operations.
#![cfg(not(abslock_loom))]

mod common;

use lock_api::{Mutex, RawMutex};
use std::panic::{AssertUnwindSafe, catch_unwind};

const THREADS: u64 = 16;

/// A small xorshift generator: deterministic per thread, no dependency needed for a test's dice.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, sides: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % sides
    }
}

struct Shared {
    /// Incremented only under the lock; `shadow` must match it at every release.
    count: u64,
    shadow: u64,
}

fn stress<R: RawMutex + Send + Sync>(name: &str, make: fn() -> R) {
    let ops = common::scaled(10_000);
    let m = Mutex::from_raw(make(), Shared { count: 0, shadow: 0 });
    let completed: Vec<u64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let m = &m;
                s.spawn(move || {
                    let mut dice = Dice(0x9E37_79B9_7F4A_7C15 ^ (t + 1));
                    let mut done = 0_u64;
                    while done < ops {
                        let guard = if dice.roll(4) == 0 {
                            match m.try_lock() {
                                Some(g) => g,
                                None => continue, // retry: counted only when it succeeds
                            }
                        } else {
                            m.lock()
                        };
                        let work = dice.roll(200);
                        let panics = dice.roll(50) == 0;
                        let outcome = catch_unwind(AssertUnwindSafe(move || {
                            let mut g = guard;
                            g.count += 1;
                            for i in 0..work {
                                std::hint::black_box(i);
                            }
                            g.shadow += 1;
                            assert_eq!(g.count, g.shadow, "two threads inside the critical section");
                            if panics {
                                panic!("injected panic inside the critical section");
                            }
                        }));
                        if let Err(e) = outcome {
                            let msg = e.downcast_ref::<&str>().copied().unwrap_or("");
                            assert_eq!(msg, "injected panic inside the critical section");
                        }
                        done += 1;
                    }
                    done
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a worker failed")).collect()
    });
    assert!(completed.iter().all(|&c| c == ops), "{name}: a thread did not finish: {completed:?}");
    let g = m.lock();
    assert_eq!((g.count, g.shadow), (THREADS * ops, THREADS * ops), "{name}");
}

#[test]
fn every_strategy_survives_the_stress() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| {
        if !info.to_string().contains("injected panic") {
            eprintln!("{info}");
        }
    }));
    for_each_strategy!(stress);
    std::panic::set_hook(previous);
}
