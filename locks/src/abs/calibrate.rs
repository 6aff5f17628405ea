//! [`MeasuredCosts`]: what spinning, yielding and a futex hand-off cost on this machine.

/// Costs in nanoseconds, as measured by [`MeasuredCosts::measure`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeasuredCosts {
    /// One spin iteration: a relaxed load plus the CPU's pause hint (ns).
    pub spin_ns: f64,
    /// One `std::thread::yield_now` (`sched_yield`) that runs no other thread (ns): `measure` takes the
    /// 1st percentile of its samples on each core and averages over the cores.
    pub yield_ns: f64,
    /// One futex hand-off: a thread wakes a sleeper and the sleeper runs in its place on the same core
    /// (ns, one way). Reported only: [`AbsConfig::from_costs`](crate::AbsConfig::from_costs) takes a
    /// hand-off as [`HANDOFF_YIELDS`](crate::HANDOFF_YIELDS) yields.
    pub handoff_ns: f64,
}

impl MeasuredCosts {
    /// What [`measure`](Self::measure) gave on the 2-core AMD EPYC VM of this project's rounds 1-10
    /// (`docs/abs.md`, "Calibration"): a pause ~25 ns, a yield ~0.65 us, a futex hand-off ~2.3 us. Used under loom,
    /// until the measurement lands, and to replace unusable measurements.
    pub const REFERENCE: MeasuredCosts =
        MeasuredCosts { spin_ns: 25.0, yield_ns: 650.0, handoff_ns: 2_300.0 };

    /// Replaces each cost that is not finite and positive by the [`REFERENCE`](Self::REFERENCE) one.
    pub fn sanitized(&self) -> MeasuredCosts {
        let pick = |v: f64, fallback: f64| if v.is_finite() && v > 0.0 { v } else { fallback };
        MeasuredCosts {
            spin_ns: pick(self.spin_ns, Self::REFERENCE.spin_ns),
            yield_ns: pick(self.yield_ns, Self::REFERENCE.yield_ns),
            handoff_ns: pick(self.handoff_ns, Self::REFERENCE.handoff_ns),
        }
    }

    /// Measures the three costs (a few ms on an idle machine; on a loaded one, where most yields run
    /// another thread, up to about a second per core measured; spawns helper threads). The spin and yield figures are measured on a
    /// helper thread pinned to each core in turn (up to 8 cores; unpinned if the OS does not allow it)
    /// and averaged over the cores: the two cores of this project's VM pause in 14 and 17 ns, and one
    /// unpinned measurement took whichever it ran on. On each core they are a low quantile (the 10th
    /// and the 1st percentile) of many individually timed samples: preemption and other load only ever
    /// add time to a sample, so a low quantile tracks the undisturbed cost and moves little from run to
    /// run. The hand-off is timed between two threads pinned to one core (when the OS allows it), so it
    /// is a futex wake plus a context switch, and not the time another core takes to leave its idle
    /// state, which depends on what the machine is doing (`docs/abs.md`, "Calibration"); of the round
    /// trips in which the peer really slept, the 2nd percentile. The bounds do not use it (see
    /// [`HANDOFF_YIELDS`](crate::HANDOFF_YIELDS)); it is reported.
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

    /// Samples per cost (per core for spin and yield).
    const SAMPLES: usize = 201;
    /// The most cores spin and yield are measured on.
    const MAX_CORES: usize = 8;
    /// Pauses per spin sample (long enough that reading the clock is noise).
    const SPINS_PER_SAMPLE: u32 = 200;
    /// The quantile taken of spin samples, in percent.
    const QUANTILE: usize = 10;
    /// The quantile taken of yield samples, in percent: on a loaded core most yields run another thread
    /// for part of a time slice, and the 10th percentile already includes some of them (`k_min` 28-29
    /// with six busy processes on 2 cores, against 19-21 by the 1st percentile and 15-16 idle).
    const YIELD_QUANTILE: usize = 1;
    /// The quantile taken of hand-off samples, in percent.
    const HANDOFF_QUANTILE: usize = 2;

    pub(super) fn run() -> MeasuredCosts {
        let (spin_ns, yield_ns) = spin_and_yield_per_core();
        // A round trip in which the peer never slept (its wake-up arrived before it parked) is not a
        // hand-off; a real one costs more than a yield. Of the rest, a very low quantile: on a busy
        // machine most wake-ups also wait for a free core, which is load, not the hand-off's cost.
        let slept: Vec<f64> = handoffs().into_iter().filter(|&x| x >= yield_ns).collect();
        MeasuredCosts { spin_ns, yield_ns, handoff_ns: low_quantile(slept, HANDOFF_QUANTILE) }
    }

    /// The mean over cores (at most [`MAX_CORES`]) of [`spin_and_yield`] on a thread pinned to each.
    /// NaN where no core gave a finite figure (the caller's `sanitized` replaces it).
    fn spin_and_yield_per_core() -> (f64, f64) {
        let cores = core_affinity::get_core_ids().unwrap_or_default();
        let per_core: Vec<(f64, f64)> = if cores.is_empty() {
            vec![on_helper_thread(None)]
        } else {
            cores.into_iter().take(MAX_CORES).map(|core| on_helper_thread(Some(core))).collect()
        };
        let mean = |pick: fn(&(f64, f64)) -> f64| {
            let finite: Vec<f64> = per_core.iter().map(pick).filter(|x| x.is_finite()).collect();
            if finite.is_empty() { f64::NAN } else { finite.iter().sum::<f64>() / finite.len() as f64 }
        };
        (mean(|c| c.0), mean(|c| c.1))
    }

    /// [`spin_and_yield`] on a new thread, pinned to `core` if given and allowed; on the caller's thread
    /// if none can be spawned. The caller's own affinity is never changed.
    fn on_helper_thread(core: Option<core_affinity::CoreId>) -> (f64, f64) {
        let measure = move || {
            if let Some(core) = core {
                // Best effort: an unpinned measurement is still a measurement.
                let _ = core_affinity::set_for_current(core);
            }
            spin_and_yield()
        };
        match std::thread::Builder::new().name("abslock-calibrate-core".into()).spawn(measure) {
            // A failed join means the measuring thread panicked; NaN is dropped by the mean.
            Ok(handle) => handle.join().unwrap_or((f64::NAN, f64::NAN)),
            Err(_) => spin_and_yield(),
        }
    }

    /// The spin and yield quantiles on the current thread.
    fn spin_and_yield() -> (f64, f64) {
        let spin_ns = low_quantile((0..SAMPLES).map(|_| spin_sample()).collect(), QUANTILE);
        let yield_ns =
            low_quantile((0..SAMPLES).map(|_| timed(std::thread::yield_now)).collect(), YIELD_QUANTILE);
        (spin_ns, yield_ns)
    }

    fn low_quantile(mut v: Vec<f64>, percent: usize) -> f64 {
        v.retain(|x| x.is_finite());
        if v.is_empty() {
            return f64::NAN;
        }
        v.sort_by(f64::total_cmp);
        v[(v.len() - 1) * percent / 100]
    }

    fn timed(op: impl FnOnce()) -> f64 {
        let start = Instant::now();
        op();
        start.elapsed().as_nanos() as f64
    }

    fn spin_sample() -> f64 {
        static WORD: AtomicU32 = AtomicU32::new(0);
        timed(|| {
            for _ in 0..SPINS_PER_SAMPLE {
                black_box(WORD.load(Ordering::Relaxed));
                std::hint::spin_loop();
            }
        }) / f64::from(SPINS_PER_SAMPLE)
    }

    /// [`ping_pong`] between two threads pinned to the first core `core_affinity` reports; unpinned if
    /// pinning is not possible here. The calling thread's own affinity is never changed.
    fn handoffs() -> Vec<f64> {
        let core = core_affinity::get_core_ids().and_then(|ids| ids.first().copied());
        let pin = move || {
            if let Some(core) = core {
                // Best effort: an unpinned measurement is still a measurement.
                let _ = core_affinity::set_for_current(core);
            }
        };
        // A failed join means the measuring thread panicked; NaN samples are dropped by the quantile.
        std::thread::spawn(move || ping_pong(pin)).join().unwrap_or_else(|_| vec![f64::NAN])
    }

    /// Ping-pong through `thread::park`/`unpark` (a futex on Linux): each round trip, timed alone, is
    /// two hand-offs. `pin` runs first on both threads.
    fn ping_pong(pin: impl Fn() + Clone + Send + 'static) -> Vec<f64> {
        pin();
        let turn = Arc::new(AtomicU32::new(0));
        let main = std::thread::current();
        let peer = {
            let (turn, main, pin) = (Arc::clone(&turn), main.clone(), pin.clone());
            std::thread::spawn(move || {
                pin();
                for i in 0..SAMPLES as u32 {
                    while turn.load(Ordering::Acquire) != 2 * i + 1 {
                        std::thread::park();
                    }
                    turn.store(2 * i + 2, Ordering::Release);
                    main.unpark();
                }
            })
        };
        let mut samples = Vec::with_capacity(SAMPLES);
        for i in 0..SAMPLES as u32 {
            let start = Instant::now();
            turn.store(2 * i + 1, Ordering::Release);
            peer.thread().unpark();
            while turn.load(Ordering::Acquire) != 2 * i + 2 {
                std::thread::park();
            }
            samples.push(start.elapsed().as_nanos() as f64 / 2.0);
        }
        // A failed join means the peer panicked, which the loop above could not have survived.
        let _ = peer.join();
        samples
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

        #[test]
        fn low_quantile_ignores_slow_outliers() {
            let mut v: Vec<f64> = (1..=100).map(f64::from).collect();
            v.extend([1e9; 50]);
            assert_eq!(super::low_quantile(v, 10), 15.0);
            assert!(super::low_quantile(vec![f64::NAN], 10).is_nan());
            assert!(super::low_quantile(Vec::new(), 2).is_nan());
        }
    }
}
