//! Every raw lock: 2 and 3 threads increment a loom `UnsafeCell` under the lock (loom reports any
//! concurrent access), and `try_lock` fails on a held lock and succeeds on a free one.
#![cfg(abslock_loom)]

use abslock::{RawAbsLock, RawBackoffLock, RawCasSpinLock, RawSpinLock};
use abslock_loom_tests::{
    Adaptive, Crowded, Impatient, ImpatientDirect, ModelLock, SmallSpin, Solo, SoloImpatient, Starving,
};
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;

struct Guarded<L> {
    lock: L,
    count: UnsafeCell<u32>,
}

// SAFETY: `count` is only touched while `lock` is held (the property the models check).
unsafe impl<L: Sync> Sync for Guarded<L> {}

fn increment<L: ModelLock>(g: &Guarded<L>) {
    g.lock.acquire();
    // SAFETY: we hold the lock; loom flags it if another thread is inside too.
    g.count.with_mut(|c| unsafe { *c += 1 });
    // SAFETY: acquired above.
    unsafe { g.lock.release() };
}

/// Spin locks busy-wait: each spin is a scheduling point, so the default branch limit (1000) is too low
/// for three threads even though every path terminates.
///
/// With three threads, two of them busy-waiting, every retry is a scheduling choice between two
/// spinners and the holder, and at two preemptions the state space grows exponentially with the spin
/// count (more than an hour here). So the three-thread models of the purely busy-waiting locks
/// ([`ModelLock::BUSY_WAITS`]) run at one preemption; their two-thread models and every ABS model run
/// at the command's bound (2).
fn builder() -> loom::model::Builder {
    let mut b = loom::model::Builder::new();
    b.max_branches = 100_000;
    b
}

fn threads_increment<L: ModelLock>(threads: u32) {
    let mut b = builder();
    if threads > 2 && L::BUSY_WAITS {
        b.preemption_bound = Some(1);
    }
    b.check(move || {
        let g = Arc::new(Guarded { lock: L::make(), count: UnsafeCell::new(0) });
        let others: Vec<_> = (1..threads)
            .map(|_| {
                let g = Arc::clone(&g);
                thread::spawn(move || increment(&g))
            })
            .collect();
        increment(&g);
        for t in others {
            t.join().unwrap();
        }
        // SAFETY: every other thread has been joined.
        let total = g.count.with(|c| unsafe { *c });
        assert_eq!(total, threads);
    });
}

fn try_lock_semantics<L: ModelLock>() {
    builder().check(|| {
        let lock = Arc::new(L::make());
        assert!(lock.try_acquire(), "try_lock failed on a free lock");
        let other = {
            let lock = Arc::clone(&lock);
            thread::spawn(move || lock.try_acquire())
        };
        assert!(!other.join().unwrap(), "try_lock succeeded on a held lock");
        // SAFETY: acquired above.
        unsafe { lock.release() };
        assert!(lock.try_acquire(), "try_lock failed after release");
        // SAFETY: acquired above.
        unsafe { lock.release() };
    });
}

macro_rules! models {
    ($($name:ident: $ty:ty,)*) => {$(
        mod $name {
            use super::*;
            #[test]
            fn two_threads_increment() {
                threads_increment::<$ty>(2);
            }
            #[test]
            fn three_threads_increment() {
                threads_increment::<$ty>(3);
            }
            #[test]
            fn try_lock_fails_held_succeeds_free() {
                try_lock_semantics::<$ty>();
            }
        }
    )*};
}

models! {
    spin: RawSpinLock,
    cas_spin: RawCasSpinLock,
    backoff: RawBackoffLock,
    abs: RawAbsLock<SmallSpin>,
    abs_adaptive: RawAbsLock<Adaptive>,
    abs_handoff: RawAbsLock<Impatient>,
    abs_direct_handoff: RawAbsLock<ImpatientDirect>,
    abs_crowded: RawAbsLock<Crowded>,
    abs_solo: RawAbsLock<Solo>,
    abs_solo_handoff: RawAbsLock<SoloImpatient>,
    abs_starving: RawAbsLock<Starving>,
}
