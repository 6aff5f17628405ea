//! The `memcpy-limit` cell: one thread copying message bodies into the warm ring at
//! an advancing offset, no lock, no encoding. No lock strategy can beat it; the
//! report states every strategy's distance from it.

use crate::cpu::process_cpu_seconds;
use crate::ring::Ring;
use crate::timed::Samples;
use crate::worker::{CellOutcome, CellTiming};
use std::time::Instant;

/// Copies `msg_size`-byte bodies into `ring` for `timing.warmup`, then counts for
/// `timing.measure`. Checks the clock every 64 copies.
pub fn run_memcpy_limit(ring: &Ring, msg_size: usize, timing: CellTiming) -> CellOutcome {
    let body: Vec<u8> = (0..msg_size).map(|i| (i % 251) as u8).collect();
    let len = ring.len();
    let size = msg_size.min(len);
    let mut at = 0usize;
    let copy = |at: &mut usize| {
        if *at + size > len {
            *at = 0;
        }
        // SAFETY: `*at + size <= len`, so the destination is inside the mapping; the
        // sweep runs this cell alone (no other writer of the ring), and `body` is a
        // separate allocation.
        unsafe { std::ptr::copy_nonoverlapping(body.as_ptr(), ring.base().add(*at), size) };
        *at += size;
    };
    let end_warm = Instant::now() + timing.warmup;
    while Instant::now() < end_warm {
        for _ in 0..64 {
            copy(&mut at);
        }
    }
    let cpu0 = process_cpu_seconds();
    let t0 = Instant::now();
    let mut n = 0u64;
    while t0.elapsed() < timing.measure {
        for _ in 0..64 {
            copy(&mut at);
        }
        n += 64;
    }
    let seconds = t0.elapsed().as_secs_f64();
    let cpu_seconds = process_cpu_seconds() - cpu0;
    CellOutcome {
        messages: n,
        seconds,
        cpu_seconds,
        per_thread: vec![n],
        samples: Samples::new(),
        abs: None,
        trace: Vec::new(),
        flushes: None,
        rolls: None,
    }
}
