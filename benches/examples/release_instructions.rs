//! What an uncontended lock and unlock cost by their instructions alone, on one word and one thread:
//! the patterns `RawAbsLock`'s release chose between in round 11 (`docs/abs.md`), beside
//! `parking_lot::Mutex`'s lock and unlock.
//!
//! ```text
//! cargo run --release -p abslock-benches --example release_instructions -- [PASSES]
//! ```
//!
//! Each pattern runs 50 million times on a static 64-byte-aligned word; every pass runs all patterns
//! in the same order. Prints, per pass, ns per iteration and the ratio to `parking_lot`'s lock and
//! unlock in the same pass. Defaults to 3 passes. One thread, so no other core touches the line: the
//! figures are what the instructions cost back to back, not contention. Ours.

use std::hint::black_box;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

/// Iterations per pattern and pass.
const ITERS: u64 = 50_000_000;
/// The lock bit, as in `RawAbsLock`'s word.
const LOCKED: u32 = 1;
/// The bits that send `RawAbsLock`'s release out of line (`PARKED | HEIR`).
const RARE: u32 = 2 | 4;

/// A lock word on a line of its own.
#[repr(align(64))]
struct Line(AtomicU32);

static WORD: Line = Line(AtomicU32::new(0));

/// Round 10's release: `lock bts`, then a load of the word, a test, and a CAS from what was read.
fn bts_load_cas() {
    let w = &WORD.0;
    let mut taken = 0_u64;
    for _ in 0..ITERS {
        // Counted in a register, as the lock's fast path only branches on the bit (no store of it).
        taken += u64::from(w.fetch_or(LOCKED, Ordering::Acquire) & LOCKED == 0);
        let s = w.load(Ordering::Relaxed);
        if s & RARE == 0 {
            let _ = w.compare_exchange(s, s & !LOCKED, Ordering::Release, Ordering::Relaxed);
        }
    }
    black_box(taken);
}

/// Round 11's release: `lock bts`, then one CAS from exactly `LOCKED`.
fn bts_cas() {
    let w = &WORD.0;
    let mut taken = 0_u64;
    for _ in 0..ITERS {
        taken += u64::from(w.fetch_or(LOCKED, Ordering::Acquire) & LOCKED == 0);
        let _ = w.compare_exchange(LOCKED, 0, Ordering::Release, Ordering::Relaxed);
    }
    black_box(taken);
}

/// A hint of the word on another line, which the holder writes after its acquire and reads back at the
/// release.
static HINT: Line = Line(AtomicU32::new(0));

/// A release that expects the word its acquire saw: `lock bts`, a plain store of the old word (with
/// `LOCKED`) on another line, then at the release a load of it and one CAS from it.
fn bts_hint_cas() {
    let (w, h) = (&WORD.0, &HINT.0);
    let mut taken = 0_u64;
    for _ in 0..ITERS {
        let old = w.fetch_or(LOCKED, Ordering::Acquire);
        taken += u64::from(old & LOCKED == 0);
        h.store(old | LOCKED, Ordering::Relaxed);
        let expect = h.load(Ordering::Relaxed);
        let _ = w.compare_exchange(expect, expect & !LOCKED, Ordering::Release, Ordering::Relaxed);
    }
    black_box(taken);
}

/// The holder's counter, on the hint's line as `RawAbsLock`'s counters share a line of their own.
#[repr(C, align(64))]
struct Busy {
    count: AtomicU64,
    hint: AtomicU32,
}

static BUSY: Busy = Busy { count: AtomicU64::new(0), hint: AtomicU32::new(0) };

/// Round 11's release with the holder's counter store between (as `note_acquisition` does): `lock bts`,
/// load and store of the count, CAS from exactly `LOCKED`.
fn bts_count_cas() {
    let (w, b) = (&WORD.0, &BUSY);
    let mut taken = 0_u64;
    for _ in 0..ITERS {
        taken += u64::from(w.fetch_or(LOCKED, Ordering::Acquire) & LOCKED == 0);
        b.count.store(b.count.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        let _ = w.compare_exchange(LOCKED, 0, Ordering::Release, Ordering::Relaxed);
    }
    black_box(taken);
}

/// The same with the hint stored beside the count and read back at the release.
fn bts_count_hint_cas() {
    let (w, b) = (&WORD.0, &BUSY);
    let mut taken = 0_u64;
    for _ in 0..ITERS {
        let old = w.fetch_or(LOCKED, Ordering::Acquire);
        taken += u64::from(old & LOCKED == 0);
        b.count.store(b.count.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        b.hint.store(old | LOCKED, Ordering::Relaxed);
        let expect = b.hint.load(Ordering::Relaxed);
        let _ = w.compare_exchange(expect, expect & !LOCKED, Ordering::Release, Ordering::Relaxed);
    }
    black_box(taken);
}

/// A spin lock's pair: swap to lock, a plain store to unlock (one RMW).
fn swap_store() {
    let w = &WORD.0;
    let mut taken = 0_u64;
    for _ in 0..ITERS {
        taken += u64::from(w.swap(LOCKED, Ordering::Acquire) == 0);
        w.store(0, Ordering::Release);
    }
    black_box(taken);
}

/// `parking_lot::Mutex<()>`'s lock and unlock (its `RawMutex` under a guard).
fn parking_lot_pair() {
    let m = parking_lot::Mutex::new(());
    for _ in 0..ITERS {
        drop(black_box(&m).lock());
    }
}

/// ns per iteration of `f`.
fn time(f: fn()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_nanos() as f64 / ITERS as f64
}

fn main() {
    let passes: usize = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 3,
        Some(Ok(n)) if n >= 1 => n,
        Some(_) => {
            eprintln!("usage: release_instructions [PASSES >= 1]");
            std::process::exit(2);
        }
    };
    let patterns: [(&str, fn()); 6] = [
        ("lock bts, load, CAS (round 10)", bts_load_cas),
        ("lock bts, CAS from LOCKED (round 11)", bts_cas),
        ("lock bts, store hint, load hint, CAS", bts_hint_cas),
        ("lock bts, count, CAS from LOCKED", bts_count_cas),
        ("lock bts, count, hint, CAS from hint", bts_count_hint_cas),
        ("swap, store (spin lock)", swap_store),
    ];
    println!(
        "{ITERS} iterations per pattern; ns per iteration, ratio to parking_lot's pair in the same pass"
    );
    for pass in 1..=passes {
        let peer = time(parking_lot_pair);
        println!("pass {pass}: parking_lot::Mutex lock+unlock {peer:.2} ns");
        for (name, f) in patterns {
            let ns = time(f);
            println!("  {name:38} {ns:6.2} ns  {:.2}x", ns / peer);
        }
    }
}
