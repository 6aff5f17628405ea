//! The limits a message must meet before it is encoded (RocketMQ's `TopicValidator` and
//! the broker's size checks in `MessageExtEncoder`).

use super::errors::{PropertyPart, ValidationError};
use super::layout::{PROPERTIES_MAX_LEN, RECORD_MAX_LEN, TOPIC_MAX_LEN, Version, record_len};
use super::options::EncodeOptions;
use super::properties::{
    self, NAME_VALUE_SEPARATOR, PROPERTY_CRC32, PROPERTY_SEPARATOR, RECORD_CRC_PROPERTY_LEN,
};
use crate::Message;

/// Whether `byte` may appear in a topic: RocketMQ's `TopicValidator` allows ASCII letters,
/// digits, `%`, `-`, `_` and `|`.
#[inline]
pub const fn is_valid_topic_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'%' | b'-' | b'_' | b'|')
}

/// Checks a topic: 1 to 255 bytes of [`is_valid_topic_byte`] (RocketMQ's `TopicValidator`).
///
/// # Errors
/// [`ValidationError::TopicEmpty`], [`ValidationError::TopicTooLong`] or
/// [`ValidationError::TopicInvalidChar`].
pub fn validate_topic(topic: &str) -> Result<(), ValidationError> {
    if topic.is_empty() {
        return Err(ValidationError::TopicEmpty);
    }
    if topic.len() > TOPIC_MAX_LEN {
        return Err(ValidationError::TopicTooLong { len: topic.len(), max: TOPIC_MAX_LEN });
    }
    match topic.bytes().position(|b| !is_valid_topic_byte(b)) {
        None => Ok(()),
        Some(index) => Err(ValidationError::TopicInvalidChar {
            topic: topic.to_owned(),
            index,
            byte: topic.as_bytes()[index],
        }),
    }
}

fn separator_in(s: &str) -> Option<u8> {
    s.bytes().find(|&b| b == NAME_VALUE_SEPARATOR || b == PROPERTY_SEPARATOR)
}

/// Encoded length of `msg`'s properties block (bytes), the `__CRC32#` property included
/// when `opts.append_record_crc`, after checking every name and value.
fn validate_properties(msg: &Message, opts: &EncodeOptions) -> Result<usize, ValidationError> {
    let mut len = 0;
    for (name, value) in msg.properties() {
        if name.is_empty() {
            return Err(ValidationError::PropertyNameEmpty { value: value.to_owned() });
        }
        if name == PROPERTY_CRC32 {
            return Err(ValidationError::ReservedPropertyName { name: name.to_owned() });
        }
        if let Some(byte) = separator_in(name) {
            return Err(ValidationError::PropertySeparator {
                name: name.to_owned(),
                part: PropertyPart::Name,
                byte,
            });
        }
        if let Some(byte) = separator_in(value) {
            return Err(ValidationError::PropertySeparator {
                name: name.to_owned(),
                part: PropertyPart::Value,
                byte,
            });
        }
        len += properties::encoded_len(name, value);
    }
    let crc = if opts.append_record_crc { RECORD_CRC_PROPERTY_LEN } else { 0 };
    len += crc;
    if len > PROPERTIES_MAX_LEN {
        return Err(ValidationError::PropertiesTooLong { len, max: PROPERTIES_MAX_LEN, crc });
    }
    Ok(len)
}

/// Checks every limit on `msg` and returns the length of its record (bytes), without
/// writing anything. [`encode_into`](super::encode_into) runs the same checks; call this
/// to check a whole batch before encoding any of it.
///
/// Checks, in order: body length `<= opts.max_body_size`; topic (see [`validate_topic`]);
/// every property name non-empty, not `__CRC32#`, and no `\x01`/`\x02` in names or values;
/// encoded properties `<= 32 767` bytes; record `<= i32::MAX` bytes.
///
/// # Errors
/// The first [`ValidationError`] found.
///
/// # Examples
/// ```
/// use abslock_store::{Message, codec::{self, EncodeOptions, ValidationError}};
/// let opts = EncodeOptions::default();
/// // 91 bytes of overhead + 5 body + 6 topic + 20 for the `__CRC32#` property.
/// assert_eq!(codec::validate(&Message::new("orders", b"hello".to_vec()), &opts), Ok(91 + 5 + 6 + 20));
/// assert!(matches!(codec::validate(&Message::new("a b", vec![]), &opts), Err(ValidationError::TopicInvalidChar { index: 1, .. })));
/// ```
pub fn validate(msg: &Message, opts: &EncodeOptions) -> Result<usize, ValidationError> {
    let body_len = msg.body().len();
    if body_len > opts.max_body_size {
        return Err(ValidationError::BodyTooLarge { len: body_len, max: opts.max_body_size });
    }
    validate_topic(msg.topic())?;
    let properties_len = validate_properties(msg, opts)?;
    let topic_len = msg.topic().len();
    let len = record_len(
        Version::for_topic_len(topic_len),
        msg.get_born_host().is_ipv6(),
        opts.store_host.is_ipv6(),
        body_len,
        topic_len,
        properties_len,
    );
    if len > RECORD_MAX_LEN {
        return Err(ValidationError::RecordTooLarge { len, max: RECORD_MAX_LEN });
    }
    Ok(len)
}
