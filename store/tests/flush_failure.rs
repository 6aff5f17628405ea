//! An injected msync failure: the flushed position stays, the sync-flush put and explicit
//! flush return the error, and once the fault clears a retry succeeds.

mod common;

use abslock_store::fault::{FaultInjector, FaultPoint};
use abslock_store::{FlushError, FlushMode, Message, MessageStore, PutError, StoreConfig, WriteMode};

type Store = MessageStore<parking_lot::RawMutex>;

fn failed_flush(write_mode: WriteMode, point: FaultPoint) {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let cfg = StoreConfig {
        flush: FlushMode::SYNC,
        write_mode,
        fault_injector: faults.clone(),
        ..common::small(64 << 10)
    };
    let store = Store::open(dir.path(), cfg).unwrap();
    let first = store.put_message(&Message::new("t", b"one".to_vec())).unwrap();
    let flushed = store.flushed_position();
    assert_eq!(flushed, first.physical_offset + u64::from(first.size));

    faults.fail_always(point);
    let err = store.put_message(&Message::new("t", b"two".to_vec())).unwrap_err();
    assert!(matches!(err, PutError::Flush { source: FlushError::Io { .. }, .. }), "{err}");
    assert_eq!(store.flushed_position(), flushed, "a failed flush never advances the flushed position");
    match store.flush() {
        Err(FlushError::Io { flushed: f, .. }) => assert_eq!(f, flushed),
        other => panic!("expected a flush error, got {other:?}"),
    }
    assert_eq!(store.flushed_position(), flushed);
    // Under sync flush, readers never see past the flushed position.
    assert!(store.get_message("t", 0, 1).unwrap().is_none());
    assert!(faults.injected(point) >= 2);

    faults.clear(point);
    let third = store.put_message(&Message::new("t", b"three".to_vec())).unwrap();
    let end = third.physical_offset + u64::from(third.size);
    assert_eq!(store.flushed_position(), end);
    assert_eq!(store.flush().unwrap(), end);
    for (qo, body) in [(0u64, &b"one"[..]), (1, b"two"), (2, b"three")] {
        assert_eq!(store.get_message("t", 0, qo).unwrap().expect("durable now").body(), body);
    }
    store.close().unwrap();
}

#[test]
fn msync_failure_mmap() {
    failed_flush(WriteMode::Mmap, FaultPoint::Sync);
}

#[test]
fn msync_failure_pooled() {
    failed_flush(WriteMode::POOLED, FaultPoint::Sync);
}

#[test]
fn pooled_write_failure() {
    failed_flush(WriteMode::POOLED, FaultPoint::PooledWrite);
}

#[test]
fn async_flush_failure_then_retry() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let cfg = StoreConfig { fault_injector: faults.clone(), ..common::small(64 << 10) };
    let store = Store::open(dir.path(), cfg).unwrap();
    store.put_message(&Message::new("t", b"one".to_vec())).unwrap();
    let before = store.flushed_position();
    faults.fail_always(FaultPoint::Sync);
    assert!(store.flush().is_err());
    assert_eq!(store.flushed_position(), before);
    faults.clear(FaultPoint::Sync);
    assert_eq!(store.flush().unwrap(), store.write_position());
    store.close().unwrap();
}

#[test]
fn checkpoint_failure_fails_close_and_recovery_keeps_everything() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let cfg = StoreConfig { fault_injector: faults.clone(), ..common::small(64 << 10) };
    let store = Store::open(dir.path(), cfg.clone()).unwrap();
    for i in 0..10u8 {
        store.put_message(&Message::new("t", vec![i; 50])).unwrap();
    }
    faults.fail_always(FaultPoint::CheckpointWrite);
    assert!(store.close().is_err());
    assert!(dir.path().join("abort").exists(), "abort stays after a failed close");
    faults.clear(FaultPoint::CheckpointWrite);
    let store = Store::open(dir.path(), cfg).unwrap();
    for i in 0..10u8 {
        assert_eq!(store.get_message("t", 0, u64::from(i)).unwrap().unwrap().body(), &[i; 50][..]);
    }
    store.close().unwrap();
}
