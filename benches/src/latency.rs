//! Acquire latency: [`Sampled`] wraps a strategy's raw lock and times one acquisition in
//! [`SAMPLE_EVERY`], from just before `lock()` to just after it returns, into the calling
//! worker's own `hdrhistogram::Histogram` (a thread-local, so workers never share a line).
//!
//! One clock read falls inside the critical section on a sampled acquisition: the read just
//! after `lock()` returns cannot move before it. The sample is recorded into the histogram
//! at the worker's next `lock()` call, before that call takes the lock, so the hold grows by
//! one clock read per sampled acquisition and nothing more. Unsampled acquisitions cost one
//! thread-local counter update, outside the lock. Ours.

use hdrhistogram::Histogram;
use std::cell::RefCell;
use std::time::Instant;

/// One acquisition in this many is timed (every 64th of a worker's span).
pub const SAMPLE_EVERY: u32 = 64;

/// Highest latency the histograms track, ns (10 s; longer samples are clamped to it).
const MAX_NS: u64 = 10_000_000_000;

/// A worker thread's sampling state.
struct Sampler {
    /// Sample only between [`start`] and [`take`] (the measured span).
    on: bool,
    /// Acquisitions since the last sample.
    since: u32,
    /// A sample taken inside the critical section, recorded at the next `lock()` (0: none).
    pending_ns: u64,
    hist: Option<Histogram<u64>>,
}

thread_local! {
    static SAMPLER: RefCell<Sampler> =
        const { RefCell::new(Sampler { on: false, since: 0, pending_ns: 0, hist: None }) };
}

fn new_histogram() -> Histogram<u64> {
    // 3 significant digits: 0.1% resolution over 1 ns..10 s. The bounds are constants in range.
    Histogram::new_with_bounds(1, MAX_NS, 3).expect("constant histogram bounds are valid")
}

/// Starts sampling this thread's acquisitions (the measured span begins).
pub fn start() {
    SAMPLER.with_borrow_mut(|s| {
        *s = Sampler { on: true, since: 0, pending_ns: 0, hist: Some(new_histogram()) };
    });
}

/// Stops sampling and gives back this thread's histogram since [`start`] (`None`: not started).
pub fn take() -> Option<Histogram<u64>> {
    SAMPLER.with_borrow_mut(|s| {
        s.on = false;
        let mut h = s.hist.take()?;
        if s.pending_ns > 0 {
            h.saturating_record(s.pending_ns);
            s.pending_ns = 0;
        }
        Some(h)
    })
}

/// Records a pending sample and says whether this acquisition is to be timed.
#[inline]
fn due() -> bool {
    SAMPLER.with_borrow_mut(|s| {
        if !s.on {
            return false;
        }
        if s.pending_ns > 0 {
            if let Some(h) = s.hist.as_mut() {
                h.saturating_record(s.pending_ns);
            }
            s.pending_ns = 0;
        }
        s.since += 1;
        if s.since >= SAMPLE_EVERY {
            s.since = 0;
            true
        } else {
            false
        }
    })
}

fn stash(ns: u64) {
    SAMPLER.with_borrow_mut(|s| s.pending_ns = ns.clamp(1, MAX_NS));
}

/// Percentiles of a merged histogram, ns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percentiles {
    /// Median acquire latency.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Samples behind them.
    pub samples: u64,
}

impl Percentiles {
    /// The percentiles of `h`, `None` when it holds no sample.
    pub fn of(h: &Histogram<u64>) -> Option<Percentiles> {
        (!h.is_empty()).then(|| Percentiles {
            p50: h.value_at_quantile(0.5) as f64,
            p99: h.value_at_quantile(0.99) as f64,
            p999: h.value_at_quantile(0.999) as f64,
            samples: h.len(),
        })
    }
}

/// Merges `from` into `into` (`into` empty: takes `from`).
pub fn merge(into: &mut Option<Histogram<u64>>, from: Histogram<u64>) {
    match into {
        // Same bounds on both sides, so adding cannot fail; a failure would only drop samples.
        Some(h) => {
            let _ = h.add(&from);
        }
        None => *into = Some(from),
    }
}

/// A raw lock whose acquisitions are sampled for latency on threads that called [`start`].
#[derive(Debug)]
pub struct Sampled<R>(pub R);

impl<R> Sampled<R> {
    /// The wrapped lock.
    pub fn inner(&self) -> &R {
        &self.0
    }
}

// SAFETY: every method forwards to the wrapped `RawMutex` unchanged; timing around `lock`
// does not alter what it guarantees (exclusion, Acquire on lock, Release on unlock).
unsafe impl<R: lock_api::RawMutex> lock_api::RawMutex for Sampled<R> {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Sampled(R::INIT);
    type Guard = R::Guard;

    #[inline]
    fn lock(&self) -> Self::Guard {
        if due() {
            let t = Instant::now();
            let guard = self.0.lock();
            let ns = t.elapsed().as_nanos();
            stash(u64::try_from(ns).unwrap_or(MAX_NS));
            guard
        } else {
            self.0.lock()
        }
    }

    #[inline]
    fn try_lock(&self) -> Option<Self::Guard> {
        self.0.try_lock()
    }

    #[inline]
    unsafe fn unlock(&self, guard: Self::Guard) {
        // SAFETY: the caller holds the lock with `guard` (this trait's contract), which came
        // from `self.0`.
        unsafe { self.0.unlock(guard) }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        self.0.is_locked()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lock_api::RawMutex;

    #[test]
    fn samples_one_in_sample_every_only_while_started() {
        let l = <Sampled<parking_lot::RawMutex> as RawMutex>::INIT;
        let cycle = |n: u32| {
            for _ in 0..n {
                let g = l.lock();
                // SAFETY: `g` is from the lock just above.
                unsafe { l.unlock(g) };
            }
        };
        cycle(1000);
        assert!(take().is_none(), "nothing sampled before start");
        start();
        cycle(SAMPLE_EVERY * 10);
        let h = take().unwrap();
        assert_eq!(h.len(), 10);
        let p = Percentiles::of(&h).unwrap();
        assert!(p.p50 <= p.p99 && p.p99 <= p.p999);
        cycle(SAMPLE_EVERY * 2);
        assert!(take().is_none(), "nothing sampled after take");
    }

    #[test]
    fn merging_adds_samples() {
        let mut a = None;
        let mut h = new_histogram();
        h.record(100).unwrap();
        merge(&mut a, h.clone());
        merge(&mut a, h);
        assert_eq!(a.unwrap().len(), 2);
    }
}
