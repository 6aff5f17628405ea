//! [`RawCasSpinLock`]: a faithful copy of RocketMQ's `PutMessageSpinLock`, kept as a baseline.

use crate::lock_flag::LockFlag;
use crate::sync::{cas_retry, loom_const_fn};

/// A bare compare-and-swap loop: **a baseline for the sweep, not a recommendation.**
///
/// Every waiter retries the CAS back to back: no read before the CAS (so every retry takes the cache line
/// exclusive and bounces it between cores), no pause hint, no yield. This mirrors RocketMQ's
/// `org.apache.rocketmq.store.lock.PutMessageSpinLock` (an `AtomicBoolean` and a `compareAndSet` loop), the
/// upstream default put-message lock, so the sweep can show what that default costs next to
/// [`RawSpinLock`](crate::RawSpinLock) (the same idea done properly) and the adaptive lock. Use
/// [`RawAbsLock`](crate::RawAbsLock) or `parking_lot` instead.
///
/// | `locked` | meaning |
/// |---|---|
/// | `false` | free |
/// | `true` | held |
///
/// Size: 1 byte.
///
/// # Examples
/// ```
/// let m = abslock::CasSpinMutex::new(vec![1]);
/// m.lock().push(2);
/// assert_eq!(*m.lock(), [1, 2]);
/// ```
pub struct RawCasSpinLock {
    locked: LockFlag,
}

impl RawCasSpinLock {
    loom_const_fn! {
        /// A free lock.
        pub fn new() -> Self {
            RawCasSpinLock { locked: LockFlag::new() }
        }
    }

    /// Acquires the lock by retrying a strong CAS until it succeeds.
    #[inline]
    pub(crate) fn raw_lock(&self) {
        while !self.raw_try_lock() {
            cas_retry();
        }
    }

    /// Takes the lock if it is free; one strong CAS, so it never fails on a free lock.
    #[inline]
    pub(crate) fn raw_try_lock(&self) -> bool {
        self.locked.try_take()
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
}

impl Default for RawCasSpinLock {
    fn default() -> Self {
        Self::new()
    }
}

impl core::fmt::Debug for RawCasSpinLock {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RawCasSpinLock").field("locked", &self.raw_is_locked()).finish()
    }
}
