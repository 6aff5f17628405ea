//! The put path allocates nothing in steady state (no roll, known topic and queue): the
//! encode buffer is thread-local and reused, the critical section only copies. Counted
//! with a global allocator that counts the calling thread's allocations only.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use abslock_store::{Message, MessageStore, PutPath, SequencerConfig, StoreConfig};

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards to `System`, only counting calls in a thread-local `Cell` (no allocation).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCS.with(Cell::get)
}

#[test]
fn steady_state_put_does_not_allocate() {
    // Under `Sequencer` only the put's own thread is counted; the writer's buffers are sized
    // at start (`max_batch`) and reused.
    for put_path in [PutPath::Lock, PutPath::Sequencer(SequencerConfig::default()), PutPath::Combining] {
        steady_state(put_path);
    }
}

fn steady_state(put_path: PutPath) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = StoreConfig { segment_size: 4 << 20, put_path, ..StoreConfig::default() };
    let store: MessageStore<parking_lot::RawMutex> = MessageStore::open(dir.path(), cfg).unwrap();
    let msg = Message::new("orders", vec![1u8; 512]).queue_id(3).tags("new");
    // The first put grows the thread-local buffer and creates the queue's slot: counted.
    let first = allocations();
    store.put_message(&msg).unwrap();
    assert!(allocations() > first, "the counter sees allocations");
    let before = allocations();
    for _ in 0..1000 {
        store.put_message(&msg).unwrap();
    }
    assert_eq!(allocations() - before, 0, "the put path allocated under {put_path:?}");
    store.close().unwrap();
}
