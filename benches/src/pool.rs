//! `Pool`: worker threads for criterion's `iter_custom`, spawned once per benchmark
//! so that only the contended part is timed (threads are never spawned inside the
//! timed loop; a `Barrier` starts and ends each timed batch).
//!
//! The batch time is taken by the workers themselves: from the earliest worker start
//! to the latest worker end. The main thread's own clock would be wrong both ways:
//! it may be woken from the start barrier after the workers have already run (too
//! fast), or wake them (too slow).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

struct Shared {
    start: Barrier,
    done: Barrier,
    per_thread: AtomicU64,
    stop: AtomicBool,
    /// Time origin for the workers' stamps.
    origin: Instant,
    /// Earliest worker start of the batch, ns since `origin`.
    first_start: AtomicU64,
    /// Latest worker end of the batch, ns since `origin`.
    last_end: AtomicU64,
}

/// `threads` workers that each run `op` a given number of times per batch.
pub struct Pool {
    shared: Arc<Shared>,
    threads: usize,
    handles: Vec<JoinHandle<()>>,
}

impl Pool {
    /// Spawns `threads` workers (at least 1) that call `op(thread_index)` once per iteration.
    pub fn new(threads: usize, op: impl Fn(usize) + Send + Sync + 'static) -> Pool {
        let threads = threads.max(1);
        let shared = Arc::new(Shared {
            start: Barrier::new(threads + 1),
            done: Barrier::new(threads + 1),
            per_thread: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            origin: Instant::now(),
            first_start: AtomicU64::new(u64::MAX),
            last_end: AtomicU64::new(0),
        });
        let op = Arc::new(op);
        let handles = (0..threads)
            .map(|i| {
                let (shared, op) = (Arc::clone(&shared), Arc::clone(&op));
                std::thread::spawn(move || {
                    loop {
                        shared.start.wait();
                        if shared.stop.load(Ordering::Relaxed) {
                            return;
                        }
                        let n = shared.per_thread.load(Ordering::Relaxed);
                        let t0 = shared.origin.elapsed().as_nanos() as u64;
                        for _ in 0..n {
                            op(i);
                        }
                        let t1 = shared.origin.elapsed().as_nanos() as u64;
                        shared.first_start.fetch_min(t0, Ordering::Relaxed);
                        shared.last_end.fetch_max(t1, Ordering::Relaxed);
                        shared.done.wait();
                    }
                })
            })
            .collect();
        Pool { shared, threads, handles }
    }

    /// Runs about `iters` operations in total, split evenly over the workers (at
    /// least one each), and returns the wall time from the first worker starting to the
    /// last worker finishing: the value `iter_custom` wants.
    pub fn run(&self, iters: u64) -> Duration {
        let per = iters.div_ceil(self.threads as u64).max(1);
        self.shared.per_thread.store(per, Ordering::Relaxed);
        self.shared.first_start.store(u64::MAX, Ordering::Relaxed);
        self.shared.last_end.store(0, Ordering::Relaxed);
        self.shared.start.wait();
        self.shared.done.wait();
        // The barriers order the workers' stamps before these loads.
        let first = self.shared.first_start.load(Ordering::Relaxed);
        let last = self.shared.last_end.load(Ordering::Relaxed);
        let elapsed = Duration::from_nanos(last.saturating_sub(first));
        // Report time per requested iteration even when rounding ran a few extra.
        let ran = per * self.threads as u64;
        elapsed.mul_f64(iters as f64 / ran as f64)
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.start.wait();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// Busy work of about `units` units (calibrate with [`units_per_ns`]): a dependent
/// chain seeded by `seed`, whose result the caller stores. Seed it with the data the
/// lock guards and store the result back, so the compiler cannot hoist the work out of
/// the critical section (the loads may not move above the acquire). `units == 0` is
/// no work and no call.
#[inline]
pub fn work(seed: u64, units: u64) -> u64 {
    if units == 0 { seed } else { work_loop(seed, units) }
}

/// The one copy of [`work`]'s loop, which every caller and [`units_per_ns`] run. Inlined,
/// each caller got its own copy at its own address, and the 25-byte loop ran at a speed
/// that depended on where it fell against a 64-byte boundary: in one grid build the
/// calibration's copy crossed a boundary and the strategies' copies mostly did not, so
/// every "100 ns" critical section ran about 20% short, and within one build two
/// strategies' critical sections differed by as much (`docs/abs.md`, round 8). One copy,
/// wherever it falls, gives every strategy the same critical section and the calibration
/// the speed the critical sections run at; the call costs a few ns, the same for all.
#[inline(never)]
fn work_loop(seed: u64, units: u64) -> u64 {
    let mut x = seed;
    for i in 0..units {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
    }
    x
}

/// How many [`work`] units run per nanosecond on this machine (measured over ~10 ms).
pub fn units_per_ns() -> f64 {
    let units = 1_000_000u64;
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        std::hint::black_box(work(t.elapsed().as_nanos() as u64, units));
        best = best.min(t.elapsed().as_nanos() as f64);
    }
    units as f64 / best.max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_runs_every_iteration_once_per_batch() {
        let count = Arc::new(AtomicU64::new(0));
        let c = Arc::clone(&count);
        let pool = Pool::new(3, move |_| {
            c.fetch_add(1, Ordering::Relaxed);
        });
        pool.run(9);
        assert_eq!(count.load(Ordering::Relaxed), 9);
        pool.run(10); // 4 per thread
        assert_eq!(count.load(Ordering::Relaxed), 9 + 12);
        drop(pool);
    }

    #[test]
    fn calibration_is_positive() {
        assert!(units_per_ns() > 0.0);
    }
}
