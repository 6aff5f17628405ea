//! `lock_api` 0.5 adapters for the peer locks that do not implement it themselves:
//! `std::sync::Mutex<()>` and `spin::Mutex<()>` (whose own `lock_api` impl is for 0.4).

use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

/// `std::sync::Mutex<()>` as a `lock_api::RawMutex` (peer `std`).
///
/// The std guard borrows its mutex, so the mutex lives in a leaked box (one per
/// lock, created on first use) and the guard is `MutexGuard<'static, ()>`: no
/// unsafe lifetime games, at the cost of one pointer load per acquisition and a
/// few bytes leaked per lock. Bench-only; poisoning is ignored (the sweep never
/// panics inside a critical section).
#[derive(Debug, Default)]
pub struct RawStdMutex {
    inner: OnceLock<&'static Mutex<()>>,
}

impl RawStdMutex {
    fn mutex(&self) -> &'static Mutex<()> {
        self.inner.get_or_init(|| Box::leak(Box::new(Mutex::new(()))))
    }
}

// SAFETY: mutual exclusion, acquire on lock and release on unlock are std's `Mutex`;
// the guard state is std's own guard, so unlocking consumes exactly the acquisition
// it represents, and forgetting it merely keeps the (leaked, 'static) mutex locked.
unsafe impl lock_api::RawMutex for RawStdMutex {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = RawStdMutex { inner: OnceLock::new() };

    type Guard = MutexGuard<'static, ()>;

    #[inline]
    fn lock(&self) -> Self::Guard {
        self.mutex().lock().unwrap_or_else(PoisonError::into_inner)
    }

    #[inline]
    fn try_lock(&self) -> Option<Self::Guard> {
        match self.mutex().try_lock() {
            Ok(g) => Some(g),
            Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    #[inline]
    unsafe fn unlock(&self, guard: Self::Guard) {
        drop(guard);
    }

    fn is_locked(&self) -> bool {
        // std has no query; a failed try_lock is the same momentary snapshot.
        match self.mutex().try_lock() {
            Ok(_) => false,
            Err(std::sync::TryLockError::Poisoned(_)) => false,
            Err(std::sync::TryLockError::WouldBlock) => true,
        }
    }
}

/// `spin::Mutex<()>` (the `spin` crate's default spinning mutex) as a
/// `lock_api` 0.5 `RawMutex` (peer `spin-crate`).
#[derive(Debug)]
pub struct RawSpinCrateMutex {
    inner: spin::Mutex<()>,
}

impl Default for RawSpinCrateMutex {
    fn default() -> Self {
        RawSpinCrateMutex { inner: spin::Mutex::new(()) }
    }
}

// SAFETY: mutual exclusion with acquire/release ordering is `spin::Mutex`'s; its
// guard is forgotten on lock and the matching `force_unlock` runs only from
// `unlock`, whose caller owns the acquisition (the `GuardSend` token).
unsafe impl lock_api::RawMutex for RawSpinCrateMutex {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = RawSpinCrateMutex { inner: spin::Mutex::new(()) };

    type Guard = lock_api::GuardSend;

    #[inline]
    fn lock(&self) -> Self::Guard {
        std::mem::forget(self.inner.lock());
        lock_api::GuardSend::new()
    }

    #[inline]
    fn try_lock(&self) -> Option<Self::Guard> {
        self.inner.try_lock().map(|g| {
            std::mem::forget(g);
            lock_api::GuardSend::new()
        })
    }

    #[inline]
    unsafe fn unlock(&self, _guard: Self::Guard) {
        // SAFETY: the caller owns the current acquisition (its guard was forgotten in
        // `lock`/`try_lock`), which is what `force_unlock` requires.
        unsafe { self.inner.force_unlock() };
    }

    fn is_locked(&self) -> bool {
        self.inner.is_locked()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lock_api::RawMutex;

    fn exercise<R: RawMutex + Sync>() {
        let m: lock_api::Mutex<R, u64> = lock_api::Mutex::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..10_000 {
                        *m.lock() += 1;
                    }
                });
            }
        });
        assert_eq!(*m.lock(), 40_000);
        let raw = R::INIT;
        let g = raw.try_lock().expect("free");
        assert!(raw.is_locked());
        assert!(raw.try_lock().is_none());
        // SAFETY: `g` is from `raw.try_lock()` above.
        unsafe { raw.unlock(g) };
        assert!(!raw.is_locked());
    }

    #[test]
    fn std_adapter_excludes() {
        exercise::<RawStdMutex>();
    }

    #[test]
    fn spin_crate_adapter_excludes() {
        exercise::<RawSpinCrateMutex>();
    }
}
