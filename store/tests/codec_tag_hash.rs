//! `tag_hash` equals Java's `String.hashCode` (RocketMQ's consume-queue tag code). Expected
//! values worked out by hand from `h = 31 * h + c` over UTF-16 code units, 32-bit wrapping.

use abslock_store::codec::tag_hash;

#[test]
fn matches_java_string_hash_code() {
    // 'T'=84 'a'=97 'g'=103 'A'=65: 84*31^3 + 97*31^2 + 103*31 + 65 = 2598919.
    assert_eq!(tag_hash("TagA"), 2_598_919);
    assert_eq!(tag_hash("TagB"), 2_598_920);
    assert_eq!(tag_hash("TagC"), 2_598_921);
    assert_eq!(tag_hash("*"), 42);
    // 'n'=110 'e'=101 'w'=119: (110*31 + 101)*31 + 119 = 108960.
    assert_eq!(tag_hash("new"), 108_960);
    assert_eq!(tag_hash("hello"), 99_162_322);
    assert_eq!(tag_hash("TagA||TagB"), 1_789_476_431);
}

#[test]
fn empty_tags_hash_to_zero() {
    assert_eq!(tag_hash(""), 0);
}

#[test]
fn wraps_at_32_bits_and_sign_extends() {
    // A known Java curiosity: "polygenelubricants".hashCode() == Integer.MIN_VALUE.
    assert_eq!(tag_hash("polygenelubricants"), i64::from(i32::MIN));
}

#[test]
fn hashes_utf16_code_units_not_bytes() {
    // '中'=0x4E2D=20013, '文'=0x6587=25991: 20013*31 + 25991 = 646394.
    assert_eq!(tag_hash("中文"), 646_394);
    // U+1F600 is the surrogate pair 0xD83D 0xDE00: 55357*31 + 56832 = 1772899.
    assert_eq!(tag_hash("😀"), 1_772_899);
}
