//! Every validation limit: at the limit the message is accepted, one past it rejected with
//! the variant that names the limit and the value, and the output buffer left unchanged.

use abslock_store::Message;
use abslock_store::codec::{
    self, DEFAULT_MAX_BODY_SIZE, Decoded, EncodeOptions, PROPERTIES_MAX_LEN, PropertyPart,
    RECORD_CRC_PROPERTY_LEN, TOPIC_MAX_LEN, ValidationError, Version,
};

/// Encodes (and seals) into a buffer holding a sentinel; on error the sentinel must still be there.
fn encode(msg: &Message, opts: &EncodeOptions) -> Result<Vec<u8>, ValidationError> {
    let sentinel = b"previous record".to_vec();
    let mut out = sentinel.clone();
    match codec::encode_into(msg, opts, &mut out) {
        Ok(layout) => {
            assert_eq!(out.len(), layout.total_size);
            codec::seal_record_crc(&mut out, &layout);
            Ok(out)
        }
        Err(e) => {
            assert_eq!(out, sentinel, "a rejected message must leave the buffer unchanged");
            assert_eq!(codec::validate(msg, opts), Err(e.clone()), "validate and encode_into agree");
            Err(e)
        }
    }
}

fn decodes(rec: &[u8]) -> bool {
    matches!(codec::decode(rec, None), Ok(Decoded::Message(_)))
}

#[test]
fn body_at_the_default_limit_is_accepted_one_past_rejected() {
    let opts = EncodeOptions::default();
    assert_eq!(opts.max_body_size, 4 * 1024 * 1024);
    let rec = encode(&Message::new("t", vec![7; DEFAULT_MAX_BODY_SIZE]), &opts).unwrap();
    assert!(decodes(&rec));
    assert_eq!(
        encode(&Message::new("t", vec![7; DEFAULT_MAX_BODY_SIZE + 1]), &opts),
        Err(ValidationError::BodyTooLarge { len: DEFAULT_MAX_BODY_SIZE + 1, max: DEFAULT_MAX_BODY_SIZE })
    );
}

#[test]
fn body_limit_follows_the_option() {
    let opts = EncodeOptions { max_body_size: 100, ..EncodeOptions::default() };
    assert!(encode(&Message::new("t", vec![0; 100]), &opts).is_ok());
    assert_eq!(
        encode(&Message::new("t", vec![0; 101]), &opts),
        Err(ValidationError::BodyTooLarge { len: 101, max: 100 })
    );
    assert!(encode(&Message::new("t", Vec::new()), &opts).is_ok(), "empty bodies are allowed");
}

#[test]
fn empty_topic_is_rejected() {
    assert_eq!(
        encode(&Message::new("", b"x".to_vec()), &EncodeOptions::default()),
        Err(ValidationError::TopicEmpty)
    );
    assert!(encode(&Message::new("a", b"x".to_vec()), &EncodeOptions::default()).is_ok());
}

#[test]
fn topic_at_255_bytes_is_accepted_256_rejected() {
    let opts = EncodeOptions::default();
    let rec = encode(&Message::new("x".repeat(TOPIC_MAX_LEN), b"x".to_vec()), &opts).unwrap();
    assert!(decodes(&rec));
    assert_eq!(
        encode(&Message::new("x".repeat(TOPIC_MAX_LEN + 1), b"x".to_vec()), &opts),
        Err(ValidationError::TopicTooLong { len: 256, max: 255 })
    );
}

#[test]
fn topic_of_127_bytes_is_v1_128_is_v2() {
    let opts = EncodeOptions { append_record_crc: false, ..EncodeOptions::default() };
    for (len, version, magic) in [(127, Version::V1, 0xDAA3_20A7u32), (128, Version::V2, 0xDAA3_20AB)] {
        let rec = encode(&Message::new("q".repeat(len), b"x".to_vec()), &opts).unwrap();
        assert_eq!(rec[4..8], magic.to_be_bytes());
        let width = if version == Version::V1 { 1 } else { 2 };
        assert_eq!(rec.len(), 91 + 1 + len + width - 1);
        let Ok(Decoded::Message(m)) = codec::decode(&rec, None) else { panic!("not a message") };
        assert_eq!((m.version(), m.topic().len()), (version, len));
    }
}

#[test]
fn topic_characters_follow_rocketmq_topic_validator() {
    let opts = EncodeOptions::default();
    let allowed = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789%-_|";
    assert!(encode(&Message::new(allowed, b"x".to_vec()), &opts).is_ok());
    assert!(encode(&Message::new("%RETRY%group-1|x_y", b"x".to_vec()), &opts).is_ok());
    for bad in [" ", ".", "/", "#", "*", ":", "é", "\u{1}", "\0", "中"] {
        let topic = format!("ok{bad}");
        assert_eq!(
            encode(&Message::new(topic.clone(), b"x".to_vec()), &opts),
            Err(ValidationError::TopicInvalidChar { topic, index: 2, byte: bad.as_bytes()[0] }),
            "{bad:?} must be rejected"
        );
    }
}

/// One property whose encoded form, plus the record CRC property when on, is `total` bytes.
fn message_with_properties_of(total: usize, crc: bool) -> Message {
    let value_len = total - if crc { RECORD_CRC_PROPERTY_LEN } else { 0 } - "p".len() - 2;
    Message::new("t", b"x".to_vec()).property("p", "v".repeat(value_len))
}

#[test]
fn properties_at_32767_bytes_are_accepted_32768_rejected() {
    for crc in [true, false] {
        let opts = EncodeOptions { append_record_crc: crc, ..EncodeOptions::default() };
        let rec = encode(&message_with_properties_of(PROPERTIES_MAX_LEN, crc), &opts).unwrap();
        assert!(decodes(&rec));
        let props_len_at = rec.len() - PROPERTIES_MAX_LEN - 2;
        assert_eq!(rec[props_len_at..props_len_at + 2], 32_767u16.to_be_bytes());
        assert_eq!(
            encode(&message_with_properties_of(PROPERTIES_MAX_LEN + 1, crc), &opts),
            Err(ValidationError::PropertiesTooLong {
                len: 32_768,
                max: 32_767,
                crc: if crc { RECORD_CRC_PROPERTY_LEN } else { 0 }
            })
        );
    }
}

#[test]
fn separators_in_property_names_and_values_are_rejected() {
    let opts = EncodeOptions::default();
    for (sep, byte) in [("\u{1}", 1u8), ("\u{2}", 2)] {
        let name = format!("a{sep}b");
        assert_eq!(
            encode(&Message::new("t", b"x".to_vec()).property(name.clone(), "v"), &opts),
            Err(ValidationError::PropertySeparator { name, part: PropertyPart::Name, byte })
        );
        assert_eq!(
            encode(&Message::new("t", b"x".to_vec()).property("n", format!("v{sep}")), &opts),
            Err(ValidationError::PropertySeparator { name: "n".into(), part: PropertyPart::Value, byte })
        );
        assert_eq!(
            encode(&Message::new("t", b"x".to_vec()).tags(format!("A{sep}B")), &opts),
            Err(ValidationError::PropertySeparator { name: "TAGS".into(), part: PropertyPart::Value, byte })
        );
    }
    assert!(encode(&Message::new("t", b"x".to_vec()).property("n\u{3}", "v\0 é中"), &opts).is_ok());
}

#[test]
fn empty_and_reserved_property_names_are_rejected() {
    let opts = EncodeOptions::default();
    assert_eq!(
        encode(&Message::new("t", b"x".to_vec()).property("", "v"), &opts),
        Err(ValidationError::PropertyNameEmpty { value: "v".into() })
    );
    assert_eq!(
        encode(&Message::new("t", b"x".to_vec()).property("__CRC32#", "0000000000"), &opts),
        Err(ValidationError::ReservedPropertyName { name: "__CRC32#".into() })
    );
}

#[test]
fn limits_are_checked_body_then_topic_then_properties() {
    let opts = EncodeOptions { max_body_size: 1, ..EncodeOptions::default() };
    let everything_wrong = Message::new("", vec![0; 2]).property("", "");
    assert!(matches!(encode(&everything_wrong, &opts), Err(ValidationError::BodyTooLarge { .. })));
    let topic_and_props_wrong = Message::new("", vec![0; 1]).property("", "");
    assert_eq!(encode(&topic_and_props_wrong, &opts), Err(ValidationError::TopicEmpty));
}

#[test]
fn validation_messages_name_the_limit_and_the_value() {
    let e = ValidationError::BodyTooLarge { len: 4_194_305, max: 4_194_304 };
    assert!(e.to_string().contains("4194305") && e.to_string().contains("4194304"));
    let e = ValidationError::TopicInvalidChar { topic: "a b".into(), index: 1, byte: b' ' };
    assert!(e.to_string().contains("\"a b\"") && e.to_string().contains("0x20"));
}

#[test]
fn topics_a_file_system_cannot_hold_as_a_directory_name_are_rejected() {
    // The consume queue lives in `consumequeue/<topic>/<queue id>/`.
    for (topic, index, byte) in
        [(".", 0, b'.'), ("..", 0, b'.'), ("a/b", 1, b'/'), ("/", 0, b'/'), ("\0", 0, 0), ("t\0", 1, 0)]
    {
        assert_eq!(
            codec::validate_topic(topic),
            Err(ValidationError::TopicInvalidChar { topic: topic.to_owned(), index, byte }),
            "{topic:?} must be rejected"
        );
    }
    assert_eq!(codec::validate_topic(""), Err(ValidationError::TopicEmpty));
}

#[test]
fn a_record_whose_topic_no_put_writes_is_rejected_without_a_record_crc() {
    let opts = EncodeOptions { append_record_crc: false, ..EncodeOptions::default() };
    let rec = encode(&Message::new("t0", b"x".to_vec()), &opts).unwrap();
    assert!(decodes(&rec));
    // No properties: the topic ends 2 bytes (the properties length) before the record's end.
    let last_topic_byte = rec.len() - 3;
    assert_eq!(rec[last_topic_byte], b'0');
    for bad in [0u8, b'/', b'.', b' '] {
        let mut torn = rec.clone();
        torn[last_topic_byte] = bad;
        assert!(
            matches!(
                codec::decode(&torn, None),
                Err(codec::DecodeError::InvalidTopic { index: 1, byte }) if byte == bad
            ),
            "topic byte {bad:#04x} must be rejected"
        );
    }
}
