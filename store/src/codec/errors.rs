//! The codec's error types: one enum for encoding (validation) and one for decoding.

use thiserror::Error;

/// Which part of a property broke a rule, for [`ValidationError::PropertySeparator`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PropertyPart {
    /// The property's name.
    Name,
    /// The property's value.
    Value,
}

impl std::fmt::Display for PropertyPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PropertyPart::Name => "name",
            PropertyPart::Value => "value",
        })
    }
}

/// A message that cannot be written as a CommitLog record, found before anything is written.
///
/// Returned by [`validate`](super::validate) and [`encode_into`](super::encode_into). Each
/// variant names the limit and the offending value. The limits follow RocketMQ's broker
/// (`TopicValidator`, `MessageExtEncoder`, `maxMessageSize`); see `docs/format.md`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ValidationError {
    /// The body is longer than `EncodeOptions::max_body_size`.
    #[error(
        "message body is {len} bytes, over the limit of {max} bytes (StoreConfig::max_message_size, EncodeOptions::max_body_size): send a smaller body or raise the limit"
    )]
    BodyTooLarge {
        /// Body length (bytes).
        len: usize,
        /// The configured limit (bytes).
        max: usize,
    },
    /// The topic is the empty string.
    #[error("topic is empty: give the message a topic of 1 to 255 bytes")]
    TopicEmpty,
    /// The topic is longer than 255 bytes.
    #[error("topic is {len} bytes, over the limit of {max} bytes: use a shorter topic")]
    TopicTooLong {
        /// Topic length (bytes).
        len: usize,
        /// The limit (bytes), [`TOPIC_MAX_LEN`](super::TOPIC_MAX_LEN).
        max: usize,
    },
    /// The topic holds a byte outside RocketMQ's `TopicValidator` set `[A-Za-z0-9%_|-]`.
    #[error(
        "topic {topic:?} has byte {byte:#04x} at index {index}; topics may hold only ASCII letters, digits, '%', '-', '_' and '|'"
    )]
    TopicInvalidChar {
        /// The rejected topic.
        topic: String,
        /// Index of the first bad byte.
        index: usize,
        /// The first bad byte.
        byte: u8,
    },
    /// The encoded properties (`name\x01value\x02` pairs, plus the 20-byte `__CRC32#` property
    /// when the record CRC is on) are longer than 32 767 bytes.
    #[error(
        "encoded properties are {len} bytes, over the limit of {max} bytes (this counts tags, keys, separators and the {crc} CRC property): drop or shorten properties"
    )]
    PropertiesTooLong {
        /// Encoded length (bytes).
        len: usize,
        /// The limit (bytes), [`PROPERTIES_MAX_LEN`](super::PROPERTIES_MAX_LEN).
        max: usize,
        /// Bytes of `len` taken by the `__CRC32#` property (0 or 20).
        crc: usize,
    },
    /// A property name is empty.
    #[error("a property has an empty name (value {value:?}): give every property a name")]
    PropertyNameEmpty {
        /// The value of the nameless property.
        value: String,
    },
    /// A property name or value contains `\x01` or `\x02`, the separators of the encoding.
    #[error(
        "property {name:?} has the separator byte {byte:#04x} in its {part}; names and values must not contain \\x01 or \\x02"
    )]
    PropertySeparator {
        /// The property's name.
        name: String,
        /// Whether the name or the value holds the separator.
        part: PropertyPart,
        /// The separator found (1 or 2).
        byte: u8,
    },
    /// A property uses a name the codec reserves (`__CRC32#`, written by the codec itself).
    #[error("property name {name:?} is reserved for the record CRC; pick another name")]
    ReservedPropertyName {
        /// The reserved name.
        name: String,
    },
    /// The whole record would be longer than `i32::MAX` bytes (possible only when
    /// `max_body_size` is set above it).
    #[error(
        "the record would be {len} bytes, over the format's limit of {max} bytes: lower StoreConfig::max_message_size (EncodeOptions::max_body_size)"
    )]
    RecordTooLarge {
        /// Record length (bytes).
        len: usize,
        /// The limit (bytes), [`RECORD_MAX_LEN`](super::RECORD_MAX_LEN).
        max: usize,
    },
}

/// A byte range that is not a valid CommitLog record, from [`decode`](super::decode).
///
/// Recovery treats any of these as the end of the valid log. Checks follow RocketMQ's
/// `CommitLog.checkMessageAndReturnSize`, plus the record CRC and physical-offset checks
/// described in `docs/format.md`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// Fewer bytes are available than the record needs.
    #[error(
        "record needs {needed} bytes but only {available} are available: the log ends in a torn write, or the size field is corrupt"
    )]
    Truncated {
        /// Bytes the record (or its header) needs.
        needed: usize,
        /// Bytes given to the decoder.
        available: usize,
    },
    /// Total size and magic are both zero: nothing was ever written here.
    #[error("no record here (zero bytes): this is the end of the written log")]
    Unwritten,
    /// The magic code is none of v1, v2 or blank.
    #[error("bad magic code {magic:#010x}: not the start of a record; the log is corrupt here")]
    BadMagic {
        /// The magic code read.
        magic: u32,
    },
    /// A blank record's size is below 8 bytes or beyond the bytes given.
    #[error(
        "blank record claims {size} bytes but {available} are available (minimum 8): the log is corrupt here"
    )]
    BadBlankSize {
        /// The blank's total size field.
        size: u32,
        /// Bytes given to the decoder.
        available: usize,
    },
    /// A length field is negative.
    #[error("the {field} field holds the negative length {value}: the log is corrupt here")]
    NegativeLength {
        /// Which field.
        field: &'static str,
        /// The value read.
        value: i64,
    },
    /// The total size field disagrees with the length recomputed from the record's fields.
    #[error(
        "total size field says {stored} bytes but the fields add up to {computed}: the record is corrupt"
    )]
    TotalSizeMismatch {
        /// The total size field.
        stored: u32,
        /// The recomputed length (bytes).
        computed: usize,
    },
    /// The body's CRC differs from the stored body CRC.
    #[error("body CRC is {computed:#010x} but the record says {stored:#010x}: the body is corrupt")]
    BodyCrcMismatch {
        /// The body CRC field.
        stored: u32,
        /// The CRC of the body read.
        computed: u32,
    },
    /// The whole-record CRC (`__CRC32#` property) differs from the recomputed one.
    #[error(
        "record CRC is {computed} but the __CRC32# property says {stored}: the record is corrupt or torn"
    )]
    RecordCrcMismatch {
        /// The value of the `__CRC32#` property.
        stored: u32,
        /// The CRC of the record read.
        computed: u32,
    },
    /// The `__CRC32#` property value is not 10 decimal digits of a 31-bit number.
    #[error("the __CRC32# property value is not 10 decimal digits: the record is corrupt")]
    MalformedRecordCrc,
    /// The caller required a record CRC and the record has none.
    #[error(
        "the record has no __CRC32# property but one is required: the record is corrupt or was written without record CRCs"
    )]
    RecordCrcMissing,
    /// The stored physical offset differs from the record's position.
    #[error(
        "record says it sits at physical offset {stored} but was read at {expected}: stale or misplaced record"
    )]
    PhysicalOffsetMismatch {
        /// The physical offset field.
        stored: u64,
        /// The position the caller read it from.
        expected: u64,
    },
    /// The topic bytes are not UTF-8.
    #[error("the topic is not UTF-8: the record is corrupt")]
    TopicNotUtf8,
    /// The topic is empty or holds a byte outside RocketMQ's `TopicValidator` set
    /// `[A-Za-z0-9%_|-]` (ours: the encoder never writes such a topic, so the record is torn
    /// or damaged, say a NUL left where a write stopped).
    #[error(
        "the topic is empty or holds byte {byte:#04x} at index {index}, which no put writes: the record is torn or corrupt"
    )]
    InvalidTopic {
        /// Index of the first invalid byte (0 for an empty topic).
        index: usize,
        /// The invalid byte (0 for an empty topic).
        byte: u8,
    },
    /// The properties bytes are not UTF-8.
    #[error("the properties are not UTF-8: the record is corrupt")]
    PropertiesNotUtf8,
}
