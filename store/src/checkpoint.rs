//! The `checkpoint` file (RocketMQ `StoreCheckpoint`): positions known durable, so recovery
//! scans only from the segment holding them. Layout (ours, big-endian, 28 bytes):
//! magic `ABSCKPT1` (8), commitlog flushed offset (8), consume-queue flushed offset (8),
//! CRC32 of the preceding 24 bytes (4). A checkpoint that fails its CRC is ignored.

use std::path::Path;

use crate::io::{FileOps, FsResult};

const MAGIC: &[u8; 8] = b"ABSCKPT1";
const LEN: usize = 28;

/// Durable positions (physical offsets, bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Checkpoint {
    /// Everything below is flushed in the commitlog.
    pub(crate) commitlog: u64,
    /// Every consume-queue entry of records below this is flushed.
    pub(crate) consume_queue: u64,
}

impl Checkpoint {
    fn encode(&self) -> [u8; LEN] {
        let mut b = [0u8; LEN];
        b[..8].copy_from_slice(MAGIC);
        b[8..16].copy_from_slice(&self.commitlog.to_be_bytes());
        b[16..24].copy_from_slice(&self.consume_queue.to_be_bytes());
        let crc = crc32fast::hash(&b[..24]);
        b[24..].copy_from_slice(&crc.to_be_bytes());
        b
    }

    fn decode(b: &[u8]) -> Option<Checkpoint> {
        if b.len() != LEN || &b[..8] != MAGIC {
            return None;
        }
        let crc = u32::from_be_bytes(b[24..28].try_into().ok()?);
        if crc != crc32fast::hash(&b[..24]) {
            return None;
        }
        Some(Checkpoint {
            commitlog: u64::from_be_bytes(b[8..16].try_into().ok()?),
            consume_queue: u64::from_be_bytes(b[16..24].try_into().ok()?),
        })
    }

    /// Reads the checkpoint; `None` if missing or damaged.
    pub(crate) fn read(fs: &FileOps, path: &Path) -> FsResult<Option<Checkpoint>> {
        Ok(fs.read_optional(path)?.as_deref().and_then(Checkpoint::decode))
    }

    /// Writes the checkpoint atomically (temporary file, fsync, rename).
    pub(crate) fn write(&self, fs: &FileOps, path: &Path) -> FsResult<()> {
        fs.write_file_atomic(path, &self.encode())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_damage() {
        let c = Checkpoint { commitlog: 123, consume_queue: 45 };
        let mut b = c.encode();
        assert_eq!(Checkpoint::decode(&b), Some(c));
        b[9] ^= 1;
        assert_eq!(Checkpoint::decode(&b), None);
        assert_eq!(Checkpoint::decode(&b[..10]), None);
    }
}
