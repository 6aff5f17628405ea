//! A failed checkpoint write (injected through the store's file-operation seam, also an
//! msync of the consume queues that precedes it): the close reports the error, the old
//! checkpoint stays whole (no half-written or temporary file is left for a later open to
//! misread), `abort` stays so the next open runs crash recovery, nothing is lost, and the
//! next close succeeds once the fault clears.
//!
//! Extends `flush_failure.rs::checkpoint_failure_fails_close_and_recovery_keeps_everything`
//! with the old checkpoint's bytes, leftovers, the consume-queue flush and both layouts.

mod common;
#[path = "common/reliability.rs"]
mod reliability;

use std::path::Path;
use std::time::Duration;

use abslock_store::fault::{FaultInjector, FaultPoint};
use abslock_store::{CloseError, Layout, Message, MessageStore, StoreConfig};
use reliability::{body_for, files_under};

type Store = MessageStore<parking_lot::RawMutex>;

fn config(faults: &FaultInjector, layout: Layout) -> StoreConfig {
    StoreConfig {
        layout,
        checkpoint_interval: Duration::from_secs(3600),
        fault_injector: faults.clone(),
        ..common::small(2048)
    }
}

fn msg(id: u64) -> Message {
    Message::new("t", body_for(id)).queue_id(0)
}

fn log_dir(dir: &Path, layout: Layout) -> std::path::PathBuf {
    match layout {
        Layout::PerTopic => dir.join("topics").join("t"),
        _ => dir.to_path_buf(),
    }
}

fn checkpoint_failure(layout: Layout, point: FaultPoint) {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let cfg = config(&faults, layout);
    let store = Store::open(dir.path(), cfg.clone()).unwrap();
    for id in 0..20 {
        store.put_message(&msg(id)).unwrap();
    }
    store.close().unwrap();
    let log = log_dir(dir.path(), layout);
    let old_checkpoint = std::fs::read(log.join("checkpoint")).unwrap();

    let store = Store::open(dir.path(), cfg.clone()).unwrap();
    for id in 20..50 {
        store.put_message(&msg(id)).unwrap();
    }
    faults.fail_always(point);
    let err = store.close().unwrap_err();
    assert!(matches!(err, CloseError::Io(_)), "{err}");
    assert_eq!(
        std::fs::read(log.join("checkpoint")).unwrap(),
        old_checkpoint,
        "the old checkpoint was changed"
    );
    assert!(log.join("abort").exists(), "abort must stay after a failed close");
    assert!(files_under(dir.path()).keys().all(|k| !k.ends_with(".tmp")), "a temporary file was left");

    faults.clear(point);
    let store = Store::open(dir.path(), cfg.clone()).unwrap();
    assert_eq!(store.consume_queue_len("t", 0).unwrap(), 50);
    for id in 0..50 {
        assert_eq!(store.get_message("t", 0, id).unwrap().unwrap().body(), &body_for(id)[..]);
    }
    store.close().unwrap();
    assert!(!log.join("abort").exists());
    assert_ne!(std::fs::read(log.join("checkpoint")).unwrap(), old_checkpoint);
}

#[test]
fn checkpoint_write_failure_single() {
    checkpoint_failure(Layout::Single, FaultPoint::CheckpointWrite);
}

#[test]
fn checkpoint_write_failure_per_topic() {
    checkpoint_failure(Layout::PerTopic, FaultPoint::CheckpointWrite);
}

#[test]
fn consume_queue_flush_failure_before_the_checkpoint() {
    // The close's commitlog flush would fail first on `Sync`; flush it beforehand so the
    // fault meets the consume-queue flush that precedes the checkpoint write.
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let cfg = config(&faults, Layout::Single);
    let store = Store::open(dir.path(), cfg.clone()).unwrap();
    for id in 0..20 {
        store.put_message(&msg(id)).unwrap();
    }
    store.close().unwrap();
    let old_checkpoint = std::fs::read(dir.path().join("checkpoint")).unwrap();
    let store = Store::open(dir.path(), cfg.clone()).unwrap();
    for id in 20..30 {
        store.put_message(&msg(id)).unwrap();
    }
    store.flush().unwrap();
    faults.fail_always(FaultPoint::Sync);
    assert!(store.close().is_err());
    assert_eq!(std::fs::read(dir.path().join("checkpoint")).unwrap(), old_checkpoint);
    faults.clear(FaultPoint::Sync);
    let store = Store::open(dir.path(), cfg).unwrap();
    assert_eq!(store.consume_queue_len("t", 0).unwrap(), 30);
    assert_eq!(store.get_message("t", 0, 29).unwrap().unwrap().body(), &body_for(29)[..]);
    store.close().unwrap();
}
