//! Model-based test: random puts, batch puts, reads, clean reopens and simulated crashes
//! (drop without close, `abort` left behind) against an in-memory `Vec` model of the log.
//!
//! The model predicts every physical offset (including the blank + roll at segment ends)
//! and queue offset. After a crash everything acknowledged survives, except in pooled
//! write mode under async flush, where only a prefix is guaranteed: the model is cut to
//! the recovered write position, and every record kept must be intact.

mod common;

use std::collections::HashMap;

use abslock_store::{FlushMode, Message, MessageStore, StoreConfig, WriteMode};
use proptest::prelude::*;

type Store = MessageStore<parking_lot::RawMutex>;

const SEGMENT: u64 = 2048;

#[derive(Debug, Clone)]
enum Op {
    Put(u8, u8, usize),
    Batch(Vec<(u8, u8, usize)>),
    Read(usize),
    ReadAt(usize),
    Reopen,
    Crash,
}

fn op() -> impl Strategy<Value = Op> {
    let put = (0u8..3, 0u8..2, 0usize..500);
    prop_oneof![
        6 => put.clone().prop_map(|(t, q, n)| Op::Put(t, q, n)),
        2 => prop::collection::vec(put, 1..4).prop_map(Op::Batch),
        3 => any::<usize>().prop_map(Op::Read),
        2 => any::<usize>().prop_map(Op::ReadAt),
        1 => Just(Op::Reopen),
        1 => Just(Op::Crash),
    ]
}

#[derive(Debug, Clone)]
struct Rec {
    topic: String,
    queue: u32,
    body: Vec<u8>,
    queue_offset: u64,
    physical_offset: u64,
    size: u64,
}

#[derive(Default)]
struct Model {
    recs: Vec<Rec>,
    write_pos: u64,
    next_qo: HashMap<(String, u32), u64>,
    counter: u64,
}

impl Model {
    fn message(&mut self, t: u8, q: u8, n: usize) -> Message {
        self.counter += 1;
        let c = self.counter;
        let body: Vec<u8> = (0..n).map(|i| (i as u64 ^ c.wrapping_mul(0x9E37)) as u8).collect();
        Message::new(format!("topic{t}"), body).queue_id(u32::from(q)).tags(format!("tag{c}"))
    }

    /// Where a blob of `len` bytes lands (the roll rule: `len + 8 > space` moves to the next segment).
    fn place(&mut self, len: u64) -> u64 {
        let space = SEGMENT - self.write_pos % SEGMENT;
        if len + 8 > space {
            self.write_pos += space;
        }
        let at = self.write_pos;
        self.write_pos += len;
        at
    }

    fn record(&mut self, m: &Message, phys: u64) -> Rec {
        let key = (m.topic().to_owned(), m.get_queue_id());
        let qo = self.next_qo.get(&key).copied().unwrap_or(0);
        self.next_qo.insert(key, qo + 1);
        Rec {
            topic: m.topic().to_owned(),
            queue: m.get_queue_id(),
            body: m.body().to_vec(),
            queue_offset: qo,
            physical_offset: phys,
            size: common::encoded_size(m) as u64,
        }
    }

    fn cut(&mut self, end: u64) {
        self.recs.retain(|r| r.physical_offset + r.size <= end);
        self.write_pos = end;
        self.next_qo.clear();
        for r in &self.recs {
            self.next_qo.insert((r.topic.clone(), r.queue), r.queue_offset + 1);
        }
    }
}

fn check(store: &Store, r: &Rec) {
    let m = store.get_message(&r.topic, r.queue, r.queue_offset).unwrap().expect("model record missing");
    assert_eq!(m.body(), &r.body[..]);
    assert_eq!(m.physical_offset(), r.physical_offset);
    let m = store.get_message_at(r.physical_offset).unwrap().expect("missing by physical offset");
    assert_eq!((m.topic(), m.queue_offset()), (&r.topic[..], r.queue_offset));
}

fn run(cfg: StoreConfig, ops: Vec<Op>) {
    let dir = tempfile::tempdir().unwrap();
    let weak_crash =
        matches!(cfg.write_mode, WriteMode::Pooled { .. }) && matches!(cfg.flush, FlushMode::Async { .. });
    let mut store = Some(Store::open(dir.path(), cfg.clone()).unwrap());
    let mut model = Model::default();
    for op in ops {
        let s = store.as_ref().unwrap();
        match op {
            Op::Put(t, q, n) => {
                let m = model.message(t, q, n);
                let size = common::encoded_size(&m) as u64;
                let phys = model.place(size);
                let rec = model.record(&m, phys);
                let p = s.put_message(&m).unwrap();
                assert_eq!(
                    (p.physical_offset, p.queue_offset, u64::from(p.size)),
                    (phys, rec.queue_offset, size)
                );
                model.recs.push(rec);
            }
            Op::Batch(items) => {
                let msgs: Vec<Message> = items.iter().map(|&(t, q, n)| model.message(t, q, n)).collect();
                let total: u64 = msgs.iter().map(|m| common::encoded_size(m) as u64).sum();
                let mut phys = model.place(total);
                let results = s.put_messages(&msgs).unwrap();
                for (m, p) in msgs.iter().zip(&results) {
                    let rec = model.record(m, phys);
                    assert_eq!((p.physical_offset, p.queue_offset), (rec.physical_offset, rec.queue_offset));
                    phys += rec.size;
                    model.recs.push(rec);
                }
            }
            Op::Read(i) if !model.recs.is_empty() => check(s, &model.recs[i % model.recs.len()]),
            Op::ReadAt(i) if !model.recs.is_empty() => {
                let r = &model.recs[i % model.recs.len()];
                let m = s.get_message_at(r.physical_offset).unwrap().unwrap();
                assert_eq!(m.body(), &r.body[..]);
            }
            Op::Read(_) | Op::ReadAt(_) => {}
            Op::Reopen => {
                store.take().unwrap().close().unwrap();
                let s = Store::open(dir.path(), cfg.clone()).unwrap();
                assert_eq!(s.write_position(), model.write_pos);
                store = Some(s);
            }
            Op::Crash => {
                drop(store.take());
                let s = Store::open(dir.path(), cfg.clone()).unwrap();
                let end = s.write_position();
                if weak_crash {
                    assert!(end <= model.write_pos);
                    model.cut(end);
                } else {
                    assert_eq!(end, model.write_pos, "acknowledged records lost in a crash");
                }
                store = Some(s);
            }
        }
    }
    let s = store.take().unwrap();
    for r in &model.recs {
        check(&s, r);
    }
    s.close().unwrap();
}

fn config() -> impl Strategy<Value = StoreConfig> {
    (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(sync, pooled, prealloc)| StoreConfig {
        segment_size: SEGMENT,
        consume_queue_entries: 8,
        flush: if sync { FlushMode::SYNC } else { FlushMode::ASYNC },
        write_mode: if pooled { WriteMode::POOLED } else { WriteMode::Mmap },
        preallocate: prealloc,
        ..StoreConfig::default()
    })
}

fn cases() -> u32 {
    if std::env::var_os("ABSLOCK_LONG").is_some() { 256 } else { 24 }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn store_matches_model(cfg in config(), ops in prop::collection::vec(op(), 1..40)) {
        run(cfg, ops);
    }
}
