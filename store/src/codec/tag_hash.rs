//! The tag hash stored in consume-queue entries (RocketMQ's
//! `MessageExtBrokerInner.tagsString2tagsCode`, which uses Java's `String.hashCode`).

/// Java's `String.hashCode` of `tags`, widened to `i64`: `h = 31 * h + c` over UTF-16 code
/// units with 32-bit wrap-around, starting at 0. The empty string hashes to 0, as RocketMQ
/// stores for messages without tags.
///
/// # Examples
/// ```
/// use abslock_store::codec::tag_hash;
/// assert_eq!(tag_hash(""), 0);
/// assert_eq!(tag_hash("a"), 97);
/// assert_eq!(tag_hash("ab"), 97 * 31 + 98);
/// ```
pub fn tag_hash(tags: &str) -> i64 {
    let h = tags.encode_utf16().fold(0i32, |h, unit| h.wrapping_mul(31).wrapping_add(i32::from(unit)));
    i64::from(h)
}
