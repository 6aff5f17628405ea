//! Helpers shared by the store's integration tests.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;

use abslock_store::codec::{self, EncodeOptions};
use abslock_store::{Message, StoreConfig};

/// A store config with small segments and consume-queue files.
pub fn small(segment_size: u64) -> StoreConfig {
    StoreConfig { segment_size, consume_queue_entries: 16, ..StoreConfig::default() }
}

/// Encoded size of `msg` under the default encode options (record CRC on).
pub fn encoded_size(msg: &Message) -> usize {
    let mut out = Vec::new();
    codec::encode_into(msg, &EncodeOptions::default(), &mut out).expect("valid").total_size
}

/// A message whose record is exactly `size` bytes.
pub fn message_of_size(topic: &str, queue_id: u32, size: usize, fill: u8) -> Message {
    let overhead = encoded_size(&Message::new(topic, Vec::new()).queue_id(queue_id));
    Message::new(topic, vec![fill; size - overhead]).queue_id(queue_id)
}

/// Every file under `dir` (relative path -> contents), except the ones the store rewrites
/// on its own (`checkpoint`) and the markers.
pub fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.is_dir() {
            walk(root, &p, out);
        } else {
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if rel.ends_with("checkpoint") || rel.ends_with("abort") || rel.ends_with("lock") {
                continue;
            }
            out.insert(rel, std::fs::read(&p).unwrap());
        }
    }
}

/// The put path a test runs under: `ABSLOCK_PUT_PATH=lock|sequencer|combining` forces one;
/// otherwise it is chosen from the test's name (libtest names the test's thread after it), so
/// a file's tests spread deterministically over every path at no extra run time.
pub fn put_path_for_test() -> abslock_store::PutPath {
    use abslock_store::{PutPath, SequencerConfig};
    let paths = [
        ("lock", PutPath::Lock),
        ("sequencer", PutPath::Sequencer(SequencerConfig { queue_capacity: 4, max_batch: 8 })),
        ("combining", PutPath::Combining),
    ];
    if let Ok(name) = std::env::var("ABSLOCK_PUT_PATH") {
        return paths.iter().find(|(n, _)| *n == name).map_or(PutPath::Lock, |p| p.1);
    }
    let test = std::thread::current().name().unwrap_or("").to_owned();
    // FNV-1a: stable across runs and platforms (std's hasher is seeded per build).
    let hash =
        test.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    paths[(hash % paths.len() as u64) as usize].1
}
