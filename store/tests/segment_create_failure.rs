//! Creating the next segment fails (an injected `ENOSPC` from `posix_fallocate`): the put
//! returns an error and writes nothing, no half-made file is left (however often it
//! fails), the store keeps serving reads, and once space is back writes succeed.

mod common;

use abslock_store::fault::{FaultInjector, FaultPoint};
use abslock_store::{MessageStore, PutError, StoreConfig};

type Store = MessageStore<parking_lot::RawMutex>;

fn commitlog_files(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir.join("commitlog"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn segment_creation_failure_keeps_reads_and_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let cfg = StoreConfig { preallocate: false, fault_injector: faults.clone(), ..common::small(1024) };
    let store = Store::open(dir.path(), cfg.clone()).unwrap();
    let msgs: Vec<_> = (0..4u8).map(|i| common::message_of_size("t", 0, 300, i)).collect();
    for m in &msgs[..3] {
        store.put_message(m).unwrap();
    }
    let pos = store.write_position();
    let files = commitlog_files(dir.path());

    faults.fail_always(FaultPoint::SegmentCreate);
    for _ in 0..10 {
        let err = store.put_message(&msgs[3]).unwrap_err();
        assert!(matches!(err, PutError::SegmentCreate(_)), "{err}");
        assert!(err.to_string().contains("free disk space"), "{err}");
    }
    assert_eq!(faults.injected(FaultPoint::SegmentCreate), 10);
    assert_eq!(store.write_position(), pos);
    assert_eq!(commitlog_files(dir.path()), files, "no pile of half-made files");
    for (i, m) in msgs[..3].iter().enumerate() {
        assert_eq!(store.get_message("t", 0, i as u64).unwrap().unwrap().body(), m.body());
    }
    assert!(store.get_message("t", 0, 3).unwrap().is_none());

    faults.clear(FaultPoint::SegmentCreate);
    let p = store.put_message(&msgs[3]).unwrap();
    assert_eq!((p.physical_offset, p.queue_offset), (1024, 3));
    store.close().unwrap();
    let store = Store::open(dir.path(), cfg).unwrap();
    assert_eq!(store.get_message("t", 0, 3).unwrap().unwrap().body(), msgs[3].body());
    store.close().unwrap();
}

#[test]
fn first_segment_creation_failure_fails_open_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    faults.fail_always(FaultPoint::SegmentCreate);
    let cfg = StoreConfig { fault_injector: faults.clone(), ..common::small(1024) };
    assert!(Store::open(dir.path(), cfg.clone()).is_err());
    assert!(commitlog_files(dir.path()).is_empty());
    faults.clear(FaultPoint::SegmentCreate);
    let store = Store::open(dir.path(), cfg).unwrap();
    store.put_message(&common::message_of_size("t", 0, 300, 1)).unwrap();
    store.close().unwrap();
}
