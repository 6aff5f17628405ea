//! CommitLog put benches: `put_message` on the real abslock-store across threads x
//! message size x strategy, reported as bytes of message body per second
//! (`Throughput::Bytes`).
//!
//! Group `commitlog/put/<strategy>/<size>`, ids `threads/N`. One store per benchmark
//! (segments of 16 MiB, preallocated and warmed, async flush) in a temporary
//! directory under /dev/shm when it exists, so page faults and disk writes stay small
//! next to the lock. Worker threads are spawned once per benchmark; only the batch
//! between two barriers is timed. Counts are small so `cargo bench` stays reasonable on
//! 2 cores.

use abslock::{Calibrated, RawAbsLock, RawBackoffLock, RawCasSpinLock, RawSpinLock, RocketMq};
use abslock_benches::peers::RawStdMutex;
use abslock_benches::pool::Pool;
use abslock_store::{Message, MessageStore, StoreConfig, WarmUp};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use lock_api::RawMutex;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

const THREADS: [usize; 3] = [1, 4, 16];
const SIZES: [usize; 2] = [128, 4096];

fn parent_dir() -> PathBuf {
    let shm = PathBuf::from("/dev/shm");
    if shm.is_dir() { shm } else { std::env::temp_dir() }
}

fn put_one<R: RawMutex + Send + Sync + 'static>(name: &str, c: &mut Criterion) {
    for size in SIZES {
        let mut g = c.benchmark_group(format!("commitlog/put/{name}/{size}B"));
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_millis(800))
            .throughput(Throughput::Bytes(size as u64));
        for threads in THREADS {
            let dir = tempfile::Builder::new()
                .prefix("abslock-bench-")
                .tempdir_in(parent_dir())
                .expect("cannot create a bench directory");
            let config = StoreConfig {
                segment_size: 16 << 20,
                warm_up: WarmUp { enabled: true, mlock: false },
                preallocate_ahead: abslock_store::ROCKETMQ_PREALLOCATE_AHEAD,
                ..StoreConfig::default()
            };
            let store: Arc<MessageStore<R>> =
                Arc::new(MessageStore::open(dir.path(), config).expect("open store"));
            let msgs: Arc<Vec<Message>> =
                Arc::new((0..4).map(|q| Message::new("bench", vec![7u8; size]).queue_id(q)).collect());
            let s = Arc::clone(&store);
            let pool = Pool::new(threads, move |i| {
                s.put_message(&msgs[i % msgs.len()]).expect("put");
            });
            g.bench_with_input(BenchmarkId::new("threads", threads), &threads, |b, _| {
                b.iter_custom(|iters| pool.run(iters));
            });
            drop(pool);
            if let Ok(store) = Arc::try_unwrap(store) {
                let _ = store.close();
            }
        }
        g.finish();
    }
}

fn puts(c: &mut Criterion) {
    let _ = abslock::AbsConfig::calibrated();
    put_one::<RawCasSpinLock>("cas-spin", c);
    put_one::<RawSpinLock>("spin", c);
    put_one::<RawBackoffLock>("backoff-k1000", c);
    put_one::<RawAbsLock<Calibrated>>("abs", c);
    put_one::<RawAbsLock<RocketMq>>("abs-rocketmq", c);
    put_one::<parking_lot::RawMutex>("parking_lot", c);
    put_one::<RawStdMutex>("std", c);
}

criterion_group!(benches, puts);
criterion_main!(benches);
