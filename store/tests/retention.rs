//! Retention: segments past the size cap or the age limit are deleted oldest first, the
//! minimum readable offsets follow (reads below them are typed errors, never stale bytes),
//! nothing unflushed is deleted, consume-queue files below the minimum release their
//! blocks, and a crash after any step of a deletion reopens to a valid store that loses
//! nothing above the minimum and never hands out a queue offset twice.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

use abslock_store::fault::{FaultInjector, FaultPoint};
use abslock_store::{
    Message, MessageStore, PutResult, ReadError, Retention, StoreConfig, TransferError, TransferLimit,
};

type Store = MessageStore<parking_lot::RawMutex>;

const SEGMENT: u64 = 4096;
const QUEUES: u32 = 3;

fn config(retention: Retention, faults: &FaultInjector) -> StoreConfig {
    StoreConfig {
        segment_size: SEGMENT,
        consume_queue_entries: 4,
        preallocate: false,
        retention,
        fault_injector: faults.clone(),
        ..StoreConfig::default()
    }
}

fn by_size(max_bytes: u64) -> Retention {
    Retention { max_bytes: Some(max_bytes), ..Retention::default() }
}

fn body(i: usize) -> Vec<u8> {
    vec![i as u8; 200 + (i * 53) % 400]
}

/// Puts `n` messages round-robin over the queues and flushes; returns (put, queue id).
fn fill(store: &Store, n: usize) -> Vec<(PutResult, u32)> {
    let puts = (0..n)
        .map(|i| {
            let q = i as u32 % QUEUES;
            (store.put_message(&Message::new("t", body(i)).queue_id(q)).unwrap(), q)
        })
        .collect();
    store.flush().unwrap();
    puts
}

fn segment_files(dir: &Path) -> Vec<u64> {
    let mut v: Vec<u64> = std::fs::read_dir(dir.join("commitlog"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str()?.parse().ok())
        .collect();
    v.sort();
    v
}

/// Every message at or above the log's minimum reads back exactly, by queue offset and by
/// physical offset; every one below is a typed error; the queue minimums match.
fn assert_minimums_hold(store: &Store, puts: &[(PutResult, u32)]) {
    let min_phys = store.min_physical_offset_in("t");
    for (i, (p, q)) in puts.iter().enumerate() {
        if p.physical_offset >= min_phys {
            let m = store.get_message("t", *q, p.queue_offset).unwrap().expect("kept message reads back");
            assert_eq!(m.body(), &body(i)[..], "message {i}");
            assert_eq!(store.get_message_at(p.physical_offset).unwrap().unwrap().body(), &body(i)[..]);
        } else {
            match store.get_message("t", *q, p.queue_offset) {
                Err(ReadError::BelowMinQueueOffset { queue_offset, min_queue_offset, .. }) => {
                    assert_eq!(queue_offset, p.queue_offset);
                    assert!(min_queue_offset > queue_offset);
                }
                other => panic!("message {i} below the minimum: expected a typed error, got {other:?}"),
            }
            match store.get_message_at(p.physical_offset) {
                Err(ReadError::BelowMinPhysicalOffset { min_physical_offset, .. }) => {
                    assert_eq!(min_physical_offset, min_phys)
                }
                other => panic!("message {i} by physical offset: expected a typed error, got {other:?}"),
            }
        }
    }
    for q in 0..QUEUES {
        let first_kept = puts
            .iter()
            .filter(|(p, pq)| *pq == q && p.physical_offset >= min_phys)
            .map(|(p, _)| p.queue_offset)
            .min();
        let len = puts.iter().filter(|(_, pq)| *pq == q).count() as u64;
        assert_eq!(store.min_queue_offset("t", q), first_kept.unwrap_or(len), "queue {q}");
        assert_eq!(store.consume_queue_len("t", q).unwrap(), len, "queue {q} keeps its length");
    }
}

#[test]
fn the_size_cap_deletes_the_oldest_segments_and_the_minimums_follow_across_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let store = Store::open(dir.path(), config(by_size(3 * SEGMENT), &faults)).unwrap();
    let puts = fill(&store, 120);
    let before = segment_files(dir.path());
    assert!(before.len() > 6, "{before:?}");
    let r = store.run_retention_now().unwrap();
    let after = segment_files(dir.path());
    assert_eq!(after.len(), 3, "{after:?}");
    assert_eq!(r.segments_deleted, (before.len() - 3) as u64);
    assert_eq!(r.bytes_deleted, r.segments_deleted * SEGMENT);
    assert_eq!(store.min_physical_offset_in("t"), after[0]);
    assert_minimums_hold(&store, &puts);
    // A second run has nothing to do.
    assert_eq!(store.run_retention_now().unwrap().segments_deleted, 0);
    store.close().unwrap();
    let store = Store::open(dir.path(), config(by_size(3 * SEGMENT), &faults)).unwrap();
    assert_eq!(store.min_physical_offset_in("t"), after[0]);
    assert_minimums_hold(&store, &puts);
    // The next put continues each queue; queue offsets are never reused.
    let next = store.put_message(&Message::new("t", body(0)).queue_id(0)).unwrap();
    assert_eq!(next.queue_offset, puts.iter().filter(|(_, q)| *q == 0).count() as u64);
    drop(store);
}

#[test]
fn reads_and_transfers_below_the_minimum_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let store = Store::open(dir.path(), config(by_size(2 * SEGMENT), &faults)).unwrap();
    let puts = fill(&store, 60);
    store.run_retention_now().unwrap();
    let min = store.min_queue_offset("t", 1);
    assert!(min > 0);
    let (_rx, tx) = std::os::unix::net::UnixStream::pair().unwrap();
    match store.transfer_to("t", 1, 0, TransferLimit::messages(10), &tx) {
        Err(TransferError::Read {
            report,
            source: ReadError::BelowMinQueueOffset { min_queue_offset, .. },
        }) => {
            assert_eq!((report.messages, min_queue_offset), (0, min))
        }
        other => panic!("expected a below-minimum error, got {other:?}"),
    }
    let r = store.transfer_to("t", 1, min, TransferLimit::messages(1000), &tx).unwrap();
    let len = puts.iter().filter(|(_, q)| *q == 1).count() as u64;
    assert_eq!(r.messages, len - min);
}

#[test]
fn the_age_limit_deletes_segments_whose_records_are_old_enough() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let hour = Duration::from_secs(3600);
    let retention = Retention { max_age: Some(hour), ..Retention::default() };
    let store = Store::open(dir.path(), config(retention, &faults)).unwrap();
    let puts = fill(&store, 80);
    let files = segment_files(dir.path()).len();
    // Everything is seconds old: nothing is an hour old.
    assert_eq!(store.run_retention_now().unwrap().segments_deleted, 0);
    // Two hours later every full segment is: all but the one being written go.
    let later = SystemTime::now() + 2 * hour;
    let r = store.run_retention_at(later).unwrap();
    assert_eq!(r.segments_deleted, files as u64 - 1);
    assert_eq!(segment_files(dir.path()).len(), 1);
    assert_minimums_hold(&store, &puts);
}

#[test]
fn nothing_unflushed_is_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    // Every flush fails: the flushed position stays where open left it.
    faults.fail_always(FaultPoint::Sync);
    let store = Store::open(dir.path(), config(by_size(SEGMENT), &faults)).unwrap();
    for i in 0..60 {
        store.put_message(&Message::new("t", body(i))).unwrap();
    }
    let files = segment_files(dir.path());
    assert!(files.len() > 3);
    assert_eq!(store.run_retention_now().unwrap().segments_deleted, 0);
    assert_eq!(segment_files(dir.path()), files);
    assert_eq!(store.min_physical_offset_in("t"), 0);
    faults.clear(FaultPoint::Sync);
}

/// Bytes allocated on disk by a file.
fn blocks(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().blocks() * 512
}

#[test]
fn consume_queue_files_below_the_minimum_release_their_blocks() {
    // Files of 1024 entries (20 KiB, whole file-system blocks, so punching frees them).
    const PER_FILE: u64 = 1024;
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let cfg = StoreConfig {
        segment_size: 32 << 10,
        consume_queue_entries: PER_FILE,
        ..config(by_size(2 * (32 << 10)), &faults)
    };
    let store = Store::open(dir.path(), cfg.clone()).unwrap();
    let puts: Vec<PutResult> =
        (0..2600).map(|i| store.put_message(&Message::new("t", vec![i as u8; 10])).unwrap()).collect();
    store.flush().unwrap();
    let qdir = dir.path().join("consumequeue/t/0");
    let first = qdir.join("00000000000000000000");
    assert!(blocks(&first) >= PER_FILE * 20, "the first file holds blocks before retention");
    let r = store.run_retention_now().unwrap();
    let min = store.min_queue_offset("t", 0);
    assert!(min >= PER_FILE, "retention must pass the first file: min {min}");
    assert_eq!(r.consume_queue_files_released, min.min(puts.len() as u64 - 2) / PER_FILE);
    assert_eq!(blocks(&first), 0, "the released file holds no blocks");
    assert_eq!(std::fs::metadata(&first).unwrap().len(), PER_FILE * 20, "and keeps its size");
    // Released files stay below the minimum after a crash and reopen; nothing above it is lost.
    drop(store);
    let store = Store::open(dir.path(), cfg).unwrap();
    assert_eq!(store.min_queue_offset("t", 0), min);
    assert_eq!(store.consume_queue_len("t", 0).unwrap(), puts.len() as u64);
    for p in &puts[min as usize..] {
        assert_eq!(
            store.get_message("t", 0, p.queue_offset).unwrap().unwrap().body()[0],
            p.queue_offset as u8
        );
    }
    assert!(matches!(store.get_message("t", 0, 0), Err(ReadError::BelowMinQueueOffset { .. })));
}

/// The result of an uninterrupted deletion, for comparison.
fn uninterrupted(n: usize) -> (Vec<u64>, [u64; QUEUES as usize]) {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let store = Store::open(dir.path(), config(by_size(2 * SEGMENT), &faults)).unwrap();
    fill(&store, n);
    store.run_retention_now().unwrap();
    let mins = [0, 1, 2].map(|q| store.min_queue_offset("t", q));
    (segment_files(dir.path()), mins)
}

#[test]
fn a_crash_after_any_deletion_step_reopens_to_a_valid_store() {
    const N: usize = 150;
    let (final_files, final_mins) = uninterrupted(N);
    let mut steps = 0;
    for k in 0.. {
        let dir = tempfile::tempdir().unwrap();
        let faults = FaultInjector::default();
        let store = Store::open(dir.path(), config(by_size(2 * SEGMENT), &faults)).unwrap();
        let puts = fill(&store, N);
        let before = segment_files(dir.path());
        faults.fail_after(FaultPoint::RetentionDelete, k);
        let done = store.run_retention_now();
        // The crash: no close, no more deletion steps.
        drop(store);
        faults.clear(FaultPoint::RetentionDelete);
        let files = segment_files(dir.path());
        // Any prefix of the deletion: the files left are the newest ones, contiguous.
        assert_eq!(&before[before.len() - files.len()..], &files[..], "step {k}");
        let store = Store::open(dir.path(), config(Retention::default(), &faults)).unwrap();
        assert_eq!(store.min_physical_offset_in("t"), files[0], "step {k}");
        assert_minimums_hold(&store, &puts);
        for q in 0..QUEUES {
            let len = puts.iter().filter(|(_, pq)| *pq == q).count() as u64;
            let p = store.put_message(&Message::new("t", body(1)).queue_id(q)).unwrap();
            assert_eq!(p.queue_offset, len, "step {k}: queue {q} hands out a new offset");
        }
        drop(store);
        // Finishing the deletion reaches the uninterrupted result.
        let store = Store::open(dir.path(), config(by_size(2 * SEGMENT), &faults)).unwrap();
        store.run_retention_now().unwrap();
        drop(store);
        if done.is_ok() {
            steps = k;
            assert_eq!(segment_files(dir.path()), final_files);
            break;
        }
        assert!(k < 1000, "retention never finished");
    }
    assert!(steps > final_files.len() as u64, "segment and consume-queue steps were all crashed: {steps}");
    let _ = final_mins;
}

#[test]
fn per_topic_logs_each_keep_their_cap() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let cfg =
        StoreConfig { layout: abslock_store::Layout::PerTopic, ..config(by_size(2 * SEGMENT), &faults) };
    let store = Store::open(dir.path(), cfg).unwrap();
    for i in 0..80 {
        store.put_message(&Message::new("a", body(i))).unwrap();
        store.put_message(&Message::new("b", body(i))).unwrap();
    }
    store.flush().unwrap();
    let r = store.run_retention_now().unwrap();
    assert!(r.segments_deleted >= 4);
    for topic in ["a", "b"] {
        assert_eq!(segment_files(&dir.path().join("topics").join(topic)).len(), 2, "{topic}");
        let min = store.min_queue_offset(topic, 0);
        assert!(matches!(store.get_message(topic, 0, min - 1), Err(ReadError::BelowMinQueueOffset { .. })));
        assert!(store.get_message(topic, 0, min).unwrap().is_some());
    }
}

#[test]
fn a_queue_whose_records_were_all_deleted_keeps_its_length() {
    for clean in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let faults = FaultInjector::default();
        let cfg = || config(by_size(2 * SEGMENT), &faults);
        let store = Store::open(dir.path(), cfg()).unwrap();
        // Queue 7 gets 10 messages, all in the oldest segments; then only queue 0 is written.
        for i in 0..10 {
            store.put_message(&Message::new("t", body(i)).queue_id(7)).unwrap();
        }
        fill(&store, 90);
        store.run_retention_now().unwrap();
        assert_eq!(store.min_queue_offset("t", 7), 10, "all of queue 7 was deleted");
        if clean {
            store.close().unwrap();
        } else {
            drop(store);
        }
        let store = Store::open(dir.path(), cfg()).unwrap();
        assert_eq!(store.consume_queue_len("t", 7).unwrap(), 10, "clean close {clean}");
        assert_eq!(store.min_queue_offset("t", 7), 10);
        assert!(matches!(store.get_message("t", 7, 9), Err(ReadError::BelowMinQueueOffset { .. })));
        let p = store.put_message(&Message::new("t", body(1)).queue_id(7)).unwrap();
        assert_eq!(p.queue_offset, 10, "queue offsets are never handed out twice");
        assert_eq!(store.get_message("t", 7, 10).unwrap().unwrap().body(), &body(1)[..]);
    }
}

#[test]
fn a_checkpoint_pointing_into_deleted_segments_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let cfg = || config(by_size(2 * SEGMENT), &faults);
    let store = Store::open(dir.path(), cfg()).unwrap();
    let mut puts = fill(&store, 6);
    // The checkpoint now points at the end of these first messages.
    store.close().unwrap();
    let store = Store::open(dir.path(), cfg()).unwrap();
    let more = (6..120).map(|i| {
        let q = i as u32 % QUEUES;
        (store.put_message(&Message::new("t", body(i)).queue_id(q)).unwrap(), q)
    });
    puts.extend(more.collect::<Vec<_>>());
    store.flush().unwrap();
    store.run_retention_now().unwrap();
    assert!(
        store.min_physical_offset_in("t") > puts[5].0.physical_offset,
        "the checkpoint's segment is gone"
    );
    // Crash: the checkpoint on disk still points into the deleted segments.
    drop(store);
    let store = Store::open(dir.path(), cfg()).unwrap();
    assert_minimums_hold(&store, &puts);
}
