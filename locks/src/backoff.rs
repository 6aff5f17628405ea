//! [`RawBackoffLock`]: spin up to k times, then `yield_now`, and repeat.

use crate::holder_counter::HolderCounter;
use crate::lock_flag::LockFlag;
use crate::sync::{loom_const_fn, spin_loop, yield_now};

/// RocketMQ's initial back-off degree (`BackOffSpinLock`, 5.3.2): spins before the first yield.
pub const ROCKETMQ_INITIAL_K: u32 = 1000;

/// A spin lock with a fixed back-off: a waiter spins k times, then yields its time slice, and repeats.
///
/// | `locked` | meaning |
/// |---|---|
/// | `false` | free |
/// | `true` | held; waiters spin (read, pause) up to k times, then `sched_yield` |
///
/// A *spin* is one iteration of the waiter's loop: read the flag, CAS if it is free, otherwise one pause
/// hint. RocketMQ counts k in CAS attempts without a pause, so the same k is much shorter there (see
/// `docs/abs.md`). `k = 0` yields at once. Exactly k spins run before each yield, which the statistics
/// let tests check: [`BackoffStats::spins`] lies in `[yields * k, (yields + 1) * k]`.
///
/// Statistics are written by the holder with plain stores, never with a contended RMW. Size: 40 bytes
/// (the flag, k and four `u64` counters).
///
/// Source: RocketMQ `org.apache.rocketmq.store.lock.BackOffSpinLock` (k fixed), with a TTAS read and a
/// pause hint added.
///
/// # Examples
/// ```
/// use abslock::{BackoffMutex, RawBackoffLock};
/// let m = BackoffMutex::from_raw(RawBackoffLock::with_k(10), 0_u32);
/// *m.lock() += 5;
/// assert_eq!(*m.lock(), 5);
/// // SAFETY: `raw()` is used to read k only, never to unlock.
/// assert_eq!(unsafe { m.raw() }.k(), 10);
/// ```
pub struct RawBackoffLock {
    locked: LockFlag,
    k: u32,
    acquisitions: HolderCounter,
    contended: HolderCounter,
    spins: HolderCounter,
    yields: HolderCounter,
}

/// A snapshot of a [`RawBackoffLock`]'s counters since creation (each a count of events, not time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BackoffStats {
    /// Successful `lock` and `try_lock` calls.
    pub acquisitions: u64,
    /// Acquisitions that found the lock held and went through the slow path.
    pub contended: u64,
    /// Spin iterations run by waiters.
    pub spins: u64,
    /// `yield_now` calls made by waiters after k spins.
    pub yields: u64,
}

impl RawBackoffLock {
    loom_const_fn! {
        /// A free lock whose waiters spin `k` times before each yield (`k = 0`: yield at once).
        pub fn with_k(k: u32) -> Self {
            RawBackoffLock {
                locked: LockFlag::new(),
                k,
                acquisitions: HolderCounter::new(),
                contended: HolderCounter::new(),
                spins: HolderCounter::new(),
                yields: HolderCounter::new(),
            }
        }
    }

    /// Spins before each yield.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// Acquires the lock (guard-free form of `lock_api::RawMutex::lock`).
    #[inline]
    pub(crate) fn raw_lock(&self) {
        if self.cas() {
            self.acquisitions.add(1);
        } else {
            self.acquire_slow();
        }
    }

    /// Takes the lock if it is free; one strong CAS, so it never fails on a free lock.
    #[inline]
    pub(crate) fn raw_try_lock(&self) -> bool {
        let ok = self.cas();
        if ok {
            self.acquisitions.add(1);
        }
        ok
    }

    /// Releases the lock.
    ///
    /// # Safety
    /// The caller holds the lock.
    #[inline]
    pub(crate) unsafe fn raw_unlock(&self) {
        self.locked.release();
    }

    /// Whether the lock is held right now (a momentary snapshot).
    #[inline]
    pub(crate) fn raw_is_locked(&self) -> bool {
        self.locked.is_held()
    }

    /// The counters since creation. Values written by the current holder may be a few events stale.
    pub fn stats(&self) -> BackoffStats {
        BackoffStats {
            acquisitions: self.acquisitions.get(),
            contended: self.contended.get(),
            spins: self.spins.get(),
            yields: self.yields.get(),
        }
    }

    #[inline]
    fn cas(&self) -> bool {
        self.locked.try_take()
    }

    #[cold]
    fn acquire_slow(&self) {
        let (mut spins, mut yields) = (0_u64, 0_u64);
        'wait: loop {
            for _ in 0..self.k {
                spins += 1;
                if !self.locked.is_held() && self.cas() {
                    break 'wait;
                }
                spin_loop();
            }
            yield_now();
            yields += 1;
            if !self.locked.is_held() && self.cas() {
                break;
            }
        }
        // We hold the lock now: plain stores are exclusive.
        self.acquisitions.add(1);
        self.contended.add(1);
        self.spins.add(spins);
        self.yields.add(yields);
    }
}

impl Default for RawBackoffLock {
    fn default() -> Self {
        Self::with_k(ROCKETMQ_INITIAL_K)
    }
}

impl core::fmt::Debug for RawBackoffLock {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RawBackoffLock")
            .field("locked", &self.raw_is_locked())
            .field("k", &self.k)
            .field("stats", &self.stats())
            .finish()
    }
}
