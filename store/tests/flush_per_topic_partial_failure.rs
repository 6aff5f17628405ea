//! Regression: under `Layout::PerTopic`, `flush()` fails for one topic's log while another
//! topic's log flushes. Found by `fault_schedule_proptest` (Sync fails 3 times, a put to
//! each of two topics, then `flush`).
//!
//! Contract: each log's flush is all-or-nothing. The log that failed keeps its flushed
//! position; the log that succeeded is durable and reports it, so the summed flushed
//! position advances although `flush` returns `Err`. Nothing acknowledged is lost, and a
//! retry once the disk is healthy makes everything durable.

mod common;

use std::time::Duration;

use abslock_store::fault::{FaultInjector, FaultPoint};
use abslock_store::{FlushMode, Layout, Message, MessageStore, PutError, StoreConfig};

type Store = MessageStore<parking_lot::RawMutex>;

fn config(faults: &FaultInjector) -> StoreConfig {
    StoreConfig {
        flush: FlushMode::Sync { timeout: Duration::from_secs(30) },
        layout: Layout::PerTopic,
        fault_injector: faults.clone(),
        ..common::small(1024)
    }
}

#[test]
fn failed_log_keeps_its_flushed_position_while_the_other_log_becomes_durable() {
    let tmp = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let store = Store::open(tmp.path(), config(&faults)).unwrap();
    faults.fail_times(FaultPoint::Sync, 3);
    // Each sync-flush put fails its msync (failures 1 and 2): neither is acknowledged.
    for t in ["t0", "t1"] {
        let r = store.put_message(&Message::new(t, b"body".to_vec()));
        assert!(matches!(r, Err(PutError::Flush { .. })), "{t}: {r:?}");
    }
    let before = [store.flushed_position_in("t0"), store.flushed_position_in("t1")];
    let written = [store.write_position_in("t0"), store.write_position_in("t1")];
    assert_eq!(before, [0, 0]);
    assert!(written.iter().all(|&w| w > 0));

    // Failure 3 hits whichever log flushes first; the other log flushes anyway.
    assert!(store.flush().is_err());
    let after = [store.flushed_position_in("t0"), store.flushed_position_in("t1")];
    let failed: Vec<usize> = (0..2).filter(|&i| after[i] == before[i]).collect();
    let durable: Vec<usize> = (0..2).filter(|&i| after[i] == written[i]).collect();
    assert_eq!(
        (failed.len(), durable.len()),
        (1, 1),
        "before {before:?} after {after:?} written {written:?}"
    );
    assert_eq!(store.flushed_position(), after[0] + after[1]);
    assert!(store.flushed_position() > before[0] + before[1]);

    // Once healthy, a retry makes every log durable.
    assert_eq!(store.flush().unwrap(), written[0] + written[1]);
    assert_eq!(store.flushed_position(), store.write_position());

    // Nothing is lost across a crash.
    drop(store);
    let store = Store::open(tmp.path(), config(&faults)).unwrap();
    for t in ["t0", "t1"] {
        let m = store.get_message(t, 0, 0).unwrap().expect("flushed message survives");
        assert_eq!(m.body(), b"body");
    }
    store.close().unwrap();
}
