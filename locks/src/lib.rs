//! Lock strategies for a message store's put-message critical section, each a [`lock_api::RawMutex`].
//!
//! | raw lock | mutex alias | waiting policy | follows |
//! |---|---|---|---|
//! | [`RawCasSpinLock`] | [`CasSpinMutex`] | bare CAS loop (baseline only) | RocketMQ `PutMessageSpinLock` |
//! | [`RawSpinLock`] | [`SpinMutex`] | test-and-test-and-set, pause hint | TTAS |
//! | [`RawBackoffLock`] | [`BackoffMutex`] | spin k, yield, repeat | RocketMQ `BackOffSpinLock` |
//! | [`RawAbsLock`] | [`AbsMutex`] | adaptive k, parks when spinning stops paying | RocketMQ `AdaptiveBackOffSpinLockImpl`, FM 2024 |
//!
//! ```
//! use abslock::AbsMutex;
//! use std::sync::Arc;
//!
//! let log_end = Arc::new(AbsMutex::new(0_u64)); // e.g. a CommitLog's write position
//! let handles: Vec<_> = (0..4)
//!     .map(|_| { let log_end = Arc::clone(&log_end); std::thread::spawn(move || *log_end.lock() += 128) })
//!     .collect();
//! handles.into_iter().for_each(|h| h.join().unwrap());
//! assert_eq!(*log_end.lock(), 512);
//! ```
//!
//! With `--cfg abslock_loom` the crate builds against loom's model checker (see `sync`); the
//! `lock_api` impls and the `const` constructors are then left out, and the guard-free
//! `acquire`/`try_acquire`/`release` methods are what models call.

mod abs;
mod backoff;
mod cas_spin;
mod holder_counter;
mod lock_flag;
mod spin;
mod sync;

pub use abs::calibrate::MeasuredCosts;
pub use abs::config::{AbsConfig, DEFAULT_WINDOW, K_CEILING, YIELD_CEILING};
pub use abs::lock::RawAbsLock;
pub use abs::policy::{Decision, WindowStats, decide};
pub use abs::profile::{AbsProfile, Calibrated, RocketMq};
pub use abs::stats::{AbsStats, Mode, TracePoint};
pub use backoff::{BackoffStats, ROCKETMQ_INITIAL_K, RawBackoffLock};
pub use cas_spin::RawCasSpinLock;
pub use spin::RawSpinLock;

/// A mutex on [`RawSpinLock`] (TTAS, never yields).
pub type SpinMutex<T> = lock_api::Mutex<RawSpinLock, T>;
/// A mutex on [`RawCasSpinLock`], RocketMQ's bare CAS loop: a baseline, not a recommendation.
pub type CasSpinMutex<T> = lock_api::Mutex<RawCasSpinLock, T>;
/// A mutex on [`RawBackoffLock`]; `new` uses k = 1000, `from_raw(RawBackoffLock::with_k(k), v)` any k.
pub type BackoffMutex<T> = lock_api::Mutex<RawBackoffLock, T>;
/// A mutex on the adaptive [`RawAbsLock`] with bounds calibrated on this machine.
pub type AbsMutex<T> = lock_api::Mutex<RawAbsLock<Calibrated>, T>;
/// A mutex on [`RawAbsLock`] with RocketMQ 5.3.2's constants, for comparison.
pub type AbsRocketMqMutex<T> = lock_api::Mutex<RawAbsLock<RocketMq>, T>;

/// Implements `lock_api::RawMutex` by forwarding to the guard-free inherent methods.
macro_rules! impl_raw_mutex {
    ($ty:ty, $init:expr $(, $p:ident)?) => {
        // SAFETY: `acquire`/`try_acquire` succeed only by a CAS with Acquire ordering from the free state,
        // and `release` publishes with Release, so at most one guard exists at a time and the critical
        // section's writes are ordered. The guard is stateless: forgetting it leaves the lock held, which
        // is safe; nothing unwinds while the lock is half-taken.
        #[cfg(not(abslock_loom))]
        unsafe impl$(<$p: AbsProfile>)? lock_api::RawMutex for $ty {
            #[allow(clippy::declare_interior_mutable_const)]
            const INIT: Self = $init;
            type Guard = lock_api::GuardSend;

            #[inline]
            fn lock(&self) -> Self::Guard {
                self.acquire();
                lock_api::GuardSend::new()
            }

            #[inline]
            fn try_lock(&self) -> Option<Self::Guard> {
                self.try_acquire().then(lock_api::GuardSend::new)
            }

            #[inline]
            unsafe fn unlock(&self, _guard: Self::Guard) {
                // SAFETY: the trait's contract: the guard is from a successful lock of this mutex.
                unsafe { self.release() }
            }

            #[inline]
            fn is_locked(&self) -> bool {
                self.is_held()
            }
        }
    };
}

impl_raw_mutex!(RawSpinLock, RawSpinLock::new());
impl_raw_mutex!(RawCasSpinLock, RawCasSpinLock::new());
impl_raw_mutex!(RawBackoffLock, RawBackoffLock::with_k(ROCKETMQ_INITIAL_K));
impl_raw_mutex!(RawAbsLock<P>, RawAbsLock::new(), P);
