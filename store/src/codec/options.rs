//! How records are encoded: the options shared by validation and encoding (ours; the
//! limits follow RocketMQ's broker config).

use std::net::{Ipv4Addr, SocketAddr};

use super::layout::DEFAULT_MAX_BODY_SIZE;

/// RocketMQ's default broker listen port (`listenPort`), used in the default store host.
pub const DEFAULT_STORE_PORT: u16 = 10911;

/// How records are encoded (ours; the limits follow RocketMQ's broker config).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncodeOptions {
    /// The broker's address, written as every record's store host. Default `127.0.0.1:10911`.
    pub store_host: SocketAddr,
    /// Largest accepted body (bytes), RocketMQ's `maxMessageSize`. Default 4 MiB
    /// ([`DEFAULT_MAX_BODY_SIZE`](super::DEFAULT_MAX_BODY_SIZE)); a body of exactly this
    /// size is accepted.
    pub max_body_size: usize,
    /// Append the `__CRC32#` property that protects the whole record (RocketMQ's
    /// `enabledAppendPropCRC`). Default `true`. Its 20 bytes count against the properties limit.
    pub append_record_crc: bool,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            store_host: SocketAddr::new(Ipv4Addr::LOCALHOST.into(), DEFAULT_STORE_PORT),
            max_body_size: DEFAULT_MAX_BODY_SIZE,
            append_record_crc: true,
        }
    }
}
