//! Paired comparison of the put paths on the real store: `Lock` under `parking_lot`,
//! `Sequencer` and `Combining`, at several thread counts and message sizes, in interleaved
//! rounds (the order of the three rotates every round). Each cell opens a fresh store on
//! tmpfs (segments warmed at open, one queue per thread), times `--msgs`-worth of puts and
//! reports throughput as a ratio to `parking_lot` in the same round, median and range over
//! the rounds, plus process CPU per message (every thread, the sequencer's writer included).
//!
//! ```text
//! cargo run --release -p abslock-store --example put_path_compare -- [rounds] [dir]
//! ```

use std::sync::Barrier;
use std::time::Instant;

use abslock_store::{Message, MessageStore, PutPath, SequencerConfig, StoreConfig, WarmUp};

const THREADS: [usize; 4] = [1, 2, 8, 16];
const SIZES: [usize; 2] = [128, 16 << 10];
/// Bytes of bodies put per cell (at most `MAX_MSGS` messages).
const BYTES_PER_CELL: usize = 96 << 20;
const MAX_MSGS: usize = 200_000;
const SEGMENT: u64 = 128 << 20;

fn modes() -> [(&'static str, PutPath); 3] {
    [
        ("parking_lot", PutPath::Lock),
        ("sequencer", PutPath::Sequencer(SequencerConfig::default())),
        ("combining", PutPath::Combining),
    ]
}

fn cpu_seconds() -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` is writable and sized for `rusage`; RUSAGE_SELF is a valid `who`.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    if rc != 0 {
        return 0.0;
    }
    // SAFETY: getrusage succeeded and filled the (zeroed) struct.
    let u = unsafe { usage.assume_init() };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// One cell: messages per second and CPU ns per message.
fn cell(parent: &std::path::Path, put_path: PutPath, threads: usize, size: usize) -> (f64, f64) {
    let dir = tempfile::tempdir_in(parent).expect("temp dir");
    let config = StoreConfig {
        segment_size: SEGMENT,
        preallocate_ahead: 1,
        warm_up: WarmUp { enabled: true, mlock: false },
        consume_queue_entries: 1 << 18,
        put_path,
        ..StoreConfig::default()
    };
    let store: MessageStore<parking_lot::RawMutex> = MessageStore::open(dir.path(), config).expect("open");
    let msgs = (BYTES_PER_CELL / size).min(MAX_MSGS) / threads * threads;
    let barrier = Barrier::new(threads);
    // Each worker times itself: a timer thread could be descheduled past the whole cell.
    let c0 = cpu_seconds();
    let spans: Vec<(Instant, Instant)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let (store, barrier) = (&store, &barrier);
                s.spawn(move || {
                    let msg = Message::new("bench", vec![t as u8; size]).queue_id(t as u32);
                    barrier.wait();
                    let start = Instant::now();
                    for _ in 0..msgs / threads {
                        store.put_message(&msg).expect("put");
                    }
                    (start, Instant::now())
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("worker")).collect()
    });
    let cpu = cpu_seconds() - c0;
    let first = spans.iter().map(|s| s.0).min().expect("a worker");
    let last = spans.iter().map(|s| s.1).max().expect("a worker");
    let elapsed = (last - first).as_secs_f64();
    store.close().expect("close");
    (msgs as f64 / elapsed, cpu * 1e9 / msgs as f64)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let parent = std::path::PathBuf::from(args.next().unwrap_or_else(|| "/dev/shm".into()));
    // ratios[(threads, size, mode)] per round; cpu likewise.
    let mut ratios = vec![vec![Vec::new(); 3]; THREADS.len() * SIZES.len()];
    let mut rates = ratios.clone();
    let mut cpus = ratios.clone();
    for round in 0..rounds {
        for (ti, &threads) in THREADS.iter().enumerate() {
            for (si, &size) in SIZES.iter().enumerate() {
                let c = ti * SIZES.len() + si;
                let mut got = [(0.0, 0.0); 3];
                for k in 0..3 {
                    let m = (k + round) % 3;
                    got[m] = cell(&parent, modes()[m].1, threads, size);
                }
                for m in 0..3 {
                    ratios[c][m].push(got[m].0 / got[0].0);
                    rates[c][m].push(got[m].0);
                    cpus[c][m].push(got[m].1);
                }
                eprintln!(
                    "round {round} threads {threads:>2} size {size:>5}: {:>10.0} {:>10.0} {:>10.0} msg/s",
                    got[0].0, got[1].0, got[2].0
                );
            }
        }
    }
    println!(
        "| threads | size (B) | parking_lot msg/s | sequencer / parking_lot | combining / parking_lot | CPU ns/msg (pl / seq / comb) |"
    );
    println!("|---|---|---|---|---|---|");
    for (ti, &threads) in THREADS.iter().enumerate() {
        for (si, &size) in SIZES.iter().enumerate() {
            let c = ti * SIZES.len() + si;
            let range = |v: &Vec<f64>| {
                let mut v = v.clone();
                let med = median(&mut v);
                format!("{med:.2} ({:.2}-{:.2})", v[0], v[v.len() - 1])
            };
            let med = |v: &Vec<f64>| median(&mut v.clone());
            println!(
                "| {threads} | {size} | {:.0} | {} | {} | {:.0} / {:.0} / {:.0} |",
                med(&rates[c][0]),
                range(&ratios[c][1]),
                range(&ratios[c][2]),
                med(&cpus[c][0]),
                med(&cpus[c][1]),
                med(&cpus[c][2]),
            );
        }
    }
}
