//! The default configuration's disk footprint, RocketMQ's sizes as a profile, and error
//! texts that name what a user sets: an out-of-space error names the bytes it needed and
//! the fields that lower it, a body over the limit names `max_message_size`, and a read at
//! an offset inside a record says that no record starts there.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use abslock_store::fault::{FaultInjector, FaultPoint};
use abslock_store::{Message, MessageStore, PutError, ReadError, StoreConfig};

type Store = MessageStore<parking_lot::RawMutex>;

/// Bytes allocated on disk under `dir` (st_blocks, so fallocated space counts).
fn disk_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let md = std::fs::symlink_metadata(e.path()).unwrap();
        total += if md.is_dir() { disk_bytes(&e.path()) } else { md.blocks() * 512 };
    }
    total
}

#[test]
fn one_small_message_under_the_default_config_takes_at_most_130_mib() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreConfig::default()).unwrap();
    store.put_message(&Message::new("t", b"hello".to_vec())).unwrap();
    store.flush().unwrap();
    store.consume_queue_len("t", 0).unwrap();
    // At most the current segment, one kept ready and one consume-queue file:
    // 2 x 64 MiB + 1.25 MiB (RocketMQ's sizes would reserve 3 GiB here).
    let used = disk_bytes(dir.path());
    assert!(used <= 130 << 20, "default store with one message uses {used} bytes");
    store.close().unwrap();
    assert!(disk_bytes(dir.path()) <= 130 << 20);
}

#[test]
fn the_rocketmq_profile_keeps_rocketmqs_sizes() {
    let c = StoreConfig::rocketmq();
    assert_eq!(c.segment_size, 1 << 30);
    assert_eq!(c.preallocate_ahead, 2);
    assert_eq!(c.consume_queue_entries, 300_000);
    let d = StoreConfig::default();
    assert_eq!((d.segment_size, d.preallocate_ahead), (64 << 20, 1));
    assert_eq!(c.max_message_size, d.max_message_size);
}

#[test]
fn out_of_space_names_the_bytes_needed_and_the_fields_that_lower_them() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let config = StoreConfig {
        segment_size: 4096,
        preallocate: false,
        fault_injector: faults.clone(),
        ..StoreConfig::default()
    };
    let store = Store::open(dir.path(), config).unwrap();
    faults.fail_always(FaultPoint::SegmentCreate);
    let msg = Message::new("t", vec![1u8; 1500]);
    let err = loop {
        match store.put_message(&msg) {
            Ok(_) => continue,
            Err(e) => break e,
        }
    };
    assert!(matches!(err, PutError::SegmentCreate(_)), "{err}");
    let text = err.to_string();
    for needle in ["4096 bytes", "segment_size", "preallocate_ahead"] {
        assert!(text.contains(needle), "{needle:?} missing from {text:?}");
    }
    faults.clear(FaultPoint::SegmentCreate);
    faults.fail_always(FaultPoint::ConsumeQueueCreate);
    // A topic never dispatched before the fault: its consume queue cannot exist yet, whether the store's
    // dispatcher or this read's catch-up tries first. (Asking for "t" raced the dispatcher, which may have
    // created "t"'s queue before the fault was set: the read then found nothing to dispatch.)
    store.put_message(&Message::new("u", vec![2u8; 10])).unwrap();
    let err = store.consume_queue_len("u", 0).unwrap_err();
    assert!(matches!(err, ReadError::Io(_)), "{err}");
    assert!(err.to_string().contains("consume_queue_entries"), "{err}");
}

#[test]
fn a_body_over_the_limit_names_max_message_size() {
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig { segment_size: 1 << 20, max_message_size: 10, ..StoreConfig::default() };
    let store = Store::open(dir.path(), config).unwrap();
    let err = store.put_message(&Message::new("t", vec![0u8; 11])).unwrap_err();
    assert!(err.to_string().contains("max_message_size"), "{err}");
}

#[test]
fn a_read_inside_a_record_says_no_record_starts_there() {
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig { segment_size: 1 << 20, ..StoreConfig::default() };
    let store = Store::open(dir.path(), config).unwrap();
    let p = store.put_message(&Message::new("t", vec![9u8; 100])).unwrap();
    store.put_message(&Message::new("t", vec![9u8; 100])).unwrap();
    for inside in [p.physical_offset + 4, p.physical_offset + 60] {
        match store.get_message_at(inside) {
            Err(ReadError::NoRecordAt { physical_offset }) => assert_eq!(physical_offset, inside),
            other => panic!("expected NoRecordAt at {inside}, got {other:?}"),
        }
        let text = store.get_message_at(inside).unwrap_err().to_string();
        assert!(text.contains(&format!("no record starts at physical offset {inside}")), "{text}");
        assert!(!text.contains("corrupt"), "{text}");
    }
    assert_eq!(store.get_message_at(p.physical_offset).unwrap().unwrap().body(), &[9u8; 100][..]);
}
