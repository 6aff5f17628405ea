//! Basic put / read / reopen behaviour of `MessageStore`.

use abslock_store::{FlushMode, Message, MessageStore, StoreConfig, WriteMode};

type Store = MessageStore<parking_lot::RawMutex>;

fn config() -> StoreConfig {
    StoreConfig { segment_size: 64 << 10, consume_queue_entries: 64, ..StoreConfig::default() }
}

fn msg(topic: &str, q: u32, body: &str) -> Message {
    Message::new(topic, body.as_bytes().to_vec()).queue_id(q).tags("t")
}

fn roundtrip(cfg: StoreConfig) {
    let dir = tempfile::tempdir().unwrap();
    let mut puts = Vec::new();
    {
        let store = Store::open(dir.path(), cfg.clone()).unwrap();
        for i in 0..200u32 {
            let body = format!("body-{i}");
            let p = store.put_message(&msg("orders", i % 3, &body)).unwrap();
            assert_eq!(p.queue_offset, u64::from(i / 3));
            puts.push((p, i % 3, body));
        }
        for (p, q, body) in &puts {
            let m = store.get_message("orders", *q, p.queue_offset).unwrap().expect("present");
            assert_eq!(m.body(), body.as_bytes());
            assert_eq!(m.physical_offset(), p.physical_offset);
            let m = store.get_message_at(p.physical_offset).unwrap().expect("present");
            assert_eq!(m.body(), body.as_bytes());
        }
        assert!(store.get_message("orders", 0, 10_000).unwrap().is_none());
        assert!(store.get_message("nope", 0, 0).unwrap().is_none());
        store.close().unwrap();
    }
    let store = Store::open(dir.path(), cfg).unwrap();
    for (p, q, body) in &puts {
        let m = store.get_message("orders", *q, p.queue_offset).unwrap().expect("present after reopen");
        assert_eq!(m.body(), body.as_bytes());
    }
    let next = store.put_message(&msg("orders", 0, "after")).unwrap();
    assert_eq!(next.queue_offset, 67);
    assert_eq!(
        next.physical_offset,
        puts.last().unwrap().0.physical_offset + u64::from(puts.last().unwrap().0.size)
    );
}

#[test]
fn mmap_async() {
    roundtrip(config());
}

#[test]
fn mmap_sync() {
    roundtrip(StoreConfig { flush: FlushMode::SYNC, ..config() });
}

#[test]
fn pooled_async() {
    roundtrip(StoreConfig { write_mode: WriteMode::POOLED, ..config() });
}

#[test]
fn pooled_sync() {
    roundtrip(StoreConfig { write_mode: WriteMode::POOLED, flush: FlushMode::SYNC, ..config() });
}

#[test]
fn no_preallocation() {
    roundtrip(StoreConfig { preallocate: false, ..config() });
}

#[test]
fn second_open_of_same_dir_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let _a = Store::open(dir.path(), config()).unwrap();
    let b = Store::open(dir.path(), config());
    assert!(matches!(b, Err(abslock_store::OpenError::InUse { .. })), "{b:?}");
}

#[test]
fn warm_up_with_mlock() {
    let warm_up = abslock_store::WarmUp { enabled: true, mlock: true };
    roundtrip(StoreConfig { warm_up, ..config() });
}

#[test]
fn config_errors_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let bad = StoreConfig { segment_size: 10, ..config() };
    let err = Store::open(dir.path(), bad).unwrap_err();
    assert!(matches!(err, abslock_store::OpenError::InvalidConfig(_)), "{err}");
}
