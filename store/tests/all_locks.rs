//! The store runs the same put/read workload under every `abslock` strategy and under
//! `parking_lot::RawMutex`, in both layouts.

use abslock::{Calibrated, RawAbsLock, RawBackoffLock, RawCasSpinLock, RawSpinLock, RocketMq};
use abslock_store::{Layout, Message, MessageStore, StoreConfig};
use lock_api::RawMutex;

const THREADS: u32 = 3;
const PER_THREAD: u64 = 150;

fn workload<R: RawMutex + Send + Sync + 'static>(
    make: impl Fn() -> R + Send + Sync + 'static,
    layout: Layout,
) {
    let dir = tempfile::tempdir().unwrap();
    let cfg =
        StoreConfig { segment_size: 8 << 10, consume_queue_entries: 64, layout, ..StoreConfig::default() };
    let store = MessageStore::<R>::open_with_lock(dir.path(), cfg, make).unwrap();
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let store = &store;
            s.spawn(move || {
                for i in 0..PER_THREAD {
                    let topic = format!("topic{}", t % 2);
                    let body = format!("{t}-{i}");
                    store.put_message(&Message::new(topic, body.into_bytes()).queue_id(t)).unwrap();
                }
            });
        }
    });
    for t in 0..THREADS {
        let topic = format!("topic{}", t % 2);
        for i in 0..PER_THREAD {
            let m = store.get_message(&topic, t, i).unwrap().expect("written");
            assert_eq!(m.body(), format!("{t}-{i}").as_bytes());
        }
    }
    let mut locks = 0;
    store.for_each_put_lock(|l| {
        assert!(!l.is_locked());
        locks += 1;
    });
    assert_eq!(locks, if layout == Layout::Single { 1 } else { 2 });
    store.close().unwrap();
}

fn both<R: RawMutex + Send + Sync + 'static>(make: fn() -> R) {
    workload(make, Layout::Single);
    workload(make, Layout::PerTopic);
}

#[test]
fn parking_lot_mutex() {
    both(|| parking_lot::RawMutex::INIT);
}

#[test]
fn spin() {
    both(|| RawSpinLock::INIT);
}

#[test]
fn cas_spin() {
    both(|| RawCasSpinLock::INIT);
}

#[test]
fn backoff_k10() {
    both(|| RawBackoffLock::with_k(10));
}

#[test]
fn backoff_default() {
    both(|| RawBackoffLock::INIT);
}

#[test]
fn abs_calibrated() {
    both(|| RawAbsLock::<Calibrated>::INIT);
}

#[test]
fn abs_rocketmq() {
    both(|| RawAbsLock::<RocketMq>::INIT);
}

#[test]
fn abs_stats_visible_through_for_each_put_lock() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = StoreConfig { segment_size: 64 << 10, ..StoreConfig::default() };
    let store: MessageStore<RawAbsLock> = MessageStore::open(dir.path(), cfg).unwrap();
    for i in 0..10u8 {
        store.put_message(&Message::new("t", vec![i])).unwrap();
    }
    let mut acquisitions = 0;
    store.for_each_put_lock(|l| acquisitions += l.stats().acquisitions);
    assert_eq!(acquisitions, 10);
    store.close().unwrap();
}
