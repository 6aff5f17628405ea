//! [`RawAbsLock`]: the adaptive backoff-spin lock: one lock word, a parking queue, and a policy.

use core::marker::PhantomData;

use super::config::{AbsConfig, cores};
use super::policy::{Decision, WindowStats, decide};
use super::profile::{AbsProfile, Calibrated};
use super::round_budget::{RoundBudget, RoundPolicy, round_budget};
use super::solo_trial::{
    SOLO_CROWDED_TURNS, SOLO_START_MILLI, SoloTrial, SoloWindow, decide_solo, solo_timed,
};
use super::stats::{AbsStats, Mode, TracePoint};
use super::trial::{CrowdedTrial, TRIAL_PERIOD, TrialArm, TrialWindow, decide_crowded, trial_timed};

const _: () = assert!(TRIAL_PERIOD <= 256, "the trial clock keeps the cycle position in 8 bits");
use crate::holder_counter::HolderCounter;
use crate::sync::{
    AtomicBool, AtomicU32, AtomicU64, Deadline, OnceLock, Ordering, ParkQueue, Parked, TraceMutex,
    deadline_passed, deadline_passed_after_park, loom_const_fn, now_us, quiet_hint_set, quiet_hint_take,
    recheck_deadline, spin_loop, yield_now,
};

/// Lock word bit: held.
const LOCKED: u32 = 1;
/// Lock word bit: a thread may be parked; the unlocker must look at the queue.
const PARKED: u32 = 2;
/// Lock word bit: a waiter is awake (spinning, yielding, or just woken) and will take the lock or clear
/// this bit before it sleeps, so an unlock need not wake a sleeper (Go's `mutexWoken`).
const AWAKE: u32 = 8;
/// Lock word bit, only ever set with `LOCKED`: the heir (the sleeper the starvation bound woke, or a
/// waiter that yielded past the bound) is running and asks to be handed the lock, so the next release passes it on (`GIVEN`) instead of freeing
/// it. One heir asks at a time. Ours.
const HEIR: u32 = 4;
/// Lock word bit, only ever set with `LOCKED`: the last release handed the lock to the heir that asked,
/// which holds it from then on and clears this bit before it returns from `lock`. Ours.
const GIVEN: u32 = 16;
/// Lock word bit: the solo regime runs, so a release over sleepers wakes nobody. A copy of the policy
/// word's `POLICY_SOLO` that only a holder sets or clears, together with it, so a release (always by the
/// holder) reads the regime from the word its CAS returned: the inlined test `PARKED | AWAKE | SOLO ==
/// PARKED` sends only a release that must wake someone out of line. Round 11 read the policy word in the
/// out-of-line release instead: with a 0 ns critical section over 2 threads `abs` took 0.84-0.89x
/// parking_lot's time there against 0.75-0.82x with this bit, in two paired runs of three (`docs/abs.md`,
/// round 12). Ours.
const SOLO: u32 = 32;
/// Lock word bit: the quiet regime runs. The last window saw no waiter, so the holder releases with a
/// plain store of `QUIET` instead of an RMW: a locked RMW waits for the critical section's stores to
/// drain, which a plain store does not (a spin lock's release). Only a holder sets it (one CAS from
/// exactly `LOCKED`, at a window's end) or clears it (one RMW, at the first acquisition or release that
/// sees a waiter, a fair unlock, or a switch of the solo regime on), and while it is set nobody else
/// changes a held word (a newcomer's `lock bts` rewrites the same value): a waiter never sets `PARKED`,
/// `AWAKE` or `HEIR` on it, and one out of spins and yields sleeps with a re-check instead, which the
/// holder that ends the regime cuts short. Ours.
const QUIET: u32 = 64;

/// Unpark token: the lock was released as you were woken (freed, or handed to an heir that asked); race
/// for it.
const TOKEN_RETRY: usize = 0;
/// Unpark token: the lock was handed to you; you hold it.
const TOKEN_HANDOFF: usize = 1;
/// Unpark token: the solo regime was switched on, or an `unlock_fair` that meant to hand you the lock
/// handed it to a running heir instead; look at the lock again (no `AWAKE` was set for you).
const TOKEN_RECHECK: usize = 2;
/// Unpark token: the starvation bound woke you as the heir; the lock was released as you were woken. Take
/// it if it is free, or ask (`HEIR`) to be handed it at the next release.
const TOKEN_HEIR: usize = 3;
/// Park token: every sleeper parks with it (the queue is FIFO, so the oldest sleeper is first).
const TOKEN_WAITING: usize = 0;

/// A holder releasing over sleepers reads the clock for the starvation bound only on every this many
/// acquisitions. Under oversubscription sleepers are present at almost every release, and a clock read
/// (tens of ns in a VM) every 8 releases added ~3 ns to a ~7 ns acquisition; every 256 it is noise. The
/// bound overshoots until the next acquisition at a multiple of 256 whose release sees sleepers.
const FAIR_CHECK_EVERY: u64 = 256;

/// `fair_at` for a bound of 0: every release over sleepers hands off.
const FAIR_ALWAYS: u64 = u64::MAX;
/// `fair_at` for no bound: no release hands off.
const FAIR_NEVER: u64 = u64::MAX - 1;
/// The latest instant (us) `fair_at` holds as a due time.
const FAIR_LAST: u64 = u64::MAX - 2;

/// Waiter register: one unit per thread in the slow path. The active count below it has 16 bits, so
/// one lock supports at most 65 535 waiting threads at once (documented on [`RawAbsLock`]).
const WAITER: u32 = 1 << 16;
/// Waiter register: one unit per waiter spinning or yielding (not parked).
const ACTIVE: u32 = 1;
/// Waiter register: the bits counting active waiters.
const ACTIVE_MASK: u32 = WAITER - 1;

/// Policy word: set once the policy has been initialised from the profile's config.
const POLICY_SET: u32 = 1 << 30;
/// Policy word: waiters park ([`Mode::Park`]); clear means [`Mode::Spin`].
const POLICY_PARK: u32 = 1 << 31;
/// Policy word: crowded waiters yield at once (the last trial found yielding faster, see
/// [`decide_crowded`]); clear means they spin `crowded_spins` before each yield.
const POLICY_CROWDED_YIELD: u32 = 1 << 29;
/// Crowded-spin trial clock: bits holding the window's start time in microseconds (2^48 us is 8.9 years).
const TRIAL_CLOCK_BITS: u32 = 48;
/// Crowded-spin trial clock: the mask of the start time.
const TRIAL_CLOCK_MASK: u64 = (1 << TRIAL_CLOCK_BITS) - 1;
/// Crowded-spin trial clock: the mask of the cycle position, above the start time (`TRIAL_PERIOD` is 256).
const TRIAL_POSITION_MASK: u64 = 0xff;
/// Crowded-spin trial clock: the bit saying the current trial is void (above the position).
const TRIAL_VOID: u64 = 1 << (TRIAL_CLOCK_BITS + 8);
/// Policy word: the solo regime runs (the solo trial's setting, or [`RawAbsLock::set_solo`]).
const POLICY_SOLO: u32 = 1 << 28;
/// Policy word: the bits holding k.
const POLICY_K: u32 = POLICY_SOLO - 1;
/// A sleeper's re-check period under the solo regime when the config has none (the regime was forced
/// with [`RawAbsLock::set_solo`] on a lock whose config does not run the trial), in microseconds.
const SOLO_RECHECK_FALLBACK_US: u32 = 1_000;

/// Longest single pause burst of the exponential back-off, in pause hints (crossbeam's `Backoff` stops
/// at 2^6; parking_lot's `SpinWait` at 2^3). Every read of the word by a waiter costs the holder a
/// cache-line transfer on its next RMW, and each change of holder moves the lock's lines between cores:
/// with a 0 ns critical section over 2 threads, a cap of 8 restarted after each yield took 1.57-1.60x
/// `parking_lot`'s time and this cap 0.89-0.96x (`docs/abs.md`, rounds 3 and 4). A holder that
/// re-acquires at once is not waited out any better by reading more often: it is waited out by the yields
/// and the starvation bound.
const MAX_BURST: u32 = 64;

/// The adaptive backoff-spin (ABS) lock.
///
/// | lock word (bits) | meaning | who may take it |
/// |---|---|---|
/// | `0` | free | anyone: the fast path is one `lock bts` setting `LOCKED` |
/// | `LOCKED` | held, nobody parked | the holder releases with one CAS clearing `LOCKED` |
/// | `PARKED` | free, threads parked | anyone, with the same single `lock bts` |
/// | `LOCKED\|PARKED` | held, threads parked | the release wakes the oldest parked thread and frees the lock in one CAS under the queue lock; once per starvation bound it wakes it as the heir instead |
/// | `+ AWAKE` | a waiter is awake and will take the lock | the release wakes nobody (a failed CAS from `LOCKED`, then one CAS) |
/// | `LOCKED\|HEIR` (and any of `PARKED`, `AWAKE`) | held; the heir is running and asks for the lock | the release hands it to the heir (`GIVEN`) instead of freeing it |
/// | `LOCKED\|GIVEN` (and any of `PARKED`, `AWAKE`) | held by the heir, which clears `GIVEN` as it returns from `lock` | nobody else |
/// | `+ SOLO` (any row) | the solo regime runs (set and cleared by the holder that switches it; a window with under 0.5 waiters per acquisition clears it until a busier one) | over sleepers, the release wakes nobody (a failed CAS from `LOCKED`, then one CAS, both inlined) |
/// | `LOCKED\|QUIET` or `QUIET` | the quiet regime runs: the last window saw no waiter (only ever with `LOCKED` or alone; set by a holder's CAS from exactly `LOCKED` at a window's end, cleared by the first acquisition or release that sees a waiter) | the release is a plain store of `QUIET`, no RMW; nobody else writes a held quiet word, so a waiter out of spins and yields sleeps with a re-check instead of setting `PARKED` |
///
/// **Quiet regime** (round 13). A locked RMW waits for the critical section's stores to drain; a plain
/// store, a spin lock's release, does not. A parking lock needs the RMW only to see a sleeper, so after
/// a window in which no thread waited the holder sets `QUIET` and releases with a plain store, until an
/// acquisition or a release sees a waiter registered. The acquiring thread keeps a thread-local hint
/// naming the lock it took in the regime, so a release outside the regime reads nothing of the lock
/// before its CAS; a hinted release confirms the regime on the busy line, which the acquisition wrote.
///
/// Acquire costs the holder one RMW whatever `PARKED` and `AWAKE` say. The release is one CAS from
/// exactly `LOCKED` with nothing read before it, and, when the word holds more, a second CAS from the
/// word the first one returned (it fails only if a waiter changed the word in between): one RMW with
/// nobody else's bit set, two with sleepers present, which under oversubscription is almost every
/// release (the restriction keeps them asleep), or under the solo regime (`SOLO`), which a window
/// without waiters sets aside so that a lock gone quiet pays one RMW again. Rounds 3-10 read the word first and paid one RMW in both
/// cases; that read cost 3.5-5.6 ns of a ~21 ns uncontended lock and unlock on the round-11 Intel VM, and the
/// second RMW showed at an empty critical section over 4 threads (`docs/abs.md`, "Round 11"; round 3's
/// design, whose acquire also expected exactly `0`, paid a failed CAS on both sides).
///
/// Waiters wait in three stages, each bounded (the heir below, once woken, spins and then yields until it
/// holds the lock, and never sleeps again): **spin** (read the word, pause 1, 2, 4 ... 64, 64 ... times,
/// until k pauses are spent; k only while the waiters spinning or yielding leave a core free, after Go's
/// `canSpin`, and otherwise `crowded_spins` or none, as the crowded-spin trial decides), **yield**
/// (`sched_yield`, then read and spin again, up to `max_yields` times, or `crowded_yields` for a waiter
/// that found the cores taken), **park** (on the lock's queue until an unlock wakes it). An unlock wakes a sleeper
/// only when no waiter is left spinning or yielding (concurrency restriction: past the cores, the threads
/// circulating over the lock are the holder, the waiters still within their budget, at most one woken
/// sleeper and the heir, if one was woken; the rest sleep and cost the holder nothing); `max_active` can also cap the waiters at entry. Once
/// per `starve_after_us`, a holder releasing over sleepers wakes the oldest one as the *heir* instead
/// (starvation bound, parking_lot's eventual fairness): the lock runs on while the heir is scheduled, and
/// the heir, once running, takes the lock or asks for it (`HEIR`) and is handed it at the next release
/// (`GIVEN`), never sleeping again. Sleepers take turns at a bounded rate, and nobody sleeps forever. The
/// bound also holds per waiter for the yield stage: a waiter that has waited longer than
/// `starve_after_us` since its first yield stops yielding and asks for the lock as an heir, for the rest
/// of its yield budget (Go's starvation mode hands the lock to a waiter that has waited over 1 ms), so a
/// crowded waiter's long yield budget cannot become a long wait while newcomers barge past it (round 15).
/// Handing the lock to the sleeper directly, as rounds 2-9 did, left it held by a thread that was not
/// running yet ([`AbsProfile::DIRECT_HANDOFF`] keeps that for comparison).
///
/// **Solo regime.** Where one thread saturates the lock, a lone thread out-runs any group that shares it,
/// so the lock can run a solo regime: waiters park at once, no release wakes a sleeper (the
/// `LOCKED|PARKED` row above becomes a CAS clearing `LOCKED`, after the failed one from `LOCKED`), and a sleeper comes back only by a
/// hand-off (the starvation bound, `unlock_fair`, `bump`) or its own timed re-check. Where threads also
/// work outside the lock it costs a quarter to a third of the throughput, so the lock measures it: with
/// [`AbsConfig::solo_recheck_us`] not 0 (the calibrated default, so `AbsMutex` runs it), the holder runs
/// the solo trial ([`decide_solo`]) at window ends and keeps the regime on only while it took more than
/// 5% less time per acquisition in 3 of 4 paired arms, never above 16 waiters per acquisition, and above
/// 4 only where an acquisition takes at most 1/2000 of the starvation bound (250 ns by default). A
/// profile whose config sets `solo_recheck_us: 0` turns the trial off (see [`AbsProfile`]'s example of
/// a changed field). Switching the regime on wakes every sleeper once, so that each sleeps again with a
/// re-check ([`set_solo`](Self::set_solo) switches it by hand). A profile may also force it on for good
/// at compile time ([`AbsProfile::SOLO_RECHECK_US`]; no shipped profile does).
///
/// The *mode*, k, whether crowded waiters spin at all and the solo regime live in a policy word that only decides how
/// long a waiter spins and yields; the holder adapts mode and k once per window of acquisitions
/// (RocketMQ's rule, see [`decide`], switching to park mode only in a window in which the holder and its
/// waiters outnumbered the cores) and settles the crowded waiters' spin by a periodic trial that
/// times both settings ([`decide_crowded`]). No acquisition or release depends on the mode or k, so
/// [`set_mode`](Self::set_mode) is safe at any moment (it keeps the other bits); the solo bit, which
/// waiters read, changes only under the lock, and the holder that changes it copies it into the lock
/// word (`SOLO`), where releases over sleepers read it.
///
/// At most 65 535 threads may wait on one lock at the same time (the waiter register packs two 16-bit
/// counts into one `AtomicU32`); more would corrupt the statistics and the spinning rule, not exclusion.
///
/// # Layout (`size_of` = 256 bytes, align 64)
/// Four 64-byte lines, so no counter write or waiter RMW touches the lock word's line, and an acquisition
/// touches two lines: (1) the lock word and the policy word (the policy changes once per window at
/// most); (2) the busy line: the waiter register (RMWs by waiters), the window's crowded flag, the
/// quiet regime's two holder-only flags and the counters the holder writes at every acquisition or contended acquisition (plain stores), so a change
/// of holder moves this line and the lock word's and no third; (3, 4) what is written at most once per
/// window, after a park or a hand-off to an heir, or by a waiter giving up: the window's and the trials' state, the park and
/// hand-off counts, the rare RMW counters and the trace pointer. A waiter keeps its tally in registers
/// and adds it once, when it holds the lock.
///
/// Source: RocketMQ 5.3.2 `org.apache.rocketmq.store.lock.AdaptiveBackOffSpinLockImpl` (the adaptation
/// rule), parking_lot's `RawMutex` (lock word, parking, fair unlock), Go's `sync.Mutex` (canSpin,
/// starvation mode), Dice, "Malthusian Locks" (EuroSys 2017; concurrency restriction). `docs/abs.md`
/// gives the full argument; `loom-tests/` checks it.
///
/// # Examples
/// ```
/// use abslock::AbsMutexExt;
/// let m = abslock::AbsMutex::new(0_u64);
/// std::thread::scope(|s| {
///     for _ in 0..4 {
///         s.spawn(|| for _ in 0..1000 { *m.lock() += 1 });
///     }
/// });
/// assert_eq!(*m.lock(), 4000);
/// assert_eq!(m.stats().acquisitions, 4001);
/// ```
#[repr(C)]
pub struct RawAbsLock<P: AbsProfile = Calibrated> {
    hot: Hot,
    busy: Busy,
    rare: Rare,
    _profile: PhantomData<fn() -> P>,
}

/// Line 1: what every acquisition and every waiter reads.
#[repr(C, align(64))]
struct Hot {
    state: AtomicU32,
    policy: AtomicU32,
    queue: ParkQueue,
}

/// Line 2: everything else an acquisition touches, so a change of holder moves two lines (this and the
/// lock word's), not three: the waiter register (RMWs by waiters, read by the holder), the window's
/// crowded flag, and the counters the holder writes at every acquisition or at every contended one
/// (plain stores). A waiter's last RMW on the register, as it takes the lock, leaves this line in its
/// core for the counters that follow.
#[repr(C, align(64))]
struct Busy {
    /// `WAITER` per thread in the slow path plus `ACTIVE` per waiter not parked.
    waiters: AtomicU32,
    /// Set by a holder that saw the holder and the threads waiting outnumber the cores (more threads
    /// want the lock than there are cores) since a holder last cleared it, at a window's end: set at most
    /// once and cleared at most once per window. It sits beside the register the holder reads at every
    /// acquisition, so checking it costs no other line.
    crowded: AtomicBool,
    /// The quiet regime runs (`QUIET` is in the lock word): holder-only, changed together with the bit,
    /// so a holder reads the regime here, on the line it writes anyway, and not from the lock word.
    quiet: AtomicBool,
    /// A contended acquisition (through the slow path) happened in this window: holder-only, cleared at
    /// the window's end; such a window does not start the quiet regime.
    contended_window: AtomicBool,
    acquisitions: HolderCounter,
    waiters_seen: HolderCounter,
    /// Microseconds (since [`now_us`]'s origin) after which a release over sleepers wakes an heir; 0 until
    /// the first release over sleepers; [`FAIR_ALWAYS`] or [`FAIR_NEVER`] for a bound of 0 or none.
    fair_at: HolderCounter,
    contended: HolderCounter,
    spins: HolderCounter,
    yields: HolderCounter,
    run_outs: HolderCounter,
}

/// Lines 3-4: written at most once per window, after a park or a hand-off to an heir, or by a waiter
/// that gives up: the window's and the trials' state (holder-only, plain stores), the rare counters and
/// the trace pointer.
#[repr(C, align(64))]
struct Rare {
    parks: HolderCounter,
    handoffs: HolderCounter,
    window_acquisitions: HolderCounter,
    window_run_outs: HolderCounter,
    window_waiters_seen: HolderCounter,
    critical_milli: HolderCounter,
    /// The crowded-spin trial: the current trial window's start in microseconds (since [`now_us`]'s
    /// origin) in the low 48 bits, the window's position in the trial cycle in the 8 above, then whether
    /// the trial is void.
    trial_clock: HolderCounter,
    /// The trial's windows while crowded waiters spun ([`pack_arm`]).
    trial_spin: HolderCounter,
    /// The same while they yielded at once.
    trial_yield: HolderCounter,
    /// The solo trial ([`SoloTrial`]): its clock.
    solo_clock: HolderCounter,
    /// The solo trial ([`pack_solo`]): arm, losses and wins in the low 3 bytes, then the void and
    /// settled bits, [`SOLO_KEPT`], the short bit, the previous arm's ps in the high 4 bytes.
    solo_state: HolderCounter,
    /// The solo trial: acquisitions at the current arm's start.
    solo_started_at: HolderCounter,
    /// RMW by the holder that switches the mode (at most once per window).
    mode_switches: AtomicU64,
    /// RMW by a timed waiter that gives up.
    timeouts: AtomicU64,
    /// These fields fill lines 3 and 4 exactly: one more would make the lock 320 bytes.
    trace: OnceLock<Box<TraceMutex<TraceBuffer>>>,
}

struct TraceBuffer {
    points: Vec<TracePoint>,
    capacity: usize,
}

/// How an heir's wait ([`RawAbsLock::heir_wait`]) ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HeirWait {
    /// It holds the lock.
    Acquired,
    /// The caller's deadline passed; any request was withdrawn.
    TimedOut,
    /// A yielder's budget ran out; any request was withdrawn.
    OutOfYields,
}

/// What one waiter did in the slow path, added to the counters once it holds the lock.
#[derive(Default)]
struct WaitTally {
    spins: u64,
    yields: u64,
    parks: u64,
    run_outs: u64,
    handoff: bool,
}

impl<P: AbsProfile> RawAbsLock<P> {
    loom_const_fn! {
        /// A free lock in spin mode; k comes from `P`'s config on first use.
        pub fn new() -> Self {
            RawAbsLock {
                hot: Hot { state: AtomicU32::new(0), policy: AtomicU32::new(0), queue: ParkQueue::new() },
                busy: Busy {
                    waiters: AtomicU32::new(0),
                    crowded: AtomicBool::new(false),
                    quiet: AtomicBool::new(false),
                    contended_window: AtomicBool::new(false),
                    acquisitions: HolderCounter::new(),
                    waiters_seen: HolderCounter::new(),
                    fair_at: HolderCounter::new(),
                    contended: HolderCounter::new(),
                    spins: HolderCounter::new(),
                    yields: HolderCounter::new(),
                    run_outs: HolderCounter::new(),
                },
                rare: Rare {
                    parks: HolderCounter::new(),
                    handoffs: HolderCounter::new(),
                    window_acquisitions: HolderCounter::new(),
                    window_run_outs: HolderCounter::new(),
                    window_waiters_seen: HolderCounter::new(),
                    critical_milli: HolderCounter::new(),
                    trial_clock: HolderCounter::new(),
                    trial_spin: HolderCounter::new(),
                    trial_yield: HolderCounter::new(),
                    solo_clock: HolderCounter::new(),
                    solo_state: HolderCounter::new(),
                    solo_started_at: HolderCounter::new(),
                    mode_switches: AtomicU64::new(0),
                    timeouts: AtomicU64::new(0),
                    trace: OnceLock::new(),
                },
                _profile: PhantomData,
            }
        }
    }

    /// Acquires the lock (the body of `lock_api::RawMutex::lock`).
    #[inline]
    pub(crate) fn raw_lock(&self) {
        if self.acquire_fast() {
            self.note_acquisition();
        } else {
            self.lock_slow(None);
        }
    }

    /// Acquires the lock unless `deadline` passes first while parked; true if acquired.
    #[cfg(not(abslock_loom))]
    pub(crate) fn raw_lock_until(&self, deadline: Deadline) -> bool {
        if self.acquire_fast() {
            self.note_acquisition();
            true
        } else {
            self.lock_slow(Some(deadline))
        }
    }

    /// Acquires the lock unless a (modelled) deadline passes while parked; true if acquired.
    #[cfg(abslock_loom)]
    pub(crate) fn raw_lock_timed(&self) -> bool {
        if self.acquire_fast() {
            self.note_acquisition();
            true
        } else {
            self.lock_slow(Some(Deadline))
        }
    }

    /// Takes the lock if it is free; never fails on a free, idle lock.
    #[inline]
    pub(crate) fn raw_try_lock(&self) -> bool {
        let mut state = self.hot.state.load(Ordering::Relaxed);
        loop {
            if state & LOCKED != 0 {
                return false;
            }
            match self.hot.state.compare_exchange_weak(
                state,
                state | LOCKED,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    self.note_acquisition();
                    return true;
                }
                Err(seen) => state = seen,
            }
        }
    }

    /// Releases the lock: one CAS from exactly `LOCKED` to 0; if the word holds more, a second CAS from the
    /// word the first returned, clearing `LOCKED` and keeping the rest; if threads
    /// are parked and no waiter is awake, the release happens inside the queue's wake-up of the oldest
    /// sleeper instead (under the solo regime, a CAS that wakes nobody). If an heir asked (`HEIR`), it
    /// hands the lock to it (`GIVEN`, `LOCKED` kept) instead, and does not check the bound; otherwise,
    /// once per starvation bound, it wakes the oldest sleeper as the heir (or, with
    /// [`AbsProfile::DIRECT_HANDOFF`], hands it the lock).
    ///
    /// The word is never touched after the release: a thread that takes the lock next may free the
    /// memory it lives in as soon as it is released (parking_lot's `RawMutex` allows the same).
    ///
    /// # Safety
    /// The caller holds the lock.
    #[inline]
    pub(crate) unsafe fn raw_unlock(&self) {
        // Quiet: this thread took the lock in the quiet regime (the hint, a thread-local) and the regime
        // still runs (the holder-only flag on the busy line, which the acquisition wrote to): nobody else
        // changes a held quiet word, so with no waiter registered a plain store releases it. A waiter
        // registered ends the regime here, so the release below wakes it (one that registers after the
        // load sleeps with a re-check). Without the hint nothing of the lock is read before the CAS
        // below; a quiet word reaching it is released by `unlock_from`.
        if quiet_hint_take(self.key()) && self.busy.quiet.load(Ordering::Relaxed) {
            if self.busy.waiters.load(Ordering::Relaxed) == 0 {
                debug_assert_eq!(self.hot.state.load(Ordering::Relaxed), LOCKED | QUIET);
                #[cfg(not(abslock_loom))]
                self.hot.state.store(QUIET, Ordering::Release);
                // loom 0.7 lets a plain store fall between the read and the write of another thread's
                // RMW (a newcomer's `lock bts` on the held word), which C11 and the hardware forbid
                // (tokio-rs/loom#254), so the models release with a swap writing the same word.
                #[cfg(abslock_loom)]
                self.hot.state.swap(QUIET, Ordering::Release);
                return;
            }
            self.leave_quiet();
        }
        // Nobody else's bit in the word: one CAS from exactly `LOCKED`, with nothing before it. Reading
        // the word first cost 3.5-5.6 ns on the round-11 Intel VM, where a load between two RMWs on one
        // line waits for the first (`examples/release_instructions.rs`: `lock bts`, load, CAS 1.13-1.21x
        // parking_lot's lock and unlock; `lock bts`, CAS 0.83-0.97x), and the uncontended lock and unlock
        // took 1.18x parking_lot's, whose release is the same CAS.
        match self.hot.state.compare_exchange(LOCKED, 0, Ordering::Release, Ordering::Relaxed) {
            Ok(_) => {}
            // SAFETY: the caller holds the lock (this function's contract), which is `unlock_from`'s.
            Err(seen) => unsafe { self.unlock_from(seen) },
        }
    }

    /// The rest of [`raw_unlock`](Self::raw_unlock), from a word that held more than `LOCKED`. The CAS
    /// below expects the word the failed CAS returned, so with sleepers present the release is one more
    /// RMW (it retries only if a waiter changed the word in between).
    ///
    /// # Safety
    /// The caller holds the lock.
    #[inline]
    unsafe fn unlock_from(&self, mut state: u32) {
        // A quiet word without this thread's hint (a guard unlocked on another thread, or the hint
        // taken by a nested quiet lock): end the regime if anyone waits, so its sleepers are woken.
        if state & QUIET != 0 && self.busy.waiters.load(Ordering::Relaxed) >= WAITER {
            self.leave_quiet();
            state = self.hot.state.load(Ordering::Relaxed);
        }
        // One test for both rare cases (a separate test for `HEIR` measured 1.08x parking_lot's
        // uncontended lock and unlock against 1.02x in round 10, when this test ran on every release).
        if state & (PARKED | HEIR) != 0 {
            if state & HEIR != 0 {
                self.release_to_heir();
                return;
            }
            if self.fairness_due() {
                if P::DIRECT_HANDOFF {
                    self.hand_off();
                } else {
                    self.wake_heir();
                }
                return;
            }
        }
        loop {
            // Solo (`SOLO` in the word, or fixed by the profile): sleepers wake by themselves (or by the
            // starvation bound above), never here.
            if P::SOLO_RECHECK_US == 0 && state & (PARKED | AWAKE | SOLO) == PARKED {
                self.release_and_wake();
                return;
            }
            match self.hot.state.compare_exchange_weak(
                state,
                state & !LOCKED,
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                // An heir may have asked in between: then it must be handed the lock, not freed.
                Err(seen) if seen & HEIR != 0 => {
                    self.release_to_heir();
                    return;
                }
                Err(seen) => state = seen,
            }
        }
    }

    /// Releases the lock handing it to the oldest parked thread, if any (`RawMutexFair::unlock_fair`).
    ///
    /// # Safety
    /// The caller holds the lock.
    pub(crate) unsafe fn raw_unlock_fair(&self) {
        if self.busy.quiet.load(Ordering::Relaxed) {
            // Quiet sleepers set no `PARKED`, so the CAS below would free the lock over them: hand over
            // through the queue instead (it frees the lock if the queue is empty).
            self.clear_quiet();
            self.hand_off();
            return;
        }
        if !self.cas_release(LOCKED, 0) {
            self.hand_off();
        }
    }

    /// Whether the lock is held right now (a momentary snapshot).
    #[inline]
    pub(crate) fn raw_is_locked(&self) -> bool {
        self.hot.state.load(Ordering::Relaxed) & LOCKED != 0
    }

    /// Whether a thread is parked on the lock (a momentary snapshot; `RawMutexFair::bump` asks it).
    #[cfg(not(abslock_loom))]
    #[inline]
    pub(crate) fn has_parked(&self) -> bool {
        self.hot.state.load(Ordering::Relaxed) & PARKED != 0
    }

    /// Threads asleep on the lock right now (a snapshot): each is in the lock's queue, and an unlock
    /// wakes one only when no other waiter is spinning or yielding (under the solo regime, never: a
    /// sleeper comes back by a hand-off or its own re-check; see [`set_solo`](Self::set_solo)).
    pub fn sleepers(&self) -> u32 {
        let w = self.busy.waiters.load(Ordering::Relaxed);
        (w / WAITER).saturating_sub(w & ACTIVE_MASK)
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
        let mut current = self.hot.policy.load(Ordering::Relaxed);
        loop {
            let (old_mode, k) = decode_policy(current, cfg);
            if old_mode == mode {
                return;
            }
            match self.hot.policy.compare_exchange(
                current,
                encode_policy(mode, k) | (current & (POLICY_CROWDED_YIELD | POLICY_SOLO)),
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(seen) => current = seen,
            }
        }
        self.rare.mode_switches.fetch_add(1, Ordering::Relaxed);
    }

    /// Switches the solo regime on or off (ours). Under it a waiter parks at once, no release wakes a
    /// sleeper, and a sleeper comes back by a hand-off (the starvation bound, `unlock_fair`, `bump`) or
    /// by its own re-check, every [`solo_recheck_us`](AbsConfig::solo_recheck_us) (1000 us if that is 0)
    /// times the threads waiting. Switching it on wakes every sleeper once, so that each parks
    /// again with a re-check. If the config runs the solo trial (`solo_recheck_us` not 0, as the
    /// calibrated config does), the trial sets the regime again at its next arm or verdict, and turns it
    /// off at any window with more than 16 waiters per acquisition (or more than 4, unless the last
    /// trial's solo arms were all short enough for such a crowd, [`SOLO_CROWDED_MILLI`](crate::SOLO_CROWDED_MILLI);
    /// a lock that has run no trial counts as not short), and sets it aside at any window
    /// between trials with fewer than 0.5 (until a busier one), so a lasting choice needs a config
    /// with `solo_recheck_us: 0`. A profile with [`AbsProfile::SOLO_RECHECK_US`] runs the regime whatever
    /// this says. While the regime runs, every release pays two RMWs, sleepers or not (its bit in the
    /// lock word fails the release's CAS from exactly `LOCKED`): an uncontended lock and unlock took
    /// 1.51-1.55x parking_lot's before quiet windows set the regime aside (round 12), which a lock
    /// without the trial never does.
    ///
    /// Takes the lock to switch (and counts as one acquisition): only a holder changes the regime, so a
    /// release never decides on a regime that changed under it (a release that skipped the wake-up while
    /// another thread switched the regime off could leave a thread asleep with no re-check). So it must
    /// not be called while holding this lock: like a second `lock`, it would wait for itself. With no
    /// starvation bound (`starve_after_us` `u32::MAX`) a sleeper under the regime comes back only by its
    /// re-check, which against a holder that takes the lock straight back rarely finds it free: nothing
    /// then bounds its wait but the regime's end (the trial's next arm or verdict, or this switch).
    pub fn set_solo(&self, on: bool) {
        self.raw_lock();
        self.switch_solo(on);
        // SAFETY: acquired above.
        unsafe { self.raw_unlock() };
    }

    /// Holder-only: sets the policy word's solo bit to `on`, and wakes every sleeper if that switched
    /// the regime on.
    fn switch_solo(&self, on: bool) {
        let mut current = self.hot.policy.load(Ordering::Relaxed);
        loop {
            if (current & POLICY_SOLO != 0) == on {
                return;
            }
            // Re-encoded, so an unset word keeps the config's initial k that it stands for.
            let (mode, k) = decode_policy(current, P::config());
            let next =
                encode_policy(mode, k) | (current & POLICY_CROWDED_YIELD) | if on { POLICY_SOLO } else { 0 };
            match self.hot.policy.compare_exchange(current, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => break,
                Err(seen) => current = seen,
            }
        }
        self.mirror_solo(on);
        if on {
            self.wake_all_to_recheck();
        }
    }

    /// Holder-only, after the policy word's solo bit changed to `on`: copies it into the lock word's
    /// `SOLO`, which this holder's own release reads next (one RMW per switch of the regime).
    fn mirror_solo(&self, on: bool) {
        debug_assert!(self.raw_is_locked(), "only the holder switches the regime");
        if on && self.busy.quiet.load(Ordering::Relaxed) {
            self.leave_quiet();
        }
        if on {
            self.hot.state.fetch_or(SOLO, Ordering::Relaxed);
        } else {
            self.hot.state.fetch_and(!SOLO, Ordering::Relaxed);
        }
    }

    /// Whether the solo regime runs right now (a snapshot): forced by the profile
    /// ([`AbsProfile::SOLO_RECHECK_US`]), chosen by the solo trial, or set with
    /// [`set_solo`](Self::set_solo).
    pub fn solo(&self) -> bool {
        P::SOLO_RECHECK_US > 0 || self.solo_now()
    }

    /// The policy word's solo bit (one load of the lock word's line).
    #[inline]
    fn solo_now(&self) -> bool {
        self.hot.policy.load(Ordering::Relaxed) & POLICY_SOLO != 0
    }

    /// A solo sleeper's re-check period, in microseconds (a quiet sleeper's too: it parks with the same
    /// period): the profile's or config's period ([`solo_recheck_us`]) times the threads waiting, at
    /// least once. The sleepers together then
    /// re-check about once per period, however many there are: each re-check that finds the lock held
    /// costs a wake-up and a park on a core the holder may need, and parks the thread again at the tail
    /// of the queue, behind the sleepers that the starvation bound would have handed the lock first.
    /// With the calibrated period (twice the bound) a sleeper's re-check comes after its turn (the
    /// sleepers ahead of it times the bound). Round 15's period, times the threads waiting per core, was
    /// half of that on 2 cores, so a sleeper often re-checked just before its turn and went back to the
    /// tail (`docs/abs.md`, round 16).
    fn solo_recheck_period(&self, cfg: &AbsConfig) -> u32 {
        let waiting = self.busy.waiters.load(Ordering::Relaxed) / WAITER;
        solo_recheck_us::<P>(cfg).saturating_mul(waiting.max(1))
    }

    /// After the solo bit was set: wakes every sleeper, so none sleeps without a re-check while no
    /// release wakes anyone. A thread validating its park after this sees the bit (it was set before
    /// the queue lock taken here), one that validated before is queued and woken here.
    #[cold]
    fn wake_all_to_recheck(&self) {
        self.hot.queue.unpark_all(self.key(), TOKEN_RECHECK);
    }

    /// The counters since creation, with the current k and mode.
    pub fn stats(&self) -> AbsStats {
        let raw = self.hot.policy.load(Ordering::Relaxed);
        let (mode, k) = decode_policy(raw, P::config());
        let (b, r) = (&self.busy, &self.rare);
        AbsStats {
            crowded_yield: raw & POLICY_CROWDED_YIELD != 0,
            solo: P::SOLO_RECHECK_US > 0 || raw & POLICY_SOLO != 0,
            quiet: b.quiet.load(Ordering::Relaxed),
            acquisitions: b.acquisitions.get(),
            contended: b.contended.get(),
            spins: b.spins.get(),
            yields: b.yields.get(),
            parks: r.parks.get(),
            run_outs: b.run_outs.get(),
            handoffs: r.handoffs.get(),
            timeouts: r.timeouts.load(Ordering::Relaxed),
            waiters_seen: b.waiters_seen.get(),
            mode_switches: r.mode_switches.load(Ordering::Relaxed),
            k,
            mode,
        }
    }

    /// Starts recording one [`TracePoint`] per adaptation window, keeping the first `capacity` (the
    /// buffer is allocated here, not in the critical section). Later calls do nothing.
    pub fn enable_trace(&self, capacity: usize) {
        self.rare.trace.get_or_init(|| {
            Box::new(TraceMutex::new(TraceBuffer { points: Vec::with_capacity(capacity), capacity }))
        });
    }

    /// The recorded decisions, oldest first (empty unless [`enable_trace`](Self::enable_trace) was called).
    pub fn trace(&self) -> Vec<TracePoint> {
        match self.rare.trace.get() {
            Some(buffer) => buffer.lock().map(|b| b.points.clone()).unwrap_or_default(),
            None => Vec::new(),
        }
    }

    /// The parking key: the lock word's address, which nothing else parks on.
    #[inline]
    fn key(&self) -> usize {
        core::ptr::from_ref(&self.hot.state).addr()
    }

    /// The fast path: one `lock bts` setting `LOCKED` whatever else the word holds (`PARKED`, `AWAKE`),
    /// so a holder pays the same single RMW with sleepers as without. On a held lock the bit was already
    /// set and nothing changes.
    #[inline]
    fn acquire_fast(&self) -> bool {
        self.hot.state.fetch_or(LOCKED, Ordering::Acquire) & LOCKED == 0
    }

    #[inline]
    fn cas_release(&self, from: u32, to: u32) -> bool {
        self.hot.state.compare_exchange(from, to, Ordering::Release, Ordering::Relaxed).is_ok()
    }

    /// Holder-only bookkeeping after every acquisition: plain stores on the counter lines, a read of the
    /// waiter register (the contention measure), and a rare window check.
    #[inline]
    fn note_acquisition(&self) {
        let b = &self.busy;
        let n = b.acquisitions.get().wrapping_add(1);
        b.acquisitions.set(n);
        let waiting = b.waiters.load(Ordering::Relaxed) / WAITER;
        if waiting != 0 {
            b.waiters_seen.add(u64::from(waiting));
            // The flag shares the line just read; once set, later acquisitions of the window only read it.
            if waiting > 1 && !b.crowded.load(Ordering::Relaxed) {
                self.mark_if_crowded(waiting);
            }
        }
        if b.quiet.load(Ordering::Relaxed) {
            if waiting == 0 {
                quiet_hint_set(self.key());
            } else {
                self.leave_quiet();
            }
        }
        if n.is_multiple_of(P::CHECK_INTERVAL) {
            self.end_window(n);
        }
    }

    /// Holder-only: marks the window crowded if the holder and the `waiting` threads it saw outnumber
    /// the cores (on 1 core the caller's `waiting > 1` leaves 1 waiter to the next acquisition that
    /// sees 2). Out of line. On 2 cores it runs at most once per window (2 waiters always mark); with
    /// more cores it also runs, without marking, at each acquisition that sees 2 to cores - 1 waiters:
    /// one call and one atomic load of the cached core count.
    #[cold]
    fn mark_if_crowded(&self, waiting: u32) {
        debug_assert!(self.raw_is_locked(), "only the holder marks the window");
        if waiting >= cores() {
            self.busy.crowded.store(true, Ordering::Relaxed);
        }
    }

    /// Holder-only: ends the quiet regime (a waiter showed up): [`clear_quiet`](Self::clear_quiet), then
    /// wakes every thread sleeping with a re-check, so each waits in the usual way. A thread validating
    /// its sleep after the RMW sees the word without `QUIET` and does not sleep; one that validated before
    /// is queued and woken here (both under the queue lock). The wake-up does not depend on reading the
    /// waiter register first: on a weakly ordered machine that read could miss a sleeper (it costs one
    /// bucket lock per end of the regime).
    #[cold]
    fn leave_quiet(&self) {
        self.clear_quiet();
        self.wake_all_to_recheck();
    }

    /// Holder-only: clears `QUIET` (one RMW) and the busy line's flag, and drops this thread's hint.
    #[cold]
    fn clear_quiet(&self) {
        debug_assert_eq!(self.hot.state.load(Ordering::Relaxed), LOCKED | QUIET, "a held quiet word");
        self.busy.quiet.store(false, Ordering::Relaxed);
        // An RMW, not a plain store: it is off the fast path, and a newcomer's `lock bts` on the held
        // word is an RMW too, so no ordering argument is needed beyond RMW atomicity.
        self.hot.state.fetch_and(!QUIET, Ordering::Relaxed);
        quiet_hint_take(self.key());
    }

    /// Whether a sleeper could use the lock: one is parked (`PARKED`), or a quiet sleeper may be (the
    /// regime runs and a thread is registered). `RawMutexFair::bump` asks it.
    #[cfg(not(abslock_loom))]
    #[inline]
    pub(crate) fn bump_due(&self) -> bool {
        self.has_parked()
            || (self.busy.quiet.load(Ordering::Relaxed)
                && self.busy.waiters.load(Ordering::Relaxed) >= WAITER)
    }

    /// Holder-only, at a window's end: starts the quiet regime if the window saw no waiter and no
    /// contended acquisition, no thread waits now, and the word holds nothing but `LOCKED` (one CAS,
    /// which a waiter setting a bit meanwhile makes fail).
    fn enter_quiet_if_idle(&self, seen: u64, solo: bool) {
        let b = &self.busy;
        let contended = b.contended_window.load(Ordering::Relaxed);
        if contended {
            b.contended_window.store(false, Ordering::Relaxed);
        }
        if !P::QUIET
            || solo
            || contended
            || seen != 0
            || P::SOLO_RECHECK_US > 0
            || b.quiet.load(Ordering::Relaxed)
            || b.waiters.load(Ordering::Relaxed) != 0
        {
            return;
        }
        if self
            .hot
            .state
            .compare_exchange(LOCKED, LOCKED | QUIET, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            b.quiet.store(true, Ordering::Relaxed);
            quiet_hint_set(self.key());
        }
    }

    fn policy_now(&self, cfg: &AbsConfig) -> (Mode, u32) {
        decode_policy(self.hot.policy.load(Ordering::Relaxed), cfg)
    }

    /// The slow path: spin, yield, park, until the lock is ours or `deadline` passes while parked.
    #[cold]
    fn lock_slow(&self, deadline: Option<Deadline>) -> bool {
        // Free with sleepers (`PARKED`): take it as the fast path would, without registering as a
        // waiter; while the restriction keeps threads asleep this is the common case.
        let state = self.hot.state.load(Ordering::Relaxed);
        if state & LOCKED == 0
            && self
                .hot
                .state
                .compare_exchange(state, state | LOCKED, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            self.note_acquisition();
            return true;
        }
        let cfg = P::config();
        let limits = cfg.limits();
        let prior = self.busy.waiters.fetch_add(WAITER + ACTIVE, Ordering::Relaxed);
        let mut active_before = prior & ACTIVE_MASK;
        let mut tally = WaitTally::default();
        // Whether this thread set `AWAKE` (or was woken with it set for it) and must clear it.
        let mut awake = false;
        // A timed lock gave up while spinning or yielding (still counted active), not in the park.
        let mut spun_out = false;
        // The per-waiter starvation bound (0 keeps its meaning of "every release over sleepers hands
        // off", which is about sleepers, not yielders).
        let starve_after = limits.starve_after.filter(|&b| b > 0).map(u64::from);
        // When this thread first yielded, us since `now_us`'s origin; 0 until then (spinning alone is
        // too short to need the clock, and a thread that parks before it ever yields starts it after
        // waking). Kept across parks, so time asleep counts: a sleeper woken the ordinary way that then
        // yields is past the bound at once if it slept that long (Go's rule counts the whole wait too).
        let mut wait_start = 0_u64;
        // The heir's wait of a yielder past the bound ran out of yields: this round parks at once.
        let mut park_now = false;
        let acquired = 'wait: loop {
            let raw = self.hot.policy.load(Ordering::Relaxed);
            let (mode, k) = decode_policy(raw, cfg);
            // `spins_k`: this round spins k, so its run-outs say something about k.
            let RoundBudget { spins: mut spin_budget, yields: mut yield_budget, mut spins_k } = round_budget(
                cfg,
                &limits,
                RoundPolicy {
                    mode,
                    k,
                    solo: P::SOLO_RECHECK_US > 0 || raw & POLICY_SOLO != 0,
                    crowded_yield: raw & POLICY_CROWDED_YIELD != 0,
                },
                active_before,
            );
            if std::mem::take(&mut park_now) {
                (spin_budget, yield_budget, spins_k) = (0, 0, false);
            }
            let mut state = self.hot.state.load(Ordering::Relaxed);
            let (mut spun, mut burst, mut yielded) = (0_u32, 1_u32, 0_u32);
            // Out of spins and yields under the quiet regime: sleep with a re-check (no release wakes).
            let mut quiet = false;
            // This waiter has yielded for longer than the starvation bound: it asks to be handed the lock.
            let mut starving = false;
            // RocketMQ's "r": this round's k spins ran out without the lock.
            let count_run_out = |tally: &mut WaitTally| {
                if spins_k && spin_budget > 0 {
                    tally.run_outs += 1;
                }
            };
            loop {
                let mine = if awake { AWAKE } else { 0 };
                if state & LOCKED == 0 {
                    match self.hot.state.compare_exchange_weak(
                        state,
                        (state | LOCKED) & !mine,
                        Ordering::Acquire,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => break 'wait true,
                        Err(seen) => state = seen,
                    }
                    continue;
                }
                if !awake && state & (PARKED | AWAKE) == PARKED && (spin_budget > 0 || yield_budget > 0) {
                    // Sleepers exist and nobody awake vouches for taking the lock: we will.
                    match self.hot.state.compare_exchange_weak(
                        state,
                        state | AWAKE,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => {
                            awake = true;
                            state |= AWAKE;
                        }
                        Err(seen) => state = seen,
                    }
                    continue;
                }
                if spun < spin_budget {
                    let n = burst.min(spin_budget - spun);
                    for _ in 0..n {
                        spin_loop();
                    }
                    spun += n;
                    tally.spins += u64::from(n);
                    burst = (burst * 2).min(MAX_BURST);
                    state = self.hot.state.load(Ordering::Relaxed);
                    continue;
                }
                if deadline.is_some_and(deadline_passed) {
                    // A timed lock gives up between spin rounds too: with RocketMQ's bounds a waiter
                    // never parks (unbounded yields), so the park's own deadline would never be reached.
                    spun_out = true;
                    break 'wait false;
                }
                if yielded < yield_budget {
                    // The spin budget ran out: yield, then spin it again (RocketMQ's back-off). The bursts
                    // keep their length, as crossbeam's `Backoff` and parking_lot's `SpinWait` never
                    // restart (with the cap of 64 instead of 8, a waiter reads the word 1-2 times per
                    // yield instead of 5-6).
                    count_run_out(&mut tally);
                    if starve_after.is_some() && wait_start == 0 {
                        wait_start = now_us().max(1);
                    }
                    yield_now();
                    yielded += 1;
                    tally.yields += 1;
                    spun = 0;
                    if let Some(bound) = starve_after
                        && (yielded >= P::STARVED_AFTER_YIELDS
                            || now_us().saturating_sub(wait_start) >= bound)
                    {
                        starving = true;
                        break;
                    }
                    state = self.hot.state.load(Ordering::Relaxed);
                    continue;
                }
                if state & QUIET != 0 {
                    // Nobody may change a held quiet word, so no `PARKED`: sleep with a re-check, which
                    // the holder that sees this thread registered ends the regime and cuts short.
                    debug_assert!(!awake, "`AWAKE` is never set while the regime runs");
                    quiet = true;
                    count_run_out(&mut tally);
                    break;
                }
                // Out of spins and yields: announce a sleeper and park.
                // Before sleeping, give up `AWAKE` in the same CAS, so an unlock after it wakes someone.
                let next = (state | PARKED) & !mine;
                if next != state {
                    if state & LOCKED == 0 {
                        continue;
                    }
                    if let Err(seen) = self.hot.state.compare_exchange_weak(
                        state,
                        next,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    ) {
                        state = seen;
                        continue;
                    }
                }
                awake = false;
                count_run_out(&mut tally);
                break;
            }
            if starving {
                // Past the bound while yielding: become the heir without sleeping, as a sleeper woken by
                // the bound does. `AWAKE` is given up first (a release then wakes a sleeper), since the
                // heir's acquisition does not clear it.
                if awake {
                    self.give_up_awake();
                    awake = false;
                }
                match self.heir_wait(cfg, deadline, yield_budget - yielded) {
                    HeirWait::Acquired => {
                        tally.handoff = true;
                        break 'wait true;
                    }
                    HeirWait::TimedOut => {
                        spun_out = true;
                        break 'wait false;
                    }
                    // Not handed the lock within its yields: the holder keeps it long, so sleep (the
                    // next round goes straight to the park).
                    HeirWait::OutOfYields => {
                        park_now = true;
                        continue 'wait;
                    }
                }
            }
            // Solo: no release wakes this thread, so it re-checks the lock after a while by itself.
            let solo = P::SOLO_RECHECK_US > 0 || self.solo_now();
            // Runs under the queue lock: on success this thread is queued in the same critical section,
            // so `sleepers` never counts a thread that is not in the queue. A thread about to sleep
            // without a re-check must not sleep once the solo regime is on: the switch wakes every
            // sleeper under this same queue lock (`wake_all_to_recheck`) after setting the policy bit, so
            // it either sees the bit here or is queued in time to be woken.
            let validate = || {
                self.busy.waiters.fetch_sub(ACTIVE, Ordering::Relaxed);
                let s = self.hot.state.load(Ordering::Relaxed);
                let sleep = if quiet {
                    s & (LOCKED | QUIET) == LOCKED | QUIET
                } else {
                    s & (LOCKED | PARKED) == LOCKED | PARKED && (solo || !self.solo_now())
                };
                if !sleep {
                    self.busy.waiters.fetch_add(ACTIVE, Ordering::Relaxed);
                }
                sleep
            };
            let timed_out = |was_last: bool| {
                if was_last {
                    self.hot.state.fetch_and(!PARKED, Ordering::Relaxed);
                }
            };
            tally.parks += 1;
            let park_deadline = if solo || quiet {
                Some(recheck_deadline(self.solo_recheck_period(cfg), deadline))
            } else {
                deadline
            };
            let parked = self.hot.queue.park(self.key(), validate, timed_out, TOKEN_WAITING, park_deadline);
            // Gave up for good: leave passive, so no unlock counts on this thread to take the lock. A solo
            // re-check that is not the caller's own deadline is not giving up.
            let gave_up = parked == Parked::TimedOut
                && (!(solo || quiet) || deadline.is_some_and(deadline_passed_after_park));
            if parked != Parked::Invalid && !gave_up {
                self.busy.waiters.fetch_add(ACTIVE, Ordering::Relaxed);
            }
            // A thread that was woken (or checked the word again) may spin: it is not a newcomer.
            active_before = 0;
            match parked {
                Parked::Unparked(TOKEN_HANDOFF) => {
                    tally.handoff = true;
                    break true;
                }
                Parked::Unparked(TOKEN_HEIR) => {
                    tally.handoff = true;
                    if self.heir_wait(cfg, deadline, u32::MAX) == HeirWait::Acquired {
                        break true;
                    }
                    spun_out = true;
                    break false;
                }
                // The solo regime was switched on: look again, as after a re-check.
                Parked::Unparked(TOKEN_RECHECK) => {}
                // The unlock that woke us set `AWAKE` on our behalf.
                Parked::Unparked(_) => awake = true,
                Parked::Invalid => tally.parks -= 1,
                // A solo re-check: try the lock again (the yield lets a model checker run the holder).
                Parked::TimedOut if !gave_up => yield_now(),
                Parked::TimedOut => break false,
            }
        };
        if !acquired {
            if awake {
                self.give_up_awake();
            }
            let active = if spun_out { ACTIVE } else { 0 };
            self.busy.waiters.fetch_sub(WAITER + active, Ordering::Relaxed);
            self.rare.timeouts.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        self.busy.waiters.fetch_sub(WAITER + ACTIVE, Ordering::Relaxed);
        // We hold the lock: the counters are ours alone. The busy line is in this core's cache since the
        // RMW above; the rare line is touched only after a park or a hand-off to an heir.
        let b = &self.busy;
        b.contended.add(1);
        b.contended_window.store(true, Ordering::Relaxed);
        if b.quiet.load(Ordering::Relaxed) {
            // A waiter got the lock: the lock is contended, so the regime ends here.
            self.leave_quiet();
        }
        b.spins.add(tally.spins);
        b.yields.add(tally.yields);
        b.run_outs.add(tally.run_outs);
        if tally.parks != 0 {
            self.rare.parks.add(tally.parks);
        }
        if tally.handoff {
            self.rare.handoffs.add(1);
        }
        self.note_acquisition();
        true
    }

    /// Held, over sleepers, with nobody awake: wakes the oldest sleeper and releases the lock in the same
    /// step, under the queue lock, setting `AWAKE` for the woken thread (so later releases do not wake
    /// more before it runs; concurrency restriction: while a waiter is awake it takes the lock and the
    /// sleepers stay asleep, and the releaser pays no wake-up). After the queue's callback nothing here
    /// touches the lock again. If the queue turned out empty, it only releases (and clears `PARKED`).
    ///
    /// Its callers never call it under the solo regime: they see `SOLO` in the word first.
    #[cold]
    fn release_and_wake(&self) {
        debug_assert!(!self.solo_now(), "a release under the solo regime wakes nobody");
        self.hot.queue.unpark_first(self.key(), |u| {
            // An heir that asked meanwhile is handed the lock; the woken thread finds it held.
            self.release_then(if u.woken { AWAKE } else { 0 }, if u.more { 0 } else { PARKED });
            TOKEN_RETRY
        });
    }

    /// Holder-only, out of the fast path: releases by CAS as [`released`] says (to the heir if one
    /// asked), then sets `set` and clears `clear` in the same word, retrying until no other thread
    /// changed the word in between.
    fn release_then(&self, set: u32, clear: u32) {
        let mut state = self.hot.state.load(Ordering::Relaxed);
        loop {
            let next = (released(state) | set) & !clear;
            match self.hot.state.compare_exchange_weak(state, next, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return,
                Err(seen) => state = seen,
            }
        }
    }

    /// A waiter that owns `AWAKE` gives up on it (a timed waiter giving up, or a yielder past the
    /// starvation bound about to ask as an heir, whose acquisition does not clear the bit): it clears the
    /// bit, which releases would otherwise trust to take the lock. If the lock is held, its release sees `PARKED` without `AWAKE` and wakes a
    /// sleeper; if it is free with sleepers, nobody else may come, so one is woken here.
    #[cold]
    fn give_up_awake(&self) {
        let mut state = self.hot.state.fetch_and(!AWAKE, Ordering::Relaxed) & !AWAKE;
        loop {
            if state & (LOCKED | PARKED | AWAKE) != PARKED {
                return;
            }
            match self.hot.state.compare_exchange_weak(
                state,
                state | AWAKE,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(seen) => state = seen,
            }
        }
        self.wake_one();
    }

    /// Not a release: with `AWAKE` set on the woken thread's behalf, wakes the oldest parked thread to
    /// race for the free lock. If the queue turned out empty, nobody owns `AWAKE`, so it is cleared here.
    fn wake_one(&self) {
        self.hot.queue.unpark_first(self.key(), |u| {
            let mut clear = 0;
            if !u.woken {
                clear |= AWAKE;
            }
            if !u.more {
                clear |= PARKED;
            }
            if clear != 0 {
                self.hot.state.fetch_and(!clear, Ordering::Relaxed);
            }
            TOKEN_RETRY
        });
    }

    /// The starvation bound, at a release over sleepers once it is due: wakes the oldest sleeper as the
    /// heir and releases the lock in the same step, under the queue lock (`AWAKE` is left as it is: the
    /// heir does not own it). The lock keeps running while the heir is scheduled; the heir then takes it
    /// if it is free or asks to be handed it at the next release ([`heir_wait`](Self::heir_wait)). A
    /// direct hand-off here instead keeps the lock held by a thread that is not running yet: at a 100 ns
    /// critical section over 16 threads, 1.10x parking_lot's time with it against 1.05x with the heir
    /// (bound 1000 us; 0.96x with no bound; `examples/handoff_cost.rs`, `docs/abs.md`, round 10). If the
    /// queue turned out empty, it only releases.
    #[cold]
    fn wake_heir(&self) {
        self.hot.queue.unpark_first(self.key(), |u| {
            self.release_then(0, if u.more { 0 } else { PARKED });
            if u.woken { TOKEN_HEIR } else { TOKEN_RETRY }
        });
    }

    /// A release that saw `HEIR`: hands the lock to the heir (one CAS keeping `LOCKED` and replacing
    /// `HEIR` by `GIVEN`), or, if the heir withdrew its request meanwhile, releases as `raw_unlock` does.
    /// The per-lock bound is not checked on this path: a release that serves an heir serves a starving
    /// waiter already, and a due bound waits for the next check (one acquisition in
    /// [`FAIR_CHECK_EVERY`]) whose release finds no heir asking.
    #[cold]
    #[inline(never)]
    fn release_to_heir(&self) {
        let mut state = self.hot.state.load(Ordering::Relaxed);
        loop {
            if state & HEIR == 0 && P::SOLO_RECHECK_US == 0 && state & (PARKED | AWAKE | SOLO) == PARKED {
                self.release_and_wake();
                return;
            }
            match self.hot.state.compare_exchange_weak(
                state,
                released(state),
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(seen) => state = seen,
            }
        }
    }

    /// The heir: a sleeper the starvation bound woke, or a waiter that yielded past the bound. Takes the
    /// lock if it is free; otherwise asks for it (`HEIR`, one heir at a time; a second waits for the
    /// first to be served) and waits, spinning about `k_max` pauses after each successful request (the
    /// last burst may pass it by up to 63) and then yielding between reads, until a release hands it
    /// over (`GIVEN`). It waits at most for the critical sections of the holders before it (one, unless
    /// another heir asked first). A woken heir (`yields_left` `u32::MAX`) never sleeps again; a yielder
    /// yields at most `yields_left` more times, the rest of its budget, so that a holder that keeps the
    /// lock for long does not keep it awake: then it withdraws its request and returns
    /// [`HeirWait::OutOfYields`], and sleeps as it would have. Returns [`HeirWait::TimedOut`] if
    /// `deadline` passes first (an unanswered request is withdrawn).
    #[cold]
    fn heir_wait(&self, cfg: &AbsConfig, deadline: Option<Deadline>, mut yields_left: u32) -> HeirWait {
        let mut state = self.hot.state.load(Ordering::Relaxed);
        let (mut asked, mut spun, mut burst) = (false, 0_u32, 1_u32);
        loop {
            if asked && state & GIVEN != 0 {
                // Acquire: pairs with the release that handed the lock over.
                self.hot.state.fetch_and(!GIVEN, Ordering::Acquire);
                return HeirWait::Acquired;
            }
            if state & LOCKED == 0 {
                // Free, so neither `HEIR` nor `GIVEN` is set.
                match self.hot.state.compare_exchange_weak(
                    state,
                    state | LOCKED,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return HeirWait::Acquired,
                    Err(seen) => state = seen,
                }
                continue;
            }
            // Under the quiet regime nobody may change a held word: wait for it to be free (this thread is
            // registered, so the next acquisition ends the regime).
            if !asked && state & (HEIR | GIVEN | QUIET) == 0 {
                match self.hot.state.compare_exchange_weak(
                    state,
                    state | HEIR,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        asked = true;
                        state |= HEIR;
                        // The next release hands the lock over, running or not: spin for it afresh
                        // rather than sit in `sched_yield` when it arrives.
                        (spun, burst) = (0, 1);
                    }
                    Err(seen) => state = seen,
                }
                continue;
            }
            let give_up = if deadline.is_some_and(deadline_passed) {
                Some(HeirWait::TimedOut)
            } else if spun >= cfg.k_max && yields_left == 0 {
                Some(HeirWait::OutOfYields)
            } else {
                None
            };
            if let Some(why) = give_up {
                if !asked {
                    return why;
                }
                // Withdraw the request, unless the lock was handed over meanwhile (the CAS then fails).
                match self.hot.state.compare_exchange(
                    state,
                    state & !HEIR,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return why,
                    Err(seen) => state = seen,
                }
                continue;
            }
            if spun < cfg.k_max {
                for _ in 0..burst {
                    spin_loop();
                }
                spun = spun.saturating_add(burst);
                burst = (burst * 2).min(MAX_BURST);
            } else {
                if yields_left != u32::MAX {
                    yields_left -= 1;
                }
                yield_now();
            }
            state = self.hot.state.load(Ordering::Relaxed);
        }
    }

    /// Still held: passes the lock to the oldest parked thread without freeing it, so no newcomer can
    /// barge in between; if a running heir asked first (`HEIR`), passes it to the heir instead (`GIVEN`)
    /// and the woken thread looks again (`TOKEN_RECHECK`). If the queue turned out empty, frees the lock
    /// (or gives it to the heir) instead, under the queue lock, so no thread can park in between.
    fn hand_off(&self) {
        self.hot.queue.unpark_first(self.key(), |u| {
            // Waiters may set `AWAKE` or `PARKED` concurrently, so the word is updated by CAS; an
            // awake waiter's `AWAKE` is kept (it will clear it).
            let mut state = self.hot.state.load(Ordering::Relaxed);
            loop {
                // `SOLO` is the holder's to change, and this holder does not.
                let awake = state & (AWAKE | SOLO);
                let parked = if u.more { PARKED } else { 0 };
                let next = if state & HEIR != 0 {
                    // A running heir asked first: it is handed the lock, and the woken thread looks again.
                    LOCKED | GIVEN | parked | awake
                } else {
                    match (u.woken, u.more) {
                        (true, true) => LOCKED | PARKED | awake,
                        (true, false) => LOCKED | awake,
                        (false, _) => awake,
                    }
                };
                match self.hot.state.compare_exchange_weak(state, next, Ordering::Release, Ordering::Relaxed)
                {
                    Ok(_) if next & GIVEN != 0 => return TOKEN_RECHECK,
                    Ok(_) => break,
                    Err(seen) => state = seen,
                }
            }
            if u.woken { TOKEN_HANDOFF } else { TOKEN_RETRY }
        });
    }

    /// Holder-only: whether this release over sleepers is due to hand the lock to the oldest one (the
    /// starvation bound). The first such release reads the bound from the config and starts the period;
    /// later ones load `fair_at` and the acquisition count (both holder-only counters, in this core's
    /// cache) and test the count, and on one in [`FAIR_CHECK_EVERY`] read the config and the clock.
    /// Under oversubscription sleepers are present at almost every release of a ~7 ns acquisition, so
    /// the common case must be two plain loads and a test: a config lookup on each release showed in the
    /// 0 ns cells past the cores (`docs/abs.md`, round 7). A bound of 0 or none is remembered from the
    /// first read (one load).
    #[inline]
    fn fairness_due(&self) -> bool {
        let b = &self.busy;
        let due_at = b.fair_at.get();
        match due_at {
            FAIR_ALWAYS => return true,
            FAIR_NEVER => return false,
            0 => {}
            _ if !b.acquisitions.get().is_multiple_of(FAIR_CHECK_EVERY) => return false,
            _ => {}
        }
        self.fairness_check(due_at)
    }

    /// Holder-only, out of line: reads the bound and the clock; see [`fairness_due`](Self::fairness_due).
    #[cold]
    fn fairness_check(&self, due_at: u64) -> bool {
        let b = &self.busy;
        let bound = match P::config().limits().starve_after {
            None => {
                b.fair_at.set(FAIR_NEVER);
                return false;
            }
            Some(0) => {
                b.fair_at.set(FAIR_ALWAYS);
                return true;
            }
            Some(bound) => bound,
        };
        let now = now_us();
        if due_at != 0 && now < due_at {
            return false;
        }
        b.fair_at.set(now.saturating_add(u64::from(bound)).clamp(1, FAIR_LAST));
        due_at != 0
    }

    /// Holder-only: closes the window if it is long enough and applies the policy's decision.
    #[cold]
    fn end_window(&self, n: u64) {
        debug_assert!(self.raw_is_locked(), "only the holder ends a window");
        let cfg = P::config();
        let (b, r) = (&self.busy, &self.rare);
        let acquisitions = n.wrapping_sub(r.window_acquisitions.get());
        if acquisitions < u64::from(cfg.window) {
            return;
        }
        let run_outs = b.run_outs.get();
        let exhausted = run_outs.wrapping_sub(r.window_run_outs.get());
        let seen = b.waiters_seen.get().wrapping_sub(r.window_waiters_seen.get());
        let contention_milli =
            u64::try_from(u128::from(seen) * 1000 / u128::from(acquisitions)).unwrap_or(u64::MAX);
        let raw = self.hot.policy.load(Ordering::Relaxed);
        let (mode, k) = decode_policy(raw, cfg);
        let window = WindowStats {
            mode,
            k,
            acquisitions,
            exhausted,
            contention_milli,
            critical_milli: r.critical_milli.get(),
            crowded: self.busy.crowded.load(Ordering::Relaxed),
        };
        let solo_was = raw & POLICY_SOLO != 0;
        // A solo window's waiters neither spin nor yield, so it says nothing about k or the mode.
        let decision = if solo_was { Decision::Hold } else { decide(cfg, &window) };
        let next = match decision {
            Decision::Hold => None,
            Decision::RaiseK(k) | Decision::LowerK(k) | Decision::SwitchToSpin(k) => Some((Mode::Spin, k)),
            Decision::SwitchToPark { critical_milli } => {
                r.critical_milli.set(critical_milli);
                Some((Mode::Park, k))
            }
        };
        let crowded_yield = self.crowded_trial(cfg, &window, raw & POLICY_CROWDED_YIELD != 0, solo_was);
        let solo = self.solo_trial(cfg, &window, n, solo_was);
        let (mut new_mode, mut new_k) = (mode, k);
        let (next_mode, next_k) = next.unwrap_or((mode, k));
        let trial_bits =
            if crowded_yield { POLICY_CROWDED_YIELD } else { 0 } | if solo { POLICY_SOLO } else { 0 };
        let wanted = encode_policy(next_mode, next_k) | trial_bits;
        // The word the successful write replaced, to tell whether it switched the solo regime on.
        let mut replaced = raw;
        if wanted != raw {
            match self.hot.policy.compare_exchange(raw, wanted, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => {
                    (new_mode, new_k) = (next_mode, next_k);
                    if next_mode != mode {
                        self.rare.mode_switches.fetch_add(1, Ordering::Relaxed);
                    }
                }
                // `set_mode` changed the word since it was read (`set_solo` cannot: it holds the lock): its
                // mode and k stand, but the trials' bits must still follow their schedules, or their arms
                // would run unequal windows.
                Err(mut seen) => loop {
                    let trial_mask = POLICY_CROWDED_YIELD | POLICY_SOLO;
                    let with_bits = (seen & !trial_mask) | trial_bits;
                    if with_bits == seen {
                        replaced = seen;
                        break;
                    }
                    match self.hot.policy.compare_exchange(
                        seen,
                        with_bits,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => {
                            replaced = seen;
                            break;
                        }
                        Err(now) => seen = now,
                    }
                },
            }
        }
        if solo != (replaced & POLICY_SOLO != 0) {
            self.mirror_solo(solo);
            if solo {
                self.wake_all_to_recheck();
            }
        }
        self.enter_quiet_if_idle(seen, solo);
        if window.crowded {
            self.busy.crowded.store(false, Ordering::Relaxed);
        }
        r.window_acquisitions.set(n);
        r.window_run_outs.set(run_outs);
        r.window_waiters_seen.set(b.waiters_seen.get());
        if let Some(buffer) = self.rare.trace.get()
            && let Ok(mut b) = buffer.lock()
            && b.points.len() < b.capacity
        {
            b.points.push(TracePoint { acquisition: n, k: new_k, mode: new_mode, crowded_yield, solo });
        }
    }

    /// Holder-only, at the end of a window of `acquisitions`: one step of the crowded-spin trial
    /// ([`decide_crowded`]); returns whether crowded waiters yield at once in the next window. Off
    /// (always spinning) unless `crowded_trial` is set and `crowded_spins` is not 0 (both settings
    /// are then the same).
    fn crowded_trial(&self, cfg: &AbsConfig, window: &WindowStats, yielded: bool, solo: bool) -> bool {
        if !cfg.crowded_trial || cfg.crowded_spins == 0 {
            return false;
        }
        let r = &self.rare;
        let clock = r.trial_clock.get();
        let started = clock & TRIAL_CLOCK_MASK;
        let position = ((clock >> TRIAL_CLOCK_BITS) & TRIAL_POSITION_MASK) as u32;
        // The clock is read only to start the trial's first window and to time the trial's windows.
        let now = if trial_timed(position) { now_us() & TRIAL_CLOCK_MASK } else { 0 };
        let ps = u128::from(now.saturating_sub(started)) * 1_000_000 / u128::from(window.acquisitions.max(1));
        // Some crowded waiters: more waiters per acquisition, on average, than may spin k.
        let crowded_milli = u64::from(cfg.limits().max_spinners).saturating_add(1).saturating_mul(1000);
        let trial = CrowdedTrial {
            position,
            spin: unpack_arm(r.trial_spin.get()),
            yielded: unpack_arm(r.trial_yield.get()),
            void: clock & TRIAL_VOID != 0,
        };
        let (next, yield_next) = decide_crowded(
            trial,
            TrialWindow {
                yielded,
                ps: u32::try_from(ps).unwrap_or(u32::MAX),
                // Under the solo regime crowded waiters park at once whatever the setting.
                saturated: !solo && window.mode == Mode::Spin && window.contention_milli >= crowded_milli,
            },
        );
        let void = if next.void { TRIAL_VOID } else { 0 };
        r.trial_clock.set(now.max(1) | (u64::from(next.position) << TRIAL_CLOCK_BITS) | void);
        r.trial_spin.set(pack_arm(next.spin));
        r.trial_yield.set(pack_arm(next.yielded));
        yield_next
    }
}

impl<P: AbsProfile> RawAbsLock<P> {
    /// Holder-only, at the end of the window that brought the acquisition count to `n`: one step of the
    /// solo trial ([`decide_solo`]); returns whether the solo regime runs in the next window. Off (the
    /// regime stays as set, by [`set_solo`](Self::set_solo) or not at all) unless the config's
    /// `solo_recheck_us` is not 0; the clock is read only inside a trial and at contended windows.
    /// Between trials, a window with fewer than [`SOLO_START_MILLI`] waiters per acquisition switches
    /// the regime off and keeps its verdict (`SOLO_KEPT`), which the next busier window restores, so a
    /// lock that went quiet releases with one CAS again (ours).
    fn solo_trial(&self, cfg: &AbsConfig, window: &WindowStats, n: u64, solo: bool) -> bool {
        if cfg.solo_recheck_us == 0 || P::SOLO_RECHECK_US > 0 {
            return solo;
        }
        let r = &self.rare;
        let packed = r.solo_state.get();
        let trial = unpack_solo(packed, r.solo_clock.get(), r.solo_started_at.get());
        // Between trials, a verdict for the regime that a quiet window set aside still stands.
        let kept = trial.arm == 0 && packed & SOLO_KEPT != 0;
        let now_us = if solo_timed(&trial, window.contention_milli) { now_us() } else { 0 };
        let (next, solo_next) = decide_solo(
            trial,
            SoloWindow {
                now_us,
                acquisitions: n,
                contention_milli: window.contention_milli,
                crowded_max_ps: solo_crowded_max_ps(cfg),
            },
            solo || kept,
        );
        // A quiet window between trials (too few waiters to start one) sets the regime aside and keeps
        // the verdict: nobody sleeps for it to spare a wake-up, and with `SOLO` in the lock word every
        // release would fail its CAS from exactly `LOCKED` and pay a second RMW.
        let quiet = next.arm == 0 && window.contention_milli < SOLO_START_MILLI;
        let keep_next = solo_next && quiet;
        let packed_next = pack_solo(&next) | if keep_next { SOLO_KEPT } else { 0 };
        if packed_next != packed {
            r.solo_state.set(packed_next);
        }
        if next != trial {
            r.solo_clock.set(next.clock_us);
            r.solo_started_at.set(next.started_at);
        }
        solo_next && !quiet
    }
}

/// The word a release writes over `state`: free (`LOCKED` cleared), or, if an heir asked (`HEIR`),
/// still held and handed to it (`GIVEN`). Every release either goes through here or CASes from a word
/// without `HEIR` (the fast CAS from exactly `LOCKED`; `unlock_from`'s loop, which sends a word with
/// `HEIR` to `release_to_heir`), so `HEIR` and `GIVEN` are only ever set with `LOCKED`.
#[inline]
fn released(state: u32) -> u32 {
    if state & HEIR != 0 { (state & !HEIR) | GIVEN } else { state & !LOCKED }
}

/// The solo trial's counter, beside [`pack_solo`]'s fields: a verdict for the solo regime that a quiet
/// window set aside (see [`RawAbsLock::solo_trial`]). Ours.
const SOLO_KEPT: u64 = 1 << 26;

/// The solo trial's small fields in one counter: arm, losses and wins in the low 3 bytes, then the void
/// and settled bits, [`SOLO_KEPT`], the short bit, the previous arm's ps in the high 4 bytes (its clock
/// and start count have their own).
fn pack_solo(t: &SoloTrial) -> u64 {
    u64::from(t.arm)
        | u64::from(t.losses) << 8
        | u64::from(t.wins) << 16
        | u64::from(t.void) << 24
        | u64::from(t.settled) << 25
        | u64::from(t.short) << 27
        | u64::from(t.previous_ps) << 32
}

/// The inverse of [`pack_solo`], with the trial's clock and start count.
fn unpack_solo(packed: u64, clock_us: u64, started_at: u64) -> SoloTrial {
    SoloTrial {
        arm: packed as u8,
        losses: (packed >> 8) as u8,
        wins: (packed >> 16) as u8,
        void: (packed >> 24) & 1 != 0,
        settled: (packed >> 25) & 1 != 0,
        short: (packed >> 27) & 1 != 0,
        previous_ps: (packed >> 32) as u32,
        clock_us,
        started_at,
    }
}

/// [`SoloWindow::crowded_max_ps`] for `cfg`: its starvation bound over [`SOLO_CROWDED_TURNS`], in ps,
/// at most `u32::MAX` (any bound over 8.6 ms clamps there, past the 1 ms that voids an arm); 0 without a
/// bound, and 0 for the bound of 0 too (it hands off at every release over sleepers).
fn solo_crowded_max_ps(cfg: &AbsConfig) -> u32 {
    let bound = cfg.limits().starve_after.unwrap_or(0);
    u32::try_from(u64::from(bound) * 1_000_000 / SOLO_CROWDED_TURNS).unwrap_or(u32::MAX)
}

/// A trial arm in one counter: the total in the low 32 bits, the slowest window above.
fn pack_arm(arm: TrialArm) -> u64 {
    u64::from(arm.total_ps) | (u64::from(arm.slowest_ps) << 32)
}

fn unpack_arm(v: u64) -> TrialArm {
    TrialArm { total_ps: v as u32, slowest_ps: (v >> 32) as u32 }
}

/// A sleeper's re-check period under the solo regime, in microseconds: the profile's forced regime's,
/// else the config's, else [`SOLO_RECHECK_FALLBACK_US`].
fn solo_recheck_us<P: AbsProfile>(cfg: &AbsConfig) -> u32 {
    if P::SOLO_RECHECK_US > 0 {
        P::SOLO_RECHECK_US
    } else if cfg.solo_recheck_us > 0 {
        cfg.solo_recheck_us
    } else {
        SOLO_RECHECK_FALLBACK_US
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
        f.debug_struct("RawAbsLock")
            .field("held", &self.raw_is_locked())
            .field("stats", &self.stats())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_solo_trial_state_round_trips_through_its_counters() {
        for t in [
            SoloTrial::default(),
            SoloTrial {
                arm: u8::MAX,
                losses: u8::MAX,
                wins: u8::MAX,
                void: true,
                settled: true,
                previous_ps: u32::MAX,
                clock_us: u64::MAX,
                started_at: u64::MAX,
                short: true,
            },
            SoloTrial {
                arm: 3,
                losses: 2,
                wins: 1,
                void: false,
                settled: true,
                previous_ps: 7,
                clock_us: 9,
                started_at: 11,
                short: false,
            },
            SoloTrial { void: true, ..SoloTrial::default() },
            SoloTrial { settled: true, ..SoloTrial::default() },
            SoloTrial { short: true, ..SoloTrial::default() },
        ] {
            assert_eq!(unpack_solo(pack_solo(&t), t.clock_us, t.started_at), t);
            // The kept-verdict bit lies outside the trial's fields.
            assert_eq!(pack_solo(&t) & SOLO_KEPT, 0);
            assert_eq!(unpack_solo(pack_solo(&t) | SOLO_KEPT, t.clock_us, t.started_at), t);
        }
    }

    #[test]
    fn the_crowded_limit_per_acquisition_follows_the_bound() {
        let with = |starve_after_us| AbsConfig {
            starve_after_us,
            ..AbsConfig::from_costs(&crate::MeasuredCosts::REFERENCE)
        };
        assert_eq!(solo_crowded_max_ps(&with(500)), 250_000, "500 us over 2000 acquisitions, in ps");
        assert_eq!(solo_crowded_max_ps(&with(u32::MAX)), 0, "no bound");
        assert_eq!(solo_crowded_max_ps(&with(0)), 0, "a hand-off at every release");
        assert_eq!(solo_crowded_max_ps(&with(u32::MAX - 1)), u32::MAX, "clamped");
    }

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

#[cfg(all(test, not(abslock_loom)))]
mod crowding_tests {
    use super::*;

    /// The calibrated profile with two-acquisition windows that the test ends by hand.
    pub(super) enum ManualWindows {}

    impl AbsProfile for ManualWindows {
        const CHECK_INTERVAL: u64 = u64::MAX;
        fn config() -> &'static AbsConfig {
            static C: std::sync::OnceLock<AbsConfig> = std::sync::OnceLock::new();
            C.get_or_init(|| AbsConfig { window: 2, ..*AbsConfig::calibrated() })
        }
    }

    /// One acquisition with `waiting` threads registered in the slow path (faked in the register);
    /// returns whether the window is marked crowded afterwards.
    fn acquire_with_waiters(lock: &RawAbsLock<ManualWindows>, waiting: u32) -> bool {
        lock.busy.waiters.fetch_add(waiting * WAITER, Ordering::Relaxed);
        lock.raw_lock();
        // SAFETY: locked on the line above, by this thread.
        unsafe { lock.raw_unlock() };
        lock.busy.waiters.fetch_sub(waiting * WAITER, Ordering::Relaxed);
        lock.busy.crowded.load(Ordering::Relaxed)
    }

    /// Ends the window at acquisition `n` as the holder does, holding the lock.
    fn end_window_at(lock: &RawAbsLock<ManualWindows>, n: u64) {
        lock.raw_lock();
        lock.end_window(n);
        // SAFETY: locked above, by this thread.
        unsafe { lock.raw_unlock() };
    }

    #[test]
    fn a_window_is_crowded_only_when_the_threads_outnumber_the_cores() {
        let cores = cores();
        let lock = RawAbsLock::<ManualWindows>::new();
        assert!(!acquire_with_waiters(&lock, 0));
        assert!(!acquire_with_waiters(&lock, 1));
        assert!(!acquire_with_waiters(&lock, cores.saturating_sub(1)));
        assert!(acquire_with_waiters(&lock, cores.max(2)));
        // The mark stays until the window ends, whatever later acquisitions see.
        assert!(acquire_with_waiters(&lock, 0));
        end_window_at(&lock, lock.busy.acquisitions.get() + 1);
        assert!(!lock.busy.crowded.load(Ordering::Relaxed), "the window's end clears the mark");
    }

    #[test]
    fn the_mark_survives_a_check_before_the_window_is_full() {
        let lock = RawAbsLock::<ManualWindows>::new();
        assert!(acquire_with_waiters(&lock, cores().max(2)));
        // The window holds 1 acquisition, less than its 2: this check returns before the window's end.
        end_window_at(&lock, 1);
        assert!(lock.busy.crowded.load(Ordering::Relaxed));
    }

    #[test]
    fn only_a_crowded_window_at_k_max_parks() {
        let cfg = ManualWindows::config();
        assert!(cfg.park_only_when_crowded);
        // Every acquisition of each window runs out, so the policy's only question is whether to park.
        let run_out_window = |lock: &RawAbsLock<ManualWindows>, waiting: u32| {
            acquire_with_waiters(lock, waiting);
            let b = &lock.busy;
            b.run_outs.set(b.run_outs.get() + 1000);
            end_window_at(lock, b.acquisitions.get() + 1);
            lock.mode()
        };
        let lock = RawAbsLock::<ManualWindows>::new();
        lock.hot.policy.store(encode_policy(Mode::Spin, cfg.k_max), Ordering::Relaxed);
        assert_eq!(run_out_window(&lock, 0), Mode::Spin, "uncrowded: hold spin mode at k_max");
        assert_eq!(run_out_window(&lock, cores().max(2)), Mode::Park, "crowded: RocketMQ's switch");
    }
}

#[cfg(all(test, not(abslock_loom)))]
mod trial_tests {
    use super::*;
    use crate::abs::trial::{TRIAL_PATTERN, TRIAL_START};

    /// The calibrated profile with one-acquisition windows, so a single thread walks the trial.
    enum EveryAcquisition {}

    impl AbsProfile for EveryAcquisition {
        const CHECK_INTERVAL: u64 = 1;
        fn config() -> &'static AbsConfig {
            static C: std::sync::OnceLock<AbsConfig> = std::sync::OnceLock::new();
            C.get_or_init(|| AbsConfig { window: 1, crowded_spins: 4, ..*AbsConfig::calibrated() })
        }
    }

    enum NoTrial {}

    impl AbsProfile for NoTrial {
        const CHECK_INTERVAL: u64 = 1;
        fn config() -> &'static AbsConfig {
            static C: std::sync::OnceLock<AbsConfig> = std::sync::OnceLock::new();
            C.get_or_init(|| AbsConfig { crowded_trial: false, ..*EveryAcquisition::config() })
        }
    }

    /// Whether crowded waiters yield at once after each of `n` acquisitions of a fresh lock.
    fn crowded_yield_after_each<P: AbsProfile>(n: u32) -> Vec<bool> {
        let lock = RawAbsLock::<P>::new();
        (0..n)
            .map(|_| {
                lock.raw_lock();
                // SAFETY: locked on the line above, by this thread.
                unsafe { lock.raw_unlock() };
                lock.stats().crowded_yield
            })
            .collect()
    }

    /// The settings a trial tries do not depend on time: the lock walks `TRIAL_PATTERN` window by window
    /// (each window is one acquisition here), whatever the clock says, and keeps the mode and k.
    #[test]
    fn the_lock_tries_both_settings_in_the_pattern() {
        let start = TRIAL_START as usize;
        let seen = crowded_yield_after_each::<EveryAcquisition>(TRIAL_START + TRIAL_PATTERN.len() as u32 + 1);
        // Acquisition i (from 0) ends the window at position i of the cycle and sets the setting of
        // position i + 1.
        assert!(seen[..start - 1].iter().all(|y| !y), "{seen:?}");
        assert_eq!(seen[start - 1..start - 1 + TRIAL_PATTERN.len()], TRIAL_PATTERN, "{seen:?}");
    }

    #[test]
    fn without_the_trial_crowded_waiters_always_spin() {
        let seen = crowded_yield_after_each::<NoTrial>(TRIAL_START + TRIAL_PATTERN.len() as u32);
        assert!(seen.iter().all(|y| !y), "{seen:?}");
    }

    /// A forced mode switch keeps the trial's setting, and the trial's changes keep the forced mode.
    #[test]
    fn set_mode_and_the_trial_keep_each_others_bits() {
        let lock = RawAbsLock::<EveryAcquisition>::new();
        let step = |lock: &RawAbsLock<EveryAcquisition>| {
            lock.raw_lock();
            // SAFETY: locked on the line above, by this thread.
            unsafe { lock.raw_unlock() };
        };
        // Acquisition i sets the setting of cycle position i + 1; position TRIAL_START + 1 yields.
        for _ in 0..=TRIAL_START {
            step(&lock);
        }
        assert!(lock.stats().crowded_yield);
        lock.set_mode(Mode::Park);
        assert_eq!((lock.stats().crowded_yield, lock.mode()), (true, Mode::Park));
        lock.set_mode(Mode::Spin);
        assert_eq!((lock.stats().crowded_yield, lock.mode()), (true, Mode::Spin));
        // The trial's next step (position TRIAL_START + 2 also yields, + 3 spins) keeps a forced mode.
        lock.set_mode(Mode::Park);
        step(&lock);
        assert!(lock.stats().crowded_yield);
        let mode_after = lock.mode();
        step(&lock);
        assert!(!lock.stats().crowded_yield);
        assert_eq!(lock.mode(), mode_after, "the trial's bit changed nothing else");
    }
}

#[cfg(all(test, not(abslock_loom)))]
mod solo_word_tests {
    use super::*;

    /// Takes the lock, marks a sleeper in the word (no thread is queued), releases, and returns the
    /// word: a release that wakes goes through the queue, finds it empty and clears `PARKED`; a release
    /// under the solo regime wakes nobody and keeps it.
    fn release_over_a_marked_sleeper(lock: &RawAbsLock) -> u32 {
        lock.raw_lock();
        lock.hot.state.fetch_or(PARKED, Ordering::Relaxed);
        // SAFETY: locked above, by this thread.
        unsafe { lock.raw_unlock() };
        let word = lock.hot.state.load(Ordering::Relaxed);
        lock.hot.state.fetch_and(!PARKED, Ordering::Relaxed);
        word
    }

    /// The holder that switches the regime copies it into the lock word, and the release reads it there.
    #[test]
    fn the_solo_bit_follows_the_regime_into_the_lock_word() {
        let lock = RawAbsLock::<Calibrated>::new();
        assert_eq!(release_over_a_marked_sleeper(&lock), 0, "off: the release went through the queue");
        lock.set_solo(true);
        assert!(lock.solo());
        assert_eq!(lock.hot.state.load(Ordering::Relaxed), SOLO);
        assert_eq!(release_over_a_marked_sleeper(&lock), SOLO | PARKED, "on: the release woke nobody");
        // A fair unlock's hand-off builds the word from constants; it must keep the regime.
        lock.raw_lock();
        // SAFETY: locked above, by this thread.
        unsafe { lock.raw_unlock_fair() };
        assert_eq!(lock.hot.state.load(Ordering::Relaxed), SOLO);
        lock.set_solo(false);
        assert!(!lock.solo());
        assert_eq!(lock.hot.state.load(Ordering::Relaxed), 0);
        assert_eq!(release_over_a_marked_sleeper(&lock), 0, "off again: the release wakes");
    }

    // The calibrated profile (solo trial on) with two-acquisition windows that the test ends by hand.
    use super::crowding_tests::ManualWindows as TwoAcquisitionWindows;

    /// Two acquisitions with `waiting` threads faked in the register, then the window's end, as the
    /// holder does.
    pub(super) fn window_with_waiters(lock: &RawAbsLock<TwoAcquisitionWindows>, waiting: u32) {
        lock.busy.waiters.fetch_add(waiting * WAITER, Ordering::Relaxed);
        for _ in 0..2 {
            lock.raw_lock();
            // SAFETY: locked on the line above, by this thread.
            unsafe { lock.raw_unlock() };
        }
        lock.raw_lock();
        lock.end_window(lock.busy.acquisitions.get());
        // SAFETY: locked above, by this thread.
        unsafe { lock.raw_unlock() };
        lock.busy.waiters.fetch_sub(waiting * WAITER, Ordering::Relaxed);
    }

    /// A quiet window between trials sets the regime aside (no `SOLO` in the word, so the release is one
    /// CAS again) and keeps its verdict, which the next contended window restores.
    #[test]
    fn a_quiet_window_sets_the_regime_aside_and_a_busy_one_restores_it() {
        let lock = RawAbsLock::<TwoAcquisitionWindows>::new();
        // No trial starts within the test: the next one is due at the end of time.
        lock.rare.solo_clock.set(u64::MAX);
        lock.set_solo(true);
        window_with_waiters(&lock, 1);
        assert!(lock.solo(), "a contended window keeps the regime");
        window_with_waiters(&lock, 0);
        assert!(!lock.solo(), "a quiet window sets it aside");
        assert_eq!(lock.hot.state.load(Ordering::Relaxed) & SOLO, 0);
        assert_ne!(lock.rare.solo_state.get() & SOLO_KEPT, 0, "the verdict is kept");
        window_with_waiters(&lock, 0);
        assert!(!lock.solo());
        window_with_waiters(&lock, 1);
        assert!(lock.solo(), "a contended window restores it");
        assert_ne!(lock.hot.state.load(Ordering::Relaxed) & SOLO, 0);
        assert_eq!(lock.rare.solo_state.get() & SOLO_KEPT, 0);
        // Switched off by hand, nothing is kept for a quiet window to restore.
        lock.set_solo(false);
        window_with_waiters(&lock, 0);
        window_with_waiters(&lock, 1);
        assert!(!lock.solo());
    }
}

#[cfg(all(test, not(abslock_loom)))]
mod layout_tests {
    use super::*;

    /// The sizes `RawAbsLock`'s documentation states: four 64-byte lines, the lock word alone on the
    /// first with the policy word, and no counter on it.
    #[test]
    fn documented_sizes_match() {
        assert_eq!(core::mem::size_of::<RawAbsLock>(), 256);
        assert_eq!(core::mem::align_of::<RawAbsLock>(), 64);
        assert_eq!(core::mem::size_of::<Hot>(), 64);
        assert_eq!(core::mem::size_of::<Busy>(), 64);
        assert_eq!(core::mem::size_of::<Rare>(), 128);
        let lock = RawAbsLock::<Calibrated>::new();
        let base = core::ptr::from_ref(&lock).addr();
        let line = |p: usize| (p - base) / 64;
        assert_eq!(line(core::ptr::from_ref(&lock.hot.state).addr()), 0);
        assert_eq!(line(core::ptr::from_ref(&lock.hot.policy).addr()), 0);
        for field in [
            core::ptr::from_ref(&lock.busy.waiters).addr(),
            core::ptr::from_ref(&lock.busy.crowded).addr(),
            core::ptr::from_ref(&lock.busy.quiet).addr(),
            core::ptr::from_ref(&lock.busy.contended_window).addr(),
            core::ptr::from_ref(&lock.busy.acquisitions).addr(),
            core::ptr::from_ref(&lock.busy.fair_at).addr(),
            core::ptr::from_ref(&lock.busy.run_outs).addr(),
        ] {
            assert_eq!(line(field), 1, "every per-acquisition field on the busy line");
        }
        assert_eq!(line(core::ptr::from_ref(&lock.rare.parks).addr()), 2);
        assert_eq!(line(core::ptr::from_ref(&lock.rare.trace).addr()), 3);
    }
}

#[cfg(all(test, not(abslock_loom)))]
#[path = "quiet_tests.rs"]
mod quiet_tests;

#[cfg(all(test, not(abslock_loom)))]
mod starvation_tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// The calibrated profile with a starvation bound of 0 us: every release over sleepers hands off.
    enum Impatient {}

    impl AbsProfile for Impatient {
        fn config() -> &'static AbsConfig {
            static C: std::sync::OnceLock<AbsConfig> = std::sync::OnceLock::new();
            C.get_or_init(|| AbsConfig { starve_after_us: 0, ..*AbsConfig::calibrated() })
        }
    }

    /// Forced, not scheduled: `lock` is held by this thread; one waiter comes to take it (and release it)
    /// and this thread polls, without sleeping, until `reached` says the waiter is in the state under
    /// test, runs `then` while still holding the lock, and releases it; the waiter is joined.
    fn release_once_waiter_reaches<P: AbsProfile>(
        lock: &RawAbsLock<P>,
        reached: impl Fn(&RawAbsLock<P>) -> bool,
        then: impl FnOnce(&RawAbsLock<P>),
    ) {
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                lock.raw_lock();
                // SAFETY: this thread acquired the lock on the line above.
                unsafe { lock.raw_unlock() };
            });
            while !reached(lock) {
                assert!(!waiter.is_finished(), "the waiter got a held lock");
                std::thread::yield_now();
            }
            then(lock);
            // SAFETY: the caller holds the lock (this function's contract).
            unsafe { lock.raw_unlock() };
            waiter.join().expect("waiter panicked");
        });
    }

    /// The calibrated profile whose waiters count as past the starvation bound at their first yield.
    enum StarvingAtOnce {}

    impl AbsProfile for StarvingAtOnce {
        const STARVED_AFTER_YIELDS: u32 = 1;
        fn config() -> &'static AbsConfig {
            AbsConfig::calibrated()
        }
    }

    /// A yielder past the bound asks to be handed the lock, but a holder that keeps it does not keep the
    /// asker awake: once its yields are spent it withdraws the request and sleeps, as it would have
    /// without the bound (an heir that never slept again would leave this test spinning on `sleepers`).
    #[test]
    fn a_starving_yielder_still_sleeps_while_the_holder_keeps_the_lock() {
        let lock = RawAbsLock::<StarvingAtOnce>::new();
        lock.raw_lock();
        release_once_waiter_reaches(
            &lock,
            |l| l.sleepers() == 1,
            |l| {
                let state = l.hot.state.load(Ordering::Relaxed);
                assert_eq!(state & (HEIR | GIVEN), 0, "a sleeper left its request behind: {state:#b}");
            },
        );
        let stats = lock.stats();
        assert_eq!((stats.contended, stats.parks.min(1)), (1, 1), "{stats:?}");
        assert!(stats.yields >= 1, "the waiter never yielded, so never reached the bound: {stats:?}");
        assert!(!lock.raw_is_locked());
    }

    /// Past the bound at its first yield and never sleeping (unbounded yields, no adaptation), so only
    /// a hand-off to an heir or the caller's deadline ends its wait.
    enum StarvingForever {}

    impl AbsProfile for StarvingForever {
        const STARVED_AFTER_YIELDS: u32 = 1;
        fn config() -> &'static AbsConfig {
            static C: std::sync::OnceLock<AbsConfig> = std::sync::OnceLock::new();
            C.get_or_init(|| AbsConfig {
                max_yields: u32::MAX,
                crowded_yields: u32::MAX,
                window: u32::MAX,
                ..*AbsConfig::calibrated()
            })
        }
    }

    /// Forced: the holder keeps the lock until the yielder has asked (`HEIR`), so its release must hand
    /// the lock over (`GIVEN`) rather than free it: one hand-off, no park.
    #[test]
    fn a_yielder_that_asked_is_handed_the_lock_by_the_next_release() {
        let lock = RawAbsLock::<StarvingForever>::new();
        lock.raw_lock();
        release_once_waiter_reaches(&lock, |l| l.hot.state.load(Ordering::Relaxed) & HEIR != 0, |_| {});
        let stats = lock.stats();
        assert_eq!((stats.contended, stats.handoffs, stats.parks), (1, 1, 0), "{stats:?}");
        assert_eq!(lock.hot.state.load(Ordering::Relaxed), 0);
    }

    /// A timed yielder past the bound against a holder that keeps the lock: it gives up at its deadline
    /// with its request withdrawn and its registration undone, whether it had asked yet or not.
    #[test]
    fn a_timed_yielder_past_the_bound_gives_up_cleanly() {
        let lock = RawAbsLock::<StarvingForever>::new();
        lock.raw_lock();
        let got = std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let got = lock.raw_lock_until(Instant::now() + Duration::from_millis(20));
                if got {
                    // SAFETY: acquired on the line above, by this thread.
                    unsafe { lock.raw_unlock() };
                }
                got
            });
            waiter.join().expect("waiter panicked")
        });
        assert!(!got, "the waiter got a held lock");
        let state = lock.hot.state.load(Ordering::Relaxed);
        assert_eq!(state & (HEIR | GIVEN), 0, "a request outlived its heir: {state:#b}");
        assert_eq!(lock.busy.waiters.load(Ordering::Relaxed), 0, "the register still counts the waiter");
        assert_eq!(lock.stats().timeouts, 1);
        // SAFETY: this thread locked it above.
        unsafe { lock.raw_unlock() };
        assert_eq!(lock.hot.state.load(Ordering::Relaxed), 0);
    }

    /// Forced, not scheduled: the lock is held while one waiter sleeps on it (counted asleep, so it is
    /// in the queue); with a bound of 0 the release must wake it as the heir, which takes the lock (a
    /// hand-off by the bound).
    #[test]
    fn a_sleeper_is_handed_the_lock_at_the_bound() {
        let lock = RawAbsLock::<Impatient>::new();
        lock.raw_lock();
        lock.set_mode(Mode::Park);
        release_once_waiter_reaches(
            &lock,
            |l| l.sleepers() == 1 && l.hot.state.load(Ordering::Relaxed) & PARKED != 0,
            |_| {},
        );
        let stats = lock.stats();
        assert_eq!(stats.handoffs, 1, "{stats:?}");
        assert_eq!(stats.acquisitions, 2, "{stats:?}");
        assert!(!lock.raw_is_locked());
    }

    /// A timed heir whose deadline passes while the lock stays held withdraws its request and leaves
    /// no `HEIR` or `GIVEN` behind. Forced, not scheduled: the waiter sleeps (counted in the queue), the
    /// release wakes it as the heir (bound 0) and the holder takes the lock straight back and keeps it
    /// until the waiter has returned, so the waiter, once it runs, finds the lock held, asks, and can
    /// only time out. The waiter needs microseconds to be scheduled and the holder one RMW to re-take
    /// the lock; in the rare round the waiter wins, it holds the lock and the round is not counted.
    #[test]
    fn a_timed_heir_withdraws_its_request_when_the_deadline_passes() {
        // On one core the woken waiter would preempt the holder (it slept, so the scheduler favours
        // it) and win every round; on two, it has to be scheduled on the other core first.
        // The process caches its core count and calibration on first use; pinned first, this thread
        // would make them see one core.
        let _ = (cores(), Impatient::config());
        let ids = core_affinity::get_core_ids().unwrap_or_default();
        let [holder_core, waiter_core, ..] = ids[..] else {
            eprintln!("skipped: fewer than 2 cores to pin the holder and the waiter apart");
            return;
        };
        let lock = RawAbsLock::<Impatient>::new();
        let mut withdrawn = 0;
        for _ in 0..20 {
            let _ = core_affinity::set_for_current(holder_core);
            lock.raw_lock();
            lock.set_mode(Mode::Park);
            let asked = std::thread::scope(|s| {
                let waiter = s.spawn(|| {
                    let _ = core_affinity::set_for_current(waiter_core);
                    let got = lock.raw_lock_until(Instant::now() + Duration::from_millis(100));
                    if got {
                        // SAFETY: acquired on the line above, by this thread.
                        unsafe { lock.raw_unlock() };
                    }
                    got
                });
                while (lock.sleepers() != 1 || lock.hot.state.load(Ordering::Relaxed) & PARKED == 0)
                    && !waiter.is_finished()
                {
                    std::thread::yield_now();
                }
                if waiter.is_finished() {
                    // On a loaded machine the deadline can pass before this thread sees the waiter asleep.
                    assert!(!waiter.join().expect("waiter panicked"), "the waiter got a held lock");
                    return false;
                }
                // SAFETY: this thread locked it before spawning the waiter.
                unsafe { lock.raw_unlock() };
                lock.raw_lock();
                while lock.hot.state.load(Ordering::Relaxed) & HEIR == 0 && !waiter.is_finished() {
                    std::thread::yield_now();
                }
                let asked = lock.hot.state.load(Ordering::Relaxed) & HEIR != 0;
                let got = waiter.join().expect("waiter panicked");
                assert!(!(asked && got), "an heir got a lock its holder never released");
                let state = lock.hot.state.load(Ordering::Relaxed);
                assert_eq!(state & (HEIR | GIVEN), 0, "a request outlived its heir: {state:#b}");
                assert_eq!(lock.sleepers(), 0);
                asked
            });
            // SAFETY: this thread holds the lock: the first `raw_lock` if the round returned early, else
            // the `raw_lock` it took after releasing the first.
            unsafe { lock.raw_unlock() };
            assert!(lock.raw_try_lock(), "the lock stayed held after its last release");
            // SAFETY: taken on the line above.
            unsafe { lock.raw_unlock() };
            withdrawn += u32::from(asked);
            if withdrawn == 3 {
                break;
            }
        }
        let stats = lock.stats();
        assert!(u64::from(withdrawn) <= stats.timeouts, "{stats:?}");
        assert!(withdrawn > 0, "no round reached the heir's request: {stats:?}");
    }

    /// RocketMQ's config with the starvation bound `B` us (`u32::MAX`: none).
    enum Bound<const B: u32> {}

    impl<const B: u32> AbsProfile for Bound<B> {
        fn config() -> &'static AbsConfig {
            // A static in a generic item is one static for every `B`, so each bound the tests use
            // gets its own, and the assert catches a new bound that would share one.
            static ZERO: std::sync::OnceLock<AbsConfig> = std::sync::OnceLock::new();
            static NONE: std::sync::OnceLock<AbsConfig> = std::sync::OnceLock::new();
            static ONE: std::sync::OnceLock<AbsConfig> = std::sync::OnceLock::new();
            static LONG: std::sync::OnceLock<AbsConfig> = std::sync::OnceLock::new();
            let cell = match B {
                0 => &ZERO,
                1 => &ONE,
                u32::MAX => &NONE,
                _ => &LONG,
            };
            let cfg = cell.get_or_init(|| AbsConfig { starve_after_us: B, ..AbsConfig::ROCKETMQ });
            assert_eq!(cfg.starve_after_us, B, "two bounds share a static");
            cfg
        }
    }

    /// One acquisition whose release is over sleepers: what `fairness_due` answers (asked as the holder
    /// does, with the lock held).
    fn release_over_sleepers<P: AbsProfile>(lock: &RawAbsLock<P>) -> bool {
        lock.raw_lock();
        let due = lock.fairness_due();
        // SAFETY: locked above, by this thread.
        unsafe { lock.raw_unlock() };
        due
    }

    /// What `fairness_due` answers at `n` successive releases over sleepers, and what `fair_at` holds
    /// after.
    fn fairness_over<P: AbsProfile>(n: u64) -> (Vec<bool>, u64) {
        let lock = RawAbsLock::<P>::new();
        let due = (0..n).map(|_| release_over_sleepers(&lock)).collect();
        (due, lock.busy.fair_at.get())
    }

    #[test]
    fn a_bound_of_zero_or_none_is_remembered_from_the_first_release() {
        assert_eq!(fairness_over::<Bound<0>>(3), (vec![true; 3], FAIR_ALWAYS));
        assert_eq!(fairness_over::<Bound<{ u32::MAX }>>(3), (vec![false; 3], FAIR_NEVER));
    }

    #[test]
    fn a_long_bound_starts_its_period_and_is_not_due_within_it() {
        // ~71 minutes: no release in this test reaches it.
        let (due, fair_at) = fairness_over::<Bound<{ u32::MAX - 1 }>>(2 * FAIR_CHECK_EVERY + 1);
        assert!(due.iter().all(|d| !d));
        assert!(fair_at != 0 && fair_at < FAIR_NEVER, "{fair_at}");
    }

    /// A bound of 1 us, once the clock has passed it: due exactly at the next acquisition that is a
    /// multiple of [`FAIR_CHECK_EVERY`], not before (the clock is read only there), and the period
    /// restarts there.
    #[test]
    fn a_passed_bound_is_due_at_the_next_check_only() {
        let lock = RawAbsLock::<Bound<1>>::new();
        let release = || release_over_sleepers(&lock);
        assert!(!release(), "the first release only starts the period");
        let due_at = lock.busy.fair_at.get();
        // Busy-wait on the clock itself (not a sleep): the bound has passed once it reads `due_at`.
        while now_us() < due_at {
            core::hint::spin_loop();
        }
        // Acquisitions 2 to FAIR_CHECK_EVERY.
        let due: Vec<bool> = (2..=FAIR_CHECK_EVERY).map(|_| release()).collect();
        let (before, at_check) = due.split_at(due.len() - 1);
        assert!(before.iter().all(|d| !d), "due before the check");
        assert_eq!(at_check, [true], "not due at acquisition {FAIR_CHECK_EVERY}");
        assert!(lock.busy.fair_at.get() > due_at, "the period did not restart");
    }
}
