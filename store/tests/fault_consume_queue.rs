//! Failed consume-queue file creation (an injected `ENOSPC` through the store's
//! file-operation seam) in the dispatcher: puts still land in the commitlog, reads of the
//! undispatched queue report the error rather than wrong data, nothing half made is
//! misread after a crash, and the queue catches up once the fault clears.

mod common;
#[path = "common/reliability.rs"]
mod reliability;

use abslock_store::fault::{FaultInjector, FaultPoint};
use abslock_store::{FlushMode, Message, MessageStore, ReadError, StoreConfig};
use reliability::body_for;

type Store = MessageStore<parking_lot::RawMutex>;

fn msg(id: u64) -> Message {
    Message::new("t", body_for(id)).queue_id(0)
}

#[test]
fn consume_queue_creation_failure_then_crash_and_catch_up() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::default();
    // 16 entries per consume-queue file: the 17th message needs a new file.
    let cfg =
        StoreConfig { flush: FlushMode::SYNC, fault_injector: faults.clone(), ..common::small(64 << 10) };
    let store = Store::open(dir.path(), cfg.clone()).unwrap();
    let mut puts: Vec<_> = (0..16).map(|id| store.put_message(&msg(id)).unwrap()).collect();
    assert_eq!(store.consume_queue_len("t", 0).unwrap(), 16);
    faults.fail_always(FaultPoint::ConsumeQueueCreate);
    puts.extend((16..40).map(|id| store.put_message(&msg(id)).unwrap()));
    // The queue cannot grow: the read reports the I/O error, never another message.
    match store.get_message("t", 0, 20) {
        Err(ReadError::Io(e)) => assert_eq!(e.io_error().kind(), std::io::ErrorKind::StorageFull),
        other => panic!("expected an I/O error, got {other:?}"),
    }
    // What was dispatched is still served, and so is the commitlog by physical offset.
    assert_eq!(store.get_message("t", 0, 15).unwrap().unwrap().body(), &body_for(15)[..]);
    assert_eq!(store.get_message_at(puts[30].physical_offset).unwrap().unwrap().body(), &body_for(30)[..]);
    drop(store); // crash while the fault is on

    faults.clear(FaultPoint::ConsumeQueueCreate);
    let store = Store::open(dir.path(), cfg).unwrap();
    assert_eq!(store.consume_queue_len("t", 0).unwrap(), 40);
    for (id, p) in puts.iter().enumerate() {
        let m = store.get_message("t", 0, id as u64).unwrap().expect("rebuilt");
        assert_eq!((m.body(), m.physical_offset()), (&body_for(id as u64)[..], p.physical_offset));
    }
    store.close().unwrap();
}
