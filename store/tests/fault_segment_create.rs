//! Failed segment creation (an injected `ENOSPC` through the store's file-operation seam)
//! with the background preallocator on, under both layouts and with concurrent writers:
//! every put that needs the segment fails and writes nothing, repeated failures leave no
//! growing pile of files, reads keep being served, a reopen is not misled by anything
//! left behind, and writes succeed once space is back.
//!
//! Extends `segment_create_failure.rs` (preallocation off, one writer).

mod common;
#[path = "common/reliability.rs"]
mod reliability;

use std::sync::Mutex;

use abslock_store::fault::{FaultInjector, FaultPoint};
use abslock_store::{FlushMode, Layout, Message, MessageStore, PutError, PutResult, StoreConfig};
use reliability::{body_for, files_under};

type Store = MessageStore<parking_lot::RawMutex>;

const SEGMENT: u64 = 1024;

fn config(faults: &FaultInjector, layout: Layout) -> StoreConfig {
    StoreConfig {
        layout,
        flush: FlushMode::SYNC,
        // No periodic checkpoint: its temporary file would show up in the file listings.
        checkpoint_interval: std::time::Duration::from_secs(3600),
        fault_injector: faults.clone(),
        ..common::small(SEGMENT)
    }
}

fn msg(topic: &str, id: u64) -> Message {
    Message::new(topic, body_for(id)).queue_id(0)
}

/// Fills the current segment until a put needs the next one while creation fails.
/// Returns the acknowledged puts (id, result).
fn fill_until_failure(store: &Store, topic: &str) -> Vec<(u64, PutResult)> {
    let mut acked = Vec::new();
    for id in 0..100 {
        match store.put_message(&msg(topic, id)) {
            Ok(p) => acked.push((id, p)),
            Err(PutError::SegmentCreate(e)) => {
                assert_eq!(e.io_error().kind(), std::io::ErrorKind::StorageFull, "{e}");
                return acked;
            }
            Err(e) => panic!("unexpected put error: {e}"),
        }
    }
    panic!("no put needed a new segment");
}

#[test]
fn repeated_failures_with_preallocation_leave_no_pile_and_recover() {
    for layout in [Layout::Single, Layout::PerTopic] {
        let dir = tempfile::tempdir().unwrap();
        let faults = FaultInjector::default();
        let cfg = config(&faults, layout);
        let store = Store::open(dir.path(), cfg.clone()).unwrap();
        let mut acked = vec![(1000, store.put_message(&msg("t", 1000)).unwrap())];
        // The preallocator may have made the next segment already; from now on nothing new.
        faults.fail_always(FaultPoint::SegmentCreate);
        acked.extend(fill_until_failure(&store, "t"));
        // Every consume-queue entry dispatched before the file listing.
        assert_eq!(store.consume_queue_len("t", 0).unwrap(), acked.len() as u64);
        let files = files_under(dir.path());
        let pos = store.write_position();
        let failures = faults.injected(FaultPoint::SegmentCreate);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let store = &store;
                s.spawn(move || {
                    for i in 0..25 {
                        // Too big for the rest of the segment: each needs the next one.
                        let big = Message::new("t", vec![(t * 100 + i) as u8; 900]);
                        let err = store.put_message(&big).unwrap_err();
                        assert!(matches!(err, PutError::SegmentCreate(_)), "{err}");
                    }
                });
            }
        });
        assert!(faults.injected(FaultPoint::SegmentCreate) >= failures + 100);
        assert_eq!(store.write_position(), pos, "a failed put moved the write position");
        assert_eq!(files_under(dir.path()), files, "failed creations left files behind");
        for (qo, (id, p)) in acked.iter().enumerate() {
            let m = store.get_message("t", 0, qo as u64).unwrap().expect("reads keep working");
            assert_eq!((m.body(), m.physical_offset()), (&body_for(*id)[..], p.physical_offset));
        }
        // A reopen while the disk is still full keeps everything and is not misled.
        drop(store);
        let store = Store::open(dir.path(), cfg.clone()).unwrap();
        assert_eq!(store.write_position(), pos);
        assert!(matches!(store.put_message(&msg("t", 7000)), Err(PutError::SegmentCreate(_))));
        faults.clear(FaultPoint::SegmentCreate);
        let p = store.put_message(&msg("t", 7001)).unwrap();
        assert_eq!(p.queue_offset, acked.len() as u64);
        assert_eq!(p.physical_offset, pos.div_ceil(SEGMENT) * SEGMENT);
        store.close().unwrap();
        let store = Store::open(dir.path(), cfg).unwrap();
        assert_eq!(
            store.get_message("t", 0, acked.len() as u64).unwrap().unwrap().body(),
            &body_for(7001)[..]
        );
        store.close().unwrap();
    }
}

#[test]
fn failed_topic_creation_under_per_topic_leaves_no_pile_and_does_not_block_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let cfg = config(&faults, Layout::PerTopic);
    let store = Store::open(dir.path(), cfg.clone()).unwrap();
    let old = store.put_message(&msg("old", 1)).unwrap();
    store.flush().unwrap();
    assert_eq!(store.consume_queue_len("old", 0).unwrap(), 1);
    let files = Mutex::new(files_under(dir.path()));
    faults.fail_always(FaultPoint::SegmentCreate);
    for round in 0..3 {
        for topic in ["new1", "new2"] {
            let err = store.put_message(&msg(topic, round)).unwrap_err();
            assert!(matches!(err, PutError::SegmentCreate(_)), "{err}");
        }
    }
    // Existing topics keep being served.
    assert_eq!(store.get_message("old", 0, 0).unwrap().unwrap().physical_offset(), old.physical_offset);
    assert!(store.get_message("new1", 0, 0).unwrap().is_none());
    let data = |m: &std::collections::BTreeMap<String, u64>| {
        m.keys()
            .filter(|k| k.contains("commitlog/") || k.contains("consumequeue/"))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(data(&files_under(dir.path())), data(&files.lock().unwrap()), "failed topics left data files");
    drop(store);
    // A reopen while the disk is still full: the failed topics must not block the store.
    let store = Store::open(dir.path(), cfg.clone())
        .unwrap_or_else(|e| panic!("a failed topic creation blocks reopening: {e}"));
    assert_eq!(store.get_message("old", 0, 0).unwrap().unwrap().body(), &body_for(1)[..]);
    faults.clear(FaultPoint::SegmentCreate);
    let p = store.put_message(&msg("new1", 9)).unwrap();
    assert_eq!((p.physical_offset, p.queue_offset), (0, 0));
    store.close().unwrap();
}

#[test]
fn failed_mapping_of_a_new_segment_leaves_no_file_and_fails_open_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let cfg = StoreConfig { preallocate: false, ..config(&faults, Layout::Single) };
    let store = Store::open(dir.path(), cfg.clone()).unwrap();
    let mut acked = vec![(1000, store.put_message(&msg("t", 1000)).unwrap())];
    // The consume-queue file exists (it is mapped too) before mapping starts failing.
    assert_eq!(store.consume_queue_len("t", 0).unwrap(), 1);
    faults.fail_always(FaultPoint::Map);
    acked
        .extend(fill_until_failure_with(&store, |e| assert!(matches!(e, PutError::SegmentCreate(_)), "{e}")));
    assert_eq!(store.consume_queue_len("t", 0).unwrap(), acked.len() as u64);
    let files = files_under(dir.path());
    for _ in 0..5 {
        assert!(store.put_message(&Message::new("t", vec![1u8; 900])).is_err());
    }
    assert_eq!(files_under(dir.path()), files, "a segment that could not be mapped was left behind");
    for (qo, (id, _)) in acked.iter().enumerate() {
        assert_eq!(store.get_message("t", 0, qo as u64).unwrap().unwrap().body(), &body_for(*id)[..]);
    }
    drop(store);
    // Opening maps every segment: with mapping failing, the open fails and changes nothing.
    let before = common::snapshot(dir.path());
    assert!(Store::open(dir.path(), cfg.clone()).is_err());
    assert_eq!(common::snapshot(dir.path()), before);
    faults.clear(FaultPoint::Map);
    let store = Store::open(dir.path(), cfg).unwrap();
    assert_eq!(store.consume_queue_len("t", 0).unwrap(), acked.len() as u64);
    store.put_message(&Message::new("t", vec![1u8; 900])).unwrap();
    store.close().unwrap();
}

/// As [`fill_until_failure`], checking the failure with `check`.
fn fill_until_failure_with(store: &Store, check: impl Fn(&PutError)) -> Vec<(u64, PutResult)> {
    let mut acked = Vec::new();
    for id in 0..100 {
        match store.put_message(&msg("t", id)) {
            Ok(p) => acked.push((id, p)),
            Err(e) => {
                check(&e);
                return acked;
            }
        }
    }
    panic!("no put needed a new segment");
}
