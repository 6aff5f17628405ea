//! A roll never waits for another thread inside the put-message lock (docs/results.md,
//! question 5: a roll waiting for the preallocation thread under the lock, with spinning
//! waiters keeping the cores, put 0 messages in a window). Deterministic: the
//! preallocation thread is held at an injected gate, never timed.
//!
//! - Held while warming a segment: puts that need rolls still complete (they take the
//!   segment unwarmed, then create the next ones themselves).
//! - Held while creating the very segment a put needs: the put waits for it outside the
//!   put-message lock (the lock stays free), and completes once the thread goes on.

use std::sync::mpsc;
use std::time::Duration;

use abslock_store::fault::{FaultInjector, FaultPoint};
use abslock_store::{Message, MessageStore, StoreConfig, WarmUp};

type Store = MessageStore<parking_lot::RawMutex>;

const SEGMENT: u64 = 64 << 10;

/// Guards against a hang only; the verdict never depends on it.
const HANG: Duration = Duration::from_secs(120);

fn config(faults: &FaultInjector) -> StoreConfig {
    StoreConfig {
        segment_size: SEGMENT,
        warm_up: WarmUp { enabled: true, mlock: false },
        preallocate: true,
        preallocate_ahead: 1,
        fault_injector: faults.clone(),
        ..StoreConfig::default()
    }
}

fn message(i: u64) -> Message {
    Message::new("t", vec![i as u8; 4000])
}

#[test]
fn puts_needing_rolls_complete_while_the_preallocator_is_held_warming() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    // Pass 1 is open warming segment 0 on the caller's thread; pass 2 is the
    // preallocation thread warming segment 1.
    faults.hold(FaultPoint::SegmentWarm, 2);
    let store = Store::open(dir.path(), config(&faults)).unwrap();
    faults.wait_until_held(FaultPoint::SegmentWarm);
    let n = 5 * SEGMENT / 4000;
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(|| {
            let r: Result<Vec<_>, _> = (0..n).map(|i| store.put_message(&message(i))).collect();
            tx.send(r.map(|v| v.len())).unwrap();
        });
        let done = rx.recv_timeout(HANG).expect("puts blocked while the preallocator was held");
        assert_eq!(done.unwrap() as u64, n);
        let stats = store.stats();
        assert!(stats.rolls >= 4, "{stats:?}");
        // Every roll but the first created its segment itself: the thread is still held.
        assert!(stats.roll_waits >= 3, "{stats:?}");
        faults.release(FaultPoint::SegmentWarm);
    });
    for i in 0..n {
        assert_eq!(store.get_message("t", 0, i).unwrap().unwrap().body(), message(i).body());
    }
    store.close().unwrap();
}

#[test]
fn a_put_waiting_for_its_segment_waits_outside_the_put_lock() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    // Pass 1 creates segment 0 at open; pass 2 is the thread creating segment 1.
    faults.hold(FaultPoint::SegmentCreate, 2);
    let store = Store::open(dir.path(), config(&faults)).unwrap();
    faults.wait_until_held(FaultPoint::SegmentCreate);
    let n = 2 * SEGMENT / 4000;
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(|| {
            let r: Result<Vec<_>, _> = (0..n).map(|i| store.put_message(&message(i))).collect();
            tx.send(r.map(|v| v.len())).unwrap();
        });
        // The put that needs segment 1 has left the lock (a state, polled, not slept on).
        while store.stats().roll_waits == 0 {
            std::thread::yield_now();
        }
        store.for_each_put_lock(|lock| {
            use lock_api::RawMutex as _;
            assert!(!lock.is_locked(), "the put waits for the preallocator holding the put lock");
        });
        assert!(rx.try_recv().is_err(), "segment 1 cannot exist yet");
        faults.release(FaultPoint::SegmentCreate);
        let done = rx.recv_timeout(HANG).expect("the put never went on");
        assert_eq!(done.unwrap() as u64, n);
    });
    assert!(store.stats().rolls >= 1);
    store.close().unwrap();
}
