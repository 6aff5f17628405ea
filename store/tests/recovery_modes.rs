//! Loss class: recovery destroying acknowledged data silently. Damage inside a cleanly
//! closed log fails `open` under `RecoveryMode::Strict` (the default) with
//! `OpenError::Damaged` naming the record's offset, changing no file; `PointInTime` cuts
//! there, moves every byte past the cut to `cut/` (nothing zeroed that was not saved) and
//! says so in the recovery report. A torn tail after a crash is cut and reported under
//! either mode. `corruption_proptest.rs` covers the class over random damage.

mod common;
#[path = "common/reliability.rs"]
mod reliability;

use std::time::Duration;

use abslock_store::codec::{self, Decoded};
use abslock_store::{Message, MessageStore, OpenError, RecoveryMode, StoreConfig};
use reliability::{body_for, xor_range};

type Store = MessageStore<parking_lot::RawMutex>;

fn config(mode: RecoveryMode) -> StoreConfig {
    StoreConfig { recovery: mode, checkpoint_interval: Duration::from_secs(3600), ..common::small(64 << 10) }
}

/// The case: 1001 messages, flush, close, 30 bytes flipped inside record #500.
#[test]
fn damage_in_a_closed_log_is_an_error_then_an_opt_in_cut_that_keeps_the_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), config(RecoveryMode::Strict)).unwrap();
    let puts: Vec<_> =
        (0..1001).map(|i| store.put_message(&Message::new("t", body_for(i))).unwrap()).collect();
    store.flush().unwrap();
    store.close().unwrap();
    let victim = puts[500];
    let seg = victim.physical_offset / (64 << 10) * (64 << 10);
    let seg_path = dir.path().join("commitlog").join(format!("{seg:020}"));
    xor_range(&seg_path, victim.physical_offset - seg + 40, 30, 0x5A);
    let before = common::snapshot(dir.path());

    match Store::open(dir.path(), config(RecoveryMode::Strict)) {
        Err(OpenError::Damaged { physical_offset, path, durable_end, .. }) => {
            assert_eq!(physical_offset, victim.physical_offset);
            assert_eq!(path, seg_path);
            assert_eq!(durable_end, puts[1000].physical_offset + u64::from(puts[1000].size));
        }
        other => panic!("expected OpenError::Damaged, got {other:?}"),
    }
    assert!(before == common::snapshot(dir.path()), "the failed open changed files");

    let store = Store::open(dir.path(), config(RecoveryMode::PointInTime)).unwrap();
    let report = store.recovery_report();
    let cut = report.logs[0].cut.clone().expect("a cut");
    assert_eq!(cut.physical_offset, victim.physical_offset);
    assert!(cut.below_durable_end);
    assert_eq!(store.consume_queue_len("t", 0).unwrap(), 500);
    assert!(report.logs[0].entries_removed >= 501, "{report:?}");
    // Every later record is in cut/, byte for byte.
    let moved: Vec<(u64, Vec<u8>)> = cut
        .moved_to
        .iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            (name[..20].parse().unwrap(), std::fs::read(p).unwrap())
        })
        .collect();
    for (i, p) in puts.iter().enumerate().skip(501) {
        let (start, bytes) =
            moved.iter().rev().find(|(s, _)| *s <= p.physical_offset).expect("a file holding it");
        let Decoded::Message(m) =
            codec::decode(&bytes[(p.physical_offset - start) as usize..], Some(p.physical_offset)).unwrap()
        else {
            panic!("not a message")
        };
        assert_eq!(m.body(), &body_for(i as u64)[..]);
    }
    // The log goes on from the cut.
    assert_eq!(store.put_message(&Message::new("t", body_for(7))).unwrap().queue_offset, 500);
    store.close().unwrap();
    let store = Store::open(dir.path(), config(RecoveryMode::Strict)).unwrap();
    assert!(!store.recovery_report().any_cut());
    store.close().unwrap();
}

/// A torn tail past the durable end after a crash is cut under the default mode and reported.
#[test]
fn torn_tail_after_a_crash_is_cut_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), config(RecoveryMode::Strict)).unwrap();
    let puts: Vec<_> = (0..20).map(|i| store.put_message(&Message::new("t", body_for(i))).unwrap()).collect();
    store.flush().unwrap();
    drop(store); // a crash: no checkpoint
    let last = puts[19];
    // Tear the last record: its second half never reached the disk.
    let path = dir.path().join("commitlog").join(format!("{:020}", 0));
    let mid = last.physical_offset + u64::from(last.size) / 2;
    reliability::write_at(
        &path,
        mid,
        &vec![0u8; (last.physical_offset + u64::from(last.size) - mid) as usize],
    );
    let store = Store::open(dir.path(), config(RecoveryMode::Strict)).unwrap();
    let log = &store.recovery_report().logs[0];
    assert!(log.crashed);
    let cut = log.cut.clone().expect("the torn record is cut");
    assert_eq!(cut.physical_offset, last.physical_offset);
    assert!(!cut.below_durable_end);
    // Up to the last non-zero byte before the torn half.
    assert!(cut.bytes > 0 && cut.bytes <= mid - last.physical_offset, "{cut:?}");
    assert_eq!(std::fs::read(&cut.moved_to[0]).unwrap().len() as u64, cut.bytes);
    assert_eq!(store.consume_queue_len("t", 0).unwrap(), 19);
    store.close().unwrap();
}
