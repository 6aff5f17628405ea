//! The one place that chooses between `loom` and `std`.
//!
//! Everything else in the crate imports atomics, the spin hint, `yield_now` and the futex from here, so
//! `RUSTFLAGS="--cfg abslock_loom"` swaps the whole crate onto loom's model checker (the habit of
//! `bytes/src/loom.rs` and crossbeam's `primitive` module).
//!
//! Under loom the futex is emulated with a loom `Mutex<()>` + `Condvar` per lock: `wait` re-checks the
//! word under the mutex and `wake_one` takes the mutex before notifying, which gives futex semantics
//! (no wake-up can slip between the check and the sleep).

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

/// A 32-bit word that threads can sleep on until it changes (Linux `futex`, or the emulation above).
pub(crate) struct Futex {
    word: AtomicU32,
    #[cfg(abslock_loom)]
    sleep: loom::sync::Mutex<()>,
    #[cfg(abslock_loom)]
    woken: loom::sync::Condvar,
}

impl Futex {
    loom_const_fn! {
        /// A word holding `value`, with nobody asleep on it.
        pub(crate) fn new(value: u32) -> Self {
            Futex {
                word: AtomicU32::new(value),
                #[cfg(abslock_loom)]
                sleep: loom::sync::Mutex::new(()),
                #[cfg(abslock_loom)]
                woken: loom::sync::Condvar::new(),
            }
        }
    }

    /// The atomic word itself.
    #[inline]
    pub(crate) fn word(&self) -> &AtomicU32 {
        &self.word
    }

    /// Sleeps while the word equals `expected`. May return spuriously; callers re-check.
    pub(crate) fn wait(&self, expected: u32) {
        #[cfg(not(abslock_loom))]
        atomic_wait::wait(&self.word, expected);
        #[cfg(abslock_loom)]
        {
            let guard = self.sleep.lock().unwrap();
            if self.word.load(Ordering::SeqCst) == expected {
                drop(self.woken.wait(guard).unwrap());
            }
        }
    }

    /// Wakes at most one thread sleeping in [`Futex::wait`].
    pub(crate) fn wake_one(&self) {
        #[cfg(not(abslock_loom))]
        atomic_wait::wake_one(&self.word);
        #[cfg(abslock_loom)]
        {
            let _guard = self.sleep.lock().unwrap();
            self.woken.notify_one();
        }
    }
}
