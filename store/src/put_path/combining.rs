//! [`Combining`]: flat combining over the put-message critical section (Hendler, Incze,
//! Shavit, Tzafrir, "Flat Combining and the Synchronization-Parallelism Tradeoff",
//! SPAA 2010).
//!
//! A put that finds the combiner lock free takes it and applies its own request directly,
//! with whatever others have published (the uncontended fast path). Otherwise it claims a
//! slot (its own in practice: each thread starts at its own index), writes its request there
//! and sets the slot's bit in one `pending` word. It then waits on its slot;
//! while the combiner lock is free it takes it and becomes the combiner: it swaps `pending`
//! to zero, applies every request whose bit was set in one [`Apply::apply`] call, completes
//! each slot, and repeats while requests keep arriving (at most [`PASSES`] times). The
//! publication list of the paper is here a fixed array with a bitmap, so a pass reads only
//! the slots that hold requests.
//!
//! No lost request: whoever releases the combiner lock re-reads `pending` after the release
//! and, if a request is waiting, nudges its put awake to take the lock; a put about to sleep
//! first declares it on its slot, then re-checks the lock (both sides sequentially
//! consistent), so either the releaser sees the sleeper or the sleeper sees the lock free.

use crossbeam_utils::CachePadded;

use super::completion::Completion;
use super::sync::{AtomicBool, AtomicU64, Cell, Ordering, SPINS, spin_loop, yield_now};
use super::{Apply, HandOffError, Job, run_batch};

/// Slots of a [`Combining`] (puts that can wait at once without yielding for a slot): one
/// `pending` word's bits.
pub const SLOTS: usize = 64;

/// Combining passes per lock hold: a bound on how long one put serves others.
const PASSES: usize = 4;

/// In a pass's `picked`: the combiner's own request, which has no slot.
const OWN: usize = usize::MAX;

/// One publication slot, on its own cache line.
type Slot<A> = CachePadded<Completion<<A as Apply>::Input, <A as Apply>::Output>>;

/// The combiner's private state, touched only under the combiner lock.
struct Combiner<A: Apply> {
    tail: A,
    picked: Vec<usize>,
    jobs: Vec<Job<A::Input, A::Output>>,
}

/// A flat-combining put path: the put that holds the combiner lock applies every published
/// request in one pass.
///
/// Each request's output reaches its own put only. A panic in [`Apply::apply`] fails that
/// pass's unserved requests with [`HandOffError::Panicked`] and releases the lock; the
/// combiner stays usable. A slot is held only for the duration of one submit, so a thread
/// that exits (or panics outside a submit) holds none. More than [`SLOTS`] concurrent
/// submits yield until a slot frees.
pub struct Combining<A: Apply> {
    locked: CachePadded<AtomicBool>,
    pending: CachePadded<AtomicU64>,
    slots: Box<[Slot<A>]>,
    combiner: Cell<Combiner<A>>,
    closed: AtomicBool,
}

// SAFETY: `combiner` is touched only under the combiner lock (acquire/release on `locked`);
// a slot's cells are handed between its put and the combiner by release/acquire on
// `pending` and on the slot's state. Inputs, outputs and the tail move between threads,
// hence the `Send` bounds.
unsafe impl<A: Apply> Sync for Combining<A> {}
// SAFETY: as above; everything owned is `Send`.
unsafe impl<A: Apply> Send for Combining<A> {}

impl<A: Apply> std::fmt::Debug for Combining<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Combining").field("slots", &self.slots.len()).finish_non_exhaustive()
    }
}

thread_local! {
    /// Where this thread starts looking for a free slot: distinct per thread, so a thread
    /// finds its "own" slot free at once unless more threads than slots are putting.
    static HINT: usize = {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    };
}

impl<A: Apply> Combining<A> {
    /// A combining put path over `tail` with [`SLOTS`] slots.
    pub fn new(tail: A) -> Self {
        Self::with_slots(tail, SLOTS)
    }

    /// As [`new`](Self::new) with `slots` slots (clamped to 1..=[`SLOTS`]); few slots keep
    /// model checks small.
    pub fn with_slots(tail: A, slots: usize) -> Self {
        let n = slots.clamp(1, SLOTS);
        Combining {
            locked: CachePadded::new(AtomicBool::new(false)),
            pending: CachePadded::new(AtomicU64::new(0)),
            slots: (0..n).map(|_| CachePadded::new(Completion::free())).collect(),
            combiner: Cell::new(Combiner {
                tail,
                picked: Vec::with_capacity(n + 1),
                jobs: Vec::with_capacity(n + 1),
            }),
            closed: AtomicBool::new(false),
        }
    }

    /// Publishes `input`, waits for its output (combining for others if the lock is free;
    /// spin briefly, then sleep), and returns it.
    ///
    /// # Errors
    /// [`HandOffError::Closed`] after [`close`](Self::close) (nothing applied);
    /// [`HandOffError::Panicked`] if the pass holding it panicked.
    pub fn submit(&self, input: A::Input) -> Result<A::Output, HandOffError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(HandOffError::Closed);
        }
        // Fast path: the combiner lock is free, so apply this request directly (first in
        // the pass, with whatever others have published) without going through a slot.
        if self.try_lock() {
            let out = self.combine(Some(input));
            self.unlock();
            return out.unwrap_or(Err(HandOffError::Panicked));
        }
        let i = self.claim();
        let slot = &self.slots[i];
        // SAFETY: `claim` claimed the slot for this submit.
        unsafe { slot.publish(input) };
        self.pending.fetch_or(1 << i, Ordering::SeqCst);
        let mut spins = 0;
        loop {
            if slot.is_done() {
                // SAFETY: we published this slot and saw it done.
                return unsafe { slot.take_output() };
            }
            if self.try_lock() {
                self.combine(None);
                self.unlock();
                continue;
            }
            if spins < SPINS {
                spins += 1;
                spin_loop();
                continue;
            }
            slot.sleep_unless(|| !self.locked.load(Ordering::SeqCst));
        }
    }

    /// Refuses later submits with [`HandOffError::Closed`]; submits already published are
    /// still applied. Idempotent.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
    }

    /// Claims a free slot, starting at this thread's own.
    fn claim(&self) -> usize {
        let n = self.slots.len();
        let start = HINT.with(|h| *h) % n;
        loop {
            for k in 0..n {
                let i = (start + k) % n;
                if self.slots[i].try_claim() {
                    return i;
                }
            }
            // More submits in flight than slots: let one finish.
            yield_now();
        }
    }

    #[inline]
    fn try_lock(&self) -> bool {
        !self.locked.load(Ordering::Relaxed)
            && self.locked.compare_exchange(false, true, Ordering::SeqCst, Ordering::Relaxed).is_ok()
    }

    /// Releases the combiner lock; if a request is still pending, nudges its put.
    fn unlock(&self) {
        self.locked.store(false, Ordering::SeqCst);
        let bits = self.pending.load(Ordering::SeqCst);
        if bits != 0 {
            self.slots[bits.trailing_zeros() as usize].nudge();
        }
    }

    /// Up to [`PASSES`] passes over the published slots; `own` (the combiner's own request,
    /// when it came by the fast path) goes first in the first pass, and its output is
    /// returned. Caller holds the combiner lock.
    fn combine(&self, mut own: Option<A::Input>) -> Option<Result<A::Output, HandOffError>> {
        let mut own_out = None;
        // SAFETY: the caller holds the combiner lock, the only way to reach `combiner`.
        unsafe {
            self.combiner.with_mut(|c| {
                let Combiner { tail, picked, jobs } = c;
                for _ in 0..PASSES {
                    let mut bits = self.pending.swap(0, Ordering::SeqCst);
                    if let Some(input) = own.take() {
                        jobs.push(Job { input, output: None });
                        picked.push(OWN);
                    } else if bits == 0 {
                        break;
                    }
                    while bits != 0 {
                        let i = bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        // SAFETY: the bit was set after the slot's input was published and
                        // our swap took it, so we are this publication's only executor.
                        match self.slots[i].take_input() {
                            Some(input) => {
                                jobs.push(Job { input, output: None });
                                picked.push(i);
                            }
                            // Unreachable (a published slot holds its input); fail it.
                            None => self.slots[i].complete(Err(HandOffError::Panicked)),
                        }
                    }
                    for (&i, out) in picked.iter().zip(run_batch(tail, jobs)) {
                        if i == OWN {
                            own_out = Some(out);
                        } else {
                            // SAFETY: as above; completed once, then never touched by us.
                            self.slots[i].complete(out);
                        }
                    }
                    picked.clear();
                    jobs.clear();
                }
            });
        }
        own_out
    }
}
