//! The one place that chooses between `loom` and `std`.
//!
//! Everything else in the crate imports atomics, the spin hint, `yield_now` and the parking queue from
//! here, so `RUSTFLAGS="--cfg abslock_loom"` swaps the whole crate onto loom's model checker (the habit
//! of `bytes/src/loom.rs` and crossbeam's `primitive` module).
//!
//! Parking goes through [`ParkQueue`]: with std it is `parking_lot_core`'s global table keyed by the
//! lock's address (park with a deadline, unpark one thread with a token, so an unlock can hand the lock
//! over directly); under loom it is a loom `Mutex` + `Condvar` per lock with the same contract: the
//! `validate` and unpark callbacks run under the queue's mutex, so no wake-up slips between the check
//! and the sleep. A deadline under loom is modelled as one that has already passed when the thread
//! would sleep, which explores the time-out path.

#[cfg(abslock_loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
#[cfg(not(abslock_loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// Not modelled by loom: used only for the optional decision trace, which loom models never enable.
pub(crate) use std::sync::{Mutex as TraceMutex, OnceLock};

/// One iteration of a busy-wait: the CPU's pause hint (`PAUSE` on x86, `YIELD`/`ISB` on Arm).
#[inline]
pub(crate) fn spin_loop() {
    #[cfg(abslock_loom)]
    loom::hint::spin_loop();
    #[cfg(not(abslock_loom))]
    std::hint::spin_loop();
}

/// A retry of a bare CAS loop *without* a pause hint, as RocketMQ's `PutMessageSpinLock` does.
///
/// With std this is nothing at all. Under loom it must yield, or the model checker reports
/// "exceeded maximum branches" on the unbounded loop.
#[inline]
pub(crate) fn cas_retry() {
    #[cfg(abslock_loom)]
    loom::thread::yield_now();
}

/// Gives up the rest of this thread's time slice (`sched_yield`).
#[inline]
pub(crate) fn yield_now() {
    #[cfg(abslock_loom)]
    loom::thread::yield_now();
    #[cfg(not(abslock_loom))]
    std::thread::yield_now();
}

/// Declares a constructor that is `const` with std and plain under loom (loom atomics are not `const`).
macro_rules! loom_const_fn {
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($args:tt)*) -> $ret:ty $body:block) => {
        $(#[$meta])*
        #[cfg(not(abslock_loom))]
        $vis const fn $name($($args)*) -> $ret $body

        $(#[$meta])*
        #[cfg(abslock_loom)]
        $vis fn $name($($args)*) -> $ret $body
    };
}
pub(crate) use loom_const_fn;

/// When a timed wait gives up: an `Instant` with std; under loom a marker meaning "already passed".
#[cfg(not(abslock_loom))]
pub(crate) type Deadline = std::time::Instant;
/// When a timed wait gives up: an `Instant` with std; under loom a marker meaning "already passed".
#[cfg(abslock_loom)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline;

/// Whether a timed wait's deadline has passed, for the spin and yield stages (a park checks its own).
#[cfg(not(abslock_loom))]
pub(crate) fn deadline_passed(deadline: Deadline) -> bool {
    std::time::Instant::now() >= deadline
}

/// Under loom a timed lock gives up only in the park (its deadline is modelled there as already
/// passed), so the models keep exploring the timed-out park; giving up while spinning or yielding is
/// tested on real threads (`locks/tests/timed_and_fair.rs`).
#[cfg(abslock_loom)]
pub(crate) fn deadline_passed(_: Deadline) -> bool {
    false
}

/// The deadline of a solo sleeper's park: `us` from now, or the caller's own `deadline` if that is
/// earlier.
#[cfg(not(abslock_loom))]
pub(crate) fn recheck_deadline(us: u32, deadline: Option<Deadline>) -> Deadline {
    let recheck = std::time::Instant::now() + std::time::Duration::from_micros(u64::from(us));
    deadline.map_or(recheck, |d| d.min(recheck))
}

/// Under loom every park deadline is modelled as passed, so a solo sleeper's re-check is explored at
/// once.
#[cfg(abslock_loom)]
pub(crate) fn recheck_deadline(_us: u32, _deadline: Option<Deadline>) -> Deadline {
    Deadline
}

/// Whether a timed lock's own deadline has passed after a park timed out. Under loom a timed lock's
/// deadline counts as passed once it has slept, as in [`ParkQueue::park`].
#[cfg(not(abslock_loom))]
pub(crate) fn deadline_passed_after_park(deadline: Deadline) -> bool {
    deadline_passed(deadline)
}

/// Under loom a timed lock's deadline counts as passed once it has slept.
#[cfg(abslock_loom)]
pub(crate) fn deadline_passed_after_park(_: Deadline) -> bool {
    true
}

#[cfg(not(abslock_loom))]
std::thread_local! {
    /// The lock (its parking key) whose last acquisition on this thread was in the quiet regime, or 0:
    /// a hint that lets that lock's release skip its RMW without reading the lock's lines first. The
    /// holder confirms it on the lock before trusting it (a guard may be unlocked on another thread). A
    /// `const` `Cell` without a destructor: one thread-local load or store, valid while the thread exits.
    static QUIET_HELD: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[cfg(abslock_loom)]
loom::thread_local! {
    /// The same hint under loom, as a loom thread-local so the models run the release's real choice.
    static QUIET_HELD: std::cell::Cell<usize> = std::cell::Cell::new(0);
}

/// Records that this thread took the lock with parking key `key` in the quiet regime.
#[inline]
pub(crate) fn quiet_hint_set(key: usize) {
    QUIET_HELD.with(|c| c.set(key));
}

/// Whether this thread's last quiet acquisition was of the lock with parking key `key`; clears the hint
/// if so.
#[inline]
pub(crate) fn quiet_hint_take(key: usize) -> bool {
    QUIET_HELD.with(|c| {
        let mine = c.get() == key;
        if mine {
            c.set(0);
        }
        mine
    })
}

/// Microseconds since a process-wide origin (the first call), for the starvation bound's period.
#[cfg(not(abslock_loom))]
pub(crate) fn now_us() -> u64 {
    static ORIGIN: OnceLock<std::time::Instant> = OnceLock::new();
    let origin = *ORIGIN.get_or_init(std::time::Instant::now);
    u64::try_from(origin.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// Under loom time does not pass (only a bound of 0 is ever due).
#[cfg(abslock_loom)]
pub(crate) fn now_us() -> u64 {
    0
}

/// How a [`ParkQueue::park`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parked {
    /// An unpark chose us and passed this token.
    Unparked(usize),
    /// `validate` returned false; we never slept.
    Invalid,
    /// The deadline passed first; `timed_out` ran.
    TimedOut,
}

/// What [`ParkQueue::unpark_first`] saw, passed to its callback under the queue lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unparking {
    /// Whether a thread was parked and is being woken.
    pub(crate) woken: bool,
    /// Whether other threads stay parked on this queue.
    pub(crate) more: bool,
}

/// The threads parked on one lock. Zero-sized with std: the queue lives in `parking_lot_core`'s table
/// under a `key`, which every caller sets to the address of its lock's (non-zero-sized) state word, so
/// no other primitive shares it. Under loom the key is ignored.
pub(crate) struct ParkQueue {
    #[cfg(abslock_loom)]
    queue: loom::sync::Mutex<LoomQueue>,
    #[cfg(abslock_loom)]
    changed: loom::sync::Condvar,
}

#[cfg(abslock_loom)]
#[derive(Default)]
struct LoomQueue {
    next_id: usize,
    /// (thread id, park token), oldest first.
    parked: std::collections::VecDeque<(usize, usize)>,
    /// (thread id, unpark token) for threads chosen but not yet returned.
    woken: Vec<(usize, usize)>,
}

impl ParkQueue {
    loom_const_fn! {
        /// An empty queue.
        pub(crate) fn new() -> Self {
            ParkQueue {
                #[cfg(abslock_loom)]
                queue: loom::sync::Mutex::new(LoomQueue { next_id: 0, parked: std::collections::VecDeque::new(), woken: Vec::new() }),
                #[cfg(abslock_loom)]
                changed: loom::sync::Condvar::new(),
            }
        }
    }

    /// Sleeps until an unpark picks this thread, if `validate()` (run under the queue lock) says so;
    /// `timed_out(was_last)` runs under the queue lock if `deadline` passes first.
    #[cfg(not(abslock_loom))]
    pub(crate) fn park(
        &self,
        key: usize,
        validate: impl FnOnce() -> bool,
        timed_out: impl FnOnce(bool),
        token: usize,
        deadline: Option<Deadline>,
    ) -> Parked {
        // SAFETY: the key is the address of the owning lock's state word (callers' contract), which
        // no other primitive parks on; `validate` and `timed_out` only touch atomics (no unwinding, no call
        // into parking_lot).
        let result = unsafe {
            parking_lot_core::park(
                key,
                validate,
                || {},
                |_, was_last| timed_out(was_last),
                parking_lot_core::ParkToken(token),
                deadline,
            )
        };
        match result {
            parking_lot_core::ParkResult::Unparked(t) => Parked::Unparked(t.0),
            parking_lot_core::ParkResult::Invalid => Parked::Invalid,
            parking_lot_core::ParkResult::TimedOut => Parked::TimedOut,
        }
    }

    /// Wakes the longest-parked thread, if any; `callback` runs under the queue lock, sees who is woken
    /// and returns the token that thread receives.
    #[cfg(not(abslock_loom))]
    pub(crate) fn unpark_first(&self, key: usize, callback: impl FnOnce(Unparking) -> usize) {
        // SAFETY: as in `park`; the callback only touches atomics and locals.
        unsafe {
            parking_lot_core::unpark_one(key, |r| {
                let seen = Unparking { woken: r.unparked_threads != 0, more: r.have_more_threads };
                parking_lot_core::UnparkToken(callback(seen))
            });
        }
    }

    /// Wakes every parked thread, each with `token`; returns how many. The word's `PARKED` bit is left
    /// as it is (it means "a thread may be parked").
    #[cfg(not(abslock_loom))]
    pub(crate) fn unpark_all(&self, key: usize, token: usize) -> usize {
        // SAFETY: as in `park`; no callback runs.
        unsafe { parking_lot_core::unpark_all(key, parking_lot_core::UnparkToken(token)) }
    }

    /// Loom emulation of [`park`](Self::park) (see the module comment).
    #[cfg(abslock_loom)]
    pub(crate) fn park(
        &self,
        key: usize,
        validate: impl FnOnce() -> bool,
        timed_out: impl FnOnce(bool),
        token: usize,
        deadline: Option<Deadline>,
    ) -> Parked {
        let _ = key;
        let mut q = self.queue.lock().unwrap();
        if !validate() {
            return Parked::Invalid;
        }
        let id = q.next_id;
        q.next_id += 1;
        q.parked.push_back((id, token));
        loop {
            if let Some(i) = q.woken.iter().position(|&(w, _)| w == id) {
                return Parked::Unparked(q.woken.swap_remove(i).1);
            }
            if deadline.is_some() {
                q.parked.retain(|&(w, _)| w != id);
                timed_out(q.parked.is_empty());
                return Parked::TimedOut;
            }
            q = self.changed.wait(q).unwrap();
        }
    }

    /// Loom emulation of [`unpark_all`](Self::unpark_all).
    #[cfg(abslock_loom)]
    pub(crate) fn unpark_all(&self, key: usize, token: usize) -> usize {
        let _ = key;
        let mut q = self.queue.lock().unwrap();
        let n = q.parked.len();
        while let Some((id, _)) = q.parked.pop_front() {
            q.woken.push((id, token));
        }
        if n > 0 {
            self.changed.notify_all();
        }
        n
    }

    /// Loom emulation of [`unpark_first`](Self::unpark_first).
    #[cfg(abslock_loom)]
    pub(crate) fn unpark_first(&self, key: usize, callback: impl FnOnce(Unparking) -> usize) {
        let _ = key;
        let mut q = self.queue.lock().unwrap();
        let head = q.parked.pop_front();
        let info = Unparking { woken: head.is_some(), more: !q.parked.is_empty() };
        let token = callback(info);
        if let Some((id, _)) = head {
            q.woken.push((id, token));
            self.changed.notify_all();
        }
    }
}
