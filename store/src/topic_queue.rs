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

/// The hash of one (topic, queue id) pair, computed once per put: its high bits pick the
/// stripe, and the whole value finds the pair's slot inside the stripe (ours).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct QueueHash(u64);

impl QueueHash {
    /// Hashes (topic, queue id): one pass over the topic, no allocation.
    #[inline]
    pub(crate) fn of(topic: &str, queue_id: u32) -> QueueHash {
        let mut h = WordHasher::default();
        h.write(topic.as_bytes());
        h.write_u32(queue_id);
        QueueHash(h.finish())
    }
}

/// One (topic, queue id) pair and its next queue offset.
#[derive(Debug)]
struct Slot {
    topic: Box<str>,
    queue_id: u32,
    next: u64,
}

/// Next queue offsets of the (topic, queue id) pairs hashed to one stripe, keyed by
/// [`QueueHash`] so a put hashes its topic once; pairs whose hashes collide share a bucket.
#[derive(Debug, Default)]
pub(crate) struct Stripe {
    next: FastMap<u64, Vec<Slot>>,
}

impl Stripe {
    /// The queue offset the next message to (topic, queue id) gets; `hash` is
    /// `QueueHash::of(topic, queue_id)`.
    pub(crate) fn next(&self, hash: QueueHash, topic: &str, queue_id: u32) -> u64 {
        self.next
            .get(&hash.0)
            .and_then(|b| b.iter().find(|s| s.queue_id == queue_id && &*s.topic == topic))
            .map_or(0, |s| s.next)
    }

    /// The next-queue-offset slot of (topic, queue id), created at 0 on first use (the
    /// only allocation). One lookup serves the read before and the write after the put.
    pub(crate) fn slot(&mut self, hash: QueueHash, topic: &str, queue_id: u32) -> &mut u64 {
        let bucket = self.next.entry(hash.0).or_default();
        let at = match bucket.iter().position(|s| s.queue_id == queue_id && &*s.topic == topic) {
            Some(at) => at,
            None => {
                bucket.push(Slot { topic: topic.into(), queue_id, next: 0 });
                bucket.len() - 1
            }
        };
        &mut bucket[at].next
    }

    /// Records that queue offsets below `next` are taken. Allocates only for a new pair.
    pub(crate) fn set(&mut self, hash: QueueHash, topic: &str, queue_id: u32, next: u64) {
        *self.slot(hash, topic, queue_id) = next;
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

    /// Stripe index of the pair with this hash.
    #[inline]
    pub(crate) fn stripe_of(&self, hash: QueueHash) -> usize {
        // The high bits are the best mixed.
        ((hash.0 >> 32) % self.stripes.len() as u64) as usize
    }

    pub(crate) fn lock(&self, stripe: usize) -> MutexGuard<'_, Stripe> {
        self.stripes[stripe].lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot<'a>(s: &'a mut Stripe, topic: &str, queue_id: u32) -> &'a mut u64 {
        s.slot(QueueHash::of(topic, queue_id), topic, queue_id)
    }

    fn next(s: &Stripe, topic: &str, queue_id: u32) -> u64 {
        s.next(QueueHash::of(topic, queue_id), topic, queue_id)
    }

    #[test]
    fn slots_count_per_topic_and_queue() {
        let mut s = Stripe::default();
        *slot(&mut s, "a", 0) += 1;
        *slot(&mut s, "a", 0) += 1;
        *slot(&mut s, "a", 1) += 5;
        *slot(&mut s, "b", 0) += 7;
        assert_eq!((next(&s, "a", 0), next(&s, "a", 1), next(&s, "b", 0), next(&s, "c", 0)), (2, 5, 7, 0));
        s.set(QueueHash::of("c", 2), "c", 2, 9);
        assert_eq!(next(&s, "c", 2), 9);
    }

    #[test]
    fn pairs_with_colliding_hashes_keep_their_own_slots() {
        let mut s = Stripe::default();
        let h = QueueHash(42); // as if every pair hashed alike
        *s.slot(h, "a", 0) += 1;
        *s.slot(h, "b", 0) += 2;
        *s.slot(h, "a", 1) += 3;
        *s.slot(h, "a", 0) += 10;
        assert_eq!(
            (s.next(h, "a", 0), s.next(h, "b", 0), s.next(h, "a", 1), s.next(h, "b", 1)),
            (11, 2, 3, 0)
        );
    }

    #[test]
    fn stripes_spread_queues() {
        let t = TopicQueueTable::new(32);
        let mut used = std::collections::HashSet::new();
        for q in 0..64 {
            let i = t.stripe_of(QueueHash::of("orders", q));
            assert!(i < 32);
            used.insert(i);
        }
        assert!(used.len() >= 16, "64 queues of one topic hit only {} of 32 stripes", used.len());
        assert_eq!(t.stripe_of(QueueHash::of("orders", 3)), t.stripe_of(QueueHash::of("orders", 3)));
    }
}
