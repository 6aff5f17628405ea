//! The message a producer sends: RocketMQ's `Message` plus the producer-side fields of
//! `MessageExtBrokerInner` (born host and timestamp, sys flag, reconsume times).

use std::net::{Ipv4Addr, SocketAddr};

use crate::codec::{PROPERTY_KEYS, PROPERTY_TAGS, Properties};

/// An owned message to append to the store (RocketMQ's `Message` / `MessageExtBrokerInner`).
///
/// Built with [`Message::new`] and chained builder methods. Builder methods take the
/// field's name (`queue_id(3)`); since Rust has no overloading, the getters of those fields
/// carry a `get_` prefix (`get_queue_id()`), as RocketMQ's Java getters do. Nothing is
/// checked here: limits are checked by [`codec::validate`](crate::codec::validate) when
/// the message is encoded, before anything is written.
///
/// Tags and keys are properties (`TAGS`, `KEYS`), as in RocketMQ; properties keep the
/// order they were first set in.
///
/// # Examples
/// ```
/// use abslock_store::Message;
/// let m = Message::new("orders", b"hello".to_vec()).queue_id(2).tags("new").property("region", "eu");
/// assert_eq!(m.topic(), "orders");
/// assert_eq!(m.get_queue_id(), 2);
/// assert_eq!(m.get_tags(), Some("new"));
/// assert_eq!(m.get_property("region"), Some("eu"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    topic: String,
    body: Vec<u8>,
    queue_id: u32,
    flag: i32,
    properties: Vec<(String, String)>,
    born_host: SocketAddr,
    born_timestamp: i64,
    sys_flag: i32,
    reconsume_times: i32,
    prepared_transaction_offset: i64,
}

/// The born host when none is given: `127.0.0.1:0`.
const DEFAULT_BORN_HOST: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

impl Default for Message {
    /// An empty message: empty topic (which [`codec::validate`](crate::codec::validate)
    /// rejects), empty body, queue 0, born host `127.0.0.1:0`, born timestamp 0.
    fn default() -> Self {
        Message {
            topic: String::new(),
            body: Vec::new(),
            queue_id: 0,
            flag: 0,
            properties: Vec::new(),
            born_host: DEFAULT_BORN_HOST,
            born_timestamp: 0,
            sys_flag: 0,
            reconsume_times: 0,
            prepared_transaction_offset: 0,
        }
    }
}

impl Message {
    /// A message for `topic` carrying `body`, queue 0, no properties, born host
    /// `127.0.0.1:0`, born timestamp now (ms since the Unix epoch; 0 if the clock is before it).
    pub fn new(topic: impl Into<String>, body: impl Into<Vec<u8>>) -> Message {
        let born_timestamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        Message { topic: topic.into(), body: body.into(), born_timestamp, ..Message::default() }
    }

    /// Sets the queue id (which consume queue of the topic gets the message).
    #[must_use]
    pub fn queue_id(mut self, queue_id: u32) -> Message {
        self.queue_id = queue_id;
        self
    }

    /// Sets the tags (the `TAGS` property; its Java `hashCode` goes in the consume queue,
    /// see [`codec::tag_hash`](crate::codec::tag_hash)).
    #[must_use]
    pub fn tags(self, tags: impl Into<String>) -> Message {
        self.property(PROPERTY_TAGS, tags)
    }

    /// Sets the keys (the `KEYS` property; RocketMQ separates several keys with a space).
    #[must_use]
    pub fn keys(self, keys: impl Into<String>) -> Message {
        self.property(PROPERTY_KEYS, keys)
    }

    /// Sets property `name` to `value`, replacing an earlier value of the same name in place.
    /// Names must be non-empty, and neither may contain `\x01` or `\x02` (checked at encode).
    #[must_use]
    pub fn property(mut self, name: impl Into<String>, value: impl Into<String>) -> Message {
        let (name, value) = (name.into(), value.into());
        match self.properties.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => self.properties.push((name, value)),
        }
        self
    }

    /// Sets the flag (opaque to the store; RocketMQ's `Message.flag`).
    #[must_use]
    pub fn flag(mut self, flag: i32) -> Message {
        self.flag = flag;
        self
    }

    /// Sets the born host (the producer's address).
    #[must_use]
    pub fn born_host(mut self, born_host: SocketAddr) -> Message {
        self.born_host = born_host;
        self
    }

    /// Sets the born timestamp (ms since the Unix epoch).
    #[must_use]
    pub fn born_timestamp(mut self, born_timestamp_ms: i64) -> Message {
        self.born_timestamp = born_timestamp_ms;
        self
    }

    /// Sets the sys flag (RocketMQ `MessageSysFlag` bits: compression, transaction type...).
    /// Bits 4 and 5 (host families) are ignored: the encoder derives them from the hosts.
    #[must_use]
    pub fn sys_flag(mut self, sys_flag: i32) -> Message {
        self.sys_flag = sys_flag;
        self
    }

    /// Sets how many times the message has been redelivered (RocketMQ's `reconsumeTimes`).
    #[must_use]
    pub fn reconsume_times(mut self, reconsume_times: i32) -> Message {
        self.reconsume_times = reconsume_times;
        self
    }

    /// Sets the prepared transaction offset (RocketMQ's `preparedTransactionOffset`, a
    /// physical offset in bytes).
    #[must_use]
    pub fn prepared_transaction_offset(mut self, offset: i64) -> Message {
        self.prepared_transaction_offset = offset;
        self
    }

    /// The topic.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The body.
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// The `(name, value)` properties in the order they were first set, tags and keys included.
    pub fn properties(&self) -> impl ExactSizeIterator<Item = (&str, &str)> + Clone + '_ {
        self.properties.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    /// The queue id.
    pub fn get_queue_id(&self) -> u32 {
        self.queue_id
    }

    /// The tags, if set.
    pub fn get_tags(&self) -> Option<&str> {
        self.get_property(PROPERTY_TAGS)
    }

    /// The keys, if set.
    pub fn get_keys(&self) -> Option<&str> {
        self.get_property(PROPERTY_KEYS)
    }

    /// The value of property `name`, if set.
    pub fn get_property(&self, name: &str) -> Option<&str> {
        self.properties.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The flag.
    pub fn get_flag(&self) -> i32 {
        self.flag
    }

    /// The born host.
    pub fn get_born_host(&self) -> SocketAddr {
        self.born_host
    }

    /// The born timestamp (ms since the Unix epoch).
    pub fn get_born_timestamp(&self) -> i64 {
        self.born_timestamp
    }

    /// The sys flag as set (host-family bits are decided at encode time).
    pub fn get_sys_flag(&self) -> i32 {
        self.sys_flag
    }

    /// The reconsume times.
    pub fn get_reconsume_times(&self) -> i32 {
        self.reconsume_times
    }

    /// The prepared transaction offset.
    pub fn get_prepared_transaction_offset(&self) -> i64 {
        self.prepared_transaction_offset
    }

    /// Builds a message from decoded parts (used by `StoredMessage::to_message`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_parts(
        topic: &str,
        body: &[u8],
        queue_id: u32,
        flag: i32,
        properties: Properties<'_>,
        born_host: SocketAddr,
        born_timestamp: i64,
        sys_flag: i32,
        reconsume_times: i32,
        prepared_transaction_offset: i64,
    ) -> Message {
        Message {
            topic: topic.to_owned(),
            body: body.to_vec(),
            queue_id,
            flag,
            properties: properties.map(|(n, v)| (n.to_owned(), v.to_owned())).collect(),
            born_host,
            born_timestamp,
            sys_flag,
            reconsume_times,
            prepared_transaction_offset,
        }
    }
}
