//! [`AbsProfile`]: which [`AbsConfig`] a [`RawAbsLock`](crate::RawAbsLock) type uses.
//!
//! The config is chosen by a type parameter rather than stored in the lock so that every variant has a
//! `const INIT` (needed by `lock_api::RawMutex` and by statics) while the calibrated one is still measured
//! at run time, on a background thread that no lock operation waits for.

use super::config::AbsConfig;

/// Supplies the configuration of a [`RawAbsLock`](crate::RawAbsLock) type.
///
/// Implement it to run the lock with your own bounds, e.g. in tests:
/// ```
/// use abslock::{AbsConfig, AbsProfile, RawAbsLock};
/// struct Eager;
/// impl AbsProfile for Eager {
///     const CHECK_INTERVAL: u64 = 1;
///     fn config() -> &'static AbsConfig {
///         static C: AbsConfig = AbsConfig { window: 1, ..AbsConfig::ROCKETMQ };
///         &C
///     }
/// }
/// let m = lock_api::Mutex::<RawAbsLock<Eager>, u8>::new(0);
/// *m.lock() = 1;
/// assert_eq!(*m.lock(), 1);
/// ```
///
/// To change one field of the measured bounds, derive from [`AbsConfig::calibrated`], and call it once
/// at start-up: its first call measures (~30 ms), and a profile that calls it first from inside a lock
/// would make that acquisition wait for the measurement.
/// ```
/// use abslock::{AbsConfig, AbsProfile, RawAbsLock};
/// use std::sync::OnceLock;
/// enum AlwaysSpinWhenCrowded {}
/// impl AbsProfile for AlwaysSpinWhenCrowded {
///     fn config() -> &'static AbsConfig {
///         static C: OnceLock<AbsConfig> = OnceLock::new();
///         C.get_or_init(|| AbsConfig { crowded_trial: false, ..*AbsConfig::calibrated() })
///     }
/// }
/// let _ = AlwaysSpinWhenCrowded::config(); // measure now, not on the first contended lock
/// let m = lock_api::Mutex::<RawAbsLock<AlwaysSpinWhenCrowded>, u64>::new(0);
/// *m.lock() += 1;
/// assert!(!AlwaysSpinWhenCrowded::config().crowded_trial);
/// ```
pub trait AbsProfile: 'static {
    /// The holder checks whether a window has ended every this many acquisitions (a power of two keeps
    /// the check one AND on the fast path). Default 256.
    const CHECK_INTERVAL: u64 = 256;

    /// Forces the solo regime on for good, at compile time; `0` (the default, and every profile this crate
    /// ships): not forced, so the config's solo trial (`AbsConfig::solo_recheck_us`, on in the
    /// calibrated config) decides at run time. When not 0, a waiter neither spins nor yields but parks at
    /// once, and a release never wakes a sleeper: a sleeper comes back only when a hand-off gives it the
    /// lock (the starvation bound, once per `starve_after_us`, or `unlock_fair` and `bump`), or when its
    /// own park, of at most this many microseconds (times the threads waiting), ends: then it tries the lock and parks again if it is held. So one thread runs alone
    /// between hand-offs, and a lock left free with sleepers is taken within one such park. It pays where
    /// one thread saturates the lock (there a lone thread out-runs any group that shares it, likely
    /// because every change of holder moves the protected data between cores) and costs where threads
    /// also work outside the lock, whose work it serializes too (`docs/abs.md`, round 8; sweep strategy
    /// `abs-solo`). A compile-time constant, so locks that leave it at 0 pay nothing for it. Ours
    /// (concurrency restriction taken to one circulating thread, after Dice, "Malthusian Locks", EuroSys
    /// 2017).
    const SOLO_RECHECK_US: u32 = 0;

    /// Whether the starvation bound hands the lock directly to the oldest sleeper (the lock stays held
    /// for a thread that is not running yet), as rounds 2-9 did, instead of waking it as the heir with
    /// the lock released ([`RawAbsLock`](crate::RawAbsLock)'s `HEIR` bit). For the ablation that measures
    /// the difference (`abs-direct-handoff`); no shipped profile sets it. Ours.
    const DIRECT_HANDOFF: bool = false;

    /// Yields after which a waiter counts as past the starvation bound whatever the clock says, so it asks
    /// to be handed the lock (the per-waiter bound; `AbsConfig::starve_after_us`); `u32::MAX` (the default,
    /// and every profile this crate ships) leaves it to the clock. Time does not pass inside a loom model,
    /// so model profiles set it to reach the path where a yielding waiter becomes the heir; tests set it to
    /// make that path deterministic. Ours.
    const STARVED_AFTER_YIELDS: u32 = u32::MAX;

    /// Whether the lock may run the quiet regime: after a window of acquisitions in which no thread
    /// waited, the holder releases with a plain store instead of an RMW, until an acquisition or a
    /// release sees a waiter (`QUIET` in [`RawAbsLock`](crate::RawAbsLock)'s lock word). Default true;
    /// false for the ablation that measures it (`abs-no-quiet`) and for model profiles that must keep
    /// their waiters on the parking path. Ours.
    const QUIET: bool = true;

    /// The configuration; called on slow paths, at window ends, and on releases over sleepers only
    /// when the starvation bound is checked (the first, then one in 256). It should return the same
    /// `starve_after_us` for the life of the locks that use it: a lock keeps a bound of 0 or none once
    /// read.
    fn config() -> &'static AbsConfig;
}

/// Bounds measured on this machine ([`AbsConfig::calibrated`]); the default profile. Until the
/// measurement lands (started on first use, on a background thread), the reference bounds apply. Ours.
#[derive(Debug)]
pub enum Calibrated {}

impl AbsProfile for Calibrated {
    fn config() -> &'static AbsConfig {
        AbsConfig::calibrated_or_reference()
    }
}

/// RocketMQ 5.3.2's upstream constants ([`AbsConfig::ROCKETMQ`]), for comparison.
#[derive(Debug)]
pub enum RocketMq {}

impl AbsProfile for RocketMq {
    fn config() -> &'static AbsConfig {
        &AbsConfig::ROCKETMQ
    }
}
