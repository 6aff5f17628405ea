//! Encode then decode gives back every field, for arbitrary messages: both versions (topics
//! up to 255 bytes), both address families for born and store hosts, random properties,
//! with and without the record CRC.

use std::net::{IpAddr, SocketAddr};

use abslock_store::Message;
use abslock_store::codec::{
    self, DecodeOptions, Decoded, EncodeOptions, MAGIC_V1, MAGIC_V2, RecordCrcCheck, SYS_FLAG_BORN_HOST_V6,
    SYS_FLAG_STORE_HOST_V6, Version,
};
use proptest::prelude::*;

fn cases() -> u32 {
    if std::env::var_os("ABSLOCK_LONG").is_some() { 20_000 } else { 300 }
}

fn addr() -> impl Strategy<Value = SocketAddr> {
    prop_oneof![
        (any::<[u8; 4]>(), any::<u16>()).prop_map(|(ip, port)| SocketAddr::new(IpAddr::from(ip), port)),
        (any::<[u8; 16]>(), any::<u16>()).prop_map(|(ip, port)| SocketAddr::new(IpAddr::from(ip), port)),
    ]
}

/// Topics of 1 to 255 bytes from RocketMQ's allowed set; about half are longer than 127 (v2).
fn topic() -> impl Strategy<Value = String> {
    "[A-Za-z0-9%_|-]{1,255}"
}

/// Property names and values: any Unicode but the two separators (and names never `__CRC32#`).
fn properties() -> impl Strategy<Value = Vec<(String, String)>> {
    prop::collection::vec(("[^\u{1}\u{2}]{1,12}", "[^\u{1}\u{2}]{0,24}"), 0..6)
}

prop_compose! {
    fn message()(
        topic in topic(),
        body in prop::collection::vec(any::<u8>(), 0..600),
        queue_id in any::<u32>(),
        flag in any::<i32>(),
        props in properties(),
        tags in proptest::option::of("[^\u{1}\u{2}]{0,10}"),
        born_host in addr(),
        born_timestamp in any::<i64>(),
        sys_flag in any::<i32>(),
        reconsume_times in any::<i32>(),
        prepared in any::<i64>(),
    ) -> Message {
        let mut m = Message::new(topic, body)
            .queue_id(queue_id)
            .flag(flag)
            .born_host(born_host)
            .born_timestamp(born_timestamp)
            .sys_flag(sys_flag)
            .reconsume_times(reconsume_times)
            .prepared_transaction_offset(prepared);
        if let Some(tags) = tags {
            m = m.tags(tags);
        }
        for (name, value) in props {
            if name != codec::PROPERTY_CRC32 {
                m = m.property(name, value);
            }
        }
        m
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn encode_decode_round_trip(
        msg in message(),
        store_host in addr(),
        append_record_crc in any::<bool>(),
        queue_offset in any::<u64>(),
        physical_offset in any::<u64>(),
        store_timestamp in any::<i64>(),
        trailing in prop::collection::vec(any::<u8>(), 0..16),
    ) {
        let opts = EncodeOptions { store_host, append_record_crc, ..EncodeOptions::default() };
        let mut buf = vec![0xFF; 3]; // encode_into clears what was there
        let layout = codec::encode_into(&msg, &opts, &mut buf).unwrap();
        prop_assert_eq!(buf.len(), layout.total_size);
        prop_assert_eq!(codec::validate(&msg, &opts), Ok(layout.total_size));
        codec::set_queue_offset(&mut buf, &layout, queue_offset);
        codec::seal_record_crc(&mut buf, &layout);
        codec::set_store_timestamp(&mut buf, &layout, store_timestamp);
        codec::set_physical_offset(&mut buf, &layout, physical_offset);
        buf.extend_from_slice(&trailing); // bytes past the record are not part of it

        let required = DecodeOptions {
            expected_physical_offset: Some(physical_offset),
            verify_body_crc: true,
            record_crc: if append_record_crc { RecordCrcCheck::Require } else { RecordCrcCheck::IfPresent },
        };
        let Decoded::Message(m) = codec::decode_with(&buf, &required).unwrap() else {
            panic!("decoded a blank");
        };
        prop_assert!(matches!(codec::decode(&buf, Some(physical_offset)), Ok(Decoded::Message(_))));

        let host_bits = SYS_FLAG_BORN_HOST_V6 | SYS_FLAG_STORE_HOST_V6;
        let expected = msg.clone().sys_flag(msg.get_sys_flag() & !host_bits);
        prop_assert_eq!(m.to_message(), expected);
        prop_assert_eq!(m.total_size() as usize, layout.total_size);
        prop_assert_eq!(m.as_bytes(), &buf[..layout.total_size]);
        prop_assert_eq!(m.queue_offset(), queue_offset);
        prop_assert_eq!(m.physical_offset(), physical_offset);
        prop_assert_eq!(m.store_timestamp(), store_timestamp);
        prop_assert_eq!(m.store_host(), store_host);
        prop_assert_eq!(m.born_host(), msg.get_born_host());
        prop_assert_eq!(m.sys_flag() & SYS_FLAG_BORN_HOST_V6 != 0, msg.get_born_host().is_ipv6());
        prop_assert_eq!(m.sys_flag() & SYS_FLAG_STORE_HOST_V6 != 0, store_host.is_ipv6());
        prop_assert_eq!(m.body(), msg.body());
        prop_assert_eq!(m.body_crc(), codec::body_crc(msg.body()));
        prop_assert_eq!(m.topic(), msg.topic());
        prop_assert_eq!(m.tags(), msg.get_tags());
        prop_assert_eq!(m.keys(), msg.get_keys());
        prop_assert_eq!(m.tag_hash(), msg.get_tags().map_or(0, codec::tag_hash));
        prop_assert_eq!(m.record_crc().is_some(), append_record_crc);
        let version = if msg.topic().len() <= 127 { Version::V1 } else { Version::V2 };
        prop_assert_eq!(m.version(), version);
        let magic = u32::from_be_bytes(buf[4..8].try_into().unwrap());
        prop_assert_eq!(magic, if version == Version::V1 { MAGIC_V1 } else { MAGIC_V2 });
        prop_assert!(m.properties().eq(msg.properties()));
    }

    /// Sealing before or after the in-lock fields are patched gives the same record.
    #[test]
    fn seal_is_independent_of_physical_offset_and_store_timestamp(
        msg in message(),
        physical_offset in any::<u64>(),
        store_timestamp in any::<i64>(),
    ) {
        let opts = EncodeOptions::default();
        let mut early = Vec::new();
        let layout = codec::encode_into(&msg, &opts, &mut early).unwrap();
        let mut late = early.clone();
        codec::seal_record_crc(&mut early, &layout);
        codec::set_physical_offset(&mut early, &layout, physical_offset);
        codec::set_store_timestamp(&mut early, &layout, store_timestamp);
        codec::set_physical_offset(&mut late, &layout, physical_offset);
        codec::set_store_timestamp(&mut late, &layout, store_timestamp);
        codec::seal_record_crc(&mut late, &layout);
        prop_assert_eq!(early, late);
    }

    /// The put path's form: head and tail without the body, sealed, then head + body + tail
    /// is byte for byte the record `encode_into` and `seal_record_crc` make.
    #[test]
    fn parts_plus_body_is_the_whole_record(
        msg in message(),
        store_host in addr(),
        append_record_crc in any::<bool>(),
        queue_offset in any::<u64>(),
        physical_offset in any::<u64>(),
        store_timestamp in any::<i64>(),
    ) {
        let opts = EncodeOptions { store_host, append_record_crc, ..EncodeOptions::default() };
        let mut whole = Vec::new();
        let layout = codec::encode_into(&msg, &opts, &mut whole).unwrap();
        codec::set_queue_offset(&mut whole, &layout, queue_offset);
        codec::seal_record_crc(&mut whole, &layout);
        codec::set_store_timestamp(&mut whole, &layout, store_timestamp);
        codec::set_physical_offset(&mut whole, &layout, physical_offset);

        let mut parts = vec![0xEE; 7]; // encode_parts_into clears what was there
        let parts_layout = codec::encode_parts_into(&msg, &opts, &mut parts).unwrap();
        prop_assert_eq!(parts_layout, layout);
        prop_assert_eq!(parts.len(), layout.parts_len());
        prop_assert_eq!(layout.head_len() + layout.body_len + layout.tail_len(), layout.total_size);
        prop_assert_eq!(layout.body_len, msg.body().len());
        codec::set_queue_offset(&mut parts, &layout, queue_offset);
        codec::seal_record_crc_parts(&mut parts, &layout);
        codec::set_store_timestamp(&mut parts, &layout, store_timestamp);
        codec::set_physical_offset(&mut parts, &layout, physical_offset);
        let (head, tail) = parts.split_at(layout.head_len());
        prop_assert_eq!([head, msg.body(), tail].concat(), whole);
    }
}

#[test]
fn reencoding_reuses_the_buffer() {
    let opts = EncodeOptions::default();
    let mut buf = Vec::new();
    codec::encode_into(&Message::new("big", vec![1; 5000]).tags("a"), &opts, &mut buf).unwrap();
    let (ptr, cap) = (buf.as_ptr(), buf.capacity());
    for n in [0, 100, 4096] {
        codec::encode_into(&Message::new("small", vec![2; n]).keys("k"), &opts, &mut buf).unwrap();
        assert_eq!((buf.as_ptr(), buf.capacity()), (ptr, cap), "no reallocation for a record that fits");
    }
}
