//! The topic-queue table: next queue offset per (topic, queue id), behind a striped lock
//! (RocketMQ `TopicQueueLock` + `topicQueueTable`). A put holds its stripe across the
//! put-message lock, so queue offsets follow log order within each queue.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crossbeam_utils::CachePadded;

/// A word-at-a-time multiplicative hash (the rustc `FxHasher` scheme): topic names are
/// short and chosen by the operator, so SipHash's flood resistance buys nothing on the
/// put path and costs as much as the critical section. Ours.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct WordHasher(u64);

/// The multiplier of rustc's `FxHasher` (64-bit).
const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl WordHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for WordHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 56));
        }
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A `HashMap` keyed by [`WordHasher`].
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<WordHasher>>;

/// Next queue offsets of the (topic, queue id) pairs hashed to one stripe.
#[derive(Debug, Default)]
pub(crate) struct Stripe {
    next: FastMap<String, FastMap<u32, u64>>,
}

impl Stripe {
    /// The queue offset the next message to (topic, queue id) gets.
    pub(crate) fn next(&self, topic: &str, queue_id: u32) -> u64 {
        self.next.get(topic).and_then(|q| q.get(&queue_id)).copied().unwrap_or(0)
    }

    /// The next-queue-offset slot of (topic, queue id), created at 0 on first use (the
    /// only allocation). One lookup serves the read before and the write after the put.
    pub(crate) fn slot(&mut self, topic: &str, queue_id: u32) -> &mut u64 {
        let next: *mut FastMap<String, FastMap<u32, u64>> = &mut self.next;
        // SAFETY: `next` comes from `&mut self.next`, so it is valid and unaliased; the
        // borrow taken through it either is returned (and nothing else touches the map) or
        // ends on the `None` path before the map is used again. The raw pointer only works
        // around the borrow checker's conditional-return limitation (NLL problem case #3).
        if let Some(queues) = unsafe { (*next).get_mut(topic) } {
            return queues.entry(queue_id).or_insert(0);
        }
        self.next.entry(topic.to_owned()).or_default().entry(queue_id).or_insert(0)
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
    /// One cache line (pair) per stripe: puts to different stripes write different lines.
    stripes: Box<[CachePadded<Mutex<Stripe>>]>,
}

impl TopicQueueTable {
    pub(crate) fn new(stripes: usize) -> Self {
        Self {
            stripes: (0..stripes.max(1)).map(|_| CachePadded::new(Mutex::new(Stripe::default()))).collect(),
        }
    }

    /// Stripe index of (topic, queue id): no allocation.
    pub(crate) fn stripe_of(&self, topic: &str, queue_id: u32) -> usize {
        let mut h = WordHasher::default();
        h.write(topic.as_bytes());
        h.write_u32(queue_id);
        // The high bits are the best mixed.
        ((h.finish() >> 32) % self.stripes.len() as u64) as usize
    }

    pub(crate) fn lock(&self, stripe: usize) -> MutexGuard<'_, Stripe> {
        self.stripes[stripe].lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_count_per_topic_and_queue() {
        let mut s = Stripe::default();
        *s.slot("a", 0) += 1;
        *s.slot("a", 0) += 1;
        *s.slot("a", 1) += 5;
        *s.slot("b", 0) += 7;
        assert_eq!((s.next("a", 0), s.next("a", 1), s.next("b", 0), s.next("c", 0)), (2, 5, 7, 0));
        s.set("c", 2, 9);
        assert_eq!(s.next("c", 2), 9);
    }

    #[test]
    fn stripes_spread_queues() {
        let t = TopicQueueTable::new(32);
        let mut used = std::collections::HashSet::new();
        for q in 0..64 {
            let i = t.stripe_of("orders", q);
            assert!(i < 32);
            used.insert(i);
        }
        assert!(used.len() >= 16, "64 queues of one topic hit only {} of 32 stripes", used.len());
        assert_eq!(t.stripe_of("orders", 3), t.stripe_of("orders", 3));
    }
}
