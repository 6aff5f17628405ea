//! A torn tail: the last 20 bytes of the third of three records are damaged before
//! reopen. Recovery keeps two records, sets the write position at the end of the second,
//! cuts the consume queue to two entries, and never replays the damaged bytes.

mod common;

use std::io::{Seek, SeekFrom, Write};

use abslock_store::{FlushMode, Message, MessageStore};

type Store = MessageStore<parking_lot::RawMutex>;

fn torn_tail(flush: FlushMode) {
    let dir = tempfile::tempdir().unwrap();
    // No periodic checkpoint: it would mark the third record durable before the damage.
    let cfg = abslock_store::StoreConfig {
        flush,
        checkpoint_interval: std::time::Duration::from_secs(3600),
        ..common::small(64 << 10)
    };
    let puts: Vec<_> = {
        let store = Store::open(dir.path(), cfg.clone()).unwrap();
        let puts: Vec<_> = (0..3)
            .map(|i| store.put_message(&Message::new("orders", vec![b'a' + i; 100]).queue_id(0)).unwrap())
            .collect();
        store.flush().unwrap();
        // Make sure the dispatcher wrote all three consume-queue entries before the crash.
        assert_eq!(store.consume_queue_len("orders", 0).unwrap(), 3);
        puts
        // Dropped without close: a crash.
    };
    let third = puts[2];
    let end = third.physical_offset + u64::from(third.size);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.path().join("commitlog").join(format!("{:020}", 0)))
        .unwrap();
    f.seek(SeekFrom::Start(end - 20)).unwrap();
    f.write_all(&[0x5A; 20]).unwrap();
    drop(f);

    let store = Store::open(dir.path(), cfg).unwrap();
    let second_end = puts[1].physical_offset + u64::from(puts[1].size);
    assert_eq!(store.write_position(), second_end);
    assert_eq!(store.consume_queue_len("orders", 0).unwrap(), 2);
    for (i, p) in puts[..2].iter().enumerate() {
        let m = store.get_message("orders", 0, i as u64).unwrap().expect("kept");
        assert_eq!(m.body(), &[b'a' + i as u8; 100][..]);
        assert_eq!(m.physical_offset(), p.physical_offset);
    }
    assert!(store.get_message("orders", 0, 2).unwrap().is_none());
    assert!(store.get_message_at(third.physical_offset).unwrap().is_none());
    // The next put reuses the damaged record's place and queue offset.
    let next = store.put_message(&Message::new("orders", b"z".to_vec()).queue_id(0)).unwrap();
    assert_eq!((next.physical_offset, next.queue_offset), (second_end, 2));
    store.close().unwrap();
    // The damaged bytes past the new record were zeroed, so nothing stale comes back.
    let seg = std::fs::read(dir.path().join("commitlog").join(format!("{:020}", 0))).unwrap();
    let new_end = (next.physical_offset + u64::from(next.size)) as usize;
    assert!(seg[new_end..end as usize].iter().all(|&b| b == 0));
}

#[test]
fn torn_tail_async() {
    torn_tail(FlushMode::ASYNC);
}

#[test]
fn torn_tail_sync() {
    torn_tail(FlushMode::SYNC);
}
