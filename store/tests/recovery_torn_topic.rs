//! Regression (fault-schedule proptest): a pooled commit torn inside a record's topic.
//!
//! Without a record CRC nothing covered the topic: a short `pwrite` that stopped right after
//! the topic's first byte left `t\0` followed by a zero properties length, which matched the
//! total size, and the body CRC held. Recovery accepted the record, and the open's
//! consume-queue rebuild tried to create the directory `consumequeue/t\0/0`. The decoder now
//! rejects a topic no put can write, so recovery cuts the torn record and the open succeeds.

mod common;

use std::time::Duration;

use abslock_store::codec::{self, DecodeError, EncodeOptions};
use abslock_store::fault::{FaultInjector, FaultPoint};
use abslock_store::{FlushMode, Message, MessageStore, PutError, StoreConfig, WriteMode};

type Store = MessageStore<parking_lot::RawMutex>;

fn config(faults: &FaultInjector) -> StoreConfig {
    StoreConfig {
        flush: FlushMode::Sync { timeout: Duration::from_secs(30) },
        write_mode: WriteMode::Pooled { buffers: 2, commit_interval: Duration::from_millis(1) },
        append_record_crc: false,
        fault_injector: faults.clone(),
        ..common::small(4096)
    }
}

fn record_len(msg: &Message) -> usize {
    let opts = EncodeOptions { append_record_crc: false, ..EncodeOptions::default() };
    let mut out = Vec::new();
    codec::encode_into(msg, &opts, &mut out).expect("valid").total_size
}

#[test]
fn commit_torn_inside_the_topic_is_cut_and_the_open_succeeds() {
    let tmp = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let acked = Message::new("t0", b"acknowledged".to_vec());
    // Two records committed by one `pwrite`, the second 6 bytes shorter than the first: the
    // injected short write stops at half of both, 3 bytes before the first one's end, that
    // is right after the `t` of its topic `t1` (then 2 bytes of properties length, 0).
    let first = Message::new("t1", vec![b'x'; 40]);
    let second = Message::new("t1", vec![b'y'; 34]);
    let (a, b) = (record_len(&first), record_len(&second));
    assert_eq!(a, b + 6);
    {
        let store = Store::open(tmp.path(), config(&faults)).unwrap();
        store.put_message(&acked).unwrap();
        faults.fail_always(FaultPoint::PooledWrite);
        assert!(store.put_messages(&[first.clone(), second.clone()]).is_err());
        // Crash: the torn bytes stay in the file.
    }
    let on_disk = std::fs::read(tmp.path().join("commitlog").join("00000000000000000000")).unwrap();
    let start = record_len(&acked);
    let torn = &on_disk[start..start + a];
    assert_eq!(&torn[a - 4..], b"t\0\0\0", "the fault tore the topic as in the proptest");
    assert!(matches!(
        codec::decode(torn, Some(start as u64)),
        Err(DecodeError::InvalidTopic { index: 1, byte: 0 })
    ));

    faults.clear(FaultPoint::PooledWrite);
    let store = Store::open(tmp.path(), config(&faults)).expect("the open cuts the torn record");
    let m = store.get_message("t0", 0, 0).unwrap().expect("acknowledged message kept");
    assert_eq!(m.body(), b"acknowledged");
    assert_eq!(store.consume_queue_len("t1", 0).unwrap(), 0);
    assert!(!tmp.path().join("consumequeue").join("t\0").exists());
    // The log continues where the acknowledged record ends.
    let p = store.put_message(&first).unwrap();
    assert_eq!(p.physical_offset, start as u64);
    store.close().unwrap();
}

#[test]
fn a_put_to_a_topic_that_cannot_be_a_directory_is_rejected_and_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    let store = Store::open(tmp.path(), config(&faults)).unwrap();
    for topic in [".", "..", "a/b", "t\0"] {
        assert!(
            matches!(store.put_message(&Message::new(topic, b"x".to_vec())), Err(PutError::Invalid(_))),
            "{topic:?}"
        );
    }
    assert_eq!(store.put_message(&Message::new("t0", b"x".to_vec())).unwrap().physical_offset, 0);
    let dirs: Vec<_> = std::fs::read_dir(tmp.path().join("consumequeue"))
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(dirs.iter().all(|d| d == "t0"), "{dirs:?}");
    store.close().unwrap();
}
