//! [`LockFlag`]: the one-byte held/free flag shared by the spinning locks.

use crate::sync::{AtomicBool, Ordering, loom_const_fn};

/// `false` free, `true` held. Taking it is one strong CAS with Acquire ordering; releasing it is a
/// Release store. The spinning locks differ only in how they wait between attempts.
pub(crate) struct LockFlag(AtomicBool);

impl LockFlag {
    loom_const_fn! {
        pub(crate) fn new() -> Self {
            LockFlag(AtomicBool::new(false))
        }
    }

    /// One strong CAS `false -> true`: never fails on a free flag.
    #[inline]
    pub(crate) fn try_take(&self) -> bool {
        self.0.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok()
    }

    /// Clears the flag; only the holder calls this.
    #[inline]
    pub(crate) fn release(&self) {
        self.0.store(false, Ordering::Release);
    }

    /// A relaxed read, for waiters (test before test-and-set) and snapshots.
    #[inline]
    pub(crate) fn is_held(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}
