//! Zero-copy transfer bench: `MessageStore::transfer_to` with `sendfile(2)` against the
//! same transfer copying out of the mapping with `write(2)`, into the same Unix socket
//! pair drained by a reader thread (Kafka's `FileChannel.transferTo` against a read-and-
//! write consumer path). Reported as bytes of records per second (`Throughput::Bytes`).
//!
//! Group `transfer/<size>B`, ids `sendfile` and `copy`: one store (64 MiB segments, async
//! flush, under /dev/shm when it exists, or `ABSLOCK_TRANSFER_DIR`) holding 4 MiB of
//! records of `size` bytes in one queue, sent whole per iteration. Then
//! `transfer/ratio/<size>B` prints the copy/sendfile time ratio measured interleaved
//! (sendfile, copy, sendfile, ...) over several rounds, with
//! its spread, so the comparison never rests on two measurements taken minutes apart.

use std::io::Read;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use abslock_store::{Message, MessageStore, StoreConfig, TransferLimit, TransferMethod};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

/// Message body sizes, bytes.
const SIZES: [usize; 2] = [1024, 16 << 10];
/// Record bytes in the queue, sent whole by each transfer.
const QUEUE_BYTES: usize = 4 << 20;
/// Interleaved rounds of the ratio measurement, and transfers per method per round.
const ROUNDS: usize = 9;
const PER_ROUND: usize = 8;

/// `ABSLOCK_TRANSFER_DIR` if set (e.g. a disk-backed directory), else /dev/shm.
fn parent_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("ABSLOCK_TRANSFER_DIR") {
        return PathBuf::from(dir);
    }
    let shm = PathBuf::from("/dev/shm");
    if shm.is_dir() { shm } else { std::env::temp_dir() }
}

/// A store with one queue of `QUEUE_BYTES` of `size`-byte messages; returns the store,
/// its directory and the message count.
fn filled_store(size: usize) -> (MessageStore<parking_lot::RawMutex>, tempfile::TempDir, u64) {
    let dir =
        tempfile::Builder::new().prefix("abslock-transfer-").tempdir_in(parent_dir()).expect("bench dir");
    let config = StoreConfig { segment_size: 64 << 20, ..StoreConfig::default() };
    let store = MessageStore::open(dir.path(), config).expect("open store");
    let msg = Message::new("bench", vec![7u8; size]).queue_id(0);
    let mut bytes = 0;
    let mut count = 0;
    while bytes < QUEUE_BYTES {
        bytes += store.put_message(&msg).expect("put").size as usize;
        count += 1;
    }
    store.flush().expect("flush");
    (store, dir, count)
}

/// A connected socket pair whose reading end a thread drains until the writer closes.
fn drained_socket() -> (UnixStream, JoinHandle<u64>) {
    let (mut rx, tx) = UnixStream::pair().expect("socket pair");
    let reader = std::thread::spawn(move || {
        let mut buf = vec![0u8; 256 << 10];
        let mut total = 0u64;
        loop {
            match rx.read(&mut buf) {
                Ok(0) | Err(_) => return total,
                Ok(n) => total += n as u64,
            }
        }
    });
    (tx, reader)
}

fn send_all(
    store: &MessageStore<parking_lot::RawMutex>,
    count: u64,
    method: TransferMethod,
    tx: &UnixStream,
) -> u64 {
    let r = store
        .transfer_to("bench", 0, 0, TransferLimit::messages(count).with_method(method), tx)
        .expect("transfer");
    assert_eq!(r.messages, count);
    r.bytes
}

fn transfers(c: &mut Criterion) {
    for size in SIZES {
        let (store, _dir, count) = filled_store(size);
        let (tx, reader) = drained_socket();
        let bytes = send_all(&store, count, TransferMethod::Sendfile, &tx);
        let mut g = c.benchmark_group(format!("transfer/{size}B"));
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(1))
            .throughput(Throughput::Bytes(bytes));
        for (name, method) in [("sendfile", TransferMethod::Sendfile), ("copy", TransferMethod::Copy)] {
            g.bench_with_input(BenchmarkId::from_parameter(name), &method, |b, &m| {
                b.iter(|| send_all(&store, count, m, &tx));
            });
        }
        g.finish();
        ratio(size, &store, count, &tx);
        drop(tx);
        let _ = reader.join();
        let _ = store.close();
    }
}

/// Times `PER_ROUND` whole transfers with `method`.
fn timed(
    store: &MessageStore<parking_lot::RawMutex>,
    count: u64,
    method: TransferMethod,
    tx: &UnixStream,
) -> Duration {
    let start = Instant::now();
    for _ in 0..PER_ROUND {
        send_all(store, count, method, tx);
    }
    start.elapsed()
}

/// Prints copy time / sendfile time per round, interleaved: median, min and max.
fn ratio(size: usize, store: &MessageStore<parking_lot::RawMutex>, count: u64, tx: &UnixStream) {
    let mut ratios: Vec<f64> = (0..ROUNDS)
        .map(|round| {
            // Alternate which method goes first, so neither always follows the other.
            let (s, c) = if round % 2 == 0 {
                let s = timed(store, count, TransferMethod::Sendfile, tx);
                (s, timed(store, count, TransferMethod::Copy, tx))
            } else {
                let c = timed(store, count, TransferMethod::Copy, tx);
                (timed(store, count, TransferMethod::Sendfile, tx), c)
            };
            c.as_secs_f64() / s.as_secs_f64()
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    println!(
        "transfer/ratio/{size}B: copy time / sendfile time = {:.2} (median of {ROUNDS} interleaved rounds, min {:.2}, max {:.2}; >1 means sendfile is faster)",
        ratios[ROUNDS / 2],
        ratios[0],
        ratios[ROUNDS - 1]
    );
}

criterion_group!(benches, transfers);
criterion_main!(benches);
