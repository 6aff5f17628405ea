//! [`AbsStats`], [`Mode`] and [`TracePoint`]: what the adaptive lock reports about itself.

/// How a waiter of [`RawAbsLock`](crate::RawAbsLock) waits. Mutual exclusion never depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Spin up to k pauses (exponential bursts), then yield up to `max_yields` times, then park; a
    /// waiter that found the cores taken spins `crowded_spins` and yields up to `crowded_yields` times.
    Spin,
    /// Spin `park_spins` pauses, yield up to `park_yields` times (spinning `park_spins` again after
    /// each), then park on the lock's queue until an unlock wakes us.
    Park,
}

impl Mode {
    /// `"spin"` or `"park"`, as used in CSV files and plots.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Spin => "spin",
            Mode::Park => "park",
        }
    }
}

/// A snapshot of a [`RawAbsLock`](crate::RawAbsLock)'s counters since creation (counts of events).
///
/// Counters are written by lock holders with plain stores; a snapshot taken while others use the lock
/// may be a few events stale, never torn. When the lock is idle,
/// `contended <= acquisitions` and every spin, yield and park belongs to a counted contended acquisition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbsStats {
    /// Successful `lock` and `try_lock` calls.
    pub acquisitions: u64,
    /// Acquisitions that went through the slow path.
    pub contended: u64,
    /// Spin iterations run by waiters.
    pub spins: u64,
    /// `yield_now` calls by waiters (retreats).
    pub yields: u64,
    /// Times waiters went to sleep on the lock's parking queue.
    pub parks: u64,
    /// Times a waiter's k spins ran out without the lock (it then yielded or parked); a waiter's count is
    /// added when it gets the lock.
    pub run_outs: u64,
    /// Acquisitions by the starvation bound (a sleeper woken as the heir, or a waiter that yielded past the
    /// bound and asked as one, whether it then found the lock free or was handed it) or handed over
    /// directly by `unlock_fair` or `bump`.
    pub handoffs: u64,
    /// Timed lock attempts (`try_lock_for`/`try_lock_until`) that gave up; their waits are not in
    /// `spins`, `yields` or `parks`.
    pub timeouts: u64,
    /// Sum over acquisitions of the threads waiting at that moment: `waiters_seen / acquisitions` is the
    /// contention measure the policy uses (mean waiters per acquisition).
    pub waiters_seen: u64,
    /// Changes of [`Mode`], by the policy or by [`set_mode`](crate::RawAbsLock::set_mode).
    pub mode_switches: u64,
    /// Current k (spins before yielding).
    pub k: u32,
    /// Current waiting mode.
    pub mode: Mode,
    /// Whether crowded waiters (past the canSpin limit) currently yield at once instead of spinning
    /// `crowded_spins` first: the current setting of the crowded-spin trial
    /// ([`decide_crowded`](crate::decide_crowded)), which is the last trial's verdict outside a trial and
    /// the tried setting during one (its yield windows read `true`).
    pub crowded_yield: bool,
    /// Whether the solo regime runs right now (waiters park at once, releases wake nobody): the solo
    /// trial's setting ([`decide_solo`](crate::decide_solo)), [`set_solo`](crate::RawAbsLock::set_solo)'s, or
    /// the profile's ([`AbsProfile::SOLO_RECHECK_US`](crate::AbsProfile::SOLO_RECHECK_US)).
    pub solo: bool,
    /// Whether the quiet regime runs right now: the last window saw no waiter, so a release is a plain
    /// store (no RMW) until a waiter shows up (ours; see [`RawAbsLock`](crate::RawAbsLock)).
    pub quiet: bool,
}

/// One policy decision, recorded when tracing is on ([`enable_trace`](crate::RawAbsLock::enable_trace)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TracePoint {
    /// Acquisitions since the lock was created, when the decision was taken.
    pub acquisition: u64,
    /// k after the decision.
    pub k: u32,
    /// Mode after the decision.
    pub mode: Mode,
    /// Whether crowded waiters yield at once after the decision (the crowded-spin trial's setting,
    /// [`decide_crowded`](crate::decide_crowded)).
    pub crowded_yield: bool,
    /// Whether the solo regime runs after the decision (the solo trial's setting,
    /// [`decide_solo`](crate::decide_solo)).
    pub solo: bool,
}
