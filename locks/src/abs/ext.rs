//! What a parking_lot user expects of [`RawAbsLock`] beyond `RawMutex`: fair unlocking, timed
//! locking, and statistics readable without `unsafe` ([`AbsMutexExt`]).

use std::time::{Duration, Instant};

use super::lock::RawAbsLock;
use super::profile::AbsProfile;
use super::stats::{AbsStats, Mode, TracePoint};

// SAFETY: `raw_unlock_fair` releases exactly like `raw_unlock` (Release ordering), or keeps the lock held
// and passes it to one thread (a woken sleeper, or a running heir that asked), which then owns it:
// exclusion holds either way. `bump` unlocks fairly
// and locks again, as the trait's contract allows.
unsafe impl<P: AbsProfile> lock_api::RawMutexFair for RawAbsLock<P> {
    #[inline]
    unsafe fn unlock_fair(&self, _guard: Self::Guard) {
        // SAFETY: the trait's contract: the guard is from a successful lock of this mutex.
        unsafe { self.raw_unlock_fair() }
    }

    #[inline]
    unsafe fn bump(&self, _guard: &mut Self::Guard) {
        if self.bump_due() {
            // SAFETY: the trait's contract: we hold the lock, and take it again before returning.
            unsafe { self.raw_unlock_fair() };
            self.raw_lock();
        }
    }
}

// SAFETY: a timed lock succeeds only the way `lock` does (an Acquire RMW that finds `LOCKED` clear, or
// a hand-off); when it gives up, whether spinning, yielding or parked, it holds nothing and has undone
// its waiter registration and its `AWAKE` claim.
unsafe impl<P: AbsProfile> lock_api::RawMutexTimed for RawAbsLock<P> {
    type Duration = Duration;
    type Instant = Instant;

    #[inline]
    fn try_lock_until(&self, timeout: Instant) -> Option<Self::Guard> {
        self.raw_lock_until(timeout).then(lock_api::GuardSend::new)
    }

    #[inline]
    fn try_lock_for(&self, timeout: Duration) -> Option<Self::Guard> {
        // A duration too long to represent waits without a deadline, as parking_lot does.
        match Instant::now().checked_add(timeout) {
            Some(deadline) => self.try_lock_until(deadline),
            None => {
                self.raw_lock();
                Some(lock_api::GuardSend::new())
            }
        }
    }
}

/// Reads an [`AbsMutex`](crate::AbsMutex)'s (or any `lock_api::Mutex<RawAbsLock<P>, T>`'s) statistics,
/// mode and trace without `unsafe` (`lock_api::Mutex::raw` is `unsafe` because the raw lock could be
/// unlocked through it; these methods only read or set the waiting mode and the solo regime). Ours.
///
/// ```
/// use abslock::{AbsMutex, AbsMutexExt};
/// let m = AbsMutex::new(1_u32);
/// *m.lock() += 1;
/// assert_eq!(m.stats().acquisitions, 1);
/// ```
pub trait AbsMutexExt {
    /// [`RawAbsLock::stats`].
    fn stats(&self) -> AbsStats;
    /// [`RawAbsLock::sleepers`].
    fn sleepers(&self) -> u32;
    /// [`RawAbsLock::mode`].
    fn mode(&self) -> Mode;
    /// [`RawAbsLock::set_mode`].
    fn set_mode(&self, mode: Mode);
    /// [`RawAbsLock::solo`].
    fn solo(&self) -> bool;
    /// [`RawAbsLock::set_solo`]. It takes the lock, so calling it while holding this mutex's guard
    /// deadlocks, as a second `lock` would.
    fn set_solo(&self, on: bool);
    /// [`RawAbsLock::enable_trace`].
    fn enable_trace(&self, capacity: usize);
    /// [`RawAbsLock::trace`].
    fn trace(&self) -> Vec<TracePoint>;
}

impl<P: AbsProfile, T: ?Sized> AbsMutexExt for lock_api::Mutex<RawAbsLock<P>, T> {
    fn stats(&self) -> AbsStats {
        self.raw_ref().stats()
    }
    fn sleepers(&self) -> u32 {
        self.raw_ref().sleepers()
    }
    fn mode(&self) -> Mode {
        self.raw_ref().mode()
    }
    fn set_mode(&self, mode: Mode) {
        self.raw_ref().set_mode(mode);
    }
    fn solo(&self) -> bool {
        self.raw_ref().solo()
    }
    fn set_solo(&self, on: bool) {
        self.raw_ref().set_solo(on);
    }
    fn enable_trace(&self, capacity: usize) {
        self.raw_ref().enable_trace(capacity);
    }
    fn trace(&self) -> Vec<TracePoint> {
        self.raw_ref().trace()
    }
}

/// Shared access to the raw lock for read-only use.
trait RawRef<P: AbsProfile> {
    fn raw_ref(&self) -> &RawAbsLock<P>;
}

impl<P: AbsProfile, T: ?Sized> RawRef<P> for lock_api::Mutex<RawAbsLock<P>, T> {
    fn raw_ref(&self) -> &RawAbsLock<P> {
        // SAFETY: `raw` is unsafe only because one could unlock a lock one does not hold through it; the
        // methods above neither lock nor unlock, except `set_solo`, which unlocks only its own acquisition.
        unsafe { self.raw() }
    }
}
