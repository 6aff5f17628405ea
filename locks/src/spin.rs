//! [`RawSpinLock`]: test-and-test-and-set with a pause hint; never yields, never parks.

use crate::lock_flag::LockFlag;
use crate::sync::{loom_const_fn, spin_loop};

/// A test-and-test-and-set spin lock.
///
/// | `locked` | meaning |
/// |---|---|
/// | `false` | free: the next successful CAS owns the critical section |
/// | `true` | held: waiters read (not CAS) the flag until it clears, so they share its cache line instead of bouncing it |
///
/// Waiters call the CPU's pause hint between reads and never yield or park, so under oversubscription (more
/// runnable threads than cores) a waiter can burn its whole time slice while the holder is descheduled.
/// That failure is the point of measuring it. Size: 1 byte.
///
/// Source: the classic TTAS lock (Rudolph and Segall, 1984); RocketMQ's `PutMessageSpinLock` without its
/// flaws (see [`RawCasSpinLock`](crate::RawCasSpinLock) for the faithful copy).
///
/// # Examples
/// ```
/// let counter = abslock::SpinMutex::new(0_u64);
/// *counter.lock() += 1;
/// assert_eq!(*counter.lock(), 1);
/// ```
pub struct RawSpinLock {
    locked: LockFlag,
}

impl RawSpinLock {
    loom_const_fn! {
        /// A free lock.
        pub fn new() -> Self {
            RawSpinLock { locked: LockFlag::new() }
        }
    }

    /// Acquires the lock, spinning until it is free. Guard-free form of `lock_api::RawMutex::lock`.
    #[inline]
    pub(crate) fn raw_lock(&self) {
        if !self.raw_try_lock() {
            self.acquire_slow();
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
    /// The caller holds the lock (a successful `raw_lock` or
    /// `raw_try_lock` not yet released).
    #[inline]
    pub(crate) unsafe fn raw_unlock(&self) {
        self.locked.release();
    }

    /// Whether the lock is held right now (a momentary snapshot).
    #[inline]
    pub(crate) fn raw_is_locked(&self) -> bool {
        self.locked.is_held()
    }

    #[cold]
    fn acquire_slow(&self) {
        loop {
            while self.locked.is_held() {
                spin_loop();
            }
            if self.raw_try_lock() {
                return;
            }
        }
    }
}

impl Default for RawSpinLock {
    fn default() -> Self {
        Self::new()
    }
}

impl core::fmt::Debug for RawSpinLock {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RawSpinLock").field("locked", &self.raw_is_locked()).finish()
    }
}
