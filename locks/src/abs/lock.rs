//! [`RawAbsLock`]: the adaptive backoff-spin lock on one futex word.

use core::marker::PhantomData;

use super::config::AbsConfig;
use super::policy::{Decision, WindowStats, decide};
use super::profile::{AbsProfile, Calibrated};
use super::stats::{AbsStats, Mode, TracePoint};
use crate::holder_counter::HolderCounter;
use crate::sync::{
    AtomicU32, AtomicU64, Futex, OnceLock, Ordering, TraceMutex, loom_const_fn, spin_loop, yield_now,
};

/// Lock word: nobody holds the lock.
const UNLOCKED: u32 = 0;
/// Lock word: held, and no waiter is asleep on the futex.
const LOCKED: u32 = 1;
/// Lock word: held, and a waiter may be asleep; the unlocker must wake one.
const LOCKED_PARKED: u32 = 2;

/// Policy word: set once the policy has been initialised from the profile's config.
const POLICY_SET: u32 = 1 << 30;
/// Policy word: waiters park ([`Mode::Park`]); clear means [`Mode::Spin`].
const POLICY_PARK: u32 = 1 << 31;
/// Policy word: the bits holding k.
const POLICY_K: u32 = POLICY_SET - 1;

/// The adaptive backoff-spin (ABS) lock: one futex word for mutual exclusion, an adaptive policy for how
/// waiters wait.
///
/// | lock word | meaning |
/// |---|---|
/// | `0` | free |
/// | `1` | held; no waiter asleep |
/// | `2` | held; a waiter may be asleep on the futex, so `unlock` wakes one |
///
/// Invariant: while any thread sleeps on the word, the word is `2` or a wake-up is in flight to a
/// thread that will take the lock with `2`. Every path that may sleep first swaps in `2`, and a thread
/// that has slept only ever acquires with `2`, as in std's futex mutex. The *mode* (spin with k, or
/// park) lives in a separate policy word and only decides how long a waiter spins and yields before it
/// sleeps; no acquisition or release reads it, so mutual exclusion never depends on it and switching
/// mode is a single store. `docs/abs.md` gives the full argument; `loom-tests/` checks it.
///
/// - **Fast path**: one CAS `0 -> 1`, then the holder bumps plain counters (no atomic RMW); unlock is
///   one swap, plus a futex wake only if the word said `2`.
/// - **Slow path** (spin mode): spin up to k times (a read, a CAS when free, a pause), then
///   `yield_now`, repeat; after `max_yields` yields, park. (Park mode): spin `park_spins`, then park.
/// - **Adaptation**: every window of acquisitions the holder feeds [`WindowStats`] to [`decide`]: raise
///   k while k spins ran out at least once per `raise_ratio` acquisitions, lower it when at most once per
///   `lower_ratio`, switch to park mode when k is at `k_max` and spinning still fails, return
///   when contention (mean waiters per acquisition) falls to `return_percent` of the switch level.
///
/// `P` picks the [`AbsConfig`]: [`Calibrated`] (default, measured on this machine) or
/// [`RocketMq`](crate::RocketMq). Size: ~144 bytes; statistics take most of it.
///
/// Source: RocketMQ 5.3.2 `org.apache.rocketmq.store.lock.AdaptiveBackOffSpinLockImpl` (PR #8663) and
/// "Beyond the Bottleneck: Enhancing High-Concurrency Systems with Lock Tuning" (FM 2024), re-designed
/// around a single lock word instead of swapping two inner locks (ours).
///
/// # Examples
/// ```
/// let m = abslock::AbsMutex::new(0_u64);
/// std::thread::scope(|s| {
///     for _ in 0..4 {
///         s.spawn(|| for _ in 0..1000 { *m.lock() += 1 });
///     }
/// });
/// assert_eq!(*m.lock(), 4000);
/// // SAFETY: `raw()` is used to read statistics only, never to unlock.
/// let stats = unsafe { m.raw() }.stats();
/// assert_eq!(stats.acquisitions, 4001);
/// ```
pub struct RawAbsLock<P: AbsProfile = Calibrated> {
    state: Futex,
    policy: AtomicU32,
    /// Threads in the slow path. Written with RMWs, on the slow path only.
    waiters: AtomicU32,
    /// Times a waiter's k spins ran out without the lock (RocketMQ's "r"). Counted when it happens, on
    /// the slow path, so waiters that starve while the holder re-acquires are counted too.
    run_outs: AtomicU64,
    mode_switches: AtomicU64,
    acquisitions: HolderCounter,
    contended: HolderCounter,
    spins: HolderCounter,
    yields: HolderCounter,
    parks: HolderCounter,
    waiters_seen: HolderCounter,
    window_acquisitions: HolderCounter,
    window_run_outs: HolderCounter,
    window_waiters_seen: HolderCounter,
    critical_milli: HolderCounter,
    trace: OnceLock<TraceMutex<TraceBuffer>>,
    _profile: PhantomData<fn() -> P>,
}

struct TraceBuffer {
    points: Vec<TracePoint>,
    capacity: usize,
}

/// What one waiter did in the slow path, added to the counters once it holds the lock.
#[derive(Default)]
struct WaitTally {
    spins: u64,
    yields: u64,
    parks: u64,
}

impl<P: AbsProfile> RawAbsLock<P> {
    loom_const_fn! {
        /// A free lock in spin mode; k comes from `P`'s config on first use.
        pub fn new() -> Self {
            RawAbsLock {
                state: Futex::new(UNLOCKED),
                policy: AtomicU32::new(0),
                waiters: AtomicU32::new(0),
                run_outs: AtomicU64::new(0),
                mode_switches: AtomicU64::new(0),
                acquisitions: HolderCounter::new(),
                contended: HolderCounter::new(),
                spins: HolderCounter::new(),
                yields: HolderCounter::new(),
                parks: HolderCounter::new(),
                waiters_seen: HolderCounter::new(),
                window_acquisitions: HolderCounter::new(),
                window_run_outs: HolderCounter::new(),
                window_waiters_seen: HolderCounter::new(),
                critical_milli: HolderCounter::new(),
                trace: OnceLock::new(),
                _profile: PhantomData,
            }
        }
    }

    /// Acquires the lock (guard-free form of `lock_api::RawMutex::lock`).
    #[inline]
    pub fn acquire(&self) {
        if self.cas(UNLOCKED, LOCKED) {
            self.note_acquisition();
        } else {
            self.acquire_slow();
        }
    }

    /// Takes the lock if it is free; one strong CAS, so it never fails on a free lock.
    #[inline]
    pub fn try_acquire(&self) -> bool {
        let ok = self.cas(UNLOCKED, LOCKED);
        if ok {
            self.note_acquisition();
        }
        ok
    }

    /// Releases the lock, waking one sleeper if the word says there may be one.
    ///
    /// # Safety
    /// The caller holds the lock.
    #[inline]
    pub unsafe fn release(&self) {
        if self.state.word().swap(UNLOCKED, Ordering::Release) == LOCKED_PARKED {
            self.wake_one();
        }
    }

    /// Whether the lock is held right now (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.state.word().load(Ordering::Relaxed) != UNLOCKED
    }

    /// The current mode.
    pub fn mode(&self) -> Mode {
        self.policy_now(P::config()).0
    }

    /// Forces the waiting mode, from any thread, held or not; the policy may change it again at the end
    /// of a later window. Safe at any moment because no acquisition depends on the mode; if the policy
    /// decides at the same instant, one of the two writes wins. A forced switch to [`Mode::Park`] does not
    /// record the contention level (only the holder writes it), so the policy keeps the level of its own
    /// last switch (0 if none): with 0, it returns to spinning only once a window sees no waiters.
    pub fn set_mode(&self, mode: Mode) {
        let cfg = P::config();
        let mut current = self.policy.load(Ordering::Relaxed);
        loop {
            let (old_mode, k) = decode_policy(current, cfg);
            if old_mode == mode {
                return;
            }
            match self.policy.compare_exchange(
                current,
                encode_policy(mode, k),
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(seen) => current = seen,
            }
        }
        self.mode_switches.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters since creation, with the current k and mode.
    pub fn stats(&self) -> AbsStats {
        let (mode, k) = self.policy_now(P::config());
        AbsStats {
            acquisitions: self.acquisitions.get(),
            contended: self.contended.get(),
            spins: self.spins.get(),
            yields: self.yields.get(),
            parks: self.parks.get(),
            run_outs: self.run_outs.load(Ordering::Relaxed),
            mode_switches: self.mode_switches.load(Ordering::Relaxed),
            k,
            mode,
        }
    }

    /// Starts recording one [`TracePoint`] per adaptation window, keeping the first `capacity` (the
    /// buffer is allocated here, not in the critical section). Later calls do nothing.
    pub fn enable_trace(&self, capacity: usize) {
        self.trace
            .get_or_init(|| TraceMutex::new(TraceBuffer { points: Vec::with_capacity(capacity), capacity }));
    }

    /// The recorded decisions, oldest first (empty unless [`enable_trace`](Self::enable_trace) was called).
    pub fn trace(&self) -> Vec<TracePoint> {
        match self.trace.get() {
            Some(buffer) => buffer.lock().map(|b| b.points.clone()).unwrap_or_default(),
            None => Vec::new(),
        }
    }

    #[inline]
    fn cas(&self, from: u32, to: u32) -> bool {
        self.state.word().compare_exchange(from, to, Ordering::Acquire, Ordering::Relaxed).is_ok()
    }

    /// Holder-only bookkeeping after every acquisition: plain stores, plus a rare window check.
    #[inline]
    fn note_acquisition(&self) {
        let n = self.acquisitions.get().wrapping_add(1);
        self.acquisitions.set(n);
        let waiting = self.waiters.load(Ordering::Relaxed);
        if waiting != 0 {
            self.waiters_seen.add(u64::from(waiting));
        }
        if n.is_multiple_of(P::CHECK_INTERVAL) {
            self.end_window(n);
        }
    }

    fn policy_now(&self, cfg: &AbsConfig) -> (Mode, u32) {
        decode_policy(self.policy.load(Ordering::Relaxed), cfg)
    }

    #[cold]
    fn acquire_slow(&self) {
        self.waiters.fetch_add(1, Ordering::Relaxed);
        let cfg = P::config();
        let mut tally = WaitTally::default();
        // Once we have slept we take the lock with LOCKED_PARKED: others may still be asleep.
        let mut take_as = LOCKED;
        let mut yields_in_a_row = 0_u32;
        loop {
            let (mode, k) = self.policy_now(cfg);
            let spins = if mode == Mode::Spin { k } else { cfg.park_spins };
            if self.spin_for(spins, take_as, &mut tally) {
                break;
            }
            if mode == Mode::Spin {
                self.run_outs.fetch_add(1, Ordering::Relaxed);
                if yields_in_a_row < cfg.max_yields {
                    yield_now();
                    tally.yields += 1;
                    yields_in_a_row += 1;
                    continue;
                }
            }
            yields_in_a_row = 0;
            if self.park_once(&mut tally) {
                break;
            }
            take_as = LOCKED_PARKED;
        }
        self.waiters.fetch_sub(1, Ordering::Relaxed);
        // We hold the lock: the counters are ours alone.
        self.contended.add(1);
        self.spins.add(tally.spins);
        self.yields.add(tally.yields);
        self.parks.add(tally.parks);
        self.note_acquisition();
    }

    /// Up to `k` spins; true if the lock was taken (with `take_as`).
    #[inline]
    fn spin_for(&self, k: u32, take_as: u32, tally: &mut WaitTally) -> bool {
        for _ in 0..k {
            tally.spins += 1;
            if self.state.word().load(Ordering::Relaxed) == UNLOCKED && self.cas(UNLOCKED, take_as) {
                return true;
            }
            spin_loop();
        }
        false
    }

    /// Announces a sleeper and sleeps until woken; true if the lock turned out to be free (taken as
    /// LOCKED_PARKED, since other sleepers may exist).
    fn park_once(&self, tally: &mut WaitTally) -> bool {
        if self.state.word().swap(LOCKED_PARKED, Ordering::Acquire) == UNLOCKED {
            return true;
        }
        tally.parks += 1;
        self.state.wait(LOCKED_PARKED);
        false
    }

    #[cold]
    fn wake_one(&self) {
        self.state.wake_one();
    }

    /// Holder-only: closes the window if it is long enough and applies the policy's decision.
    #[cold]
    fn end_window(&self, n: u64) {
        let cfg = P::config();
        let acquisitions = n.wrapping_sub(self.window_acquisitions.get());
        if acquisitions < u64::from(cfg.window) {
            return;
        }
        let run_outs = self.run_outs.load(Ordering::Relaxed);
        let exhausted = run_outs.wrapping_sub(self.window_run_outs.get());
        let seen = self.waiters_seen.get().wrapping_sub(self.window_waiters_seen.get());
        let contention_milli =
            u64::try_from(u128::from(seen) * 1000 / u128::from(acquisitions)).unwrap_or(u64::MAX);
        let raw = self.policy.load(Ordering::Relaxed);
        let (mode, k) = decode_policy(raw, cfg);
        let window = WindowStats {
            mode,
            k,
            acquisitions,
            exhausted,
            contention_milli,
            critical_milli: self.critical_milli.get(),
        };
        let next = match decide(cfg, &window) {
            Decision::Hold => None,
            Decision::RaiseK(k) | Decision::LowerK(k) | Decision::SwitchToSpin(k) => Some((Mode::Spin, k)),
            Decision::SwitchToPark { critical_milli } => {
                self.critical_milli.set(critical_milli);
                Some((Mode::Park, k))
            }
        };
        let (mut new_mode, mut new_k) = (mode, k);
        if let Some((m, k)) = next {
            let swapped = self
                .policy
                .compare_exchange(raw, encode_policy(m, k), Ordering::Relaxed, Ordering::Relaxed)
                .is_ok();
            if swapped {
                (new_mode, new_k) = (m, k);
                if m != mode {
                    self.mode_switches.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        self.window_acquisitions.set(n);
        self.window_run_outs.set(run_outs);
        self.window_waiters_seen.set(self.waiters_seen.get());
        if let Some(buffer) = self.trace.get()
            && let Ok(mut b) = buffer.lock()
            && b.points.len() < b.capacity
        {
            b.points.push(TracePoint { acquisition: n, k: new_k, mode: new_mode });
        }
    }
}

fn decode_policy(raw: u32, cfg: &AbsConfig) -> (Mode, u32) {
    let mode = if raw & POLICY_PARK != 0 { Mode::Park } else { Mode::Spin };
    let k = if raw & POLICY_SET != 0 { raw & POLICY_K } else { cfg.k_init.min(POLICY_K) };
    (mode, k)
}

fn encode_policy(mode: Mode, k: u32) -> u32 {
    let park = if mode == Mode::Park { POLICY_PARK } else { 0 };
    park | POLICY_SET | k.min(POLICY_K)
}

impl<P: AbsProfile> Default for RawAbsLock<P> {
    fn default() -> Self {
        Self::new()
    }
}

impl<P: AbsProfile> core::fmt::Debug for RawAbsLock<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RawAbsLock").field("held", &self.is_held()).field("stats", &self.stats()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_word_round_trips_mode_and_k() {
        let cfg = AbsConfig::ROCKETMQ;
        for mode in [Mode::Spin, Mode::Park] {
            for k in [0, 1, 1000, POLICY_K] {
                assert_eq!(decode_policy(encode_policy(mode, k), &cfg), (mode, k));
            }
        }
        assert_eq!(decode_policy(0, &cfg), (Mode::Spin, 1000));
    }
}
