//! [`AbsStats`], [`Mode`] and [`TracePoint`]: what the adaptive lock reports about itself.

/// How a waiter of [`RawAbsLock`](crate::RawAbsLock) waits. Mutual exclusion never depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Spin k times, yield, repeat (and park after `max_yields` yields, if the config says so).
    Spin,
    /// Spin `park_spins` times, then sleep on the lock word (futex) until an unlock wakes us.
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
    /// Times waiters went to sleep on the futex.
    pub parks: u64,
    /// Times a waiter's k spins ran out without the lock (it then yielded or parked).
    pub run_outs: u64,
    /// Changes of [`Mode`], by the policy or by [`set_mode`](crate::RawAbsLock::set_mode).
    pub mode_switches: u64,
    /// Current k (spins before yielding).
    pub k: u32,
    /// Current waiting mode.
    pub mode: Mode,
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
}
