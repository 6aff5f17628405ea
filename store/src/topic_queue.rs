//! The topic-queue table: next queue offset per (topic, queue id), behind a striped lock
//! (RocketMQ `TopicQueueLock` + `topicQueueTable`). A put holds its stripe across the
//! put-message lock, so queue offsets follow log order within each queue.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// FNV-1a, 64-bit (Fowler, Noll, Vo): topic names are short and chosen by the operator,
/// so SipHash's flood resistance buys nothing on the put path and costs as much as a
/// CRC of the body. Ours.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A `HashMap` keyed by FNV-1a.
pub(crate) type FnvMap<K, V> = HashMap<K, V, BuildHasherDefault<Fnv>>;

/// Next queue offsets of the (topic, queue id) pairs hashed to one stripe.
#[derive(Debug, Default)]
pub(crate) struct Stripe {
    next: FnvMap<String, FnvMap<u32, u64>>,
    /// Never used: lets `slot` avoid a panic path.
    spare: u64,
}

impl Stripe {
    /// The queue offset the next message to (topic, queue id) gets.
    pub(crate) fn next(&self, topic: &str, queue_id: u32) -> u64 {
        self.next.get(topic).and_then(|q| q.get(&queue_id)).copied().unwrap_or(0)
    }

    /// The next-queue-offset slot of (topic, queue id), created at 0 on first use (the
    /// only allocation). One lookup serves the read before and the write after the put.
    pub(crate) fn slot(&mut self, topic: &str, queue_id: u32) -> &mut u64 {
        if !self.next.contains_key(topic) {
            self.next.insert(topic.to_owned(), FnvMap::default());
        }
        let queues = self.next.get_mut(topic);
        // `queues` is `Some` (inserted above); the fallback only satisfies the types.
        let queues = match queues {
            Some(q) => q,
            None => return &mut self.spare,
        };
        queues.entry(queue_id).or_insert(0)
    }

    /// Records that queue offsets below `next` are taken. Allocates only for a new pair.
    pub(crate) fn set(&mut self, topic: &str, queue_id: u32, next: u64) {
        match self.next.get_mut(topic) {
            Some(q) => {
                q.insert(queue_id, next);
            }
            None => {
                self.next.entry(topic.to_owned()).or_default().insert(queue_id, next);
            }
        }
    }
}

/// The striped table.
#[derive(Debug)]
pub(crate) struct TopicQueueTable {
    stripes: Box<[Mutex<Stripe>]>,
}

impl TopicQueueTable {
    pub(crate) fn new(stripes: usize) -> Self {
        Self { stripes: (0..stripes.max(1)).map(|_| Mutex::new(Stripe::default())).collect() }
    }

    /// Stripe index of (topic, queue id): FNV-1a, no allocation.
    pub(crate) fn stripe_of(&self, topic: &str, queue_id: u32) -> usize {
        let mut h = Fnv::default();
        h.write(topic.as_bytes());
        h.write(&queue_id.to_le_bytes());
        (h.finish() % self.stripes.len() as u64) as usize
    }

    pub(crate) fn lock(&self, stripe: usize) -> MutexGuard<'_, Stripe> {
        self.stripes[stripe].lock().unwrap_or_else(PoisonError::into_inner)
    }
}
