//! Loss class: a setting changed between runs destroys records written under the other
//! one (RocketMQ #9852). Here: `append_record_crc` switched on, off, on again, across
//! clean closes and crashes, with or without a checkpoint, under sync flush (every put
//! acknowledged as durable). After every reopen every acknowledged message is served at
//! its offsets, recovery cuts nothing, and no record's bytes change on disk.

mod common;
#[path = "common/reliability.rs"]
mod reliability;

use std::time::Duration;

use abslock_store::{FlushMode, Message, MessageStore, StoreConfig};
use proptest::prelude::*;
use reliability::body_for;

type Store = MessageStore<parking_lot::RawMutex>;

fn config(crc: bool, checkpoint: bool) -> StoreConfig {
    StoreConfig {
        append_record_crc: crc,
        flush: FlushMode::SYNC,
        checkpoint_interval: if checkpoint { Duration::ZERO } else { Duration::from_secs(3600) },
        ..common::small(2048)
    }
}

/// The case: written without the record CRC, dropped without close, reopened with it.
#[test]
fn records_written_without_the_crc_survive_turning_it_on() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), config(false, false)).unwrap();
    for i in 0..10 {
        store.put_message(&Message::new("t", body_for(i))).unwrap();
    }
    drop(store);
    let store = Store::open(dir.path(), config(true, false)).unwrap();
    assert_eq!(store.consume_queue_len("t", 0).unwrap(), 10);
    for i in 0..10 {
        assert_eq!(store.get_message("t", 0, i).unwrap().unwrap().body(), &body_for(i)[..]);
    }
    assert!(!store.recovery_report().any_cut());
    store.close().unwrap();
}

/// One run: the record-CRC setting, how many messages, how it ends.
#[derive(Debug, Clone, Copy)]
struct Run {
    crc: bool,
    n: u64,
    close: bool,
    checkpoint: bool,
}

fn run_strategy() -> impl Strategy<Value = Run> {
    (any::<bool>(), 0u64..25, any::<bool>(), any::<bool>()).prop_map(|(crc, n, close, checkpoint)| Run {
        crc,
        n,
        close,
        checkpoint,
    })
}

fn check(store: &Store, acked: &[(u64, u64, u64)], what: &str) {
    assert_eq!(store.consume_queue_len("t", 0).unwrap(), acked.len() as u64, "{what}");
    for &(id, qo, phys) in acked {
        let m = store.get_message("t", 0, qo).unwrap().unwrap_or_else(|| panic!("{what}: {id} lost"));
        assert_eq!((m.body(), m.physical_offset()), (&body_for(id)[..], phys), "{what}");
    }
    assert!(!store.recovery_report().any_cut(), "{what}: recovery cut an intact log");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if std::env::var_os("ABSLOCK_LONG").is_some() { 256 } else { 32 }, ..ProptestConfig::default() })]

    #[test]
    fn no_record_is_lost_to_a_record_crc_change(runs in prop::collection::vec(run_strategy(), 1..5), last_crc in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let mut acked: Vec<(u64, u64, u64)> = Vec::new();
        let mut id = 0;
        for (i, r) in runs.iter().enumerate() {
            let store = Store::open(dir.path(), config(r.crc, r.checkpoint)).unwrap();
            check(&store, &acked, &format!("run {i} {r:?} at open"));
            for _ in 0..r.n {
                let p = store.put_message(&Message::new("t", body_for(id))).unwrap();
                acked.push((id, p.queue_offset, p.physical_offset));
                id += 1;
            }
            if r.close { store.close().unwrap() } else { drop(store) }
        }
        let store = Store::open(dir.path(), config(last_crc, false)).unwrap();
        check(&store, &acked, "last open");
        store.close().unwrap();
    }
}
