//! Test-only fault injection for the file-operation seam (ours, after redb's crash-consistency backend).

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// A file operation of the store that a test can make fail.
///
/// Every file operation the store performs goes through `io::FileOps`, which asks the
/// [`FaultInjector`] before doing the real work. Source: ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FaultPoint {
    /// `msync`/`fsync` of a commitlog segment or consume-queue file (a flush).
    Sync,
    /// Creating a new commitlog segment (create, `posix_fallocate`, rename); fails with `ENOSPC`.
    SegmentCreate,
    /// Creating a consume-queue file; fails with `ENOSPC`.
    ConsumeQueueCreate,
    /// A `pwrite` of the pooled write mode's commit thread (the transient store pool): a
    /// short write (the first half lands), then the error.
    PooledWrite,
    /// Writing the `checkpoint` file.
    CheckpointWrite,
    /// Mapping a file with `mmap`.
    Map,
    /// Warming a fresh segment on the preallocation thread (never fails; a test can
    /// [`hold`](FaultInjector::hold) the thread there).
    SegmentWarm,
    /// A deletion step of retention: unlinking one commitlog segment, or releasing the
    /// blocks of one consume-queue file. Fails with `EIO` before the step does anything,
    /// so a test stops a deletion after any number of steps (see
    /// [`FaultInjector::fail_after`]).
    RetentionDelete,
}

const POINTS: usize = 8;

fn slot(point: FaultPoint) -> usize {
    match point {
        FaultPoint::Sync => 0,
        FaultPoint::SegmentCreate => 1,
        FaultPoint::ConsumeQueueCreate => 2,
        FaultPoint::PooledWrite => 3,
        FaultPoint::CheckpointWrite => 4,
        FaultPoint::Map => 5,
        FaultPoint::SegmentWarm => 6,
        FaultPoint::RetentionDelete => 7,
    }
}

/// Remaining failures meaning "fail until cleared".
const ALWAYS: u64 = u64::MAX;

#[derive(Debug, Default)]
struct Counters {
    /// Failures still to inject per point; `ALWAYS` until [`FaultInjector::clear`].
    remaining: [AtomicU64; POINTS],
    /// Failures injected so far per point.
    injected: [AtomicU64; POINTS],
    /// Operations still to let through before the armed failures start.
    pass: [AtomicU64; POINTS],
    /// Whether any gate is armed (spares the mutex on every file operation otherwise).
    any_gate: AtomicBool,
    gates: Mutex<Gates>,
    gate_cv: Condvar,
}

/// Gates: a point held from its `n`-th pass on makes the threads passing it wait.
#[derive(Debug, Default)]
struct Gates {
    /// Passes still let through before the gate closes, per held point.
    held: [Option<u64>; POINTS],
    /// Threads waiting at each point.
    waiting: [u64; POINTS],
}

/// A handle that makes chosen file operations of a store fail, for tests.
///
/// Cloning gives another handle to the same switches, so a test keeps one clone and puts
/// the other in [`StoreConfig::fault_injector`](crate::StoreConfig::fault_injector). A default
/// injector injects nothing; the cost on the store's file operations is one relaxed atomic
/// load (file operations are never on the put fast path). Source: ours.
///
/// # Examples
/// ```
/// use abslock_store::fault::{FaultInjector, FaultPoint};
/// let faults = FaultInjector::default();
/// faults.fail_always(FaultPoint::Sync);
/// assert!(faults.check(FaultPoint::Sync).is_err());
/// faults.clear(FaultPoint::Sync);
/// assert!(faults.check(FaultPoint::Sync).is_ok());
/// assert_eq!(faults.injected(FaultPoint::Sync), 1);
/// ```
#[derive(Debug, Clone, Default)]
pub struct FaultInjector {
    counters: Arc<Counters>,
}

impl FaultInjector {
    /// Makes every later `point` operation fail until [`clear`](Self::clear).
    pub fn fail_always(&self, point: FaultPoint) {
        self.counters.remaining[slot(point)].store(ALWAYS, Ordering::SeqCst);
    }

    /// Makes the next `times` `point` operations fail, then succeed again.
    pub fn fail_times(&self, point: FaultPoint, times: u64) {
        self.counters.remaining[slot(point)].store(times, Ordering::SeqCst);
    }

    /// Lets the next `successes` `point` operations succeed, then makes every later one
    /// fail until [`clear`](Self::clear): a crash after exactly `successes` steps.
    ///
    /// # Examples
    /// ```
    /// use abslock_store::fault::{FaultInjector, FaultPoint};
    /// let faults = FaultInjector::default();
    /// faults.fail_after(FaultPoint::RetentionDelete, 2);
    /// assert!(faults.check(FaultPoint::RetentionDelete).is_ok());
    /// assert!(faults.check(FaultPoint::RetentionDelete).is_ok());
    /// assert!(faults.check(FaultPoint::RetentionDelete).is_err());
    /// assert!(faults.check(FaultPoint::RetentionDelete).is_err());
    /// faults.clear(FaultPoint::RetentionDelete);
    /// assert!(faults.check(FaultPoint::RetentionDelete).is_ok());
    /// ```
    pub fn fail_after(&self, point: FaultPoint, successes: u64) {
        self.counters.pass[slot(point)].store(successes, Ordering::SeqCst);
        self.counters.remaining[slot(point)].store(ALWAYS, Ordering::SeqCst);
    }

    /// Stops injecting failures at `point`.
    pub fn clear(&self, point: FaultPoint) {
        self.counters.remaining[slot(point)].store(0, Ordering::SeqCst);
        self.counters.pass[slot(point)].store(0, Ordering::SeqCst);
    }

    /// How many failures were injected at `point` so far.
    pub fn injected(&self, point: FaultPoint) -> u64 {
        self.counters.injected[slot(point)].load(Ordering::SeqCst)
    }

    fn gates(&self) -> MutexGuard<'_, Gates> {
        self.counters.gates.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Holds `point`: the `nth` (from 1) and every later thread passing it from now on
    /// waits there until [`release`](Self::release). For deterministic tests of what the
    /// store does while one of its threads is stuck (a slow disk, a preallocator behind).
    pub fn hold(&self, point: FaultPoint, nth: u64) {
        self.gates().held[slot(point)] = Some(nth.max(1) - 1);
        self.counters.any_gate.store(true, Ordering::SeqCst);
    }

    /// Opens the gate at `point`; waiting threads go on.
    pub fn release(&self, point: FaultPoint) {
        self.gates().held[slot(point)] = None;
        self.counters.gate_cv.notify_all();
    }

    /// Blocks until at least one thread waits at the held `point`.
    pub fn wait_until_held(&self, point: FaultPoint) {
        let mut g = self.gates();
        while g.waiting[slot(point)] == 0 {
            g = self.counters.gate_cv.wait(g).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Passes `point`: waits while it is held (see [`hold`](Self::hold)). Called by the
    /// store at each fault point; a no-op unless a gate is armed.
    pub fn pass(&self, point: FaultPoint) {
        if !self.counters.any_gate.load(Ordering::SeqCst) {
            return;
        }
        let i = slot(point);
        let mut g = self.gates();
        match g.held[i] {
            Some(0) => {}
            Some(n) => {
                g.held[i] = Some(n - 1);
                return;
            }
            None => return,
        }
        g.waiting[i] += 1;
        self.counters.gate_cv.notify_all();
        while g.held[i] == Some(0) {
            g = self.counters.gate_cv.wait(g).unwrap_or_else(PoisonError::into_inner);
        }
        g.waiting[i] -= 1;
    }

    /// Returns the injected error if `point` is set to fail now, else `Ok(())`.
    ///
    /// # Errors
    /// An `io::Error` (`ENOSPC` for creation points, `EIO` otherwise) while a failure is armed.
    pub fn check(&self, point: FaultPoint) -> io::Result<()> {
        let remaining = &self.counters.remaining[slot(point)];
        let mut cur = remaining.load(Ordering::Relaxed);
        loop {
            if cur == 0 {
                return Ok(());
            }
            let pass = &self.counters.pass[slot(point)];
            if pass.load(Ordering::SeqCst) > 0
                && pass.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok()
            {
                return Ok(());
            }
            let next = if cur == ALWAYS { ALWAYS } else { cur - 1 };
            match remaining.compare_exchange_weak(cur, next, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => break,
                Err(actual) => cur = actual,
            }
        }
        self.counters.injected[slot(point)].fetch_add(1, Ordering::SeqCst);
        let errno = match point {
            FaultPoint::SegmentCreate | FaultPoint::ConsumeQueueCreate => libc::ENOSPC,
            _ => libc::EIO,
        };
        let os = io::Error::from_raw_os_error(errno);
        Err(io::Error::new(os.kind(), format!("injected fault at {point:?}: {os}")))
    }
}
