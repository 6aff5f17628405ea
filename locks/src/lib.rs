//! Lock strategies for a message store's put-message critical section, each a [`lock_api::RawMutex`].
//!
//! | raw lock | mutex alias | waiting policy | follows |
//! |---|---|---|---|
//! | [`RawCasSpinLock`] | [`CasSpinMutex`] | bare CAS loop (baseline only) | RocketMQ `PutMessageSpinLock` |
//! | [`RawSpinLock`] | [`SpinMutex`] | test-and-test-and-set, pause hint | TTAS |
//! | [`RawBackoffLock`] | [`BackoffMutex`] | spin k, yield, repeat | RocketMQ `BackOffSpinLock` |
//! | [`RawAbsLock`] | [`AbsMutex`] | adaptive k; spin, yield, sleep; restriction; starvation hand-off | RocketMQ `AdaptiveBackOffSpinLockImpl`, parking_lot, Go, Dice 2017 |
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
//! The `lock_api` traits are the interface: `RawMutex` on every lock, and `RawMutexFair` +
//! `RawMutexTimed` on [`RawAbsLock`], as on parking_lot's `RawMutex`. `lock_api` 0.5 is re-exported
//! ([`lock_api`]) with guard aliases, so these mutexes interoperate with parking_lot 0.13 (which uses
//! the same `lock_api` 0.5) and need no direct `lock_api` dependency. Statistics are read without
//! `unsafe` through [`AbsMutexExt`].
//!
//! With `--cfg abslock_loom` the crate builds against loom's model checker (see `sync`); the
//! `lock_api` impls and the `const` constructors are then left out, and models drive the locks through
//! the `ModelLock` trait that exists only in that build.

pub use lock_api;

mod abs;
mod backoff;
mod cas_spin;
mod holder_counter;
mod lock_flag;
#[cfg(abslock_loom)]
mod model;
mod spin;
mod sync;

#[cfg(abslock_loom)]
pub use model::ModelLock;

pub use abs::calibrate::MeasuredCosts;
#[allow(deprecated)]
pub use abs::config::YIELD_CEILING;
pub use abs::config::{
    AbsConfig, DEFAULT_SOLO_RECHECK_US, DEFAULT_STARVE_AFTER_US, DEFAULT_WINDOW, HANDOFF_YIELDS, K_CEILING,
    YIELD_BUDGET,
};
#[cfg(not(abslock_loom))]
pub use abs::ext::AbsMutexExt;
pub use abs::lock::RawAbsLock;
pub use abs::policy::{Decision, WindowStats, decide};
pub use abs::profile::{AbsProfile, Calibrated, RocketMq};
pub use abs::solo_trial::{
    SOLO_ARM_US, SOLO_CROWDED_MILLI, SOLO_CROWDED_TURNS, SOLO_DECISIVE_LOSS_PERCENT, SOLO_MARGIN_PERCENT,
    SOLO_MAX_BACKOFF, SOLO_MAX_MILLI, SOLO_PATTERN, SOLO_PERIOD_US, SOLO_SETTLE_US, SOLO_START_MILLI,
    SOLO_VOID_PS, SOLO_WINS_NEEDED, SoloTrial, SoloWindow, decide_solo, solo_timed,
};
pub use abs::stats::{AbsStats, Mode, TracePoint};
pub use abs::trial::{
    CrowdedTrial, TRIAL_MARGIN_PERCENT, TRIAL_PATTERN, TRIAL_PERIOD, TRIAL_START, TRIAL_VOID_PS, TrialArm,
    TrialWindow, decide_crowded, trial_timed,
};
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
/// The guard of an [`AbsMutex`].
pub type AbsMutexGuard<'a, T> = lock_api::MutexGuard<'a, RawAbsLock<Calibrated>, T>;
/// The guard of an [`AbsMutex`] mapped to a part of the data (`AbsMutexGuard::map`).
pub type MappedAbsMutexGuard<'a, T> = lock_api::MappedMutexGuard<'a, RawAbsLock<Calibrated>, T>;
/// The guard of an [`AbsRocketMqMutex`].
pub type AbsRocketMqMutexGuard<'a, T> = lock_api::MutexGuard<'a, RawAbsLock<RocketMq>, T>;
/// The guard of a [`SpinMutex`].
pub type SpinMutexGuard<'a, T> = lock_api::MutexGuard<'a, RawSpinLock, T>;
/// The guard of a [`CasSpinMutex`].
pub type CasSpinMutexGuard<'a, T> = lock_api::MutexGuard<'a, RawCasSpinLock, T>;
/// The guard of a [`BackoffMutex`].
pub type BackoffMutexGuard<'a, T> = lock_api::MutexGuard<'a, RawBackoffLock, T>;

/// Implements `lock_api::RawMutex` by forwarding to the crate-private guard-free methods.
macro_rules! impl_raw_mutex {
    ($ty:ty, $init:expr $(, $p:ident)?) => {
        // SAFETY: `raw_lock`/`raw_try_lock` succeed only by an Acquire RMW that finds the held bit clear
        // and sets it (a CAS, or ABS's `fetch_or`), or by a hand-off that keeps the lock held, and `raw_unlock` publishes with Release, so at most one guard exists at a time and the critical
        // section's writes are ordered. The guard is stateless: forgetting it leaves the lock held, which
        // is safe; nothing unwinds while the lock is half-taken.
        #[cfg(not(abslock_loom))]
        unsafe impl$(<$p: AbsProfile>)? lock_api::RawMutex for $ty {
            #[allow(clippy::declare_interior_mutable_const)]
            const INIT: Self = $init;
            type Guard = lock_api::GuardSend;

            #[inline]
            fn lock(&self) -> Self::Guard {
                self.raw_lock();
                lock_api::GuardSend::new()
            }

            #[inline]
            fn try_lock(&self) -> Option<Self::Guard> {
                self.raw_try_lock().then(lock_api::GuardSend::new)
            }

            #[inline]
            unsafe fn unlock(&self, _guard: Self::Guard) {
                // SAFETY: the trait's contract: the guard is from a successful lock of this mutex.
                unsafe { self.raw_unlock() }
            }

            #[inline]
            fn is_locked(&self) -> bool {
                self.raw_is_locked()
            }
        }
    };
}

impl_raw_mutex!(RawSpinLock, RawSpinLock::new());
impl_raw_mutex!(RawCasSpinLock, RawCasSpinLock::new());
impl_raw_mutex!(RawBackoffLock, RawBackoffLock::with_k(ROCKETMQ_INITIAL_K));
impl_raw_mutex!(RawAbsLock<P>, RawAbsLock::new(), P);
