//! Every limit at the limit (accepted) and one past it (rejected with a typed error and
//! nothing changed: write position, files, consume queues).

mod common;

use std::path::Path;

use abslock_store::codec::{self, EncodeOptions};
use abslock_store::{Message, MessageStore, PutError, StoreConfig, ValidationError};

type Store = MessageStore<parking_lot::RawMutex>;

const MAX_BODY: usize = 2000;

fn config() -> StoreConfig {
    // No background preallocation: it would change the file listing on its own.
    StoreConfig { max_message_size: MAX_BODY, preallocate: false, ..common::small(64 << 10) }
}

struct Fixture {
    _dir: tempfile::TempDir,
    store: Store,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), config()).unwrap();
        store.put_message(&Message::new("base", b"x".to_vec())).unwrap();
        Self { _dir: dir, store }
    }

    fn dir(&self) -> &Path {
        self.store.dir()
    }

    /// Asserts `msg` is rejected with nothing changed, and returns the error.
    fn rejected(&self, msgs: &[Message]) -> PutError {
        let pos = self.store.write_position();
        let cq = self.store.consume_queue_len("base", 0).unwrap();
        let files = common::snapshot(self.dir());
        let queue_lens = |s: &Store| -> Vec<u64> {
            msgs.iter()
                .filter(|m| !m.topic().is_empty() && codec::validate_topic(m.topic()).is_ok())
                .map(|m| s.consume_queue_len(m.topic(), m.get_queue_id()).unwrap())
                .collect()
        };
        let lens = queue_lens(&self.store);
        let err = if msgs.len() == 1 {
            self.store.put_message(&msgs[0]).unwrap_err()
        } else {
            self.store.put_messages(msgs).unwrap_err()
        };
        assert_eq!(self.store.write_position(), pos, "write position moved: {err}");
        assert_eq!(self.store.consume_queue_len("base", 0).unwrap(), cq);
        assert_eq!(queue_lens(&self.store), lens);
        assert!(common::snapshot(self.dir()) == files, "files changed after a rejected put: {err}");
        err
    }

    fn accepted(&self, msg: &Message) {
        let p = self.store.put_message(msg).unwrap();
        let got = self.store.get_message(msg.topic(), msg.get_queue_id(), p.queue_offset).unwrap().unwrap();
        assert_eq!(got.body(), msg.body());
        assert_eq!(got.topic(), msg.topic());
    }
}

#[test]
fn body_size() {
    let f = Fixture::new();
    f.accepted(&Message::new("t", vec![1; MAX_BODY]));
    let err = f.rejected(&[Message::new("t", vec![1; MAX_BODY + 1])]);
    assert!(matches!(err, PutError::Invalid(ValidationError::BodyTooLarge { .. })), "{err}");
}

#[test]
fn topic_length() {
    let f = Fixture::new();
    f.accepted(&Message::new("a".repeat(127), b"v1".to_vec()));
    f.accepted(&Message::new("b".repeat(128), b"v2".to_vec()));
    f.accepted(&Message::new("c".repeat(255), b"v2 max".to_vec()));
    let err = f.rejected(&[Message::new("d".repeat(256), b"x".to_vec())]);
    assert!(matches!(err, PutError::Invalid(ValidationError::TopicTooLong { .. })), "{err}");
    let err = f.rejected(&[Message::new("", b"x".to_vec())]);
    assert!(matches!(err, PutError::Invalid(ValidationError::TopicEmpty)), "{err}");
    let err = f.rejected(&[Message::new("bad topic/", b"x".to_vec())]);
    assert!(matches!(err, PutError::Invalid(ValidationError::TopicInvalidChar { .. })), "{err}");
}

/// The longest property value accepted with the store's encode options.
fn longest_value() -> usize {
    let opts = EncodeOptions::default();
    let ok = |n: usize| {
        codec::validate(&Message::new("t", Vec::new()).property("p", "v".repeat(n)), &opts).is_ok()
    };
    let (mut lo, mut hi) = (0usize, 40_000usize);
    while lo + 1 < hi {
        let mid = (lo + hi) / 2;
        if ok(mid) { lo = mid } else { hi = mid }
    }
    lo
}

#[test]
fn properties_length() {
    let f = Fixture::new();
    let n = longest_value();
    assert!(n > 32_000, "properties limit is 32767 bytes, longest value {n}");
    f.accepted(&Message::new("t", b"x".to_vec()).property("p", "v".repeat(n)));
    let err = f.rejected(&[Message::new("t", b"x".to_vec()).property("p", "v".repeat(n + 1))]);
    assert!(matches!(err, PutError::Invalid(ValidationError::PropertiesTooLong { .. })), "{err}");
    let err = f.rejected(&[Message::new("t", b"x".to_vec()).property("a\u{1}b", "v")]);
    assert!(matches!(err, PutError::Invalid(_)), "{err}");
}

#[test]
fn record_larger_than_segment() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = StoreConfig { segment_size: 1024, max_message_size: 4096, ..config() };
    let store = Store::open(dir.path(), cfg).unwrap();
    store.put_message(&common::message_of_size("t", 0, 1016, 1)).unwrap();
    let pos = store.write_position();
    let err = store.put_message(&common::message_of_size("t", 0, 1017, 1)).unwrap_err();
    assert!(matches!(err, PutError::TooLargeForSegment { size: 1017, segment_size: 1024 }), "{err}");
    assert_eq!(store.write_position(), pos);
    store.close().unwrap();
}

#[test]
fn batch_with_one_bad_message_is_rejected_whole() {
    let f = Fixture::new();
    let good = Message::new("t", b"good".to_vec());
    let bad = Message::new("t", vec![0; MAX_BODY + 1]);
    let err = f.rejected(&[good.clone(), bad, good.clone()]);
    assert!(matches!(err, PutError::Invalid(ValidationError::BodyTooLarge { .. })), "{err}");
    let err = f.rejected(&[]);
    assert!(matches!(err, PutError::EmptyBatch), "{err}");
    let many: Vec<_> = (0..40).map(|_| Message::new("t", vec![0; MAX_BODY])).collect();
    let err = f.rejected(&many);
    assert!(matches!(err, PutError::BatchTooLarge { .. }), "{err}");
    let ok = f.store.put_messages(&[good.clone(), good]).unwrap();
    assert_eq!(ok.iter().map(|p| p.queue_offset).collect::<Vec<_>>(), [0, 1]);
    assert_eq!(f.store.consume_queue_len("t", 0).unwrap(), 2);
}
