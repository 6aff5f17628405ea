//! `MessageStore::open_over_warm_segments` and `close_into_warm_segments`: a series of stores
//! over the same warm files, each starting empty, none seeing the records of the one before.

use abslock_store::{
    CloseError, ConfigError, Layout, Message, MessageStore, OpenError, StoreConfig, WarmSegments,
};
use lock_api::RawMutex as _;
use std::path::Path;

type Store = MessageStore<parking_lot::RawMutex>;

const SEGMENT: u64 = 64 << 10;

fn config() -> StoreConfig {
    StoreConfig { segment_size: SEGMENT, preallocate: false, ..StoreConfig::default() }
}

fn open_over(dir: &Path, warm: WarmSegments) -> Result<Store, OpenError> {
    MessageStore::open_over_warm_segments(dir, config(), || parking_lot::RawMutex::INIT, warm)
}

fn commitlog_files(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("commitlog")).map_or(0, |d| d.count())
}

#[test]
fn stores_in_series_reuse_the_files_and_start_empty() {
    let (home, a, b) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let warm = WarmSegments::create(home.path(), SEGMENT, 2).unwrap();
    let store = open_over(a.path(), warm).unwrap();
    assert_eq!(commitlog_files(a.path()), 2, "the files moved into the store");
    let old = Message::new("orders", vec![1; 1000]).queue_id(0);
    let mut last = 0;
    while last < SEGMENT {
        last = store.put_message(&old).unwrap().physical_offset;
    }
    assert_eq!(store.stats().rolls, 1, "rolled into the second warm segment");
    let warm = store.close_into_warm_segments(home.path()).unwrap();
    assert_eq!((warm.len(), warm.segment_size()), (2, SEGMENT));
    assert_eq!(commitlog_files(a.path()), 0, "the files left the store");
    assert_eq!(std::fs::read_dir(home.path()).unwrap().count(), 2, "and came home");

    let store = open_over(b.path(), warm).unwrap();
    let new = Message::new("orders", vec![2; 10]).queue_id(0);
    assert_eq!(store.put_message(&new).unwrap().physical_offset, 0, "a reused set starts at offset 0");
    assert_eq!(store.get_message("orders", 0, 0).unwrap().unwrap().body(), &[2; 10][..]);
    assert!(store.get_message("orders", 0, 1).unwrap().is_none(), "nothing of the store before");
    store.close().unwrap();
    // Recovery of the second store finds its one record and nothing stale after it.
    let store: Store = MessageStore::open(b.path(), config()).unwrap();
    let report = store.recovery_report();
    assert!(!report.any_cut(), "{report:?}");
    assert_eq!(store.consume_queue_len("orders", 0).unwrap(), 1);
    store.close().unwrap();
}

#[test]
fn unusable_segments_or_layouts_are_typed_errors() {
    let (home, dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let other_size = WarmSegments::create(home.path(), 2 * SEGMENT, 1).unwrap();
    assert!(matches!(
        open_over(dir.path(), other_size),
        Err(OpenError::InvalidConfig(ConfigError::WarmSegmentsUnusable(_)))
    ));
    let per_topic = StoreConfig { layout: Layout::PerTopic, ..config() };
    let home = tempfile::tempdir().unwrap();
    let warm = WarmSegments::create(home.path(), SEGMENT, 1).unwrap();
    let r: Result<Store, _> = MessageStore::open_over_warm_segments(
        dir.path(),
        per_topic.clone(),
        || parking_lot::RawMutex::INIT,
        warm,
    );
    assert!(matches!(r, Err(OpenError::InvalidConfig(ConfigError::WarmSegmentsUnusable(_)))));
    assert_eq!(commitlog_files(dir.path()), 0, "nothing moved");

    // A directory that already holds a log keeps it.
    let store: Store = MessageStore::open(dir.path(), config()).unwrap();
    store.put_message(&Message::new("orders", b"kept".to_vec())).unwrap();
    store.close().unwrap();
    let home = tempfile::tempdir().unwrap();
    let warm = WarmSegments::create(home.path(), SEGMENT, 1).unwrap();
    assert!(matches!(
        open_over(dir.path(), warm),
        Err(OpenError::InvalidConfig(ConfigError::WarmSegmentsUnusable(_)))
    ));
    let store: Store = MessageStore::open(dir.path(), config()).unwrap();
    assert_eq!(store.get_message("orders", 0, 0).unwrap().unwrap().body(), b"kept");

    // A per-topic store closes cleanly but gives nothing back.
    let pt = tempfile::tempdir().unwrap();
    let store: Store = MessageStore::open(pt.path(), per_topic.clone()).unwrap();
    store.put_message(&Message::new("orders", b"x".to_vec())).unwrap();
    assert!(matches!(store.close_into_warm_segments(home.path()), Err(CloseError::NotRecyclable(_))));
    let store: Store = MessageStore::open(pt.path(), per_topic).unwrap();
    assert!(!store.recovery_report().logs[0].crashed, "closed cleanly");
}
