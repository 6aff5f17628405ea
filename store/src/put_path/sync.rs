//! The one place the put-path executors choose between `loom` and `std`.
//!
//! `RUSTFLAGS="--cfg abslock_loom"` swaps the atomics, the cell, the spin hint and the futex onto
//! loom's model checker, so `store/tests/loom_put_path.rs` checks the very hand-off code the store
//! runs. Under loom the futex is a loom `Mutex<()>` + `Condvar`: `wait` re-checks the word under
//! the mutex and `wake_one` takes the mutex before notifying, so no wake-up slips between the
//! check and the sleep (futex semantics).

#[cfg(abslock_loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
#[cfg(not(abslock_loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// Busy-wait iterations before a waiter goes to sleep. Under loom none: a waiter that sleeps
/// at once is the case where a lost wake-up would show (spinning only narrows the window).
#[cfg(not(abslock_loom))]
pub(crate) const SPINS: u32 = 200;
#[cfg(abslock_loom)]
pub(crate) const SPINS: u32 = 0;

/// One iteration of a bounded busy-wait.
#[inline]
pub(crate) fn spin_loop() {
    #[cfg(abslock_loom)]
    loom::thread::yield_now();
    #[cfg(not(abslock_loom))]
    std::hint::spin_loop();
}

/// Gives up the rest of this thread's time slice.
#[inline]
pub(crate) fn yield_now() {
    #[cfg(abslock_loom)]
    loom::thread::yield_now();
    #[cfg(not(abslock_loom))]
    std::thread::yield_now();
}

/// An `UnsafeCell` whose accesses loom can check for data races.
#[derive(Debug)]
pub(crate) struct Cell<T> {
    #[cfg(abslock_loom)]
    inner: loom::cell::UnsafeCell<T>,
    #[cfg(not(abslock_loom))]
    inner: std::cell::UnsafeCell<T>,
}

impl<T> Cell<T> {
    /// A cell holding `value`.
    pub(crate) fn new(value: T) -> Self {
        Cell {
            #[cfg(abslock_loom)]
            inner: loom::cell::UnsafeCell::new(value),
            #[cfg(not(abslock_loom))]
            inner: std::cell::UnsafeCell::new(value),
        }
    }

    /// Runs `f` on the value.
    ///
    /// # Safety
    /// No other thread accesses the cell during the call (the caller's protocol orders every
    /// access with a release/acquire pair).
    #[inline]
    pub(crate) unsafe fn with_mut<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        #[cfg(abslock_loom)]
        {
            // SAFETY: exclusive access is the caller's contract.
            self.inner.with_mut(|p| f(unsafe { &mut *p }))
        }
        #[cfg(not(abslock_loom))]
        {
            // SAFETY: exclusive access is the caller's contract.
            f(unsafe { &mut *self.inner.get() })
        }
    }
}

/// A 32-bit word threads can sleep on until it changes (Linux `futex`, or the emulation above).
#[derive(Debug)]
pub(crate) struct Futex {
    word: AtomicU32,
    #[cfg(abslock_loom)]
    sleep: loom::sync::Mutex<()>,
    #[cfg(abslock_loom)]
    woken: loom::sync::Condvar,
}

impl Futex {
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

    /// Wakes at most one thread sleeping in [`Futex::wait`]. Change the word first.
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
