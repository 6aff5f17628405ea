//! Failed `msync` (injected through the store's file-operation seam) under concurrent sync
//! flush, across a crash, and in the async flush thread: callers get errors, the flushed
//! position never passes what was durable, nothing acknowledged is lost, reads keep being
//! served, and writes succeed once the fault clears.
//!
//! Extends `flush_failure.rs` (one writer, in-process retry) with many writers, both
//! layouts, crashes while the fault is on, and recovery itself meeting the fault.

mod common;
#[path = "common/reliability.rs"]
mod reliability;

use std::sync::Mutex;

use abslock_store::fault::{FaultInjector, FaultPoint};
use abslock_store::{
    FlushError, FlushMode, Layout, Message, MessageStore, OpenError, PutError, StoreConfig, WriteMode,
};
use reliability::{body_for, id_if_intact, scan_commitlog};

type Store = MessageStore<parking_lot::RawMutex>;

fn config(faults: &FaultInjector, write_mode: WriteMode, layout: Layout) -> StoreConfig {
    StoreConfig {
        flush: FlushMode::SYNC,
        write_mode,
        layout,
        fault_injector: faults.clone(),
        ..common::small(4096)
    }
}

fn msg(id: u64) -> Message {
    Message::new(format!("t{}", id % 2), body_for(id)).queue_id((id % 3) as u32)
}

/// 4 writers put 60 messages each while every third msync fails; returns the acknowledged
/// (id, topic, queue offset, physical offset) and how many puts failed.
fn write_through_faults(store: &Store, faults: &FaultInjector) -> (Vec<(u64, String, u64, u64)>, usize) {
    let acked = Mutex::new(Vec::new());
    let failed = Mutex::new(0usize);
    let flushed_seen = Mutex::new(0u64);
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let (acked, failed, flushed_seen) = (&acked, &failed, &flushed_seen);
            s.spawn(move || {
                for i in 0..60u64 {
                    let id = t << 32 | i;
                    if i % 3 == 0 {
                        faults.fail_times(FaultPoint::Sync, 1);
                    }
                    match store.put_message(&msg(id)) {
                        Ok(p) => acked.lock().unwrap().push((
                            id,
                            format!("t{}", id % 2),
                            p.queue_offset,
                            p.physical_offset,
                        )),
                        Err(PutError::Flush { source: FlushError::Io { .. }, .. }) => {
                            *failed.lock().unwrap() += 1
                        }
                        Err(e) => panic!("unexpected put error: {e}"),
                    }
                    // The flushed position never moves backwards. Read it under the lock, so
                    // reads are ordered like the comparisons (reading first raced other writers).
                    let mut seen = flushed_seen.lock().unwrap();
                    let f = store.flushed_position();
                    assert!(f >= *seen, "flushed position went back from {} to {f}", *seen);
                    *seen = f;
                }
            });
        }
    });
    (acked.into_inner().unwrap(), failed.into_inner().unwrap())
}

fn concurrent_faults_then_crash(write_mode: WriteMode, layout: Layout) {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let cfg = config(&faults, write_mode, layout);
    let store = Store::open(dir.path(), cfg.clone()).unwrap();
    let (acked, failed) = write_through_faults(&store, &faults);
    assert!(faults.injected(FaultPoint::Sync) > 0);
    assert!(failed > 0, "no put saw the injected fault");
    assert_eq!(acked.len() + failed, 240);
    // Reads are served while faults come and go.
    for (id, topic, qo, _) in &acked {
        let m = store.get_message(topic, (id % 3) as u32, *qo).unwrap().expect("acknowledged is readable");
        assert_eq!(m.body(), &body_for(*id)[..]);
    }
    faults.clear(FaultPoint::Sync);
    // Writes succeed once the fault clears.
    store.put_message(&msg(99 << 32)).unwrap();
    drop(store); // crash
    let store = Store::open(dir.path(), cfg).unwrap();
    for (id, topic, qo, phys) in &acked {
        let m = store.get_message(topic, (id % 3) as u32, *qo).unwrap().expect("acknowledged survives");
        assert_eq!((m.body(), m.physical_offset()), (&body_for(*id)[..], *phys));
    }
    store.close().unwrap();
    // Every record in the files is one that was written, intact (failed puts included).
    let clogs: Vec<_> = match layout {
        Layout::PerTopic => {
            vec![dir.path().join("topics/t0/commitlog"), dir.path().join("topics/t1/commitlog")]
        }
        _ => vec![dir.path().join("commitlog")],
    };
    for clog in clogs {
        let scan = scan_commitlog(&clog);
        assert!(scan.records.iter().all(|r| id_if_intact(&r.body).is_some()));
        assert_eq!(scan.stale_byte_at, None);
    }
}

#[test]
fn concurrent_msync_failures_mmap_single() {
    concurrent_faults_then_crash(WriteMode::Mmap, Layout::Single);
}

#[test]
fn concurrent_msync_failures_pooled_single() {
    concurrent_faults_then_crash(WriteMode::POOLED, Layout::Single);
}

#[test]
fn concurrent_msync_failures_mmap_per_topic() {
    concurrent_faults_then_crash(WriteMode::Mmap, Layout::PerTopic);
}

#[test]
fn concurrent_msync_failures_pooled_per_topic() {
    concurrent_faults_then_crash(WriteMode::POOLED, Layout::PerTopic);
}

#[test]
fn crash_while_msync_fails_keeps_what_was_acknowledged() {
    for write_mode in [WriteMode::Mmap, WriteMode::POOLED] {
        let dir = tempfile::tempdir().unwrap();
        let faults = FaultInjector::default();
        let cfg = config(&faults, write_mode, Layout::Single);
        let store = Store::open(dir.path(), cfg.clone()).unwrap();
        let acked: Vec<_> = (0..20).map(|i| store.put_message(&msg(i * 2)).unwrap()).collect();
        let durable = store.flushed_position();
        faults.fail_always(FaultPoint::Sync);
        for i in 20..30 {
            assert!(matches!(store.put_message(&msg(i * 2)), Err(PutError::Flush { .. })));
        }
        assert_eq!(store.flushed_position(), durable);
        // Reads of durable records keep working; unacknowledged ones stay invisible.
        assert_eq!(store.get_message("t0", 0, 0).unwrap().unwrap().body(), &body_for(0)[..]);
        drop(store); // crash with the fault still on

        // Recovery syncs what it accepts: with msync still failing, the open fails cleanly.
        // (Zero preallocated segments past the log may already be gone; no record is.)
        let before = scan_commitlog(&dir.path().join("commitlog"));
        match Store::open(dir.path(), cfg.clone()) {
            Err(OpenError::Io(e)) => assert_eq!(e.op(), "msync"),
            other => panic!("expected an msync error at open, got {other:?}"),
        }
        let after = scan_commitlog(&dir.path().join("commitlog"));
        assert_eq!((after.records, after.end), (before.records, before.end));

        faults.clear(FaultPoint::Sync);
        let store = Store::open(dir.path(), cfg).unwrap();
        assert!(store.write_position() >= durable);
        for (i, p) in acked.iter().enumerate() {
            let m = store.get_message_at(p.physical_offset).unwrap().expect("acknowledged survives");
            assert_eq!(m.body(), &body_for(i as u64 * 2)[..]);
        }
        let p = store.put_message(&msg(1000)).unwrap();
        assert_eq!(store.get_message_at(p.physical_offset).unwrap().unwrap().body(), &body_for(1000)[..]);
        store.close().unwrap();
    }
}

#[test]
fn async_flush_thread_failure_is_reported_and_recovered_from() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let cfg = StoreConfig {
        flush: FlushMode::Async { interval: std::time::Duration::from_millis(1), least_pages: 1 },
        ..config(&faults, WriteMode::Mmap, Layout::Single)
    };
    let store = Store::open(dir.path(), cfg.clone()).unwrap();
    faults.fail_always(FaultPoint::Sync);
    for i in 0..100 {
        store.put_message(&msg(i * 2)).unwrap(); // async: puts do not wait for the flush
    }
    assert!(store.flush().is_err());
    assert_eq!(store.flushed_position(), 0, "nothing was durable");
    // Reads are served from the page cache meanwhile.
    assert_eq!(store.get_message("t0", 0, 0).unwrap().unwrap().body(), &body_for(0)[..]);
    faults.clear(FaultPoint::Sync);
    assert_eq!(store.flush().unwrap(), store.write_position());
    store.close().unwrap();
    let store = Store::open(dir.path(), cfg).unwrap();
    assert_eq!(
        store.consume_queue_len("t0", 0).unwrap()
            + store.consume_queue_len("t0", 1).unwrap()
            + store.consume_queue_len("t0", 2).unwrap(),
        100
    );
    store.close().unwrap();
}
