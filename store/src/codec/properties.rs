//! The properties block: `name\x01value\x02` pairs, as RocketMQ's
//! `MessageDecoder.messageProperties2String` lays them out, and the names the codec knows.

/// Separates a property's name from its value (RocketMQ's `NAME_VALUE_SEPARATOR`).
pub const NAME_VALUE_SEPARATOR: u8 = 0x01;
/// Ends each property (RocketMQ's `PROPERTY_SEPARATOR`).
pub const PROPERTY_SEPARATOR: u8 = 0x02;
/// Property holding the message's tags (RocketMQ's `MessageConst.PROPERTY_TAGS`).
pub const PROPERTY_TAGS: &str = "TAGS";
/// Property holding the message's keys (RocketMQ's `MessageConst.PROPERTY_KEYS`).
pub const PROPERTY_KEYS: &str = "KEYS";
/// Property holding the whole-record CRC (RocketMQ's `MessageConst.PROPERTY_CRC32`); the codec
/// writes it last, and callers may not set it.
pub const PROPERTY_CRC32: &str = "__CRC32#";
/// ASCII decimal digits in the `__CRC32#` value (fixed width, zero-padded).
pub const RECORD_CRC_DIGITS: usize = 10;
/// Bytes of the whole `__CRC32#` property: name, `\x01`, 10 digits, `\x02` = 20.
pub const RECORD_CRC_PROPERTY_LEN: usize = PROPERTY_CRC32.len() + 1 + RECORD_CRC_DIGITS + 1;

/// Iterator over `(name, value)` pairs of a properties block, in stored order (ours).
///
/// Lenient as RocketMQ's `MessageDecoder.string2messageProperties`: an entry without a
/// `\x01` is skipped, and the last pair may lack its closing `\x02`.
#[derive(Debug, Clone)]
pub struct Properties<'a> {
    rest: &'a str,
}

impl<'a> Properties<'a> {
    /// Iterates over the pairs of an encoded properties block.
    ///
    /// # Examples
    /// ```
    /// use abslock_store::codec::Properties;
    /// let pairs: Vec<_> = Properties::new("TAGS\x01new\x02KEYS\x01k1\x02").collect();
    /// assert_eq!(pairs, [("TAGS", "new"), ("KEYS", "k1")]);
    /// ```
    pub fn new(encoded: &'a str) -> Properties<'a> {
        Properties { rest: encoded }
    }

    /// The value of the first property called `name`, if any.
    pub fn find(mut self, name: &str) -> Option<&'a str> {
        self.find_map(|(n, v)| (n == name).then_some(v))
    }
}

impl<'a> Iterator for Properties<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        while !self.rest.is_empty() {
            let (entry, rest) = match self.rest.split_once(PROPERTY_SEPARATOR as char) {
                Some((entry, rest)) => (entry, rest),
                None => (self.rest, ""),
            };
            self.rest = rest;
            if let Some(pair) = entry.split_once(NAME_VALUE_SEPARATOR as char) {
                return Some(pair);
            }
        }
        None
    }
}

/// Encoded length of one property (bytes).
#[inline]
pub(crate) fn encoded_len(name: &str, value: &str) -> usize {
    name.len() + 1 + value.len() + 1
}

/// Appends one property to `out`.
#[inline]
pub(crate) fn write_property(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(name.as_bytes());
    out.push(NAME_VALUE_SEPARATOR);
    out.extend_from_slice(value.as_bytes());
    out.push(PROPERTY_SEPARATOR);
}

/// If `props` ends with the codec's `__CRC32#` property, the offset of its 10 digits within
/// `props`. The property counts only when it starts the block or follows a `\x02`.
#[inline]
pub(crate) fn record_crc_digits_at(props: &[u8]) -> Option<usize> {
    let start = props.len().checked_sub(RECORD_CRC_PROPERTY_LEN)?;
    let slot = &props[start..];
    let name = PROPERTY_CRC32.as_bytes();
    let starts_entry = start == 0 || props[start - 1] == PROPERTY_SEPARATOR;
    let shaped = slot.starts_with(name)
        && slot[name.len()] == NAME_VALUE_SEPARATOR
        && slot[RECORD_CRC_PROPERTY_LEN - 1] == PROPERTY_SEPARATOR;
    (starts_entry && shaped).then_some(start + name.len() + 1)
}
