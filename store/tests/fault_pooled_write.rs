//! Short and failed writes of the pooled write mode's commit (the transient store pool's
//! `pwrite`, injected through the store's file-operation seam: the first half lands, then
//! the error). The caller gets an error, the committed and flushed positions stay, readers
//! never see uncommitted bytes, a crash in the middle leaves no half record that a later
//! open accepts, and the retry after the fault clears rewrites the range whole.
//!
//! Extends `flush_failure.rs::pooled_write_failure` (in-process retry) with crashes,
//! async flush and multi-record commits.

mod common;
#[path = "common/reliability.rs"]
mod reliability;

use std::time::Duration;

use abslock_store::fault::{FaultInjector, FaultPoint};
use abslock_store::{
    FlushError, FlushMode, Message, MessageStore, PutError, PutResult, StoreConfig, WriteMode,
};
use reliability::{body_for, id_if_intact, scan_commitlog};

type Store = MessageStore<parking_lot::RawMutex>;

fn config(faults: &FaultInjector, flush: FlushMode) -> StoreConfig {
    StoreConfig {
        flush,
        // A long commit interval: commits happen when the test asks (flush, reads).
        write_mode: WriteMode::Pooled { buffers: 2, commit_interval: Duration::from_secs(3600) },
        checkpoint_interval: Duration::from_secs(3600),
        fault_injector: faults.clone(),
        ..common::small(64 << 10)
    }
}

fn async_flush() -> FlushMode {
    FlushMode::Async { interval: Duration::from_secs(3600), least_pages: 1 }
}

fn msg(id: u64) -> Message {
    Message::new("t", body_for(id)).queue_id(0)
}

fn end(p: &PutResult) -> u64 {
    p.physical_offset + u64::from(p.size)
}

#[test]
fn short_write_then_crash_leaves_no_half_record() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let cfg = config(&faults, FlushMode::SYNC);
    let store = Store::open(dir.path(), cfg.clone()).unwrap();
    let acked: Vec<PutResult> = (0..10).map(|i| store.put_message(&msg(i)).unwrap()).collect();
    faults.fail_always(FaultPoint::PooledWrite);
    let err = store.put_message(&msg(10)).unwrap_err();
    assert!(matches!(err, PutError::Flush { source: FlushError::Io { .. }, .. }), "{err}");
    assert_eq!(store.flushed_position(), end(&acked[9]));
    assert!(store.get_message("t", 0, 10).unwrap().is_none(), "an uncommitted record is visible");
    assert_eq!(store.get_message("t", 0, 9).unwrap().unwrap().body(), &body_for(9)[..]);
    drop(store); // crash: half of record 10 is in the file

    faults.clear(FaultPoint::PooledWrite);
    let store = Store::open(dir.path(), cfg).unwrap();
    assert_eq!(store.write_position(), end(&acked[9]), "the half-written record was accepted");
    for (i, p) in acked.iter().enumerate() {
        let m = store.get_message("t", 0, i as u64).unwrap().expect("acknowledged survives");
        assert_eq!((m.body(), m.physical_offset()), (&body_for(i as u64)[..], p.physical_offset));
    }
    let p = store.put_message(&msg(11)).unwrap();
    assert_eq!((p.physical_offset, p.queue_offset), (end(&acked[9]), 10));
    store.close().unwrap();
    let scan = scan_commitlog(&dir.path().join("commitlog"));
    assert_eq!(scan.records.len(), 11);
    assert_eq!(scan.stale_byte_at, None, "the torn half was not zeroed");
}

#[test]
fn short_write_of_many_records_keeps_only_whole_ones() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let cfg = config(&faults, async_flush());
    let store = Store::open(dir.path(), cfg.clone()).unwrap();
    let first: Vec<PutResult> = (0..5).map(|i| store.put_message(&msg(i)).unwrap()).collect();
    store.flush().unwrap();
    // Twenty records wait in the pool; their commit is cut in half.
    let pending: Vec<PutResult> = (5..25).map(|i| store.put_message(&msg(i)).unwrap()).collect();
    faults.fail_always(FaultPoint::PooledWrite);
    assert!(matches!(store.flush(), Err(FlushError::Io { .. })));
    assert_eq!(store.flushed_position(), end(&first[4]));
    // Readers see only what was committed before the fault.
    assert!(store.get_message_at(pending[0].physical_offset).unwrap().is_none());
    assert_eq!(store.consume_queue_len("t", 0).unwrap(), 5);
    drop(store); // crash

    faults.clear(FaultPoint::PooledWrite);
    let store = Store::open(dir.path(), cfg).unwrap();
    // Async flush: a prefix survives. The whole records of the landed half may be kept
    // (they are intact); the record torn by the cut is not; nothing after it is.
    let w = store.write_position();
    assert!(w >= end(&first[4]));
    let kept = pending.iter().take_while(|p| end(p) <= w).count();
    assert_eq!(w, if kept == 0 { end(&first[4]) } else { end(&pending[kept - 1]) });
    assert!(kept < pending.len(), "more than the landed half was kept");
    for i in 0..(5 + kept) as u64 {
        assert_eq!(store.get_message("t", 0, i).unwrap().unwrap().body(), &body_for(i)[..]);
    }
    assert!(store.get_message("t", 0, (5 + kept) as u64).unwrap().is_none());
    store.close().unwrap();
    let scan = scan_commitlog(&dir.path().join("commitlog"));
    assert!(scan.records.iter().all(|r| id_if_intact(&r.body).is_some()));
    assert_eq!(scan.stale_byte_at, None);
}

#[test]
fn failed_commit_is_retried_whole_once_the_fault_clears() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let cfg = config(&faults, async_flush());
    let store = Store::open(dir.path(), cfg.clone()).unwrap();
    let puts: Vec<PutResult> = (0..30).map(|i| store.put_message(&msg(i)).unwrap()).collect();
    faults.fail_times(FaultPoint::PooledWrite, 3);
    for _ in 0..3 {
        assert!(store.flush().is_err());
        assert_eq!(store.flushed_position(), 0);
    }
    assert_eq!(store.flush().unwrap(), end(&puts[29]));
    for (i, p) in puts.iter().enumerate() {
        assert_eq!(store.get_message_at(p.physical_offset).unwrap().unwrap().body(), &body_for(i as u64)[..]);
    }
    drop(store); // crash after the successful flush: everything is in the file
    let store = Store::open(dir.path(), cfg).unwrap();
    assert_eq!(store.write_position(), end(&puts[29]));
    assert_eq!(store.consume_queue_len("t", 0).unwrap(), 30);
    store.close().unwrap();
}
