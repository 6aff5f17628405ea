//! `SweepLock`: what the sweep needs from a raw lock beyond `lock_api::RawMutex`,
//! namely the ABS statistics and trace (absent for every other strategy).

use crate::peers::{RawSpinCrateMutex, RawStdMutex};

/// A snapshot of an adaptive lock's statistics (from `abslock::RawAbsLock::stats`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AbsView {
    /// Acquisitions since the lock was created.
    pub acquisitions: u64,
    /// Acquisitions that found the lock held.
    pub contended: u64,
    /// Times a waiter parked (futex wait).
    pub parks: u64,
    /// Switches between spin mode and park mode.
    pub mode_switches: u64,
    /// Spins before yielding at the time of the snapshot.
    pub k: u32,
    /// Whether the lock was in park mode at the snapshot.
    pub parking: bool,
}

/// One adaptation decision of an adaptive lock (from `abslock::RawAbsLock::trace`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TracePoint {
    /// Acquisition count when the decision was taken.
    pub acquisition: u64,
    /// k after the decision.
    pub k: u32,
    /// Whether the lock is in park mode after the decision.
    pub parking: bool,
}

/// A raw lock the sweep can run: `lock_api::RawMutex`, shareable across worker
/// threads, with optional ABS introspection (default: none).
pub trait SweepLock: lock_api::RawMutex + Send + Sync + 'static {
    /// ABS statistics, `None` for non-adaptive locks.
    fn abs_view(&self) -> Option<AbsView> {
        None
    }
    /// Starts recording up to `capacity` adaptation decisions (no-op for non-adaptive locks).
    fn enable_trace(&self, _capacity: usize) {}
    /// The recorded adaptation decisions (empty for non-adaptive locks).
    fn trace(&self) -> Vec<TracePoint> {
        Vec::new()
    }
}

impl SweepLock for parking_lot::RawMutex {}
impl SweepLock for RawStdMutex {}
impl SweepLock for RawSpinCrateMutex {}
impl SweepLock for abslock::RawCasSpinLock {}
impl SweepLock for abslock::RawSpinLock {}
impl SweepLock for abslock::RawBackoffLock {}

impl<P: abslock::AbsProfile> SweepLock for abslock::RawAbsLock<P>
where
    abslock::RawAbsLock<P>: lock_api::RawMutex + Send + Sync + 'static,
{
    fn abs_view(&self) -> Option<AbsView> {
        let s = self.stats();
        Some(AbsView {
            acquisitions: s.acquisitions,
            contended: s.contended,
            parks: s.parks,
            mode_switches: s.mode_switches,
            k: s.k,
            parking: s.mode == abslock::Mode::Park,
        })
    }

    fn enable_trace(&self, capacity: usize) {
        abslock::RawAbsLock::enable_trace(self, capacity);
    }

    fn trace(&self) -> Vec<TracePoint> {
        abslock::RawAbsLock::trace(self)
            .into_iter()
            .map(|t| TracePoint {
                acquisition: t.acquisition,
                k: t.k,
                parking: t.mode == abslock::Mode::Park,
            })
            .collect()
    }
}
