//! One guard-free interface over every raw lock, for the models.

use abslock::{AbsConfig, AbsProfile, RawAbsLock, RawBackoffLock, RawCasSpinLock, RawSpinLock};

/// The operations every raw lock offers without `lock_api` (whose impls are left out under loom).
pub trait ModelLock: Send + Sync + 'static {
    /// True for locks whose waiters only busy-wait (never park): their 3-thread models run at one
    /// preemption (see `tests/mutual_exclusion.rs`).
    const BUSY_WAITS: bool;
    /// A free lock (loom atomics cannot be built in a `const`).
    fn make() -> Self;
    /// Blocks until the lock is held.
    fn acquire(&self);
    /// Takes the lock if free.
    fn try_acquire(&self) -> bool;
    /// Releases the lock.
    ///
    /// # Safety
    /// The caller holds it.
    unsafe fn release(&self);
}

macro_rules! model_lock {
    ($ty:ty, $busy:expr, $make:expr) => {
        impl ModelLock for $ty {
            const BUSY_WAITS: bool = $busy;
            fn make() -> Self {
                $make
            }
            fn acquire(&self) {
                <$ty>::acquire(self)
            }
            fn try_acquire(&self) -> bool {
                <$ty>::try_acquire(self)
            }
            unsafe fn release(&self) {
                // SAFETY: forwarded contract: the caller holds the lock.
                unsafe { <$ty>::release(self) }
            }
        }
    };
}

model_lock!(RawSpinLock, true, RawSpinLock::new());
model_lock!(RawCasSpinLock, true, RawCasSpinLock::new());
model_lock!(RawBackoffLock, true, RawBackoffLock::with_k(1));
model_lock!(RawAbsLock<SmallSpin>, false, RawAbsLock::new());
model_lock!(RawAbsLock<Adaptive>, false, RawAbsLock::new());

/// ABS with tiny bounds and no adaptation inside a model: spin once, yield once, then park.
#[derive(Debug)]
pub enum SmallSpin {}

impl AbsProfile for SmallSpin {
    const CHECK_INTERVAL: u64 = 1 << 40;
    fn config() -> &'static AbsConfig {
        static C: AbsConfig = AbsConfig {
            k_init: 1,
            k_min: 1,
            k_max: 2,
            k_step: 1,
            max_yields: 1,
            park_spins: 1,
            window: u32::MAX,
            ..AbsConfig::ROCKETMQ
        };
        &C
    }
}

/// ABS that runs the policy at every acquisition, with ratios that make it change k or mode at almost
/// every window: the adaptation itself runs inside the models.
#[derive(Debug)]
pub enum Adaptive {}

impl AbsProfile for Adaptive {
    const CHECK_INTERVAL: u64 = 1;
    fn config() -> &'static AbsConfig {
        static C: AbsConfig = AbsConfig {
            k_init: 1,
            k_min: 1,
            k_max: 1,
            k_step: 1,
            raise_ratio: u32::MAX,
            lower_ratio: 1,
            return_percent: 100,
            max_yields: 0,
            park_spins: 0,
            window: 1,
        };
        &C
    }
}
