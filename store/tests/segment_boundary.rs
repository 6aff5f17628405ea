//! Segment boundary: 1 KiB segments and 300-byte records. Three records fill 900 bytes;
//! the fourth does not fit (`300 + 8 > 124`), so a 124-byte blank ends the segment and the
//! fourth starts the next one. Reads and recovery step over the blank; offsets stay
//! continuous.

mod common;

use abslock_store::{FlushMode, MessageStore, StoreConfig, WriteMode};

type Store = MessageStore<parking_lot::RawMutex>;

fn boundary(cfg: StoreConfig) {
    let dir = tempfile::tempdir().unwrap();
    let msgs: Vec<_> = (0..6u8).map(|i| common::message_of_size("orders", 0, 300, b'a' + i)).collect();
    let expected = [0u64, 300, 600, 1024, 1324, 1624];
    {
        let store = Store::open(dir.path(), cfg.clone()).unwrap();
        for (i, m) in msgs.iter().enumerate() {
            let p = store.put_message(m).unwrap();
            assert_eq!(p.size, 300);
            assert_eq!((p.physical_offset, p.queue_offset), (expected[i], i as u64));
        }
        // The blank is not a message.
        assert!(store.get_message_at(900).unwrap().is_none());
        for (i, m) in msgs.iter().enumerate() {
            let got = store.get_message("orders", 0, i as u64).unwrap().expect("present");
            assert_eq!(got.body(), m.body());
            assert_eq!(got.physical_offset(), expected[i]);
        }
        store.flush().unwrap();
        // Dropped without close: crash recovery must step over the blank too.
    }
    assert!(dir.path().join("commitlog").join(format!("{:020}", 1024)).exists());
    let store = Store::open(dir.path(), cfg.clone()).unwrap();
    assert_eq!(store.write_position(), 1924);
    assert_eq!(store.consume_queue_len("orders", 0).unwrap(), 6);
    for (i, m) in msgs.iter().enumerate() {
        let got = store.get_message("orders", 0, i as u64).unwrap().expect("recovered");
        assert_eq!(got.body(), m.body());
        assert_eq!(got.physical_offset(), expected[i]);
    }
    let p = store.put_message(&msgs[0]).unwrap();
    assert_eq!((p.physical_offset, p.queue_offset), (2048, 6));
    store.close().unwrap();
    let store = Store::open(dir.path(), cfg).unwrap();
    assert_eq!(store.write_position(), 2348);
    assert_eq!(store.get_message("orders", 0, 6).unwrap().unwrap().physical_offset(), 2048);
    store.close().unwrap();
}

#[test]
fn boundary_mmap_async() {
    boundary(common::small(1024));
}

#[test]
fn boundary_pooled_sync() {
    boundary(StoreConfig { write_mode: WriteMode::POOLED, flush: FlushMode::SYNC, ..common::small(1024) });
}

#[test]
fn boundary_without_preallocation() {
    boundary(StoreConfig { preallocate: false, ..common::small(1024) });
}

#[test]
fn batch_rolls_as_a_whole() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), common::small(1024)).unwrap();
    let one = common::message_of_size("orders", 0, 300, b'x');
    store.put_message(&one).unwrap();
    // 2 x 300 = 600 fits behind 300 only if 600 + 8 <= 724: yes. The next batch of 2 does not.
    let b1 = store.put_messages(&[one.clone(), one.clone()]).unwrap();
    assert_eq!(b1.iter().map(|p| p.physical_offset).collect::<Vec<_>>(), [300, 600]);
    let b2 = store.put_messages(&[one.clone(), one.clone()]).unwrap();
    assert_eq!(b2.iter().map(|p| p.physical_offset).collect::<Vec<_>>(), [1024, 1324]);
    assert_eq!(b2.iter().map(|p| p.queue_offset).collect::<Vec<_>>(), [3, 4]);
    for qo in 0..5 {
        assert!(store.get_message("orders", 0, qo).unwrap().is_some());
    }
    store.close().unwrap();
}
