//! `Layout::PerTopic`: one log and one put-message lock per topic, same API.

use abslock_store::{FlushMode, Layout, Message, MessageStore, OpenError, PutError, ReadError, StoreConfig};

type Store = MessageStore<parking_lot::RawMutex>;

fn config() -> StoreConfig {
    StoreConfig {
        segment_size: 4096,
        consume_queue_entries: 16,
        layout: Layout::PerTopic,
        ..StoreConfig::default()
    }
}

#[test]
fn topics_have_their_own_logs_and_survive_crash_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let mut expected = Vec::new();
    {
        let store = Store::open(dir.path(), config()).unwrap();
        for i in 0..60u32 {
            let topic = format!("t{}", i % 3);
            let body = vec![i as u8; 100 + i as usize];
            let p = store.put_message(&Message::new(topic.clone(), body.clone())).unwrap();
            assert_eq!(p.queue_offset, u64::from(i / 3));
            expected.push((topic, p, body));
        }
        // Each topic's physical offsets start at 0.
        for (_, p, _) in &expected[..3] {
            assert_eq!(p.physical_offset, 0);
        }
        let err = store.get_message_at(0).unwrap_err();
        assert!(matches!(err, ReadError::TopicRequired), "{err}");
        let mut locks = 0;
        store.for_each_put_lock(|_| locks += 1);
        assert_eq!(locks, 3);
        // Dropped without close: crash.
    }
    for round in 0..2 {
        let store = Store::open(dir.path(), config()).unwrap();
        for (topic, p, body) in &expected {
            let m = store.get_message(topic, 0, p.queue_offset).unwrap().expect("recovered");
            assert_eq!(m.body(), &body[..]);
            let m = store.get_message_at_in(topic, p.physical_offset).unwrap().unwrap();
            assert_eq!(m.body(), &body[..]);
        }
        let p = store.put_message(&Message::new("t0", b"more".to_vec())).unwrap();
        assert_eq!(p.queue_offset, 20 + round);
        store.close().unwrap();
    }
}

#[test]
fn per_topic_batches_name_one_topic() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreConfig { flush: FlushMode::SYNC, ..config() }).unwrap();
    let err = store
        .put_messages(&[Message::new("a", b"1".to_vec()), Message::new("b", b"2".to_vec())])
        .unwrap_err();
    assert!(matches!(err, PutError::MixedTopics { .. }), "{err}");
    let ok =
        store.put_messages(&[Message::new("a", b"1".to_vec()), Message::new("a", b"2".to_vec())]).unwrap();
    assert_eq!(ok.len(), 2);
    // An invalid topic creates no directory.
    assert!(store.put_message(&Message::new("bad/topic", b"x".to_vec())).is_err());
    assert!(!dir.path().join("topics").join("bad").exists());
    store.close().unwrap();
}

#[test]
fn layouts_do_not_open_each_other() {
    let dir = tempfile::tempdir().unwrap();
    Store::open(dir.path(), config()).unwrap().close().unwrap();
    let single = StoreConfig { layout: Layout::Single, ..config() };
    assert!(matches!(Store::open(dir.path(), single.clone()), Err(OpenError::InvalidConfig(_))));
    let dir = tempfile::tempdir().unwrap();
    Store::open(dir.path(), single).unwrap().close().unwrap();
    assert!(matches!(Store::open(dir.path(), config()), Err(OpenError::InvalidConfig(_))));
}
