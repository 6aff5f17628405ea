//! `preallocate_ahead` (RocketMQ `AllocateMappedFileService` keeps the next and the
//! next-next file ready): a zero is a typed error that creates nothing, and many rolls
//! through segments kept several ahead lose nothing and leave no preallocated file to be
//! replayed after a reopen.

mod common;

use abslock_store::{Message, MessageStore, OpenError, StoreConfig};

type Store = MessageStore<abslock::RawAbsLock>;

const SEGMENT: u64 = 4096;

fn config(ahead: usize) -> StoreConfig {
    StoreConfig { preallocate_ahead: ahead, ..common::small(SEGMENT) }
}

#[test]
fn zero_ahead_is_an_invalid_config_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let err = Store::open(dir.path(), config(0)).unwrap_err();
    assert!(matches!(err, OpenError::InvalidConfig(_)), "{err}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn rolls_through_segments_kept_ahead_lose_nothing_across_reopens() {
    for ahead in [1, 2, 4] {
        let dir = tempfile::tempdir().unwrap();
        let mut bodies = Vec::new();
        for round in 0..3u8 {
            let store = Store::open(dir.path(), config(ahead)).unwrap();
            assert_eq!(store.consume_queue_len("t", 0).unwrap(), bodies.len() as u64);
            for i in 0..200u32 {
                let body = vec![round ^ (i as u8); 300 + (i as usize % 7) * 50];
                let p = store.put_message(&Message::new("t", body.clone()).queue_id(0)).unwrap();
                assert_eq!(p.queue_offset, bodies.len() as u64);
                bodies.push(body);
            }
            if round == 1 {
                store.close().unwrap();
            } else {
                store.flush().unwrap();
                drop(store);
            }
        }
        let store = Store::open(dir.path(), config(ahead)).unwrap();
        assert_eq!(store.consume_queue_len("t", 0).unwrap(), bodies.len() as u64, "ahead {ahead}");
        for (qo, body) in bodies.iter().enumerate() {
            let m = store.get_message("t", 0, qo as u64).unwrap().expect("every acknowledged put reads back");
            assert_eq!(m.body(), &body[..], "ahead {ahead}, queue offset {qo}");
        }
        assert_eq!(store.get_message("t", 0, bodies.len() as u64).unwrap().map(|m| m.body().len()), None);
        store.close().unwrap();
    }
}
