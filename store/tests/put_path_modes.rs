//! The store under every put path (`Lock`, `Sequencer`, `Combining`): concurrent single and
//! batch puts keep per-queue order and contiguous batches across segment rolls, under async
//! and sync flush (group commit), in both layouts; a reopen recovers everything; a failed
//! segment creation fails the puts it stops, each with its own error.

use abslock_store::fault::{FaultInjector, FaultPoint};
use abslock_store::{
    FlushMode, Layout, Message, MessageStore, PutError, PutPath, SequencerConfig, StoreConfig,
};

const THREADS: u32 = 4;
const PER_THREAD: u64 = 120;

fn paths() -> [PutPath; 3] {
    [
        PutPath::Lock,
        PutPath::Sequencer(SequencerConfig { queue_capacity: 2, max_batch: 8 }),
        PutPath::Combining,
    ]
}

fn config(put_path: PutPath, flush: FlushMode, layout: Layout) -> StoreConfig {
    StoreConfig {
        segment_size: 8 << 10,
        consume_queue_entries: 64,
        flush,
        layout,
        put_path,
        ..StoreConfig::default()
    }
}

fn body(t: u32, i: u64) -> Vec<u8> {
    format!("{t}-{i}-{}", "x".repeat((i % 7 * 40) as usize)).into_bytes()
}

fn workload(put_path: PutPath, flush: FlushMode, layout: Layout) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(put_path, flush, layout);
    let store: MessageStore<parking_lot::RawMutex> = MessageStore::open(dir.path(), cfg.clone()).unwrap();
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let store = &store;
            s.spawn(move || {
                let topic = format!("topic{}", t % 2);
                let mut i = 0;
                while i < PER_THREAD {
                    if t % 2 == 0 && i + 3 <= PER_THREAD {
                        let batch: Vec<Message> =
                            (i..i + 3).map(|k| Message::new(topic.clone(), body(t, k)).queue_id(t)).collect();
                        let puts = store.put_messages(&batch).unwrap();
                        for (k, p) in puts.iter().enumerate() {
                            assert_eq!(p.queue_offset, i + k as u64, "{put_path:?}: per-queue order");
                        }
                        for w in puts.windows(2) {
                            assert_eq!(w[1].physical_offset, w[0].physical_offset + u64::from(w[0].size));
                        }
                        i += 3;
                    } else {
                        let p =
                            store.put_message(&Message::new(topic.clone(), body(t, i)).queue_id(t)).unwrap();
                        assert_eq!(p.queue_offset, i, "{put_path:?}: per-queue order");
                        i += 1;
                    }
                }
            });
        }
    });
    let check = |store: &MessageStore<parking_lot::RawMutex>| {
        for t in 0..THREADS {
            let topic = format!("topic{}", t % 2);
            assert_eq!(store.consume_queue_len(&topic, t).unwrap(), PER_THREAD);
            for i in 0..PER_THREAD {
                let m = store.get_message(&topic, t, i).unwrap().expect("written");
                assert_eq!(m.body(), body(t, i).as_slice(), "{put_path:?}");
            }
        }
    };
    check(&store);
    assert!(store.stats().rolls > 0, "the workload crosses segments");
    store.close().unwrap();
    let store: MessageStore<parking_lot::RawMutex> = MessageStore::open(dir.path(), cfg).unwrap();
    check(&store);
    store.close().unwrap();
}

#[test]
fn every_put_path_async_single() {
    for p in paths() {
        workload(p, FlushMode::ASYNC, Layout::Single);
    }
}

#[test]
fn every_put_path_sync_per_topic() {
    for p in paths() {
        workload(p, FlushMode::SYNC, Layout::PerTopic);
    }
}

#[test]
fn a_failed_roll_fails_only_the_puts_it_stops() {
    for p in paths() {
        let dir = tempfile::tempdir().unwrap();
        let faults = FaultInjector::default();
        let cfg = StoreConfig {
            preallocate: false,
            fault_injector: faults.clone(),
            ..config(p, FlushMode::ASYNC, Layout::Single)
        };
        let store: MessageStore<parking_lot::RawMutex> = MessageStore::open(dir.path(), cfg).unwrap();
        let big = Message::new("t", vec![7; 3000]);
        let first = store.put_message(&big).unwrap();
        store.put_message(&big).unwrap();
        faults.fail_always(FaultPoint::SegmentCreate);
        let before = store.write_position();
        let err = store.put_message(&big).unwrap_err();
        assert!(matches!(err, PutError::SegmentCreate(_)), "{p:?}: {err}");
        assert_eq!(store.write_position(), before, "{p:?}: nothing written");
        faults.clear(FaultPoint::SegmentCreate);
        let next = store.put_message(&big).unwrap();
        assert_eq!(next.queue_offset, 2, "{p:?}: the failed put took no queue offset");
        assert_eq!(store.get_message("t", 0, 0).unwrap().unwrap().physical_offset(), first.physical_offset);
        store.close().unwrap();
    }
}
