//! [`Counter`]: a mutex around a `u64`, whatever its API, for the contended-lock benches
//! (`benches/locks.rs` and the `contended_rounds` example). Ours.

use crate::pool::{Pool, work};
use std::sync::Arc;

/// A mutex around a counter: `bump` locks, does `units` of [`work`] (about `units / units_per_ns` ns,
/// see [`crate::pool::units_per_ns`]) and an increment inside the critical section, and unlocks.
pub trait Counter: Send + Sync + 'static {
    /// A fresh, unlocked mutex holding 0.
    fn make() -> Self;
    /// One acquisition with `units` of work in the critical section (a call to the one shared copy
    /// of the work loop, [`crate::pool::work`]).
    fn bump(&self, units: u64);
    /// One acquisition around an increment alone: no call inside, so an empty critical section
    /// measures the lock and nothing of the work loop's call (register saves around it).
    fn bump_empty(&self);
}

/// A [`Pool`] of `threads` threads whose every iteration is one acquisition of `m` with `units` of
/// work: [`Counter::bump_empty`] for 0 units, [`Counter::bump`] otherwise, so the 0 ns cells run no
/// call inside the lock. Ours.
pub fn bump_pool<M: Counter>(threads: usize, m: Arc<M>, units: u64) -> Pool {
    if units == 0 {
        Pool::new(threads, move |_| m.bump_empty())
    } else {
        Pool::new(threads, move |_| m.bump(units))
    }
}

impl<R: lock_api::RawMutex + Send + Sync + 'static> Counter for lock_api::Mutex<R, u64> {
    fn make() -> Self {
        lock_api::Mutex::new(0)
    }
    #[inline]
    fn bump(&self, units: u64) {
        let mut g = self.lock();
        *g = work(*g, units).wrapping_add(1);
    }
    #[inline]
    fn bump_empty(&self) {
        *self.lock() += 1;
    }
}

impl Counter for std::sync::Mutex<u64> {
    fn make() -> Self {
        std::sync::Mutex::new(0)
    }
    #[inline]
    fn bump(&self, units: u64) {
        let mut g = self.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *g = work(*g, units).wrapping_add(1);
    }
    #[inline]
    fn bump_empty(&self) {
        *self.lock().unwrap_or_else(std::sync::PoisonError::into_inner) += 1;
    }
}

impl Counter for spin::Mutex<u64> {
    fn make() -> Self {
        spin::Mutex::new(0)
    }
    #[inline]
    fn bump(&self, units: u64) {
        let mut g = self.lock();
        *g = work(*g, units).wrapping_add(1);
    }
    #[inline]
    fn bump_empty(&self) {
        *self.lock() += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three bumps; a bump that left the mutex locked would deadlock the next one.
    fn three_bumps<M: Counter>(lock_value: impl Fn(&M) -> u64) -> u64 {
        let m = M::make();
        for units in [0, 3, 0] {
            m.bump(units);
        }
        m.bump_empty();
        lock_value(&m)
    }

    #[test]
    fn every_counter_bumps_and_unlocks() {
        // With 0 units of work a bump adds exactly 1; the 3-unit bump changes the value arbitrarily, so
        // compare against the same sequence on a plain u64.
        let mut expected = 0_u64;
        for units in [0, 3, 0] {
            expected = work(expected, units).wrapping_add(1);
        }
        expected += 1;
        let pl = three_bumps::<lock_api::Mutex<parking_lot::RawMutex, u64>>(|m| *m.lock());
        let std = three_bumps::<std::sync::Mutex<u64>>(|m| *m.lock().unwrap());
        let spin = three_bumps::<spin::Mutex<u64>>(|m| *m.lock());
        assert_eq!((pl, std, spin), (expected, expected, expected));
    }
}
