//! The hand-off cell between one put and the thread that applies it (ours): the put's
//! input goes in, the result comes back, and the put waits on the cell's own word (spin
//! briefly, then sleep), so a waiter never touches the log's tail or another waiter's line.
//!
//! Public so that `store/tests/loom_put_path.rs` can model-check the hand-off; the store's
//! callers never need it.

use super::HandOffError;
use super::sync::{Cell, Futex, Ordering, SPINS, spin_loop};

/// Unclaimed (combining slots only).
pub const FREE: u32 = 0;
/// Claimed by a put that is writing its input.
pub const WRITING: u32 = 1;
/// Input visible to the executor; the put waits awake.
pub const PUBLISHED: u32 = 2;
/// As [`PUBLISHED`]; the put is asleep on the word, or about to be.
pub const SLEEPING: u32 = 3;
/// As [`PUBLISHED`]; the put was woken to try the combiner lock itself.
pub const NUDGED: u32 = 4;
/// Output written; only the put reads the cell now.
pub const DONE: u32 = 5;

/// One request's input, its result, and the word its put waits on.
#[derive(Debug)]
pub struct Completion<T, O> {
    state: Futex,
    input: Cell<Option<T>>,
    output: Cell<Option<Result<O, HandOffError>>>,
}

// SAFETY: the input and output cells are accessed by one thread at a time, handed over by
// release/acquire on the state word (and the announcement the caller makes); the values
// themselves move between threads, hence `Send`.
unsafe impl<T: Send, O: Send> Sync for Completion<T, O> {}

impl<T, O> Completion<T, O> {
    /// An unclaimed cell (a combining slot).
    pub fn free() -> Self {
        Completion { state: Futex::new(FREE), input: Cell::new(None), output: Cell::new(None) }
    }

    /// A cell already holding `input` (a sequencer request, on its put's stack).
    pub fn published(input: T) -> Self {
        Completion { state: Futex::new(PUBLISHED), input: Cell::new(Some(input)), output: Cell::new(None) }
    }

    /// Claims a free cell for the calling put; `false` if another put holds it.
    #[inline]
    pub fn try_claim(&self) -> bool {
        let word = self.state.word();
        word.load(Ordering::Relaxed) == FREE
            && word.compare_exchange(FREE, WRITING, Ordering::Acquire, Ordering::Relaxed).is_ok()
    }

    /// Writes the input of a claimed cell and makes it visible (the caller then announces
    /// the cell with a release operation the executor acquires).
    ///
    /// # Safety
    /// The caller claimed the cell ([`try_claim`](Self::try_claim) returned `true`) and has
    /// not published it since.
    #[inline]
    pub unsafe fn publish(&self, input: T) {
        debug_assert_eq!(self.state.word().load(Ordering::Relaxed), WRITING);
        // SAFETY: the cell is claimed (WRITING): no executor reads it until it is announced,
        // which happens after the release store below.
        unsafe { self.input.with_mut(|i| *i = Some(input)) };
        self.state.word().store(PUBLISHED, Ordering::Release);
    }

    /// Takes the input of an announced cell.
    ///
    /// # Safety
    /// The caller is the one executor that acquired this cell's announcement, and the cell is
    /// not done yet.
    #[inline]
    pub unsafe fn take_input(&self) -> Option<T> {
        // SAFETY: the caller's contract: the put does not touch the cell until DONE.
        unsafe { self.input.with_mut(Option::take) }
    }

    /// Hands `out` to the put and wakes it if it sleeps. The cell may be reused by its put
    /// as soon as this returns.
    ///
    /// # Safety
    /// As [`take_input`](Self::take_input); called once per announcement.
    #[inline]
    pub unsafe fn complete(&self, out: Result<O, HandOffError>) {
        // SAFETY: the caller's contract; the put reads the output only after acquiring DONE.
        unsafe { self.output.with_mut(|o| *o = Some(out)) };
        if self.state.word().swap(DONE, Ordering::AcqRel) == SLEEPING {
            self.state.wake_one();
        }
    }

    /// Whether the result is in (acquire: the output is then readable).
    #[inline]
    pub fn is_done(&self) -> bool {
        self.state.word().load(Ordering::Acquire) == DONE
    }

    /// Takes the result of a done cell and frees it (for the next claim).
    ///
    /// # Safety
    /// The caller is the put that published the cell and saw [`is_done`](Self::is_done).
    #[inline]
    pub unsafe fn take_output(&self) -> Result<O, HandOffError> {
        // SAFETY: DONE was acquired; the executor no longer touches the cell.
        let out = unsafe { self.output.with_mut(Option::take) };
        self.state.word().store(FREE, Ordering::Release);
        out.unwrap_or(Err(HandOffError::Panicked))
    }

    /// Sleeps until the cell is done, nudged, or woken spuriously, unless `ready()` says the
    /// put should act instead. `ready` is checked after the put declared itself asleep
    /// (sequentially consistent on both sides), so a waker that changed what `ready` reads
    /// before seeing the sleeper is never missed.
    pub fn sleep_unless(&self, ready: impl Fn() -> bool) {
        let word = self.state.word();
        let mut seen = word.load(Ordering::SeqCst);
        loop {
            match seen {
                DONE => return,
                SLEEPING => break,
                _ => match word.compare_exchange(seen, SLEEPING, Ordering::SeqCst, Ordering::SeqCst) {
                    Ok(_) => break,
                    Err(now) => seen = now,
                },
            }
        }
        if ready() {
            return;
        }
        self.state.wait(SLEEPING);
    }

    /// Wakes a sleeping put so it tries the combiner lock; `false` if it was not asleep.
    pub fn nudge(&self) -> bool {
        let ok =
            self.state.word().compare_exchange(SLEEPING, NUDGED, Ordering::SeqCst, Ordering::SeqCst).is_ok();
        if ok {
            self.state.wake_one();
        }
        ok
    }

    /// Waits (spin 200 pause hints, then sleep) until the cell is done, and takes the result.
    ///
    /// # Safety
    /// As [`take_output`](Self::take_output), without the `is_done` check.
    pub unsafe fn wait_output(&self) -> Result<O, HandOffError> {
        let mut spins = 0;
        while !self.is_done() {
            if spins < SPINS {
                spins += 1;
                spin_loop();
            } else {
                self.sleep_unless(|| false);
            }
        }
        // SAFETY: done, and the caller is the put.
        unsafe { self.take_output() }
    }
}
