//! RocketMQ's CommitLog record codec: validation, encoding, the post-encode patches of the
//! put path, the whole-record CRC, and a zero-copy decoder that never panics.
//!
//! Byte-compatible with the records RocketMQ's broker writes (`MessageExtEncoder`,
//! `CommitLog.DefaultAppendMessageCallback`) and reads (`MessageDecoder`,
//! `CommitLog.checkMessageAndReturnSize`). The layout is specified in `docs/format.md`;
//! [`layout`]'s constants are its code form.
//!
//! The put path in order:
//! 1. outside any lock: [`encode_parts_into`] (validates first, computes the body CRC)
//!    into a reused buffer: the record's head and tail, without the body;
//! 2. after the queue offset is assigned: [`set_queue_offset`], then
//!    [`seal_record_crc_parts`] (the record CRC skips the body, which the body CRC covers);
//! 3. inside the put-message lock: [`set_store_timestamp`], [`set_physical_offset`], copy
//!    head, body (straight from the message), tail; at a segment's end, [`write_blank`]
//!    when `len + BLANK_MIN > space left`.
//!
//! [`encode_into`] and [`seal_record_crc`] do the same for a whole record in one buffer.
//!
//! Reading back: [`decode`] (or [`decode_with`] for recovery with
//! [`RecordCrcCheck::Require`]) gives a [`Decoded`]: a [`StoredMessage`] view or a blank.
//!
//! # Examples
//! ```
//! use abslock_store::{Message, codec::{self, Decoded, EncodeOptions}};
//! let mut buf = Vec::new();
//! let msg = Message::new("orders", b"hello".to_vec()).queue_id(1).tags("new");
//! let layout = codec::encode_into(&msg, &EncodeOptions::default(), &mut buf)?;
//! codec::set_queue_offset(&mut buf, &layout, 0);
//! codec::seal_record_crc(&mut buf, &layout);
//! codec::set_store_timestamp(&mut buf, &layout, 1_700_000_000_000);
//! codec::set_physical_offset(&mut buf, &layout, 0);
//! match codec::decode(&buf, Some(0))? {
//!     Decoded::Message(m) => assert_eq!(m.to_message(), msg),
//!     Decoded::Blank { .. } => unreachable!(),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod blank;
mod cq_entry;
mod crc;
mod decode;
mod encode;
mod errors;
mod host;
pub mod layout;
mod options;
mod properties;
mod stored_message;
mod tag_hash;
mod validate;

pub use blank::write_blank;
pub use cq_entry::{
    CQ_ENTRY_SIZE, CQ_PHYSICAL_OFFSET_LEN, CQ_PHYSICAL_OFFSET_OFFSET, CQ_SIZE_LEN, CQ_SIZE_OFFSET,
    CQ_TAG_HASH_LEN, CQ_TAG_HASH_OFFSET, ConsumeQueueEntry,
};
pub use crc::{CRC_MASK, body_crc, seal_record_crc, seal_record_crc_parts};
pub use decode::{DecodeOptions, Decoded, RecordCrcCheck, decode, decode_with};
pub use encode::{
    encode_into, encode_parts_into, set_physical_offset, set_queue_offset, set_store_timestamp,
};
pub use errors::{DecodeError, PropertyPart, ValidationError};
pub use layout::{
    BLANK_MIN, DEFAULT_MAX_BODY_SIZE, MAGIC_BLANK, MAGIC_V1, MAGIC_V2, PROPERTIES_MAX_LEN, RECORD_MAX_LEN,
    RecordLayout, SYS_FLAG_BORN_HOST_V6, SYS_FLAG_STORE_HOST_V6, TOPIC_MAX_LEN, TOPIC_MAX_LEN_V1,
    V1_IPV4_OVERHEAD, Version,
};
pub use options::{DEFAULT_STORE_PORT, EncodeOptions};
pub use properties::{
    NAME_VALUE_SEPARATOR, PROPERTY_CRC32, PROPERTY_KEYS, PROPERTY_SEPARATOR, PROPERTY_TAGS, Properties,
    RECORD_CRC_DIGITS, RECORD_CRC_PROPERTY_LEN,
};
pub use stored_message::StoredMessage;
pub use tag_hash::tag_hash;
pub use validate::{is_valid_topic_byte, validate, validate_topic};
