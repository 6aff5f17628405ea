//! [`MeasuredCosts`]: what spinning, yielding and a futex hand-off cost on this machine.

/// Costs in nanoseconds, as measured by [`MeasuredCosts::measure`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeasuredCosts {
    /// One spin iteration: a relaxed load plus the CPU's pause hint (ns).
    pub spin_ns: f64,
    /// One `std::thread::yield_now` (`sched_yield`) with no other runnable thread (ns).
    pub yield_ns: f64,
    /// One futex hand-off: a thread wakes a sleeper and the sleeper runs (ns, one way).
    pub handoff_ns: f64,
}

impl MeasuredCosts {
    /// The figures DESIGN.md records for this project's 2-core machines: a pause ~25 ns, a yield
    /// ~0.5 us, a futex hand-off ~20 us. Used under loom and to replace unusable measurements.
    pub const REFERENCE: MeasuredCosts =
        MeasuredCosts { spin_ns: 25.0, yield_ns: 500.0, handoff_ns: 20_000.0 };

    /// Replaces each cost that is not finite and positive by the [`REFERENCE`](Self::REFERENCE) one.
    pub fn sanitized(&self) -> MeasuredCosts {
        let pick = |v: f64, fallback: f64| if v.is_finite() && v > 0.0 { v } else { fallback };
        MeasuredCosts {
            spin_ns: pick(self.spin_ns, Self::REFERENCE.spin_ns),
            yield_ns: pick(self.yield_ns, Self::REFERENCE.yield_ns),
            handoff_ns: pick(self.handoff_ns, Self::REFERENCE.handoff_ns),
        }
    }

    /// Measures the three costs (~20 ms; spawns one helper thread for the hand-off). Each figure is the
    /// minimum over a few runs, which filters out preemption by other load on a shared machine.
    #[cfg(not(abslock_loom))]
    pub fn measure() -> MeasuredCosts {
        measure::run()
    }
}

#[cfg(not(abslock_loom))]
mod measure {
    //! Real measurement with std, outside any loom model.
    use super::MeasuredCosts;
    use std::hint::black_box;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Instant;

    const RUNS: usize = 3;
    const SPINS: u32 = 20_000;
    const YIELDS: u32 = 1_000;
    const ROUND_TRIPS: u32 = 100;

    pub(super) fn run() -> MeasuredCosts {
        MeasuredCosts {
            spin_ns: min_of(|| per_op(SPINS, spin_once)),
            yield_ns: min_of(|| per_op(YIELDS, std::thread::yield_now)),
            handoff_ns: min_of(handoff),
        }
    }

    fn min_of(mut f: impl FnMut() -> f64) -> f64 {
        (0..RUNS).map(|_| f()).fold(f64::INFINITY, f64::min)
    }

    fn per_op(n: u32, mut op: impl FnMut()) -> f64 {
        let start = Instant::now();
        for _ in 0..n {
            op();
        }
        start.elapsed().as_nanos() as f64 / f64::from(n)
    }

    fn spin_once() {
        static WORD: AtomicU32 = AtomicU32::new(0);
        black_box(WORD.load(Ordering::Relaxed));
        std::hint::spin_loop();
    }

    /// Ping-pong through a futex: each side sleeps until the other flips the word. One round trip is two
    /// hand-offs.
    fn handoff() -> f64 {
        let word = Arc::new(AtomicU32::new(0));
        let peer = {
            let word = Arc::clone(&word);
            std::thread::spawn(move || {
                for i in 0..ROUND_TRIPS {
                    let ping = 2 * i + 1;
                    while word.load(Ordering::Acquire) != ping {
                        atomic_wait::wait(&word, 2 * i);
                    }
                    word.store(ping + 1, Ordering::Release);
                    atomic_wait::wake_one(&*word);
                }
            })
        };
        let start = Instant::now();
        for i in 0..ROUND_TRIPS {
            word.store(2 * i + 1, Ordering::Release);
            atomic_wait::wake_one(&*word);
            while word.load(Ordering::Acquire) != 2 * i + 2 {
                atomic_wait::wait(&word, 2 * i + 1);
            }
        }
        let elapsed = start.elapsed().as_nanos() as f64;
        // A failed join means the peer panicked, which the loop above could not have survived.
        let _ = peer.join();
        elapsed / f64::from(2 * ROUND_TRIPS)
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn measured_costs_are_positive_and_finite() {
            let c = super::run();
            for v in [c.spin_ns, c.yield_ns, c.handoff_ns] {
                assert!(v.is_finite() && v > 0.0, "{c:?}");
            }
        }
    }
}
