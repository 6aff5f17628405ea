//! A model of RocketMQ 5.3.2's `AdaptiveBackOffSpinLockImpl` mode switch, to show why ours keeps one
//! lock word: the upstream lock *swaps* between two inner locks (a spin lock and a mutex) behind a gate.
//!
//! Protocol as modelled (from reading the upstream source; ours, not its code):
//! - `lock`: wait until the gate is open, then increment the in-flight counter, then lock whichever
//!   inner lock `current` names. The gate check and the increment are two separate steps.
//! - `unlock`: unlock whichever inner lock `current` names *now*, then decrement the counter.
//! - switch: close the gate, wait for the in-flight counter to reach 0, point `current` at the other
//!   inner lock, reopen the gate.
//!
//! A thread that passed the gate check but has not yet incremented the counter is invisible to the
//! switcher, so it can lock the old inner lock while another thread locks the new one: two holders.
//! loom finds that interleaving within two preemptions, so the test is `#[should_panic]`. It is the
//! reason `RawAbsLock` never swaps locks: its mode only changes how waiters wait.
#![cfg(abslock_loom)]

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use loom::thread;

struct InnerSpin(AtomicBool);

impl InnerSpin {
    fn lock(&self) {
        while self.0.compare_exchange(false, true, SeqCst, SeqCst).is_err() {
            thread::yield_now();
        }
    }
    fn unlock(&self) {
        self.0.store(false, SeqCst);
    }
}

struct SwappingLock {
    gate_open: AtomicBool,
    in_flight: AtomicUsize,
    current: AtomicUsize,
    inner: [InnerSpin; 2],
    data: UnsafeCell<u32>,
}

// SAFETY: `data` is meant to be guarded by the protocol; loom reports it when it is not.
unsafe impl Sync for SwappingLock {}

impl SwappingLock {
    fn lock(&self) {
        while !self.gate_open.load(SeqCst) {
            thread::yield_now();
        }
        // The window: the gate was open, the counter is not yet raised.
        self.in_flight.fetch_add(1, SeqCst);
        self.inner[self.current.load(SeqCst)].lock();
    }

    fn unlock(&self) {
        self.inner[self.current.load(SeqCst)].unlock();
        self.in_flight.fetch_sub(1, SeqCst);
    }

    fn switch(&self) {
        if self.gate_open.compare_exchange(true, false, SeqCst, SeqCst).is_err() {
            return;
        }
        while self.in_flight.load(SeqCst) != 0 {
            thread::yield_now();
        }
        self.current.store(1 - self.current.load(SeqCst), SeqCst);
        self.gate_open.store(true, SeqCst);
    }

    fn critical_section(&self) {
        self.lock();
        // SAFETY: "guarded" by the protocol under test; loom panics on a concurrent access.
        self.data.with_mut(|d| unsafe { *d += 1 });
        self.unlock();
    }
}

#[test]
#[should_panic(expected = "Causality violation")]
fn rocketmq_swap_admits_two_holders() {
    loom::model(|| {
        let l = Arc::new(SwappingLock {
            gate_open: AtomicBool::new(true),
            in_flight: AtomicUsize::new(0),
            current: AtomicUsize::new(0),
            inner: [InnerSpin(AtomicBool::new(false)), InnerSpin(AtomicBool::new(false))],
            data: UnsafeCell::new(0),
        });
        let t = {
            let l = Arc::clone(&l);
            thread::spawn(move || l.critical_section())
        };
        l.switch();
        l.critical_section();
        t.join().unwrap();
    });
}
