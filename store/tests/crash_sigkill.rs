//! A child process appends under sync flush from two threads and is killed with SIGKILL
//! after N acknowledgements. After reopen, every acknowledged message is present and
//! intact at its acknowledged offsets, and every visible record is whole.
//!
//! The child is this test binary itself (`std::env::current_exe`), selected by the
//! `ABSLOCK_STORE_CRASH_CHILD` environment variable holding the store directory.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use abslock_store::{FlushMode, Message, MessageStore, StoreConfig, WriteMode};

type Store = MessageStore<parking_lot::RawMutex>;

const CHILD_ENV: &str = "ABSLOCK_STORE_CRASH_CHILD";
const MODE_ENV: &str = "ABSLOCK_STORE_CRASH_MODE";
const THREADS: u32 = 2;

fn config(pooled: bool) -> StoreConfig {
    StoreConfig {
        segment_size: 16 << 10,
        consume_queue_entries: 64,
        flush: FlushMode::SYNC,
        write_mode: if pooled { WriteMode::POOLED } else { WriteMode::Mmap },
        ..StoreConfig::default()
    }
}

fn body(thread: u32, i: u64) -> Vec<u8> {
    let len = 50 + (i as usize * 37 + thread as usize * 11) % 400;
    (0..len).map(|k| (k as u64 ^ i ^ (u64::from(thread) * 31)) as u8).collect()
}

/// Child mode: append forever, printing `ack thread i physical_offset queue_offset` after each
/// acknowledged put.
fn child(dir: &str, pooled: bool) {
    let store = Store::open(dir, config(pooled)).expect("child open");
    let out = std::sync::Mutex::new(std::io::stdout());
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (store, out) = (&store, &out);
            s.spawn(move || {
                for i in 0.. {
                    let p = store.put_message(&Message::new("crash", body(t, i)).queue_id(t)).expect("put");
                    let mut o = out.lock().unwrap();
                    writeln!(o, "ack {t} {i} {} {}", p.physical_offset, p.queue_offset).unwrap();
                    o.flush().unwrap();
                }
            });
        }
    });
}

fn run_parent(pooled: bool, acks_before_kill: usize) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            if pooled { "sigkill_pooled" } else { "sigkill_mmap" },
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, dir.path())
        .env(MODE_ENV, if pooled { "pooled" } else { "mmap" })
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut acked: BTreeMap<(u32, u64), (u64, u64)> = BTreeMap::new();
    let mut parse = |line: &str| {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() == 5 && f[0] == "ack" {
            let t: u32 = f[1].parse().unwrap();
            let i: u64 = f[2].parse().unwrap();
            acked.insert((t, i), (f[3].parse().unwrap(), f[4].parse().unwrap()));
            true
        } else {
            false
        }
    };
    let mut n = 0;
    while n < acks_before_kill {
        let Some(line) = lines.next() else { panic!("child ended early after {n} acks") };
        if parse(&line.unwrap()) {
            n += 1;
        }
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // Acks printed before the kill count as acknowledged too.
    for line in lines.map_while(Result::ok) {
        parse(&line);
    }
    assert!(acked.len() >= acks_before_kill);

    let store = Store::open(dir.path(), config(pooled)).unwrap();
    for (&(t, i), &(phys, qo)) in &acked {
        let m = store
            .get_message("crash", t, qo)
            .unwrap()
            .unwrap_or_else(|| panic!("acknowledged message {t}/{i} at queue offset {qo} lost"));
        assert_eq!(m.physical_offset(), phys);
        assert_eq!(m.queue_id(), t);
        assert_eq!(m.body(), &body(t, i)[..], "message {t}/{i} damaged");
        let at = store.get_message_at(phys).unwrap().unwrap();
        assert_eq!(at.body(), m.body());
    }
    // Every visible record is whole, queue by queue, past the acknowledged ones too.
    for t in 0..THREADS {
        let len = store.consume_queue_len("crash", t).unwrap();
        for qo in 0..len {
            let m = store.get_message("crash", t, qo).unwrap().expect("dense queue");
            assert_eq!(m.body(), &body(t, qo)[..]);
        }
        assert!(store.get_message("crash", t, len).unwrap().is_none());
    }
    // The store accepts writes after recovery.
    store.put_message(&Message::new("crash", b"after".to_vec())).unwrap();
    store.close().unwrap();
}

fn child_requested() -> Option<(String, bool)> {
    let dir = std::env::var(CHILD_ENV).ok()?;
    Some((dir, std::env::var(MODE_ENV).is_ok_and(|m| m == "pooled")))
}

#[test]
fn sigkill_mmap() {
    if let Some((dir, pooled)) = child_requested() {
        return child(&dir, pooled);
    }
    run_parent(false, 300);
}

#[test]
fn sigkill_pooled() {
    if let Some((dir, pooled)) = child_requested() {
        return child(&dir, pooled);
    }
    run_parent(true, 300);
}
