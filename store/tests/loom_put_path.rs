//! loom model checks of the put-path hand-off: a record and its result between a put and
//! the writer (the sequencer's cell) or the combiner (flat combining's slots, bitmap and
//! combiner lock). Build and run with
//!
//! ```text
//! RUSTFLAGS="--cfg abslock_loom" LOOM_MAX_PREEMPTIONS=2 \
//!     cargo test -p abslock-store --test loom_put_path --release --target-dir target/loom
//! ```
#![cfg(abslock_loom)]

use abslock_store::put_path::{Apply, Combining, Completion, Job};
use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::thread;

/// A tail that hands out positions: request `n` bytes, get the position before them.
struct Counter {
    pos: u64,
}

impl Apply for Counter {
    type Input = u64;
    type Output = u64;
    fn apply(&mut self, jobs: &mut [Job<u64, u64>]) {
        for j in jobs {
            j.output = Some(self.pos);
            self.pos += j.input;
        }
    }
}

/// The sequencer's hand-off: the put publishes its cell and announces it (release, as the
/// queue does); the writer takes the input and completes; the put sleeps or spins until its
/// own result arrives.
#[test]
fn sequencer_cell_hands_over_record_and_result() {
    loom::model(|| {
        let cell = Arc::new(Completion::<u64, u64>::published(7));
        let queued = Arc::new(AtomicBool::new(false));
        let writer = {
            let (cell, queued) = (Arc::clone(&cell), Arc::clone(&queued));
            thread::spawn(move || {
                while !queued.load(Ordering::Acquire) {
                    thread::yield_now();
                }
                // SAFETY: the writer is this cell's only executor; it acquired the announcement.
                let input = unsafe { cell.take_input() }.expect("published");
                // SAFETY: as above, completed once.
                unsafe { cell.complete(Ok(input * 2)) };
            })
        };
        queued.store(true, Ordering::Release);
        // SAFETY: this thread is the cell's put.
        assert_eq!(unsafe { cell.wait_output() }, Ok(14));
        writer.join().unwrap();
    });
}

/// Two puts on a two-slot combiner: each gets its own, distinct position, whoever combines,
/// and neither sleeps forever (loom reports a deadlock if one did).
#[test]
fn combining_two_puts_each_get_their_own_result() {
    loom::model(|| {
        let comb = Arc::new(Combining::with_slots(Counter { pos: 0 }, 2));
        let other = {
            let comb = Arc::clone(&comb);
            thread::spawn(move || comb.submit(1).unwrap())
        };
        let mine = comb.submit(10).unwrap();
        let theirs = other.join().unwrap();
        // Either order is a valid sequential history: [1 then 10] or [10 then 1].
        assert!((theirs, mine) == (0, 1) || (mine, theirs) == (0, 10), "mine {mine}, theirs {theirs}");
    });
}

/// One slot for two puts: the second waits for the first to free it (claim, publish,
/// complete, free, reclaim).
#[test]
fn combining_one_slot_is_reused() {
    loom::model(|| {
        let comb = Arc::new(Combining::with_slots(Counter { pos: 0 }, 1));
        let other = {
            let comb = Arc::clone(&comb);
            thread::spawn(move || comb.submit(1).unwrap())
        };
        let mine = comb.submit(10).unwrap();
        let theirs = other.join().unwrap();
        assert!((theirs, mine) == (0, 1) || (mine, theirs) == (0, 10), "mine {mine}, theirs {theirs}");
    });
}
