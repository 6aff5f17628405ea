//! One guard-free interface over every raw lock, for the loom models (`--cfg abslock_loom` only, where
//! the `lock_api` impls are left out because loom atomics cannot be built in a `const INIT`).

use crate::abs::profile::AbsProfile;
use crate::{RawAbsLock, RawBackoffLock, RawCasSpinLock, RawSpinLock};

/// What a loom model does with a lock: the bodies of the `lock_api` methods.
pub trait ModelLock: Send + Sync + 'static {
    /// True for locks whose waiters only busy-wait (never park), and for ABS under the solo restriction,
    /// whose sleepers re-check the lock in a loop of timed parks that time out at once in a model: their
    /// 3-thread models run at one preemption.
    const BUSY_WAITS: bool;
    /// A free lock (loom atomics cannot be built in a `const`).
    fn make() -> Self;
    /// Blocks until the lock is held (`RawMutex::lock`).
    fn acquire(&self);
    /// Takes the lock if free (`RawMutex::try_lock`).
    fn try_acquire(&self) -> bool;
    /// Releases the lock (`RawMutex::unlock`).
    ///
    /// # Safety
    /// The caller holds it.
    unsafe fn release(&self);
    /// Whether the lock is held (`RawMutex::is_locked`).
    fn is_held(&self) -> bool;
}

macro_rules! model_lock {
    ($ty:ty, $busy:expr, $make:expr $(, $p:ident)?) => {
        impl$(<$p: AbsProfile>)? ModelLock for $ty {
            const BUSY_WAITS: bool = $busy;
            fn make() -> Self {
                $make
            }
            fn acquire(&self) {
                self.raw_lock()
            }
            fn try_acquire(&self) -> bool {
                self.raw_try_lock()
            }
            unsafe fn release(&self) {
                // SAFETY: forwarded contract: the caller holds the lock.
                unsafe { self.raw_unlock() }
            }
            fn is_held(&self) -> bool {
                self.raw_is_locked()
            }
        }
    };
}

model_lock!(RawSpinLock, true, RawSpinLock::new());
model_lock!(RawCasSpinLock, true, RawCasSpinLock::new());
model_lock!(RawBackoffLock, true, RawBackoffLock::with_k(1));
model_lock!(RawAbsLock<P>, P::SOLO_RECHECK_US > 0, RawAbsLock::new(), P);

impl<P: AbsProfile> RawAbsLock<P> {
    /// `RawMutexFair::unlock_fair` (models only).
    ///
    /// # Safety
    /// The caller holds the lock.
    pub unsafe fn model_unlock_fair(&self) {
        // SAFETY: forwarded contract.
        unsafe { self.raw_unlock_fair() }
    }

    /// `RawMutexTimed::try_lock_for` with a deadline that has passed by the time the thread would sleep
    /// (models only); true if acquired.
    pub fn model_lock_timed(&self) -> bool {
        self.raw_lock_timed()
    }
}
