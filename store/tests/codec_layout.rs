//! Byte-level layout: a record built field by field in this test (independently of the
//! encoder) equals the encoder's output; overheads of v1/v2 and IPv4/IPv6; the blank record.

use std::net::SocketAddr;

use abslock_store::Message;
use abslock_store::codec::{self, DecodeError, Decoded, EncodeOptions, V1_IPV4_OVERHEAD};

fn encode(msg: &Message, opts: &EncodeOptions) -> Vec<u8> {
    let mut out = Vec::new();
    codec::encode_into(msg, opts, &mut out).unwrap();
    out
}

fn no_crc(store_host: &str) -> EncodeOptions {
    EncodeOptions {
        store_host: store_host.parse().unwrap(),
        append_record_crc: false,
        ..EncodeOptions::default()
    }
}

#[test]
fn v1_ipv4_overhead_is_91_bytes() {
    assert_eq!(V1_IPV4_OVERHEAD, 91);
    for (topic, body) in [("t", 0), ("orders", 5), ("x", 1000)] {
        let rec = encode(&Message::new(topic, vec![1; body]), &no_crc("1.2.3.4:5"));
        assert_eq!(rec.len(), 91 + body + topic.len());
    }
}

#[test]
fn ipv6_hosts_add_12_bytes_each_v2_adds_one_crc_adds_20() {
    let v4: SocketAddr = "1.2.3.4:5".parse().unwrap();
    let v6: SocketAddr = "[2001:db8::1]:5".parse().unwrap();
    let base = |born: SocketAddr, store: &str, topic: &str| {
        encode(&Message::new(topic, b"body".to_vec()).born_host(born), &no_crc(store)).len() - 4 - topic.len()
    };
    assert_eq!(base(v4, "1.2.3.4:5", "t"), 91);
    assert_eq!(base(v6, "1.2.3.4:5", "t"), 103);
    assert_eq!(base(v4, "[::1]:5", "t"), 103);
    assert_eq!(base(v6, "[::1]:5", "t"), 115);
    assert_eq!(base(v4, "1.2.3.4:5", &"t".repeat(128)), 92);
    let with_crc = encode(&Message::new("t", b"body".to_vec()), &EncodeOptions::default());
    assert_eq!(with_crc.len(), 91 + 4 + 1 + 20);
}

/// The record RocketMQ's `DefaultAppendMessageCallback` would write, field by field.
#[test]
fn matches_a_record_built_by_hand() {
    let msg = Message::new("TopicTest", b"Hello RocketMQ".to_vec())
        .queue_id(3)
        .flag(0)
        .tags("TagA")
        .keys("k1 k2")
        .born_timestamp(0x0000_018B_CFE5_6800)
        .born_host("[fe80::1]:54321".parse().unwrap())
        .reconsume_times(0)
        .prepared_transaction_offset(0);
    let mut rec = Vec::new();
    let layout = codec::encode_into(&msg, &no_crc("10.0.0.1:10911"), &mut rec).unwrap();
    codec::set_queue_offset(&mut rec, &layout, 9);
    codec::set_physical_offset(&mut rec, &layout, 0x1234);
    codec::set_store_timestamp(&mut rec, &layout, 0x0000_018B_CFE5_6801);

    let body = b"Hello RocketMQ";
    let props = b"TAGS\x01TagA\x02KEYS\x01k1 k2\x02";
    let total = 91 + 12 + body.len() + 9 + props.len();
    let mut want = Vec::new();
    want.extend_from_slice(&(total as u32).to_be_bytes());
    want.extend_from_slice(&[0xDA, 0xA3, 0x20, 0xA7]);
    want.extend_from_slice(&(crc32fast::hash(body) & 0x7FFF_FFFF).to_be_bytes());
    want.extend_from_slice(&[0, 0, 0, 3]); // queue id
    want.extend_from_slice(&[0, 0, 0, 0]); // flag
    want.extend_from_slice(&9u64.to_be_bytes()); // queue offset
    want.extend_from_slice(&0x1234u64.to_be_bytes()); // physical offset
    want.extend_from_slice(&[0, 0, 0, 0x10]); // sys flag: born host IPv6
    want.extend_from_slice(&[0, 0, 0x01, 0x8B, 0xCF, 0xE5, 0x68, 0x00]); // born timestamp
    want.extend_from_slice(&[0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    want.extend_from_slice(&54321u32.to_be_bytes());
    want.extend_from_slice(&[0, 0, 0x01, 0x8B, 0xCF, 0xE5, 0x68, 0x01]); // store timestamp
    want.extend_from_slice(&[10, 0, 0, 1, 0, 0, 0x2A, 0x9F]); // store host, port 10911
    want.extend_from_slice(&[0, 0, 0, 0]); // reconsume times
    want.extend_from_slice(&[0; 8]); // prepared transaction offset
    want.extend_from_slice(&(body.len() as u32).to_be_bytes());
    want.extend_from_slice(body);
    want.push(9);
    want.extend_from_slice(b"TopicTest");
    want.extend_from_slice(&(props.len() as u16).to_be_bytes());
    want.extend_from_slice(props);
    assert_eq!(rec, want);
}

#[test]
fn body_crc_is_crc32_ieee_masked_to_31_bits() {
    // CRC32("123456789") = 0xCBF43926, the standard check value.
    assert_eq!(codec::body_crc(b"123456789"), 0xCBF4_3926 & 0x7FFF_FFFF);
    assert_eq!(codec::body_crc(b""), 0);
}

#[test]
fn blank_fills_the_segment_tail() {
    let mut tail = vec![0xAB; 300];
    codec::write_blank(&mut tail);
    assert_eq!(tail[..8], [0, 0, 0x01, 0x2C, 0xCB, 0xD4, 0x31, 0x94]);
    assert!(matches!(codec::decode(&tail, None), Ok(Decoded::Blank { size: 300 })));
    let mut min = [0u8; 8];
    codec::write_blank(&mut min);
    assert_eq!(codec::decode(&min, Some(77)).unwrap().size(), 8);
    // A blank must lie within the bytes given and be at least 8 bytes.
    assert_eq!(
        codec::decode(&tail[..299], None).unwrap_err(),
        DecodeError::BadBlankSize { size: 300, available: 299 }
    );
    min[3] = 7;
    assert_eq!(codec::decode(&min, None).unwrap_err(), DecodeError::BadBlankSize { size: 7, available: 8 });
}

#[test]
#[should_panic(expected = "at least 8 bytes")]
fn blank_needs_eight_bytes() {
    codec::write_blank(&mut [0u8; 7]);
}

#[test]
fn records_back_to_back_are_read_in_turn() {
    let opts = EncodeOptions::default();
    let mut log = Vec::new();
    let mut buf = Vec::new();
    for (i, topic) in ["a", "bb", "ccc"].iter().enumerate() {
        let layout =
            codec::encode_into(&Message::new(*topic, vec![i as u8; i * 10]), &opts, &mut buf).unwrap();
        codec::set_queue_offset(&mut buf, &layout, i as u64);
        codec::seal_record_crc(&mut buf, &layout);
        codec::set_physical_offset(&mut buf, &layout, log.len() as u64);
        log.extend_from_slice(&buf);
    }
    let end = log.len();
    log.resize(end + 64, 0);
    codec::write_blank(&mut log[end..]);
    let (mut pos, mut topics) = (0, Vec::new());
    loop {
        match codec::decode(&log[pos..], Some(pos as u64)).unwrap() {
            Decoded::Message(m) => {
                topics.push(m.topic());
                pos += m.total_size() as usize;
            }
            Decoded::Blank { size } => {
                assert_eq!(pos + size as usize, log.len());
                break;
            }
        }
    }
    assert_eq!(topics, ["a", "bb", "ccc"]);
}
