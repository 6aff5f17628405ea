//! `MessageStore::transfer_to`: a queue's records go to a socket or pipe byte for byte as
//! stored, in queue order, within the message and byte limits, never past the readable end;
//! the copy fallback (forced, or after the kernel refuses `sendfile` for an `O_APPEND`
//! file) sends the same bytes.

use std::io::Read;
use std::os::unix::net::UnixStream;
use std::thread::JoinHandle;

use abslock_store::codec::{self, Decoded};
use abslock_store::{
    FlushMode, Layout, Message, MessageStore, PutResult, StoreConfig, TransferError, TransferLimit,
    TransferMethod,
};

type Store = MessageStore<parking_lot::RawMutex>;

fn config() -> StoreConfig {
    StoreConfig { segment_size: 8192, consume_queue_entries: 16, ..StoreConfig::default() }
}

/// Drains the reading end on a thread until the writer closes.
fn drain(mut rx: UnixStream) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut out = Vec::new();
        rx.read_to_end(&mut out).unwrap();
        out
    })
}

/// Puts `n` messages round-robin to queues 0..3 of `t` (so a queue's records are not
/// contiguous in the log) with varied sizes; returns the puts of queue 1 with their bodies.
fn fill(store: &Store, n: u32) -> Vec<(PutResult, Vec<u8>)> {
    let mut q1 = Vec::new();
    for i in 0..n {
        let body = vec![i as u8; 50 + (i as usize * 37) % 700];
        let p = store.put_message(&Message::new("t", body.clone()).queue_id(i % 3).tags("x")).unwrap();
        if i % 3 == 1 {
            q1.push((p, body));
        }
    }
    q1
}

/// The stored bytes of queue 1's records `[from, to)`, concatenated.
fn expected(store: &Store, from: u64, to: u64) -> Vec<u8> {
    (from..to).flat_map(|qo| store.get_message("t", 1, qo).unwrap().unwrap().as_bytes().to_vec()).collect()
}

#[test]
fn sends_the_stored_records_byte_for_byte_across_segments() {
    for method in [TransferMethod::Sendfile, TransferMethod::Copy] {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), config()).unwrap();
        let q1 = fill(&store, 90);
        assert!(store.stats().rolls >= 3, "the records span several segments");
        let (rx, tx) = UnixStream::pair().unwrap();
        let reader = drain(rx);
        let limit = TransferLimit::messages(20).with_method(method);
        let r = store.transfer_to("t", 1, 3, limit, &tx).unwrap();
        drop(tx);
        let got = reader.join().unwrap();
        assert_eq!((r.messages, r.next_offset), (20, 23), "{method:?}");
        assert_eq!(r.bytes, got.len() as u64);
        assert_eq!(got, expected(&store, 3, 23), "{method:?}");
        let copied = if method == TransferMethod::Copy { r.bytes } else { 0 };
        assert_eq!(r.copied_bytes, copied, "{method:?}");
        // The stream splits into records by their total size and decodes back.
        let mut at = 0;
        for (qo, (p, body)) in q1.iter().enumerate().skip(3).take(20) {
            let Decoded::Message(m) = codec::decode(&got[at..], Some(p.physical_offset)).unwrap() else {
                panic!("a record at {at}")
            };
            assert_eq!((m.queue_offset(), m.body()), (qo as u64, &body[..]));
            at += m.total_size() as usize;
        }
    }
}

#[test]
fn the_byte_limit_sends_whole_records_and_at_least_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), config()).unwrap();
    let q1 = fill(&store, 30);
    let sizes: Vec<u64> = q1.iter().map(|(p, _)| u64::from(p.size)).collect();
    for max_bytes in [1, sizes[0], sizes[0] + sizes[1] - 1, sizes[0] + sizes[1], sizes[..5].iter().sum()] {
        let (rx, tx) = UnixStream::pair().unwrap();
        let reader = drain(rx);
        let r = store.transfer_to("t", 1, 0, TransferLimit::bytes(max_bytes), &tx).unwrap();
        drop(tx);
        let got = reader.join().unwrap();
        let whole = sizes.iter().scan(0, |acc, s| {
            *acc += s;
            Some(*acc)
        });
        let fit = whole.take_while(|&b| b <= max_bytes).count().max(1) as u64;
        assert_eq!(r.messages, fit, "max_bytes {max_bytes}");
        assert_eq!(got, expected(&store, 0, fit));
    }
}

#[test]
fn an_unknown_queue_or_the_queue_end_sends_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), config()).unwrap();
    let q1 = fill(&store, 9);
    let (rx, tx) = UnixStream::pair().unwrap();
    let reader = drain(rx);
    let none = store.transfer_to("nope", 0, 0, TransferLimit::messages(5), &tx).unwrap();
    assert_eq!((none.messages, none.bytes, none.next_offset), (0, 0, 0));
    let end = q1.len() as u64;
    let at_end = store.transfer_to("t", 1, end, TransferLimit::messages(5), &tx).unwrap();
    assert_eq!((at_end.messages, at_end.next_offset), (0, end));
    let zero = store.transfer_to("t", 1, 0, TransferLimit::messages(0), &tx).unwrap();
    assert_eq!(zero.messages, 0);
    drop(tx);
    assert!(reader.join().unwrap().is_empty());
}

#[test]
fn sync_flush_never_sends_past_the_flushed_position() {
    let dir = tempfile::tempdir().unwrap();
    let faults = abslock_store::fault::FaultInjector::default();
    let config = StoreConfig { flush: FlushMode::SYNC, fault_injector: faults.clone(), ..config() };
    let store = Store::open(dir.path(), config).unwrap();
    for i in 0..4u8 {
        store.put_message(&Message::new("t", vec![i; 100]).queue_id(1)).unwrap();
    }
    // A failed flush: the record is written but not durable, so it is not readable.
    faults.fail_always(abslock_store::fault::FaultPoint::Sync);
    assert!(store.put_message(&Message::new("t", vec![9; 100]).queue_id(1)).is_err());
    let (rx, tx) = UnixStream::pair().unwrap();
    let reader = drain(rx);
    let r = store.transfer_to("t", 1, 0, TransferLimit::messages(100), &tx).unwrap();
    drop(tx);
    assert_eq!(r.messages, 4);
    assert_eq!(reader.join().unwrap(), expected(&store, 0, 4));
    faults.clear(abslock_store::fault::FaultPoint::Sync);
}

#[test]
fn a_pipe_and_the_copy_fallback_for_an_append_only_file_get_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), config()).unwrap();
    fill(&store, 60);
    let want = expected(&store, 0, 20);
    // A pipe.
    let (mut prx, ptx) = std::io::pipe().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        prx.read_to_end(&mut out).unwrap();
        out
    });
    let r = store.transfer_to("t", 1, 0, TransferLimit::messages(20), &ptx).unwrap();
    drop(ptx);
    assert_eq!((r.messages, r.copied_bytes), (20, 0));
    assert_eq!(reader.join().unwrap(), want);
    // sendfile refuses an O_APPEND output with EINVAL: the transfer falls back to copying.
    let path = dir.path().join("out");
    let file = std::fs::OpenOptions::new().create(true).append(true).open(&path).unwrap();
    let r = store.transfer_to("t", 1, 0, TransferLimit::messages(20), &file).unwrap();
    assert_eq!(r.copied_bytes, r.bytes, "all bytes went through the copy fallback");
    assert_eq!(std::fs::read(&path).unwrap(), want);
}

#[test]
fn a_closed_peer_is_a_write_error_naming_what_was_sent() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), config()).unwrap();
    fill(&store, 30);
    let (rx, tx) = UnixStream::pair().unwrap();
    drop(rx);
    // SIGPIPE is ignored by the Rust runtime, so the write fails with EPIPE.
    match store.transfer_to("t", 1, 0, TransferLimit::messages(5), &tx) {
        Err(TransferError::Write { report, source, .. }) => {
            assert_eq!(report.messages, 0);
            assert_eq!(source.kind(), std::io::ErrorKind::BrokenPipe, "{source}");
        }
        other => panic!("expected a write error, got {other:?}"),
    }
}

#[test]
fn per_topic_logs_transfer_from_their_own_log() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreConfig { layout: Layout::PerTopic, ..config() }).unwrap();
    for i in 0..10u8 {
        store.put_message(&Message::new("a", vec![i; 40]).queue_id(1)).unwrap();
        store.put_message(&Message::new("t", vec![i; 60]).queue_id(1)).unwrap();
    }
    let (rx, tx) = UnixStream::pair().unwrap();
    let reader = drain(rx);
    let r = store.transfer_to("t", 1, 2, TransferLimit::messages(5), &tx).unwrap();
    drop(tx);
    assert_eq!(r.messages, 5);
    assert_eq!(reader.join().unwrap(), expected(&store, 2, 7));
}
