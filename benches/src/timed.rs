//! `Timed<R>`: a `lock_api::RawMutex` wrapper that samples acquire latency and
//! hold time into per-thread hdrhistograms.
//!
//! Every [`SAMPLE_EVERY`]-th `lock()` on a thread reads the clock before and after
//! the inner `lock()` (acquire latency) and again at `unlock()` (hold time).
//! The other acquisitions pay one thread-local counter decrement, so the wrapper
//! costs every strategy the same and leaves the critical section's length
//! nearly untouched. Samples go to the calling thread's recorder, which a worker
//! starts with [`start_sampling`] and collects with [`take_samples`]; threads that
//! never start one record nothing.

use hdrhistogram::Histogram;
use std::cell::{Cell, RefCell};
use std::time::Instant;

/// One acquisition in this many is timed (per thread). 64 keeps the clock reads
/// (~20 ns each with the TSC clocksource) under half a nanosecond per acquisition
/// on average (ours).
pub const SAMPLE_EVERY: u32 = 64;

/// Largest latency the histograms hold, in ns (60 s); larger samples saturate.
pub const MAX_TRACKED_NS: u64 = 60_000_000_000;

/// Acquire-latency and hold-time samples of one thread (or merged over threads), in ns.
#[derive(Debug, Clone)]
pub struct Samples {
    /// Time from calling `lock()` to owning the lock, ns.
    pub acquire: Histogram<u64>,
    /// Time from owning the lock to calling the inner `unlock()`, ns.
    pub hold: Histogram<u64>,
}

impl Samples {
    /// Empty histograms covering 1 ns .. [`MAX_TRACKED_NS`] at 3 significant digits.
    pub fn new() -> Samples {
        let h =
            || Histogram::new_with_bounds(1, MAX_TRACKED_NS, 3).expect("static histogram bounds are valid");
        Samples { acquire: h(), hold: h() }
    }

    /// Adds `other`'s samples into `self`.
    pub fn merge(&mut self, other: &Samples) {
        // Same bounds on both sides, so `add` cannot fail; saturate rather than panic anyway.
        let _ = self.acquire.add(&other.acquire);
        let _ = self.hold.add(&other.hold);
    }
}

impl Default for Samples {
    fn default() -> Self {
        Samples::new()
    }
}

/// The median cost, in ns, of the two back-to-back clock reads that bracket a sampled
/// acquisition: the floor under every acquire-latency sample (uncontended acquisitions
/// read as about this much).
pub fn clock_pair_ns() -> u64 {
    let mut v: Vec<u64> = (0..2001)
        .map(|_| {
            let a = Instant::now();
            let b = Instant::now();
            b.duration_since(a).as_nanos() as u64
        })
        .collect();
    v.sort_unstable();
    v[v.len() / 2]
}

thread_local! {
    static COUNTDOWN: Cell<u32> = const { Cell::new(SAMPLE_EVERY) };
    static RECORDER: RefCell<Option<Samples>> = const { RefCell::new(None) };
}

/// Starts (or restarts, discarding earlier samples) recording on the calling thread.
pub fn start_sampling() {
    RECORDER.with(|r| *r.borrow_mut() = Some(Samples::new()));
    COUNTDOWN.with(|c| c.set(SAMPLE_EVERY));
}

/// Stops recording on the calling thread and returns its samples (empty if never started).
pub fn take_samples() -> Samples {
    RECORDER.with(|r| r.borrow_mut().take()).unwrap_or_default()
}

#[inline]
fn sample_this_one() -> bool {
    COUNTDOWN.with(|c| {
        let n = c.get() - 1;
        if n == 0 {
            c.set(SAMPLE_EVERY);
            true
        } else {
            c.set(n);
            false
        }
    })
}

#[cold]
fn record(ns: u64, acquire: bool) {
    RECORDER.with(|r| {
        if let Ok(mut r) = r.try_borrow_mut()
            && let Some(s) = r.as_mut()
        {
            let h = if acquire { &mut s.acquire } else { &mut s.hold };
            h.saturating_record(ns.max(1));
        }
    });
}

/// A raw lock `R` whose acquisitions are sampled (see the module doc). Mutual
/// exclusion is entirely `R`'s.
#[derive(Debug, Default)]
pub struct Timed<R> {
    inner: R,
}

/// Guard state of [`Timed`]: the inner guard and, for a sampled acquisition, when it was acquired.
#[derive(Debug)]
pub struct TimedGuard<G> {
    inner: G,
    held_since: Option<Instant>,
}

impl<R> Timed<R> {
    /// Wraps `inner`.
    pub const fn new(inner: R) -> Timed<R> {
        Timed { inner }
    }

    /// The wrapped lock (e.g. to read ABS statistics).
    pub fn inner(&self) -> &R {
        &self.inner
    }
}

// SAFETY: every operation forwards to `R`, which provides mutual exclusion with
// acquire/release semantics; guard state for `R` travels inside `TimedGuard` and is
// handed back to `R::unlock` exactly once. The sampling code never touches the lock.
unsafe impl<R: lock_api::RawMutex> lock_api::RawMutex for Timed<R> {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Timed { inner: R::INIT };

    type Guard = TimedGuard<R::Guard>;

    #[inline]
    fn lock(&self) -> Self::Guard {
        if sample_this_one() {
            let start = Instant::now();
            let inner = self.inner.lock();
            let acquired = Instant::now();
            record(acquired.duration_since(start).as_nanos() as u64, true);
            TimedGuard { inner, held_since: Some(acquired) }
        } else {
            TimedGuard { inner: self.inner.lock(), held_since: None }
        }
    }

    #[inline]
    fn try_lock(&self) -> Option<Self::Guard> {
        self.inner.try_lock().map(|inner| TimedGuard { inner, held_since: None })
    }

    #[inline]
    unsafe fn unlock(&self, guard: Self::Guard) {
        let hold = guard.held_since.map(|t| t.elapsed().as_nanos() as u64);
        // SAFETY: `guard` came from a successful `lock`/`try_lock` of this `Timed`,
        // whose `inner` field is the state `R` returned for that acquisition of `self.inner`.
        unsafe { self.inner.unlock(guard.inner) };
        if let Some(ns) = hold {
            record(ns, false);
        }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        self.inner.is_locked()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lock_api::RawMutex;

    #[test]
    fn samples_one_in_sample_every_and_only_when_started() {
        let lock: Timed<parking_lot::RawMutex> = Timed::INIT;
        for _ in 0..SAMPLE_EVERY * 3 {
            let g = lock.lock();
            // SAFETY: `g` is from `lock.lock()` just above.
            unsafe { lock.unlock(g) };
        }
        assert_eq!(take_samples().acquire.len(), 0, "nothing recorded before start");

        start_sampling();
        for _ in 0..SAMPLE_EVERY * 10 {
            let g = lock.lock();
            assert!(lock.is_locked());
            // SAFETY: `g` is from `lock.lock()` just above.
            unsafe { lock.unlock(g) };
        }
        let s = take_samples();
        assert_eq!(s.acquire.len(), 10);
        assert_eq!(s.hold.len(), 10);
        assert!(!lock.is_locked());
    }

    #[test]
    fn try_lock_forwards_and_fails_when_held() {
        let lock: Timed<parking_lot::RawMutex> = Timed::INIT;
        let g = lock.try_lock().expect("free lock");
        assert!(lock.try_lock().is_none());
        // SAFETY: `g` is from `lock.try_lock()` above.
        unsafe { lock.unlock(g) };
        assert!(lock.try_lock().is_some_and(|g| {
            // SAFETY: `g` is from `lock.try_lock()` in this closure.
            unsafe { lock.unlock(g) };
            true
        }));
    }
}
