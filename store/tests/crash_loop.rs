//! Crash loop: a child process appends from 4 threads and is killed with SIGKILL at a
//! random moment; the parent reopens the same store directory, checks it, and starts the
//! next child. 50 cycles per case (`ABSLOCK_CRASH_CYCLES=N` for more), for both write
//! modes and both layouts.
//!
//! Under sync flush, every acknowledged message (from every earlier cycle too) is present
//! byte for byte at its acknowledged physical and queue offsets. Under async flush the log
//! is a prefix of what was written: every acknowledged record below the recovered end is
//! there, none past it, and everything a completed `flush()` covered survives. In both, an
//! independent scan of the segment files finds only intact records that were written, no
//! non-zero byte past the recovered end, and consume queues that agree with the
//! commitlog entry for entry; what one cycle recovered is a prefix of what the next one
//! recovers.
//!
//! One writer puts batches (`put_messages`, 1 to 3 records): an acknowledged batch is whole
//! after a crash; an unacknowledged one may survive in part (each record is checked on its
//! own, as in RocketMQ), which the checks allow since its records are intact and written.
//!
//! The child is this test binary (`std::env::current_exe`) running only its own test,
//! selected by `ABSLOCK_CRASH_LOOP_DIR`. Each ack is one line on stdout, printed after
//! `put_message` returned. The seed is printed; `ABSLOCK_SEED` replays a run.

#[path = "common/reliability.rs"]
mod reliability;

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use abslock_store::{
    FlushMode, Layout, Message, MessageStore, PutPath, SequencerConfig, StoreConfig, WriteMode,
};
use reliability::{Rng, Scan, body_for, id_if_intact, scan_commitlog, segment_files, spawn_self};

/// The crash loop runs under the adaptive lock (the other fault tests use `parking_lot`), so at least
/// one crash-and-recover path is exercised with an abslock strategy guarding the put.
type Store = MessageStore<abslock::RawAbsLock>;

const CHILD_DIR: &str = "ABSLOCK_CRASH_LOOP_DIR";
const CHILD_CYCLE: &str = "ABSLOCK_CRASH_LOOP_CYCLE";
/// The child's flush and write mode, `sync|async` `pooled|mmap` (they change per cycle in
/// the mixed case).
const CHILD_MODE: &str = "ABSLOCK_CRASH_LOOP_MODE";
const THREADS: u64 = 4;
/// Bounds a child whose parent vanished (it also stops when stdout is gone).
const MAX_PUTS_PER_THREAD: u64 = 50_000;
const TOPICS: u64 = 2;
const QUEUES: u64 = 2;

#[derive(Debug, Clone, Copy)]
struct Case {
    name: &'static str,
    sync: bool,
    pooled: bool,
    per_topic: bool,
    /// Pick flush and write mode at random for each cycle (the store is reopened in
    /// another mode after each crash).
    mixed: bool,
    /// Index into [`PUT_PATHS`]: every case rotates the put path by cycle, so each path
    /// is crashed and recovered (and recovery reopens under another path) at no extra cost.
    put_path: usize,
}

/// The put paths the crash loop rotates through, and their names in the child's mode string.
const PUT_PATHS: [(&str, PutPath); 3] = [
    ("lock", PutPath::Lock),
    ("sequencer", PutPath::Sequencer(SequencerConfig { queue_capacity: 4, max_batch: 8 })),
    ("combining", PutPath::Combining),
];

impl Case {
    fn config(&self) -> StoreConfig {
        StoreConfig {
            // Small segments and records: rolls, blanks and many files within a few cycles.
            segment_size: 4096,
            consume_queue_entries: 32,
            flush: if self.sync {
                FlushMode::SYNC
            } else {
                FlushMode::Async { interval: Duration::from_millis(5), least_pages: 1 }
            },
            write_mode: if self.pooled {
                WriteMode::Pooled { buffers: 2, commit_interval: Duration::from_millis(2) }
            } else {
                WriteMode::Mmap
            },
            layout: if self.per_topic { Layout::PerTopic } else { Layout::Single },
            // Checkpoints land mid-cycle, so recovery also starts from a checkpoint.
            checkpoint_interval: Duration::from_millis(20),
            put_path: PUT_PATHS[self.put_path].1,
            ..StoreConfig::default()
        }
    }

    fn mode(&self) -> String {
        format!(
            "{} {} {}",
            if self.sync { "sync" } else { "async" },
            if self.pooled { "pooled" } else { "mmap" },
            PUT_PATHS[self.put_path].0,
        )
    }

    fn with_mode(self, mode: &str) -> Case {
        Case {
            sync: mode.contains("sync") && !mode.contains("async"),
            pooled: mode.contains("pooled"),
            put_path: PUT_PATHS.iter().position(|(name, _)| mode.ends_with(name)).unwrap_or(0),
            ..self
        }
    }

    /// Acks to wait for before the kill: 0 kills the child during open and recovery.
    fn max_acks(&self) -> u64 {
        if self.sync { 60 } else { 600 }
    }
}

/// Message ids: cycle (24 bits), thread (8), sequence (32).
fn id(cycle: u64, thread: u64, seq: u64) -> u64 {
    (cycle << 40) | (thread << 32) | seq
}

fn topic_of(id: u64) -> String {
    format!("t{}", ((id >> 32) & 0xFF) % TOPICS)
}

fn queue_of(id: u64) -> u32 {
    ((id & 0xFFFF_FFFF) % QUEUES) as u32
}

fn message(id: u64) -> Message {
    Message::new(topic_of(id), body_for(id)).queue_id(queue_of(id)).tags(format!("k{}", id % 3))
}

/// Child: append from `THREADS` threads until killed, one `ack` line per returned put.
/// Under async flush, thread 0 also calls `flush()` every 16 puts while holding stdout, and
/// prints `flushed` on success: every ack printed before it is then durable.
fn child(dir: &str, case: Case, cycle: u64) {
    let out = Mutex::new(std::io::stdout());
    // `opening`/`opened` bracket recovery, so the parent can kill inside it.
    let say = |line: &[u8]| {
        let mut o = out.lock().unwrap();
        let _ = o.write_all(line).and_then(|()| o.flush());
    };
    // The leading newline ends the harness's `test name ... ` prefix on stdout.
    say(b"\nopening\n");
    let store = match Store::open(dir, case.config()) {
        Ok(s) => {
            say(b"opened\n");
            s
        }
        Err(e) => {
            let _ = writeln!(out.lock().unwrap(), "error open: {e}");
            return;
        }
    };
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (store, out) = (&store, &out);
            s.spawn(move || {
                let mut seq = 0;
                while seq < MAX_PUTS_PER_THREAD {
                    // The last writer puts batches of 1 to 3 (`put_messages`), one ack per record.
                    let k = if t == THREADS - 1 { 1 + seq % 3 } else { 1 };
                    let msgs: Vec<Message> = (seq..seq + k).map(|s| message(id(cycle, t, s))).collect();
                    let puts = if k == 1 {
                        store.put_message(&msgs[0]).map(|p| vec![p])
                    } else {
                        store.put_messages(&msgs)
                    };
                    let mut o = out.lock().unwrap();
                    // A failed put is not acknowledged: report it and stop this writer.
                    let Ok(puts) = puts.map_err(|e| writeln!(o, "error put {seq}: {e}")) else { return };
                    let mut lines = String::new();
                    for (i, p) in puts.iter().enumerate() {
                        let id = id(cycle, t, seq + i as u64);
                        lines += &format!("ack {id} {} {} {}\n", p.physical_offset, p.queue_offset, p.size);
                    }
                    if o.write_all(lines.as_bytes()).and_then(|()| o.flush()).is_err() {
                        std::process::exit(0); // parent gone
                    }
                    if !case.sync && t == 0 && seq % 16 == 15 && store.flush().is_ok() {
                        let _ = o.write_all(b"flushed\n").and_then(|()| o.flush());
                    }
                    seq += k;
                }
            });
        }
    });
}

/// One acknowledged put.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ack {
    id: u64,
    physical_offset: u64,
    queue_offset: u64,
    size: u64,
}

/// What the parent read from one child.
#[derive(Debug, Default)]
struct ChildOutput {
    acks: Vec<Ack>,
    /// Acks printed before the last `flushed` line: durable under async flush.
    flushed_acks: usize,
    /// `error` lines: a failed open or put in the child.
    errors: Vec<String>,
    /// The child started opening (recovering) the store.
    opening: bool,
    /// The child finished opening the store before it was killed.
    opened: bool,
}

fn parse_line(line: &str, out: &mut ChildOutput) -> bool {
    let f: Vec<&str> = line.split_whitespace().collect();
    match f.as_slice() {
        ["ack", id, phys, qo, size] => {
            let (Ok(id), Ok(p), Ok(q), Ok(s)) = (id.parse(), phys.parse(), qo.parse(), size.parse()) else {
                return false;
            };
            out.acks.push(Ack { id, physical_offset: p, queue_offset: q, size: s });
            true
        }
        ["flushed"] => {
            out.flushed_acks = out.acks.len();
            false
        }
        ["opening"] => {
            out.opening = true;
            false
        }
        ["opened"] => {
            out.opened = true;
            false
        }
        ["error", ..] => {
            out.errors.push(line.to_owned());
            false
        }
        _ => false,
    }
}

/// Runs one child until `target` acks arrived (0: until it starts opening the store, so the
/// kill lands in recovery), SIGKILLs it, and returns everything it printed.
fn run_child(case: Case, dir: &Path, cycle: u64, target: u64) -> ChildOutput {
    let mut child = spawn_self(
        case.name,
        &[
            (CHILD_DIR, dir.display().to_string()),
            (CHILD_CYCLE, cycle.to_string()),
            (CHILD_MODE, case.mode()),
        ],
    );
    let stdout = child.0.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let mut out = ChildOutput::default();
    let mut n = 0;
    while n < target || !out.opening {
        match lines.next() {
            Some(Ok(line)) => n += u64::from(parse_line(&line, &mut out)),
            _ => panic!(
                "{}: child of cycle {cycle} ended after {n} of {target} acks ({:?}): {:?}",
                case.name,
                child.0.wait(),
                out.errors
            ),
        }
    }
    child.0.kill().unwrap(); // SIGKILL
    child.0.wait().unwrap();
    // Lines already in the pipe were printed before the kill: acknowledged too.
    for line in lines.map_while(Result::ok) {
        parse_line(&line, &mut out);
    }
    out
}

/// The commitlog directory of each log: `commitlog/`, or `topics/{topic}/commitlog/`.
fn log_dirs(dir: &Path, case: Case) -> Vec<(Option<String>, PathBuf)> {
    if !case.per_topic {
        return vec![(None, dir.join("commitlog"))];
    }
    let mut v: Vec<(Option<String>, PathBuf)> = std::fs::read_dir(dir.join("topics"))
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().is_dir())
                .map(|e| (Some(e.file_name().to_string_lossy().into_owned()), e.path().join("commitlog")))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Per log (keyed by topic under `PerTopic`, "" under `Single`): the independent scan.
type Scans = BTreeMap<String, Scan>;

/// Checks everything that holds in both flush modes; returns the scans.
fn check_files_and_queues(store: &Store, dir: &Path, case: Case, prev: &Scans) -> Scans {
    let mut scans = Scans::new();
    let mut ends = 0;
    for (topic, clog) in log_dirs(dir, case) {
        let key = topic.clone().unwrap_or_default();
        let scan = scan_commitlog(&clog);
        assert_eq!(
            scan.stale_byte_at, None,
            "{}: {key}: bytes past the recovered end {}",
            case.name, scan.end
        );
        ends += scan.end;
        // Nothing is readable at the recovered end.
        let log_topic = topic.clone().unwrap_or_else(|| "t0".to_owned());
        assert!(
            store.get_message_at_in(&log_topic, scan.end).unwrap().is_none(),
            "{}: read past the end",
            case.name
        );
        // Consume queues agree with the commitlog: dense, in log order, entry for entry.
        let mut next_qo: HashMap<(String, u32), u64> = HashMap::new();
        for r in &scan.records {
            let id = id_if_intact(&r.body).unwrap_or_else(|| {
                panic!("{}: record at {} is not one that was written", case.name, r.physical_offset)
            });
            assert_eq!(
                (r.topic.as_str(), r.queue_id),
                (topic_of(id).as_str(), queue_of(id)),
                "{}",
                case.name
            );
            if let Some(t) = &topic {
                assert_eq!(&r.topic, t, "{}: record in another topic's log", case.name);
            }
            let qo = next_qo.entry((r.topic.clone(), r.queue_id)).or_default();
            assert_eq!(
                r.queue_offset, *qo,
                "{}: queue offsets not dense at {}",
                case.name, r.physical_offset
            );
            *qo += 1;
            let m = store.get_message(&r.topic, r.queue_id, r.queue_offset).unwrap().unwrap_or_else(|| {
                panic!("{}: record at {} missing from its consume queue", case.name, r.physical_offset)
            });
            assert_eq!(m.physical_offset(), r.physical_offset, "{}: consume queue disagrees", case.name);
        }
        for t in 0..TOPICS {
            for q in 0..QUEUES as u32 {
                let topic_name = format!("t{t}");
                if topic.as_ref().is_some_and(|x| *x != topic_name) {
                    continue;
                }
                let n = next_qo.get(&(topic_name.clone(), q)).copied().unwrap_or(0);
                assert_eq!(
                    store.consume_queue_len(&topic_name, q).unwrap(),
                    n,
                    "{}: {topic_name}/{q}",
                    case.name
                );
                assert!(
                    store.get_message(&topic_name, q, n).unwrap().is_none(),
                    "{}: visible past the end",
                    case.name
                );
                // The consume-queue files hold nothing past the queue's length either.
                let qdir = clog.parent().unwrap().join("consumequeue").join(&topic_name).join(q.to_string());
                let entries: Vec<u8> =
                    segment_files(&qdir).iter().flat_map(|(_, p)| std::fs::read(p).unwrap()).collect();
                let past = entries.get(n as usize * 20..).unwrap_or_default();
                assert!(
                    past.iter().all(|&b| b == 0),
                    "{}: {topic_name}/{q}: stale entries past {n}",
                    case.name
                );
            }
        }
        // What the previous cycle recovered is still there: a prefix of this scan.
        if let Some(p) = prev.get(&key) {
            assert!(p.records.len() <= scan.records.len(), "{}: {key}: recovered log shrank", case.name);
            assert_eq!(
                p.records[..],
                scan.records[..p.records.len()],
                "{}: {key}: earlier records changed",
                case.name
            );
        }
        scans.insert(key, scan);
    }
    assert_eq!(store.write_position(), ends, "{}: write position differs from the scanned end", case.name);
    scans
}

/// Totals printed at the end of a case.
#[derive(Debug, Default)]
struct Totals {
    cycles: u64,
    acks: u64,
    verifications: u64,
    killed_during_open: u64,
}

fn crash_loop(case: Case) {
    if let Ok(dir) = std::env::var(CHILD_DIR) {
        let cycle = std::env::var(CHILD_CYCLE).ok().and_then(|c| c.parse().ok()).unwrap_or(0);
        let mode = std::env::var(CHILD_MODE).unwrap_or_default();
        return child(&dir, case.with_mode(&mode), cycle);
    }
    let cycles: u64 = std::env::var("ABSLOCK_CRASH_CYCLES").ok().and_then(|c| c.parse().ok()).unwrap_or(50);
    let seed = reliability::seed();
    eprintln!("{}: seed {seed} (ABSLOCK_SEED={seed} replays the kill points)", case.name);
    let mut rng = Rng::new(seed);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // Sync flush: every ack ever made, by (topic, queue, queue offset).
    let mut acked: BTreeMap<(String, u32, u64), Ack> = BTreeMap::new();
    let mut prev = Scans::new();
    let mut totals = Totals::default();
    let mut async_verified = 0;
    let whole = case;
    for cycle in 0..cycles {
        let case = if whole.mixed {
            Case { sync: rng.range(0, 1) == 0, pooled: rng.range(0, 1) == 0, ..whole }
        } else {
            whole
        };
        let case = Case { put_path: (cycle % PUT_PATHS.len() as u64) as usize, ..case };
        let target = if rng.range(0, 9) == 0 { 0 } else { rng.range(1, case.max_acks()) };
        let out = run_child(case, dir, cycle, target);
        totals.killed_during_open += u64::from(!out.opened);
        totals.acks += out.acks.len() as u64;
        let store = Store::open(dir, case.config())
            .unwrap_or_else(|e| panic!("{}: reopen after cycle {cycle} (seed {seed}): {e}", case.name));
        let scans = check_files_and_queues(&store, dir, case, &prev);
        if case.sync {
            for a in &out.acks {
                let key = (topic_of(a.id), queue_of(a.id), a.queue_offset);
                if let Some(old) = acked.insert(key.clone(), *a) {
                    panic!("{}: queue offset {key:?} acknowledged twice: {old:?} then {a:?}", case.name);
                }
            }
            for ((topic, queue, qo), a) in &acked {
                let m = store.get_message(topic, *queue, *qo).unwrap().unwrap_or_else(|| {
                    panic!("{}: cycle {cycle} (seed {seed}): acknowledged {a:?} lost", case.name)
                });
                assert_eq!(m.physical_offset(), a.physical_offset, "{}: {a:?} moved", case.name);
                assert_eq!(u64::from(m.total_size()), a.size, "{}: {a:?}", case.name);
                assert_eq!(m.body(), &body_for(a.id)[..], "{}: {a:?} damaged", case.name);
                let at =
                    store.get_message_at_in(topic, a.physical_offset).unwrap().expect("by physical offset");
                assert_eq!(at.body(), m.body());
                totals.verifications += 1;
            }
        } else {
            // Async: a prefix. Acks below the recovered end are there, acks past it are not,
            // and everything a completed flush covered is below the end.
            for (i, a) in out.acks.iter().enumerate() {
                let scan = &scans[if case.per_topic { topic_of(a.id) } else { String::new() }.as_str()];
                let present = scan.records.iter().find(|r| r.physical_offset == a.physical_offset);
                if a.physical_offset < scan.end {
                    let r = present
                        .unwrap_or_else(|| panic!("{}: {a:?} below the end {} missing", case.name, scan.end));
                    assert_eq!(id_if_intact(&r.body), Some(a.id), "{}: {a:?} replaced", case.name);
                    assert_eq!(r.queue_offset, a.queue_offset, "{}: {a:?}", case.name);
                    totals.verifications += 1;
                    async_verified += 1;
                } else {
                    assert!(i >= out.flushed_acks, "{}: {a:?} was covered by a flush but is lost", case.name);
                }
            }
        }
        prev = scans;
        // Next child opens after a clean close or after a crash-like drop.
        if rng.range(0, 1) == 0 {
            store.close().unwrap();
        } else {
            drop(store);
        }
        totals.cycles += 1;
    }
    let records: usize = prev.values().map(|s| s.records.len()).sum();
    println!(
        "crash loop {}: {} cycles ({} killed during open), {} acks, {} acknowledged messages verified \
         ({} checks), {} records in the final log, seed {seed}",
        whole.name,
        totals.cycles,
        totals.killed_during_open,
        totals.acks,
        acked.len() as u64 + async_verified,
        totals.verifications,
        records,
    );
    assert!(totals.acks > 0, "{}: no child acknowledged anything", whole.name);
}

#[test]
fn crash_loop_sync_mmap_single() {
    crash_loop(Case {
        name: "crash_loop_sync_mmap_single",
        sync: true,
        pooled: false,
        per_topic: false,
        mixed: false,
        put_path: 0,
    });
}

#[test]
fn crash_loop_sync_pooled_single() {
    crash_loop(Case {
        name: "crash_loop_sync_pooled_single",
        sync: true,
        pooled: true,
        per_topic: false,
        mixed: false,
        put_path: 0,
    });
}

#[test]
fn crash_loop_sync_mmap_per_topic() {
    crash_loop(Case {
        name: "crash_loop_sync_mmap_per_topic",
        sync: true,
        pooled: false,
        per_topic: true,
        mixed: false,
        put_path: 0,
    });
}

#[test]
fn crash_loop_sync_pooled_per_topic() {
    crash_loop(Case {
        name: "crash_loop_sync_pooled_per_topic",
        sync: true,
        pooled: true,
        per_topic: true,
        mixed: false,
        put_path: 0,
    });
}

#[test]
fn crash_loop_async_mmap_single() {
    crash_loop(Case {
        name: "crash_loop_async_mmap_single",
        sync: false,
        pooled: false,
        per_topic: false,
        mixed: false,
        put_path: 0,
    });
}

#[test]
fn crash_loop_async_pooled_per_topic() {
    crash_loop(Case {
        name: "crash_loop_async_pooled_per_topic",
        sync: false,
        pooled: true,
        per_topic: true,
        mixed: false,
        put_path: 0,
    });
}

#[test]
fn crash_loop_mixed_modes_single() {
    let case = Case {
        name: "crash_loop_mixed_modes_single",
        sync: true,
        pooled: false,
        per_topic: false,
        mixed: true,
        put_path: 0,
    };
    crash_loop(case);
}
