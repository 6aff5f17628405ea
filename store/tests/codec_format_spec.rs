//! Holds `docs/format.md` to the code: every table in it is parsed, and every offset,
//! width and constant is compared with the codec's constants and with real encoded bytes.

use std::net::SocketAddr;

use abslock_store::Message;
use abslock_store::codec::layout::*;
use abslock_store::codec::{
    self, CQ_ENTRY_SIZE, CQ_PHYSICAL_OFFSET_LEN, CQ_PHYSICAL_OFFSET_OFFSET, CQ_SIZE_LEN, CQ_SIZE_OFFSET,
    CQ_TAG_HASH_LEN, CQ_TAG_HASH_OFFSET, CRC_MASK, ConsumeQueueEntry, EncodeOptions, PROPERTY_CRC32,
    RECORD_CRC_DIGITS, RECORD_CRC_PROPERTY_LEN,
};

const SPEC: &str = include_str!("../../docs/format.md");

/// The rows (cells trimmed, backticks removed) of the first table after the heading `heading`.
fn table(heading: &str) -> Vec<Vec<String>> {
    let mut lines = SPEC.lines().skip_while(|l| l.trim() != heading);
    assert!(lines.next().is_some(), "docs/format.md has no heading {heading:?}");
    let rows: Vec<Vec<String>> = lines
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.trim().trim_matches('|').split('|').map(|c| c.trim().replace('`', "")).collect())
        .collect();
    assert!(rows.len() > 2, "table under {heading:?} is empty");
    assert!(
        rows[1].iter().all(|c| c.chars().all(|ch| ch == '-' || ch == ':')),
        "second row is not a separator"
    );
    rows.into_iter().skip(2).collect()
}

/// Evaluates an offset or width cell such as `89 + b + t` for the given lengths.
fn eval(cell: &str, b: usize, t: usize, p: usize) -> usize {
    cell.split('+')
        .map(|term| match term.trim() {
            "b" => b,
            "t" => t,
            "p" => p,
            n => n.parse().unwrap_or_else(|_| panic!("cannot read {n:?} in cell {cell:?}")),
        })
        .sum()
}

fn number(cell: &str) -> u64 {
    match cell.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).unwrap(),
        None => cell.parse().unwrap_or_else(|_| panic!("not a number: {cell:?}")),
    }
}

/// The code's (offset, width) of a record field of a v1 IPv4 record, by the name the spec uses.
fn code_field(name: &str, b: usize, t: usize, p: usize) -> (usize, usize) {
    let topic_len_at = BODY_OFFSET + b;
    let properties_len_at = topic_len_at + TOPIC_LEN_V1_LEN + t;
    match name {
        "TOTAL_SIZE_OFFSET" => (TOTAL_SIZE_OFFSET, TOTAL_SIZE_LEN),
        "MAGIC_OFFSET" => (MAGIC_OFFSET, MAGIC_LEN),
        "BODY_CRC_OFFSET" => (BODY_CRC_OFFSET, BODY_CRC_LEN),
        "QUEUE_ID_OFFSET" => (QUEUE_ID_OFFSET, QUEUE_ID_LEN),
        "FLAG_OFFSET" => (FLAG_OFFSET, FLAG_LEN),
        "QUEUE_OFFSET_OFFSET" => (QUEUE_OFFSET_OFFSET, QUEUE_OFFSET_LEN),
        "PHYSICAL_OFFSET_OFFSET" => (PHYSICAL_OFFSET_OFFSET, PHYSICAL_OFFSET_LEN),
        "SYS_FLAG_OFFSET" => (SYS_FLAG_OFFSET, SYS_FLAG_LEN),
        "BORN_TIMESTAMP_OFFSET" => (BORN_TIMESTAMP_OFFSET, BORN_TIMESTAMP_LEN),
        "BORN_HOST_OFFSET" => (BORN_HOST_OFFSET, HOST_V4_LEN),
        "STORE_TIMESTAMP_OFFSET" => (STORE_TIMESTAMP_OFFSET, STORE_TIMESTAMP_LEN),
        "STORE_HOST_OFFSET" => (STORE_HOST_OFFSET, HOST_V4_LEN),
        "RECONSUME_TIMES_OFFSET" => (RECONSUME_TIMES_OFFSET, RECONSUME_TIMES_LEN),
        "PREPARED_TRANSACTION_OFFSET_OFFSET" => {
            (PREPARED_TRANSACTION_OFFSET_OFFSET, PREPARED_TRANSACTION_OFFSET_LEN)
        }
        "BODY_LEN_OFFSET" => (BODY_LEN_OFFSET, BODY_LEN_LEN),
        "BODY_OFFSET" => (BODY_OFFSET, b),
        "TOPIC_LEN" => (topic_len_at, TOPIC_LEN_V1_LEN),
        "TOPIC" => (topic_len_at + TOPIC_LEN_V1_LEN, t),
        "PROPERTIES_LEN" => (properties_len_at, PROPERTIES_LEN_LEN),
        "PROPERTIES" => (properties_len_at + PROPERTIES_LEN_LEN, p),
        other => panic!("docs/format.md names `{other}`, which the codec does not have"),
    }
}

const ALL_FIELDS: [&str; 20] = [
    "TOTAL_SIZE_OFFSET",
    "MAGIC_OFFSET",
    "BODY_CRC_OFFSET",
    "QUEUE_ID_OFFSET",
    "FLAG_OFFSET",
    "QUEUE_OFFSET_OFFSET",
    "PHYSICAL_OFFSET_OFFSET",
    "SYS_FLAG_OFFSET",
    "BORN_TIMESTAMP_OFFSET",
    "BORN_HOST_OFFSET",
    "STORE_TIMESTAMP_OFFSET",
    "STORE_HOST_OFFSET",
    "RECONSUME_TIMES_OFFSET",
    "PREPARED_TRANSACTION_OFFSET_OFFSET",
    "BODY_LEN_OFFSET",
    "BODY_OFFSET",
    "TOPIC_LEN",
    "TOPIC",
    "PROPERTIES_LEN",
    "PROPERTIES",
];

const SIZES: [(usize, usize, usize); 3] = [(0, 1, 0), (5, 6, 20), (1000, 200, 333)];

#[test]
fn record_table_matches_constants_and_is_contiguous() {
    let rows = table("## Record");
    let names: Vec<&str> = rows.iter().map(|r| r[3].as_str()).collect();
    assert_eq!(names, ALL_FIELDS, "the record table lists every field once, in order");
    for (b, t, p) in SIZES {
        let mut next = 0;
        for row in &rows {
            let (offset, width) = (eval(&row[1], b, t, p), eval(&row[2], b, t, p));
            assert_eq!(
                (offset, width),
                code_field(&row[3], b, t, p),
                "field {:?} at b={b} t={t} p={p}",
                row[0]
            );
            assert_eq!(offset, next, "field {:?} does not start where the previous one ends", row[0]);
            next = offset + width;
        }
        assert_eq!(next, V1_IPV4_OVERHEAD + b + t + p);
        assert_eq!(next, record_len(Version::V1, false, false, b, t, p));
    }
    assert!(SPEC.contains(&format!("`91 + b + t + p` bytes: {V1_IPV4_OVERHEAD} bytes of overhead")));
}

/// A real record holds, at each offset the spec gives, the bytes the spec says.
#[test]
fn record_table_matches_encoded_bytes() {
    let body = b"hello body".to_vec();
    let msg = Message::new("orders", body.clone())
        .queue_id(7)
        .flag(-3)
        .tags("TagA")
        .sys_flag(0x4)
        .born_timestamp(1_700_000_000_123)
        .born_host("10.1.2.3:4567".parse().unwrap())
        .reconsume_times(2)
        .prepared_transaction_offset(99);
    let opts = EncodeOptions { store_host: "192.168.0.9:10911".parse().unwrap(), ..EncodeOptions::default() };
    let mut rec = Vec::new();
    let layout = codec::encode_into(&msg, &opts, &mut rec).unwrap();
    codec::set_queue_offset(&mut rec, &layout, 41);
    codec::seal_record_crc(&mut rec, &layout);
    codec::set_physical_offset(&mut rec, &layout, 123_456);
    codec::set_store_timestamp(&mut rec, &layout, 1_700_000_000_456);
    let props_len = rec.len() - V1_IPV4_OVERHEAD - body.len() - msg.topic().len();
    let properties = rec[rec.len() - props_len..].to_vec();
    assert!(properties.starts_with(b"TAGS\x01TagA\x02__CRC32#\x01"));

    let expected = |name: &str| -> Vec<u8> {
        match name {
            "TOTAL_SIZE_OFFSET" => (rec.len() as u32).to_be_bytes().to_vec(),
            "MAGIC_OFFSET" => 0xDAA3_20A7u32.to_be_bytes().to_vec(),
            "BODY_CRC_OFFSET" => (crc32fast::hash(&body) & 0x7FFF_FFFF).to_be_bytes().to_vec(),
            "QUEUE_ID_OFFSET" => 7u32.to_be_bytes().to_vec(),
            "FLAG_OFFSET" => (-3i32).to_be_bytes().to_vec(),
            "QUEUE_OFFSET_OFFSET" => 41u64.to_be_bytes().to_vec(),
            "PHYSICAL_OFFSET_OFFSET" => 123_456u64.to_be_bytes().to_vec(),
            "SYS_FLAG_OFFSET" => 4i32.to_be_bytes().to_vec(),
            "BORN_TIMESTAMP_OFFSET" => 1_700_000_000_123i64.to_be_bytes().to_vec(),
            "BORN_HOST_OFFSET" => vec![10, 1, 2, 3, 0, 0, 0x11, 0xD7],
            "STORE_TIMESTAMP_OFFSET" => 1_700_000_000_456i64.to_be_bytes().to_vec(),
            "STORE_HOST_OFFSET" => vec![192, 168, 0, 9, 0, 0, 0x2A, 0x9F],
            "RECONSUME_TIMES_OFFSET" => 2i32.to_be_bytes().to_vec(),
            "PREPARED_TRANSACTION_OFFSET_OFFSET" => 99i64.to_be_bytes().to_vec(),
            "BODY_LEN_OFFSET" => (body.len() as u32).to_be_bytes().to_vec(),
            "BODY_OFFSET" => body.clone(),
            "TOPIC_LEN" => vec![6],
            "TOPIC" => b"orders".to_vec(),
            "PROPERTIES_LEN" => (props_len as u16).to_be_bytes().to_vec(),
            "PROPERTIES" => properties.clone(),
            other => panic!("unknown field {other}"),
        }
    };
    for row in table("## Record") {
        let (b, t, p) = (body.len(), msg.topic().len(), props_len);
        let (offset, width) = (eval(&row[1], b, t, p), eval(&row[2], b, t, p));
        assert_eq!(&rec[offset..offset + width], expected(&row[3]).as_slice(), "field {:?}", row[0]);
    }
}

#[test]
fn variants_table_matches_constants_and_encoded_bytes() {
    let rows = table("### Variants: v2 and IPv6");
    assert_eq!(rows.len(), 3);
    let (b, t) = (10, 200);
    for row in &rows {
        let (width, shift) = (number(&row[3]), number(&row[4]) as usize);
        let (born, store, topic): (SocketAddr, SocketAddr, String) = match row[0].as_str() {
            "IPv6 born host" => {
                assert_eq!(row[1], format!("sys flag bit 4 ({:#04x})", SYS_FLAG_BORN_HOST_V6));
                assert_eq!((width, shift), (HOST_V6_LEN as u64, HOST_V6_SHIFT));
                ("[::1]:1".parse().unwrap(), "1.2.3.4:5".parse().unwrap(), "a".repeat(t))
            }
            "IPv6 store host" => {
                assert_eq!(row[1], format!("sys flag bit 5 ({:#04x})", SYS_FLAG_STORE_HOST_V6));
                assert_eq!((width, shift), (HOST_V6_LEN as u64, HOST_V6_SHIFT));
                ("1.2.3.4:5".parse().unwrap(), "[::1]:1".parse().unwrap(), "a".repeat(t))
            }
            "v2" => {
                assert_eq!(row[1], format!("magic {:#010X}", MAGIC_V2).replace("0X", "0x"));
                assert_eq!((width, shift), (TOPIC_LEN_V2_LEN as u64, TOPIC_LEN_V2_LEN - TOPIC_LEN_V1_LEN));
                ("1.2.3.4:5".parse().unwrap(), "1.2.3.4:5".parse().unwrap(), "a".repeat(t))
            }
            other => panic!("unknown variant {other}"),
        };
        // Only the row's own variant is on; v2 needs a topic over 127 bytes, which the
        // IPv6 rows also use, so their v1 baseline is replaced by v2 on both sides.
        let opts = EncodeOptions { store_host: store, append_record_crc: false, ..EncodeOptions::default() };
        let mut rec = Vec::new();
        codec::encode_into(&Message::new(topic.clone(), vec![0xAB; b]).born_host(born), &opts, &mut rec)
            .unwrap();
        let v2_shift = TOPIC_LEN_V2_LEN - TOPIC_LEN_V1_LEN;
        let base_len = V1_IPV4_OVERHEAD + v2_shift + b + t;
        assert_eq!(rec.len(), base_len + if row[0] == "v2" { 0 } else { shift });
        // The body length field moves by the host shifts only.
        let body_len_at = BODY_LEN_OFFSET + if row[0] == "v2" { 0 } else { shift };
        assert_eq!(rec[body_len_at..body_len_at + 4], (b as u32).to_be_bytes());
        let topic_len_at = body_len_at + 4 + b;
        assert_eq!(rec[topic_len_at..topic_len_at + 2], (t as u16).to_be_bytes());
    }
    // The worked example: v2, IPv6 born host, IPv4 store host.
    let shifts_example =
        "has its store timestamp at 68, its body at 100 and its properties length at\n`100 + b + 2 + t`";
    assert!(SPEC.contains(shifts_example));
    let mut rec = Vec::new();
    let opts = EncodeOptions { append_record_crc: false, ..EncodeOptions::default() };
    let layout = codec::encode_into(
        &Message::new("a".repeat(t), vec![0xCD; b]).born_host("[::2]:3".parse().unwrap()),
        &opts,
        &mut rec,
    )
    .unwrap();
    assert_eq!(layout.store_timestamp_at, 68);
    assert_eq!(&rec[100..100 + b], &[0xCD; 10][..]);
    assert_eq!(rec[100 + b + 2 + t..100 + b + 2 + t + 2], [0, 0]);
    assert_eq!(rec.len(), 100 + b + 2 + t + 2);
}

#[test]
fn constants_table_matches_code() {
    let rows = table("### Constants");
    let mut seen = Vec::new();
    for row in &rows {
        let code: u64 = match row[2].as_str() {
            "MAGIC_V1" => MAGIC_V1.into(),
            "MAGIC_V2" => MAGIC_V2.into(),
            "MAGIC_BLANK" => MAGIC_BLANK.into(),
            "SYS_FLAG_BORN_HOST_V6" => SYS_FLAG_BORN_HOST_V6 as u64,
            "SYS_FLAG_STORE_HOST_V6" => SYS_FLAG_STORE_HOST_V6 as u64,
            "CRC_MASK" => CRC_MASK.into(),
            "V1_IPV4_OVERHEAD" => V1_IPV4_OVERHEAD as u64,
            "BLANK_MIN" => BLANK_MIN as u64,
            "TOPIC_MAX_LEN_V1" => TOPIC_MAX_LEN_V1 as u64,
            "TOPIC_MAX_LEN" => TOPIC_MAX_LEN as u64,
            "PROPERTIES_MAX_LEN" => PROPERTIES_MAX_LEN as u64,
            "DEFAULT_MAX_BODY_SIZE" => DEFAULT_MAX_BODY_SIZE as u64,
            "RECORD_CRC_PROPERTY_LEN" => RECORD_CRC_PROPERTY_LEN as u64,
            "RECORD_CRC_DIGITS" => RECORD_CRC_DIGITS as u64,
            "CQ_ENTRY_SIZE" => CQ_ENTRY_SIZE as u64,
            other => panic!("docs/format.md names `{other}`, which the codec does not have"),
        };
        assert_eq!(number(&row[1]), code, "constant {}", row[2]);
        seen.push(row[2].clone());
    }
    assert_eq!(seen.len(), 15, "every constant listed once");
    // The magic codes as they read in the record table too.
    assert!(SPEC.contains("`0xDAA320A7` (v1) or `0xDAA320AB` (v2)"));
}

/// The record CRC covers exactly what the spec says: the record up to the digits with the
/// body cut out and the physical offset and store timestamp zeroed (positions taken from the
/// spec's record table), computed here independently of the codec.
#[test]
fn record_crc_coverage_is_what_the_spec_says() {
    for leaves_out in ["the **body**", "**physical offset**", "**store timestamp**"] {
        assert!(SPEC.contains(leaves_out), "the record CRC section names {leaves_out}");
    }
    let rows = table("## Record");
    let field = |name: &str, b: usize, t: usize, p: usize| {
        let row = rows.iter().find(|r| r[3] == name).unwrap();
        (eval(&row[1], b, t, p), eval(&row[2], b, t, p))
    };
    for body in [vec![], b"x".to_vec(), vec![0xA5; 4096]] {
        let msg = Message::new("orders", body.clone()).tags("TagA").keys("k1");
        let opts =
            EncodeOptions { store_host: "192.168.0.9:10911".parse().unwrap(), ..EncodeOptions::default() };
        let mut rec = Vec::new();
        let layout = codec::encode_into(&msg, &opts, &mut rec).unwrap();
        codec::set_queue_offset(&mut rec, &layout, 17);
        codec::seal_record_crc(&mut rec, &layout);
        codec::set_physical_offset(&mut rec, &layout, 0x0102_0304_0506_0708);
        codec::set_store_timestamp(&mut rec, &layout, 1_700_000_000_456);

        let (b, t) = (body.len(), msg.topic().len());
        let p = rec.len() - V1_IPV4_OVERHEAD - b - t;
        let mut covered = rec[..rec.len() - 11].to_vec(); // up to the first digit
        for name in ["PHYSICAL_OFFSET_OFFSET", "STORE_TIMESTAMP_OFFSET"] {
            let (at, width) = field(name, b, t, p);
            covered[at..at + width].fill(0);
        }
        let (body_at, body_len) = field("BODY_OFFSET", b, t, p);
        covered.drain(body_at..body_at + body_len);
        let want = crc32fast::hash(&covered) & CRC_MASK;
        let digits = std::str::from_utf8(&rec[rec.len() - 11..rec.len() - 1]).unwrap();
        assert_eq!(digits, format!("{want:010}"), "body of {b} bytes");
        assert!(matches!(codec::decode(&rec, Some(0x0102_0304_0506_0708)), Ok(codec::Decoded::Message(_))));
    }
}

#[test]
fn record_crc_property_table_matches_code() {
    let rows = table("## Record CRC: the `__CRC32#` property");
    let widths: Vec<usize> = rows.iter().map(|r| number(&r[1]) as usize).collect();
    assert_eq!(widths, [PROPERTY_CRC32.len(), 1, RECORD_CRC_DIGITS, 1]);
    assert_eq!(widths.iter().sum::<usize>(), RECORD_CRC_PROPERTY_LEN);
    assert!(rows[0][2].starts_with(PROPERTY_CRC32));
    assert_eq!((rows[1][2].as_str(), rows[3][2].as_str()), ("0x01", "0x02"));

    // A real record ends with exactly that property, digits most significant first.
    let mut rec = Vec::new();
    let layout =
        codec::encode_into(&Message::new("t", b"x".to_vec()), &EncodeOptions::default(), &mut rec).unwrap();
    codec::seal_record_crc(&mut rec, &layout);
    let tail = &rec[rec.len() - RECORD_CRC_PROPERTY_LEN..];
    assert_eq!(&tail[..9], b"__CRC32#\x01");
    assert_eq!(tail[19], 0x02);
    let digits = std::str::from_utf8(&tail[9..19]).unwrap();
    let codec::Decoded::Message(m) = codec::decode(&rec, None).unwrap() else { panic!("blank") };
    assert_eq!(digits, format!("{:010}", m.record_crc().unwrap()));
    assert_eq!(layout.record_crc_at, Some(rec.len() - 11));
}

#[test]
fn blank_table_matches_code() {
    let rows = table("## Blank record");
    assert_eq!(rows.len(), 2);
    let mut space = vec![0xEE; 64];
    codec::write_blank(&mut space);
    let expected: [(&str, Vec<u8>); 2] = [
        ("TOTAL_SIZE_OFFSET", 64u32.to_be_bytes().to_vec()),
        ("MAGIC_OFFSET", MAGIC_BLANK.to_be_bytes().to_vec()),
    ];
    for (row, (name, bytes)) in rows.iter().zip(expected) {
        assert_eq!(row[3], name);
        let (offset, width) = (number(&row[1]) as usize, number(&row[2]) as usize);
        assert_eq!((offset, width), code_field(name, 0, 0, 0));
        assert_eq!(space[offset..offset + width], bytes[..]);
    }
    assert_eq!(number(&rows[1][2]) as usize + number(&rows[1][1]) as usize, BLANK_MIN);
    assert!(rows[1][4].contains(&format!("{:#010X}", MAGIC_BLANK).replace("0X", "0x")));
}

#[test]
fn consume_queue_table_matches_code() {
    let rows = table("## Consume-queue entry");
    let entry = ConsumeQueueEntry { physical_offset: 0x0102_0304_0506_0708, size: 0x0A0B_0C0D, tag_hash: -2 };
    let bytes = entry.to_bytes();
    let mut next = 0;
    for row in &rows {
        let (offset, width) = (number(&row[1]) as usize, number(&row[2]) as usize);
        let (code, field): ((usize, usize), Vec<u8>) = match row[3].as_str() {
            "CQ_PHYSICAL_OFFSET_OFFSET" => (
                (CQ_PHYSICAL_OFFSET_OFFSET, CQ_PHYSICAL_OFFSET_LEN),
                entry.physical_offset.to_be_bytes().to_vec(),
            ),
            "CQ_SIZE_OFFSET" => ((CQ_SIZE_OFFSET, CQ_SIZE_LEN), entry.size.to_be_bytes().to_vec()),
            "CQ_TAG_HASH_OFFSET" => {
                ((CQ_TAG_HASH_OFFSET, CQ_TAG_HASH_LEN), entry.tag_hash.to_be_bytes().to_vec())
            }
            other => panic!("docs/format.md names `{other}`, which the codec does not have"),
        };
        assert_eq!((offset, width), code, "consume-queue field {:?}", row[0]);
        assert_eq!(offset, next);
        assert_eq!(bytes[offset..offset + width], field[..]);
        next = offset + width;
    }
    assert_eq!(next, CQ_ENTRY_SIZE);
    assert!(SPEC.contains(&format!("for example `TagA` hashes to {}", codec::tag_hash("TagA"))));
}

#[test]
fn file_name_examples_are_20_digit_offsets() {
    for offset in [0u64, 1 << 30] {
        assert!(SPEC.contains(&format!("`{offset:020}`")), "spec shows {offset:020}");
    }
}
