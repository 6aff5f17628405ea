//! Writers append while readers read (by queue offset, by physical offset, and just past
//! the end) across segment rolls, in every write and flush mode: every read returns either
//! nothing or the exact message written there, never a torn or foreign record.

use std::sync::atomic::{AtomicU64, Ordering};

use abslock_store::{FlushMode, Message, MessageStore, StoreConfig, WriteMode};

type Store = MessageStore<parking_lot::RawMutex>;

const WRITERS: u32 = 3;
const PER_WRITER: u64 = 300;

fn body(w: u32, i: u64) -> Vec<u8> {
    let len = 30 + (i * 7 + u64::from(w) * 13) % 300;
    (0..len).map(|k| (k ^ i ^ u64::from(w) << 3) as u8).collect()
}

fn run(flush: FlushMode, write_mode: WriteMode) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = StoreConfig {
        segment_size: 4096,
        consume_queue_entries: 32,
        flush,
        write_mode,
        ..StoreConfig::default()
    };
    let store = Store::open(dir.path(), cfg).unwrap();
    // Per writer: how many of its puts have returned.
    let done: Vec<AtomicU64> = (0..WRITERS).map(|_| AtomicU64::new(0)).collect();
    // Physical offsets published by writers, for readers by physical offset.
    let phys: Vec<Vec<AtomicU64>> =
        (0..WRITERS).map(|_| (0..PER_WRITER).map(|_| AtomicU64::new(u64::MAX)).collect()).collect();
    std::thread::scope(|s| {
        for w in 0..WRITERS {
            let (store, done, phys) = (&store, &done, &phys);
            s.spawn(move || {
                for i in 0..PER_WRITER {
                    let p = store.put_message(&Message::new("rw", body(w, i)).queue_id(w)).unwrap();
                    assert_eq!(p.queue_offset, i);
                    phys[w as usize][i as usize].store(p.physical_offset, Ordering::Release);
                    done[w as usize].store(i + 1, Ordering::Release);
                }
            });
        }
        for r in 0..2u64 {
            let (store, done, phys) = (&store, &done, &phys);
            s.spawn(move || {
                let mut k = r;
                loop {
                    let finished =
                        (0..WRITERS).all(|w| done[w as usize].load(Ordering::Acquire) == PER_WRITER);
                    let w = (k % u64::from(WRITERS)) as u32;
                    let n = done[w as usize].load(Ordering::Acquire);
                    // Acknowledged: must be there, exactly.
                    if n > 0 {
                        let i = k % n;
                        let m =
                            store.get_message("rw", w, i).unwrap().expect("acknowledged message readable");
                        assert_eq!(m.body(), &body(w, i)[..]);
                        let at = phys[w as usize][i as usize].load(Ordering::Acquire);
                        let m = store.get_message_at(at).unwrap().expect("readable by physical offset");
                        assert_eq!((m.queue_id(), m.queue_offset()), (w, i));
                    }
                    // Just past the acknowledged ones: nothing, or the right message.
                    if let Some(m) = store.get_message("rw", w, n).unwrap() {
                        assert_eq!(m.body(), &body(w, n)[..]);
                    }
                    if finished {
                        break;
                    }
                    k = k.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407) >> 1;
                }
            });
        }
    });
    assert!(store.stats().rolls > 10, "the run should cross many segments");
    store.close().unwrap();
}

#[test]
fn mmap_async() {
    run(FlushMode::ASYNC, WriteMode::Mmap);
}

#[test]
fn mmap_sync() {
    run(FlushMode::SYNC, WriteMode::Mmap);
}

#[test]
fn pooled_async() {
    run(FlushMode::ASYNC, WriteMode::POOLED);
}

#[test]
fn pooled_sync() {
    run(FlushMode::SYNC, WriteMode::POOLED);
}
