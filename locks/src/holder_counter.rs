//! [`HolderCounter`]: a statistics counter written only by the lock holder.

use crate::sync::{AtomicU64, Ordering, loom_const_fn};

/// A `u64` counter that only the current lock holder writes, with a relaxed load and store (no atomic RMW).
///
/// Mutual exclusion makes the plain read-modify-write safe: the previous holder's store happens-before our
/// load through the lock's release/acquire pair. Readers outside the lock ([`stats`](crate::RawAbsLock::stats))
/// get a possibly stale but never torn value. This keeps statistics off the contended-RMW path: a lock's
/// counters cost the holder a plain store on a line nobody else writes (ours).
pub(crate) struct HolderCounter(AtomicU64);

impl HolderCounter {
    loom_const_fn! {
        pub(crate) fn new() -> Self {
            HolderCounter(AtomicU64::new(0))
        }
    }

    /// Adds `n`. Only the lock holder may call this.
    #[inline]
    pub(crate) fn add(&self, n: u64) {
        let v = self.0.load(Ordering::Relaxed);
        self.0.store(v.wrapping_add(n), Ordering::Relaxed);
    }

    /// Overwrites the value. Only the lock holder may call this.
    #[inline]
    pub(crate) fn set(&self, v: u64) {
        self.0.store(v, Ordering::Relaxed);
    }

    /// The current value (a snapshot when read outside the lock).
    #[inline]
    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}
