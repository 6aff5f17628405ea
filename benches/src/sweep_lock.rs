//! `SweepLock`: what the sweep needs from a raw lock beyond `lock_api::RawMutex`, namely
//! the ABS statistics (absent for every other strategy).

use crate::peers::{RawSpinCrateMutex, RawStdMutex};

/// A raw lock the sweep can run: `lock_api::RawMutex`, shareable across worker threads,
/// with the adaptive lock's statistics when it has them (default: none).
pub trait SweepLock: lock_api::RawMutex + Send + Sync + 'static {
    /// `abslock::RawAbsLock::stats`, `None` for non-adaptive locks.
    fn abs_stats(&self) -> Option<abslock::AbsStats> {
        None
    }

    /// `abslock::RawAbsLock::enable_trace`: keep up to `capacity` adaptation decisions
    /// (nothing for non-adaptive locks).
    fn enable_trace(&self, capacity: usize) {
        let _ = capacity;
    }

    /// `abslock::RawAbsLock::trace`, oldest first; empty for non-adaptive locks.
    fn trace(&self) -> Vec<abslock::TracePoint> {
        Vec::new()
    }
}

impl<R: SweepLock> SweepLock for crate::latency::Sampled<R> {
    fn abs_stats(&self) -> Option<abslock::AbsStats> {
        self.inner().abs_stats()
    }

    fn enable_trace(&self, capacity: usize) {
        self.inner().enable_trace(capacity);
    }

    fn trace(&self) -> Vec<abslock::TracePoint> {
        self.inner().trace()
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
    fn abs_stats(&self) -> Option<abslock::AbsStats> {
        Some(self.stats())
    }

    fn enable_trace(&self, capacity: usize) {
        abslock::RawAbsLock::enable_trace(self, capacity);
    }

    fn trace(&self) -> Vec<abslock::TracePoint> {
        abslock::RawAbsLock::trace(self)
    }
}
