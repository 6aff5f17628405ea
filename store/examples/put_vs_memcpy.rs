//! Single-thread put throughput of 4 KiB messages into a warmed segment, as a ratio to a
//! plain 4 KiB memcpy into a warmed mapping measured in the same run (issue 3's target:
//! at least 0.4).
//!
//! Run: `cargo run --release -p abslock-store --example put_vs_memcpy [-- messages]`
//!
//! Both sides write the same bytes into a shared file mapping whose pages were touched
//! first (the store's warm-up; the baseline touches its own mapping the same way), so
//! neither pays page faults. Puts and copies alternate in chunks of [`CHUNK`], so both see
//! the same machine load; the reported ratio is the median over chunks. A put includes
//! validation, encoding the record's head and tail into the thread-local buffer, the body
//! CRC and the record CRC (over head and tail), the topic-queue stripe lock and the
//! put-message critical section, which copies head, body (from the message) and tail into
//! the mapping; the consume-queue dispatcher runs on another thread.

use std::time::{Duration, Instant};

use abslock_store::{FlushMode, Message, MessageStore, StoreConfig, WarmUp};

const BODY: usize = 4096;
const CHUNK: usize = 500;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args().nth(1).map_or(Ok(40_000), |s| s.parse())?;
    let chunks = n.div_ceil(CHUNK);
    let n = chunks * CHUNK;
    let segment_size = ((n as u64 + 64) * 4400).next_power_of_two();
    let msg = Message::new("bench", vec![7u8; BODY]).queue_id(0).tags("t");

    let dir = tempfile::tempdir()?;
    let config = StoreConfig {
        segment_size,
        warm_up: WarmUp { enabled: true, mlock: false },
        preallocate: false,
        // No msync during the timed loop.
        flush: FlushMode::Async { interval: Duration::from_secs(3600), least_pages: u32::MAX },
        checkpoint_interval: Duration::from_secs(3600),
        // ABSLOCK_NO_RECORD_CRC=1 drops the `__CRC32#` property, to show its share.
        append_record_crc: std::env::var_os("ABSLOCK_NO_RECORD_CRC").is_none(),
        ..StoreConfig::default()
    };
    // The first segment is created and warmed (every page touched) at open.
    let store: MessageStore<parking_lot::RawMutex> = MessageStore::open(dir.path(), config)?;

    let path = dir.path().join("baseline");
    let file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path)?;
    file.set_len(segment_size)?;
    // SAFETY: the file is private to this run and not resized while mapped.
    let mut map = unsafe { memmap2::MmapMut::map_mut(&file)? };
    for page in map.chunks_mut(4096) {
        page[0] = 0;
    }
    let src = vec![7u8; BODY];
    let stride = BODY + 160; // a 4 KiB message's record size

    let (mut put_total, mut copy_total) = (Duration::ZERO, Duration::ZERO);
    let (mut put_faults, mut copy_faults) = (0, 0);
    let mut ratios = Vec::with_capacity(chunks);
    let mut at = 0;
    for _ in 0..chunks {
        let faults = minor_faults();
        let start = Instant::now();
        for _ in 0..CHUNK {
            std::hint::black_box(store.put_message(&msg)?);
        }
        let put = start.elapsed();
        put_faults += minor_faults() - faults;
        let faults = minor_faults();
        let start = Instant::now();
        for _ in 0..CHUNK {
            map[at..at + BODY].copy_from_slice(std::hint::black_box(&src));
            at += stride;
        }
        let copy = start.elapsed();
        copy_faults += minor_faults() - faults;
        std::hint::black_box(&map);
        put_total += put;
        copy_total += copy;
        ratios.push(copy.as_secs_f64() / put.as_secs_f64());
    }
    ratios.sort_by(f64::total_cmp);
    let put_ns = put_total.as_nanos() as f64 / n as f64;
    let copy_ns = copy_total.as_nanos() as f64 / n as f64;
    println!("messages: {n} in {chunks} chunks of {CHUNK}, puts and copies alternating");
    println!(
        "put 4 KiB:    {put_ns:8.1} ns/msg  {:6.2} GB/s, {put_faults} page faults",
        BODY as f64 / put_ns
    );
    println!(
        "memcpy 4 KiB: {copy_ns:8.1} ns/copy {:6.2} GB/s, {copy_faults} page faults",
        BODY as f64 / copy_ns
    );
    println!(
        "put/memcpy throughput ratio: median {:.2} (p25 {:.2}, p75 {:.2}), overall {:.2}",
        ratios[ratios.len() / 2],
        ratios[ratios.len() / 4],
        ratios[ratios.len() * 3 / 4],
        copy_ns / put_ns
    );
    store.close()?;
    Ok(())
}

/// Minor page faults of this thread so far (`getrusage(RUSAGE_THREAD)`).
fn minor_faults() -> i64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` is valid for writes of one `rusage`; RUSAGE_THREAD is a valid target.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr()) };
    if rc != 0 {
        return 0;
    }
    // SAFETY: getrusage succeeded, so it initialised `usage` (and zeroed is valid anyway).
    unsafe { usage.assume_init() }.ru_minflt
}
