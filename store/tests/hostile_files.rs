//! Hostile files: recovery meets files the store never writes itself and survives with a
//! typed error (changing nothing on disk) or a clean truncation, never a panic.
//!
//! Each test writes a small store (1 KiB segments, self-checking bodies), crashes or
//! closes it, damages the files one way, and reopens.

mod common;
#[path = "common/reliability.rs"]
mod reliability;

use std::path::{Path, PathBuf};
use std::time::Duration;

use abslock_store::{FlushMode, Message, MessageStore, OpenError, PutResult, StoreConfig};
use reliability::{body_for, files_under, scan_commitlog, segment_files, write_at, xor_range};

type Store = MessageStore<parking_lot::RawMutex>;

const SEGMENT: u64 = 1024;

fn config() -> StoreConfig {
    // No periodic checkpoint: each test decides whether one exists (clean close) or not.
    StoreConfig {
        checkpoint_interval: Duration::from_secs(3600),
        preallocate: false,
        put_path: common::put_path_for_test(),
        ..common::small(SEGMENT)
    }
}

fn msg(i: u64) -> Message {
    Message::new("t", body_for(i)).queue_id((i % 2) as u32).tags("x")
}

/// Writes `n` messages, flushes, then closes (`clean`) or drops the store (a crash).
fn build(dir: &Path, n: u64, clean: bool) -> Vec<PutResult> {
    let store = Store::open(dir, config()).unwrap();
    let puts: Vec<PutResult> = (0..n).map(|i| store.put_message(&msg(i)).unwrap()).collect();
    store.flush().unwrap();
    // All consume-queue entries exist before the crash.
    assert_eq!(store.consume_queue_len("t", 0).unwrap() + store.consume_queue_len("t", 1).unwrap(), n);
    if clean {
        store.close().unwrap();
    }
    puts
}

fn clog(dir: &Path) -> PathBuf {
    dir.join("commitlog")
}

fn seg_path(dir: &Path, start: u64) -> PathBuf {
    clog(dir).join(format!("{start:020}"))
}

/// The segment file holding physical offset `phys`, and `phys` relative to it.
fn file_at(dir: &Path, phys: u64) -> (PathBuf, u64) {
    (seg_path(dir, phys / SEGMENT * SEGMENT), phys % SEGMENT)
}

/// Message `i` is readable by queue offset and by physical offset, intact, where it was put.
fn assert_present(store: &Store, i: u64, p: &PutResult) {
    let m = store.get_message("t", (i % 2) as u32, p.queue_offset).unwrap().expect("kept");
    assert_eq!((m.body(), m.physical_offset()), (&body_for(i)[..], p.physical_offset));
    assert_eq!(store.get_message_at(p.physical_offset).unwrap().expect("kept").body(), &body_for(i)[..]);
}

/// After a truncation at message `kept`: messages before it intact, none from it on, the
/// write position at its offset, consume queues cut, and the store takes writes there.
fn assert_truncated_at(store: &Store, puts: &[PutResult], kept: usize) {
    assert_truncated_to(store, puts, kept, puts[kept].physical_offset);
}

/// As [`assert_truncated_at`], with the write position at `end`.
fn assert_truncated_to(store: &Store, puts: &[PutResult], kept: usize, end: u64) {
    for (i, p) in puts[..kept].iter().enumerate() {
        assert_present(store, i as u64, p);
    }
    assert_eq!(store.write_position(), end);
    let per_queue = |q: u64| (0..kept as u64).filter(|i| i % 2 == q).count() as u64;
    for q in 0..2 {
        assert_eq!(store.consume_queue_len("t", q as u32).unwrap(), per_queue(q));
        assert!(store.get_message("t", q as u32, per_queue(q)).unwrap().is_none());
    }
    let p = store.put_message(&msg(1000)).unwrap();
    assert_eq!(p.queue_offset, per_queue(1000 % 2));
    assert_eq!(store.get_message_at(p.physical_offset).unwrap().unwrap().body(), &body_for(1000)[..]);
}

/// The open fails with `OpenError::Corrupt` naming `path`, and nothing on disk changed.
fn assert_corrupt_unchanged(dir: &Path, path: &Path) {
    let before = common::snapshot(dir);
    let files_before = files_under(dir);
    match Store::open(dir, config()) {
        Err(OpenError::Corrupt { path: p, reason }) => {
            assert_eq!(p, path, "{reason}");
        }
        Err(e) => panic!("expected OpenError::Corrupt for {}, got {e}", path.display()),
        Ok(_) => panic!("opened a store with {} damaged", path.display()),
    }
    assert_eq!(common::snapshot(dir), before, "a failed open changed the files");
    let after = files_under(dir);
    let data = |m: &std::collections::BTreeMap<String, u64>| {
        m.keys().filter(|k| !k.ends_with("lock") && !k.ends_with("abort")).cloned().collect::<Vec<_>>()
    };
    assert_eq!(data(&after), data(&files_before));
}

fn records_in_first_segment(puts: &[PutResult]) -> usize {
    puts.iter().take_while(|p| p.physical_offset < SEGMENT).count()
}

#[test]
fn zero_byte_segment_is_an_error_that_changes_nothing() {
    for clean in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let puts = build(dir.path(), 20, clean);
        let last = puts.last().unwrap().physical_offset / SEGMENT * SEGMENT;
        std::fs::write(seg_path(dir.path(), last), b"").unwrap();
        assert_corrupt_unchanged(dir.path(), &seg_path(dir.path(), last));
        // Moved aside, as the error says: the store keeps what precedes it.
        std::fs::rename(seg_path(dir.path(), last), dir.path().join("aside")).unwrap();
        let store = Store::open(dir.path(), config()).unwrap();
        let kept = puts.iter().take_while(|p| p.physical_offset < last).count();
        assert_truncated_at(&store, &puts, kept);
        store.close().unwrap();
    }
}

#[test]
fn segment_shorter_than_its_name_says_is_an_error_that_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let puts = build(dir.path(), 20, false);
    assert!(puts.last().unwrap().physical_offset >= 2 * SEGMENT);
    let path = seg_path(dir.path(), SEGMENT);
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(SEGMENT / 2).unwrap();
    drop(f);
    assert_corrupt_unchanged(dir.path(), &path);
}

#[test]
fn segment_named_off_the_segment_grid_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), 5, false);
    let path = clog(dir.path()).join(format!("{:020}", SEGMENT + 7));
    std::fs::write(&path, vec![0u8; SEGMENT as usize]).unwrap();
    assert_corrupt_unchanged(dir.path(), &path);
}

#[test]
fn missing_segment_in_the_middle_is_an_error_that_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let puts = build(dir.path(), 30, false);
    assert!(puts.last().unwrap().physical_offset >= 2 * SEGMENT, "needs three segments");
    std::fs::rename(seg_path(dir.path(), SEGMENT), dir.path().join("aside")).unwrap();
    assert_corrupt_unchanged(dir.path(), &seg_path(dir.path(), 2 * SEGMENT));
}

#[test]
fn random_bytes_in_the_middle_of_a_segment_truncate_there() {
    let dir = tempfile::tempdir().unwrap();
    let puts = build(dir.path(), 12, false);
    let victim = 5;
    let p = puts[victim];
    let noise: Vec<u8> = (0..24u64).map(|i| reliability::mix(i) as u8 | 1).collect();
    let (path, rel) = file_at(dir.path(), p.physical_offset + u64::from(p.size) / 2);
    write_at(&path, rel, &noise);
    let store = Store::open(dir.path(), config()).unwrap();
    assert_truncated_at(&store, &puts, victim);
    store.close().unwrap();
    // Nothing of the damaged record or those after it is left to be replayed.
    let scan = scan_commitlog(&clog(dir.path()));
    assert_eq!(scan.stale_byte_at, None);
}

#[test]
fn random_bytes_under_a_clean_checkpoint_fail_the_open_naming_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let puts = build(dir.path(), 12, true);
    let p = puts[5];
    let (path, rel) = file_at(dir.path(), p.physical_offset + 30);
    xor_range(&path, rel, 4, 0xA5);
    match Store::open(dir.path(), config()) {
        Err(OpenError::Damaged { physical_offset, .. }) => assert_eq!(physical_offset, p.physical_offset),
        other => panic!("expected OpenError::Damaged, got {other:?}"),
    }
    // Opting in to the cut keeps the records before it.
    let cfg = StoreConfig { recovery: abslock_store::RecoveryMode::PointInTime, ..config() };
    let store = Store::open(dir.path(), cfg).unwrap();
    assert_truncated_at(&store, &puts, 5);
    drop(store);
}

#[test]
fn size_field_pointing_past_the_segment_end_truncates_there() {
    for size in [SEGMENT as u32 * 4, u32::MAX, 0x7FFF_FFFF, 9] {
        let dir = tempfile::tempdir().unwrap();
        let puts = build(dir.path(), 8, false);
        let victim = 3;
        let (path, rel) = file_at(dir.path(), puts[victim].physical_offset);
        write_at(&path, rel, &size.to_be_bytes());
        let store = Store::open(dir.path(), config()).unwrap();
        assert_truncated_at(&store, &puts, victim);
        store.close().unwrap();
    }
}

#[test]
fn blank_with_a_size_past_the_segment_end_truncates_there() {
    let dir = tempfile::tempdir().unwrap();
    let puts = build(dir.path(), 12, false);
    let kept = records_in_first_segment(&puts);
    let blank_at = puts[kept - 1].physical_offset + u64::from(puts[kept - 1].size);
    assert!(blank_at < SEGMENT);
    // A blank claiming more than the space left.
    write_at(&seg_path(dir.path(), 0), blank_at, &(SEGMENT as u32).to_be_bytes());
    let store = Store::open(dir.path(), config()).unwrap();
    assert_truncated_to(&store, &puts, kept, blank_at);
    store.close().unwrap();
}

/// Builds a first segment whose records end `tail` bytes (< 8) before its end, the tail
/// holding the start of a blank (`tail` bytes of its size field), followed by a second
/// segment of valid records: a segment end the store never writes.
fn segment_with_short_tail(dir: &Path, tail: usize) -> Vec<PutResult> {
    // Message sizes chosen so the first segment's records end exactly `tail` bytes early:
    // pick the last record's size to fill up to SEGMENT - tail, using a 2 KiB segment
    // store whose records are then copied into 1 KiB segment files.
    let big = StoreConfig { segment_size: 2 * SEGMENT, ..config() };
    let store = Store::open(dir, big).unwrap();
    let mut puts = Vec::new();
    let mut i = 0;
    // Records of 200 bytes up to below SEGMENT - tail - 200, then one that fills exactly.
    while puts.last().map_or(0, |p: &PutResult| p.physical_offset + u64::from(p.size)) + 400
        <= SEGMENT - tail as u64
    {
        let m = common::message_of_size("t", (i % 2) as u32, 200, i as u8);
        puts.push(store.put_message(&m).unwrap());
        i += 1;
    }
    let used = puts.last().map_or(0, |p| p.physical_offset + u64::from(p.size));
    let fill = (SEGMENT - tail as u64 - used) as usize;
    let m = common::message_of_size("t", (i % 2) as u32, fill, i as u8);
    puts.push(store.put_message(&m).unwrap());
    store.close().unwrap();
    let end = puts.last().map(|p| p.physical_offset + u64::from(p.size)).unwrap();
    assert_eq!(end, SEGMENT - tail as u64);
    // Split the 2 KiB file into two 1 KiB segments: the first holds the records plus a
    // short tail, the second is all zeros.
    let big_file = std::fs::read(seg_path(dir, 0)).unwrap();
    let mut first = big_file[..SEGMENT as usize].to_vec();
    let mut blank = (tail as u32).to_be_bytes().to_vec();
    blank.extend_from_slice(&0xCBD4_3194u32.to_be_bytes());
    first[end as usize..].copy_from_slice(&blank[..tail]);
    std::fs::write(seg_path(dir, 0), first).unwrap();
    std::fs::write(seg_path(dir, SEGMENT), vec![0u8; SEGMENT as usize]).unwrap();
    // Wipe the checkpoint and consume queues made with the 2 KiB store; mark a crash.
    let _ = std::fs::remove_file(dir.join("checkpoint"));
    std::fs::remove_dir_all(dir.join("consumequeue")).unwrap();
    std::fs::write(dir.join("abort"), b"").unwrap();
    puts
}

#[test]
fn blank_with_less_than_8_bytes_of_space_is_survived() {
    for tail in [1usize, 4, 7] {
        let dir = tempfile::tempdir().unwrap();
        let puts = segment_with_short_tail(dir.path(), tail);
        let n = puts.len() as u64;
        let store = Store::open(dir.path(), config()).unwrap();
        // Every record before the short tail survives (it is valid), and the store takes
        // writes without writing past the segment's end.
        let q0 = store.consume_queue_len("t", 0).unwrap();
        let q1 = store.consume_queue_len("t", 1).unwrap();
        assert_eq!(q0 + q1, n, "tail {tail}: records before the short tail lost");
        let mut acked = Vec::new();
        for k in 0..5 {
            acked.push(store.put_message(&msg(500 + k)).unwrap());
        }
        for (k, p) in acked.iter().enumerate() {
            assert!(p.physical_offset >= SEGMENT - tail as u64);
            let m = store.get_message_at(p.physical_offset).unwrap().expect("just written");
            assert_eq!(m.body(), &body_for(500 + k as u64)[..]);
        }
        store.flush().unwrap();
        drop(store); // crash
        // What was acknowledged after the repair survives the next recovery.
        let store = Store::open(dir.path(), config()).unwrap();
        for (k, p) in acked.iter().enumerate() {
            let m = store
                .get_message_at(p.physical_offset)
                .unwrap()
                .unwrap_or_else(|| panic!("tail {tail}: acknowledged put at {} lost", p.physical_offset));
            assert_eq!(m.body(), &body_for(500 + k as u64)[..]);
        }
        store.close().unwrap();
    }
}

fn cq_file(dir: &Path, queue: u32) -> PathBuf {
    dir.join("consumequeue").join("t").join(queue.to_string()).join(format!("{:020}", 0))
}

#[test]
fn consume_queue_file_with_a_partial_last_entry_is_rebuilt() {
    for clean in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let puts = build(dir.path(), 12, clean);
        // Queue 0 has 6 entries (120 bytes): cut its file inside the fourth entry.
        let f = std::fs::OpenOptions::new().write(true).open(cq_file(dir.path(), 0)).unwrap();
        f.set_len(3 * 20 + 9).unwrap();
        drop(f);
        let store = Store::open(dir.path(), config()).unwrap();
        for (i, p) in puts.iter().enumerate() {
            assert_present(&store, i as u64, p);
        }
        assert_eq!(store.consume_queue_len("t", 0).unwrap(), 6);
        store.close().unwrap();
    }
}

#[test]
fn consume_queue_entry_torn_in_place_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let puts = build(dir.path(), 12, false);
    // The last entry of queue 0 (index 5) half written: its size and tag hash zeroed.
    write_at(&cq_file(dir.path(), 0), 5 * 20 + 8, &[0u8; 12]);
    // The one before it points at a wrong place.
    write_at(&cq_file(dir.path(), 0), 4 * 20, &7u64.to_be_bytes());
    let store = Store::open(dir.path(), config()).unwrap();
    for (i, p) in puts.iter().enumerate() {
        assert_present(&store, i as u64, p);
    }
    store.close().unwrap();
}

/// A valid checkpoint file (layout in `store/src/checkpoint.rs`: magic, commitlog offset,
/// consume-queue offset, CRC32 of the first 24 bytes; big-endian).
fn write_checkpoint(dir: &Path, commitlog: u64, consume_queue: u64) {
    let mut b = b"ABSCKPT1".to_vec();
    b.extend_from_slice(&commitlog.to_be_bytes());
    b.extend_from_slice(&consume_queue.to_be_bytes());
    let crc = crc32fast::hash(&b);
    b.extend_from_slice(&crc.to_be_bytes());
    std::fs::write(dir.join("checkpoint"), b).unwrap();
}

#[test]
fn checkpoint_claiming_more_than_the_files_hold_is_not_trusted() {
    for (clean, claim) in [(false, 1u64 << 40), (true, 1 << 40), (false, 3 * SEGMENT), (true, 3 * SEGMENT)] {
        let dir = tempfile::tempdir().unwrap();
        let puts = build(dir.path(), 20, clean);
        write_checkpoint(dir.path(), claim, claim);
        let store = Store::open(dir.path(), config()).unwrap();
        let end = puts.last().map(|p| p.physical_offset + u64::from(p.size)).unwrap();
        assert_eq!(store.write_position(), end, "clean {clean}, claim {claim}");
        for (i, p) in puts.iter().enumerate() {
            assert_present(&store, i as u64, p);
        }
        store.close().unwrap();
    }
}

#[test]
fn checkpoint_claiming_zeros_past_the_last_record_loses_nothing_later() {
    // The claim lies past the last record, in the zeros of its own segment or of a later,
    // all-zero (preallocated) segment file. Whatever the store makes of it, what it
    // acknowledges afterwards must survive a crash.
    for (clean, later_segment) in [(true, false), (false, false), (true, true), (false, true)] {
        let dir = tempfile::tempdir().unwrap();
        let puts = build(dir.path(), 2, clean);
        let end = puts.last().map(|p| p.physical_offset + u64::from(p.size)).unwrap();
        assert!(end + 200 < SEGMENT);
        let claim = if later_segment {
            std::fs::write(seg_path(dir.path(), SEGMENT), vec![0u8; SEGMENT as usize]).unwrap();
            SEGMENT + 100
        } else {
            end + 100
        };
        write_checkpoint(dir.path(), claim, claim);
        let cfg = StoreConfig { flush: FlushMode::SYNC, ..config() };
        let store = Store::open(dir.path(), cfg.clone()).unwrap();
        let acked: Vec<PutResult> = (0..10).map(|k| store.put_message(&msg(700 + k)).unwrap()).collect();
        drop(store); // crash
        let store = Store::open(dir.path(), cfg).unwrap();
        for (i, p) in puts.iter().enumerate() {
            assert_present(&store, i as u64, p);
        }
        for (k, p) in acked.iter().enumerate() {
            let m = store.get_message_at(p.physical_offset).unwrap().unwrap_or_else(|| {
                panic!(
                    "clean {clean}: acknowledged put {k} at {} lost after a false checkpoint",
                    p.physical_offset
                )
            });
            assert_eq!(m.body(), &body_for(700 + k as u64)[..]);
        }
        store.close().unwrap();
    }
}

#[test]
fn damaged_or_foreign_checkpoint_is_ignored() {
    for bytes in [&b""[..], b"ABSCKPT1", &[0xFFu8; 28], &[0u8; 4096]] {
        let dir = tempfile::tempdir().unwrap();
        let puts = build(dir.path(), 12, true);
        std::fs::write(dir.path().join("checkpoint"), bytes).unwrap();
        let store = Store::open(dir.path(), config()).unwrap();
        for (i, p) in puts.iter().enumerate() {
            assert_present(&store, i as u64, p);
        }
        store.close().unwrap();
    }
}

#[test]
fn foreign_files_in_the_store_directories_are_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let puts = build(dir.path(), 20, false);
    let foreign = [
        "README",
        "commitlog/notes.txt",
        "commitlog/0000000000000000000",
        "commitlog/000000000000000000000",
        "commitlog/0000000000000000000x",
        "commitlog/00000000000000000000.bak",
        "consumequeue/stray",
        "consumequeue/t/stray",
        "consumequeue/t/notaqueue/x",
        "consumequeue/t/0/readme",
        "consumequeue/t/0/00000000000000000000.old",
    ];
    for f in foreign {
        let p = dir.path().join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, b"not ours").unwrap();
    }
    // A directory with a segment's name.
    std::fs::create_dir_all(clog(dir.path()).join(format!("{:020}", 50 * SEGMENT))).unwrap();
    let store = Store::open(dir.path(), config()).unwrap();
    for (i, p) in puts.iter().enumerate() {
        assert_present(&store, i as u64, p);
    }
    store.put_message(&msg(900)).unwrap();
    store.close().unwrap();
    let store = Store::open(dir.path(), config()).unwrap();
    assert_eq!(store.consume_queue_len("t", 0).unwrap(), 11);
    store.close().unwrap();
    for f in foreign {
        assert_eq!(std::fs::read(dir.path().join(f)).unwrap(), b"not ours", "{f} was touched");
    }
    assert!(clog(dir.path()).join(format!("{:020}", 50 * SEGMENT)).is_dir());
    assert_eq!(scan_commitlog(&clog(dir.path())).records.len(), 21);
}

#[test]
fn leftover_tmp_files_of_unfinished_creations_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let puts = build(dir.path(), 10, false);
    // A segment and a checkpoint whose creation a crash interrupted.
    std::fs::write(clog(dir.path()).join(format!("{:020}.tmp", 10 * SEGMENT)), [7u8; 100]).unwrap();
    std::fs::write(dir.path().join("checkpoint.tmp"), [7u8; 10]).unwrap();
    let store = Store::open(dir.path(), config()).unwrap();
    for (i, p) in puts.iter().enumerate() {
        assert_present(&store, i as u64, p);
    }
    store.close().unwrap();
    assert!(!clog(dir.path()).join(format!("{:020}.tmp", 10 * SEGMENT)).exists());
}

#[test]
fn all_zero_and_all_ones_segments_open_without_panic() {
    for fill in [0u8, 0xFF] {
        let dir = tempfile::tempdir().unwrap();
        build(dir.path(), 20, false);
        for (_, p) in segment_files(&clog(dir.path())) {
            std::fs::write(p, vec![fill; SEGMENT as usize]).unwrap();
        }
        let store = Store::open(dir.path(), config()).unwrap();
        assert_eq!(store.write_position(), 0);
        assert!(store.get_message("t", 0, 0).unwrap().is_none());
        let p = store.put_message(&msg(1)).unwrap();
        assert_eq!((p.physical_offset, p.queue_offset), (0, 0));
        store.close().unwrap();
    }
}

#[test]
fn consume_queue_entry_pointing_at_another_record_is_rebuilt_from_the_log() {
    let dir = tempfile::tempdir().unwrap();
    // A clean close: the queues are still checked against the log at open.
    let puts = build(dir.path(), 12, true);
    let q0 = std::fs::read(cq_file(dir.path(), 0)).unwrap();
    // Queue 0's entries 1 and 2 swapped: each points at a whole record of the same queue.
    let mut swapped = q0.clone();
    swapped[20..40].copy_from_slice(&q0[40..60]);
    swapped[40..60].copy_from_slice(&q0[20..40]);
    std::fs::write(cq_file(dir.path(), 0), swapped).unwrap();
    // Queue 1's entry 0 points at queue 0's first record.
    write_at(&cq_file(dir.path(), 1), 0, &q0[..20]);
    // Open rebuilds both queues from the log: every message is served where it belongs.
    let store = Store::open(dir.path(), config()).unwrap();
    assert_eq!(store.recovery_report().queues_rebuilt(), 2);
    for (i, p) in puts.iter().enumerate() {
        assert_present(&store, i as u64, p);
    }
    drop(store);
}

/// Changes a store's files in place.
type Spoil = fn(&Path);

#[test]
fn files_where_directories_belong_and_back_are_errors_not_panics() {
    // Each case puts a file or directory where the store expects the other kind.
    let cases: [(&str, Spoil); 4] = [
        ("checkpoint is a directory", |d| {
            std::fs::remove_file(d.join("checkpoint")).unwrap();
            std::fs::create_dir(d.join("checkpoint")).unwrap();
        }),
        ("a consume-queue directory is a file", |d| {
            std::fs::remove_dir_all(d.join("consumequeue/t/0")).unwrap();
            std::fs::write(d.join("consumequeue/t/0"), b"x").unwrap();
        }),
        ("consumequeue is a file", |d| {
            std::fs::remove_dir_all(d.join("consumequeue")).unwrap();
            std::fs::write(d.join("consumequeue"), b"x").unwrap();
        }),
        ("a segment is a directory", |d| {
            std::fs::remove_file(seg_path(d, SEGMENT)).unwrap();
            std::fs::create_dir(seg_path(d, SEGMENT)).unwrap();
        }),
    ];
    for (what, spoil) in cases {
        let dir = tempfile::tempdir().unwrap();
        let puts = build(dir.path(), 20, true);
        spoil(dir.path());
        let opened = std::panic::catch_unwind(|| Store::open(dir.path(), config()).map(|s| s.close()));
        let result = opened.unwrap_or_else(|_| panic!("{what}: open panicked"));
        if let Ok(Ok(())) = result {
            // Opened: whatever it kept must be intact.
            let store = Store::open(dir.path(), config()).unwrap();
            for (i, p) in puts.iter().enumerate() {
                if let Ok(Some(m)) = store.get_message_at(p.physical_offset) {
                    assert_eq!(m.body(), &body_for(i as u64)[..], "{what}");
                }
            }
            store.close().unwrap();
        }
    }
}

#[test]
fn foreign_directories_under_per_topic_topics_are_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = StoreConfig { layout: abslock_store::Layout::PerTopic, ..config() };
    let store = Store::open(dir.path(), cfg.clone()).unwrap();
    let puts: Vec<PutResult> = (0..5).map(|i| store.put_message(&msg(i)).unwrap()).collect();
    store.close().unwrap();
    let topics = dir.path().join("topics");
    for (d, file) in
        [("not a topic!", Some("mine.txt")), ("lost+found", None), ("valid_name", Some("readme"))]
    {
        std::fs::create_dir_all(topics.join(d)).unwrap();
        if let Some(f) = file {
            std::fs::write(topics.join(d).join(f), b"not ours").unwrap();
        }
    }
    let before: Vec<_> =
        ["not a topic!", "lost+found", "valid_name"].map(|d| files_under(&topics.join(d))).into();
    let store = Store::open(dir.path(), cfg).unwrap();
    for (i, p) in puts.iter().enumerate() {
        let m = store.get_message("t", (i % 2) as u32, p.queue_offset).unwrap().expect("kept");
        assert_eq!(m.body(), &body_for(i as u64)[..]);
    }
    let mut locks = 0;
    store.for_each_put_lock(|_| locks += 1);
    assert_eq!(locks, 1, "a foreign directory was opened as a topic log");
    store.close().unwrap();
    let after: Vec<_> =
        ["not a topic!", "lost+found", "valid_name"].map(|d| files_under(&topics.join(d))).into();
    assert_eq!(after, before, "files were created in a foreign directory");
}
