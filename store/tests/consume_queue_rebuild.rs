//! Loss class: a consume queue shorter than the log (RocketMQ #7355, Kafka KAFKA-13603).
//! Whatever part of the consume queues is lost or damaged (a file, a queue's directory,
//! all of `consumequeue/`, a range of entries zeroed or overwritten), after a clean close
//! or a crash, with or without a checkpoint: open rebuilds it from the log before any put
//! is accepted, every message is served at its queue offset, and the next queue offset
//! of every queue comes from the log, so none is handed out twice (also across a later
//! crash and a full re-dispatch).

mod common;
#[path = "common/reliability.rs"]
mod reliability;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use abslock_store::{FlushMode, Message, MessageStore, StoreConfig};
use proptest::prelude::*;
use reliability::{body_for, xor_range};

type Store = MessageStore<parking_lot::RawMutex>;

fn config() -> StoreConfig {
    StoreConfig {
        segment_size: 65536,
        consume_queue_entries: 4,
        flush: FlushMode::SYNC,
        checkpoint_interval: Duration::from_secs(3600),
        ..StoreConfig::default()
    }
}

fn message(id: u64, queues: u32) -> Message {
    Message::new(format!("t{}", id % 2), body_for(id)).queue_id((id / 2 % u64::from(queues)) as u32)
}

/// The case, exactly: 10 messages to t/0, close, delete the file with entries 8
/// and 9, open.
#[test]
fn deleted_last_queue_file_is_rebuilt_and_no_offset_is_reused() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), config()).unwrap();
    for i in 0..10 {
        assert_eq!(store.put_message(&Message::new("t", body_for(i)).queue_id(0)).unwrap().queue_offset, i);
    }
    store.close().unwrap();
    std::fs::remove_file(dir.path().join("consumequeue/t/0/00000000000000000160")).unwrap();
    let store = Store::open(dir.path(), config()).unwrap();
    assert_eq!(store.consume_queue_len("t", 0).unwrap(), 10);
    for i in 0..10 {
        assert_eq!(store.get_message("t", 0, i).unwrap().unwrap().body(), &body_for(i)[..]);
    }
    assert_eq!(store.recovery_report().queues_rebuilt(), 1);
    assert_eq!(store.put_message(&Message::new("t", body_for(10)).queue_id(0)).unwrap().queue_offset, 10);
    // A later crash and a full re-dispatch: every offset still serves its own message.
    drop(store);
    std::fs::remove_dir_all(dir.path().join("consumequeue")).unwrap();
    let store = Store::open(dir.path(), config()).unwrap();
    for i in 0..11 {
        assert_eq!(store.get_message("t", 0, i).unwrap().unwrap().body(), &body_for(i)[..]);
    }
    store.close().unwrap();
}

/// What happens to the consume queues between runs.
#[derive(Debug, Clone)]
enum Loss {
    /// Remove the `k`-th consume-queue file (modulo their count).
    File(usize),
    /// Remove the `k`-th queue directory.
    QueueDir(usize),
    /// Remove all of `consumequeue/`.
    All,
    /// Zero entries `[from, from + n)` of the `k`-th file.
    Zero(usize, u64, u64),
    /// XOR bytes of the `k`-th file with a mask.
    Flip(usize, u64, u64, u8),
}

fn loss() -> impl Strategy<Value = Loss> {
    prop_oneof![
        any::<usize>().prop_map(Loss::File),
        any::<usize>().prop_map(Loss::QueueDir),
        Just(Loss::All),
        (any::<usize>(), 0u64..4, 1u64..4).prop_map(|(k, f, n)| Loss::Zero(k, f, n)),
        (any::<usize>(), 0u64..80, 1u64..40, 1u8..=255).prop_map(|(k, a, n, m)| Loss::Flip(k, a, n, m)),
    ]
}

fn cq_files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = reliability::files_under(&dir.join("consumequeue"))
        .into_keys()
        .map(|rel| dir.join("consumequeue").join(rel))
        .collect();
    out.sort();
    out
}

fn cq_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> =
        cq_files(dir).iter().filter_map(|f| f.parent().map(Path::to_path_buf)).collect();
    out.sort();
    out.dedup();
    out
}

fn inflict(dir: &Path, loss: &Loss) {
    let files = cq_files(dir);
    let pick = |k: usize| files.get(k % files.len().max(1)).cloned();
    match *loss {
        Loss::File(k) => {
            if let Some(f) = pick(k) {
                std::fs::remove_file(f).unwrap();
            }
        }
        Loss::QueueDir(k) => {
            let dirs = cq_dirs(dir);
            if let Some(d) = dirs.get(k % dirs.len().max(1)) {
                std::fs::remove_dir_all(d).unwrap();
            }
        }
        Loss::All => {
            let _ = std::fs::remove_dir_all(dir.join("consumequeue"));
        }
        Loss::Zero(k, from, n) => {
            if let Some(f) = pick(k) {
                let mut bytes = std::fs::read(&f).unwrap();
                let (a, b) = ((from * 20) as usize, (((from + n) * 20) as usize).min(bytes.len()));
                bytes[a.min(b)..b].fill(0);
                std::fs::write(&f, bytes).unwrap();
            }
        }
        Loss::Flip(k, at, n, mask) => {
            if let Some(f) = pick(k) {
                xor_range(&f, at, n, mask);
            }
        }
    }
}

/// How the run before the loss ended.
#[derive(Debug, Clone, Copy)]
enum End {
    Close,
    /// Dropped without close; `checkpoint`: a checkpoint was written first.
    Crash {
        checkpoint: bool,
    },
}

fn end() -> impl Strategy<Value = End> {
    prop_oneof![Just(End::Close), any::<bool>().prop_map(|checkpoint| End::Crash { checkpoint })]
}

fn run(n: u64, queues: u32, end: End, loss: &Loss) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // (topic, queue) -> bodies ids in queue-offset order.
    let mut model: BTreeMap<(String, u32), Vec<u64>> = BTreeMap::new();
    let put = |store: &Store, model: &mut BTreeMap<(String, u32), Vec<u64>>, id: u64| {
        let m = message(id, queues);
        let p = store.put_message(&m).unwrap();
        let q = model.entry((m.topic().to_owned(), m.get_queue_id())).or_default();
        assert_eq!(p.queue_offset, q.len() as u64, "queue offset handed out twice or skipped");
        q.push(id);
    };
    let cfg = match end {
        End::Crash { checkpoint: true } => StoreConfig { checkpoint_interval: Duration::ZERO, ..config() },
        _ => config(),
    };
    let store = Store::open(dir, cfg.clone()).unwrap();
    for id in 0..n {
        put(&store, &mut model, id);
    }
    match end {
        End::Close => store.close().unwrap(),
        End::Crash { checkpoint } => {
            if checkpoint {
                // The dispatcher writes a checkpoint every round with a zero interval: wait
                // for one that covers every entry (a state, checked, not a sleep).
                while !dir.join("checkpoint").exists() || store.consume_queue_len("t0", 0).unwrap() == 0 {
                    std::thread::yield_now();
                }
            }
            drop(store);
        }
    }
    inflict(dir, loss);
    let store = Store::open(dir, config()).unwrap();
    let check = |store: &Store, model: &BTreeMap<(String, u32), Vec<u64>>| {
        for ((t, q), ids) in model {
            assert_eq!(store.consume_queue_len(t, *q).unwrap(), ids.len() as u64, "{t}/{q} after {loss:?}");
            for (qo, id) in ids.iter().enumerate() {
                let m = store
                    .get_message(t, *q, qo as u64)
                    .unwrap()
                    .unwrap_or_else(|| panic!("{t}/{q}/{qo} lost"));
                assert_eq!(m.body(), &body_for(*id)[..]);
            }
        }
    };
    check(&store, &model);
    // Every queue's next offset comes from the log.
    for id in n..n + 2 * u64::from(queues) {
        put(&store, &mut model, id);
    }
    check(&store, &model);
    // A later crash, the queues lost again: the log alone gives the same answers.
    drop(store);
    let _ = std::fs::remove_dir_all(dir.join("consumequeue"));
    let store = Store::open(dir, config()).unwrap();
    check(&store, &model);
    store.close().unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if std::env::var_os("ABSLOCK_LONG").is_some() { 256 } else { 32 }, ..ProptestConfig::default() })]

    #[test]
    fn lost_or_damaged_consume_queues_are_rebuilt_from_the_log(
        n in 1u64..40,
        queues in 1u32..3,
        end in end(),
        loss in loss(),
    ) {
        run(n, queues, end, &loss);
    }
}
