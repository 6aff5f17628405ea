//! The `record_crc` file (ours): from which physical offset on the log was written with or
//! without the `__CRC32#` record CRC, so recovery requires the property exactly of the
//! records written while [`StoreConfig::append_record_crc`](crate::StoreConfig) was on,
//! and a setting changed between runs never makes recovery reject (and cut) records
//! written under the other one (the class of RocketMQ issue #9852).
//!
//! Layout (big-endian): magic `ABSRCRC1` (8), entry count (4), per entry the physical
//! offset from which it applies (8) and 1 (on) or 0 (off) (1), CRC32 of all preceding
//! bytes (4). Written atomically at open, before any put, whenever the setting differs
//! from the last entry. A missing or damaged file means "unknown": recovery then checks
//! the property only where present, never requiring it.

use std::path::Path;

use crate::io::{FileOps, FsResult};

const MAGIC: &[u8; 8] = b"ABSRCRC1";
const ENTRY_LEN: usize = 9;

/// The settings of `append_record_crc` over the log, by physical offset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CrcEpochs {
    /// (first physical offset, record CRC on), in increasing offsets.
    epochs: Vec<(u64, bool)>,
}

impl CrcEpochs {
    fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(16 + self.epochs.len() * ENTRY_LEN);
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&(self.epochs.len() as u32).to_be_bytes());
        for &(at, on) in &self.epochs {
            b.extend_from_slice(&at.to_be_bytes());
            b.push(u8::from(on));
        }
        let crc = crc32fast::hash(&b);
        b.extend_from_slice(&crc.to_be_bytes());
        b
    }

    fn decode(b: &[u8]) -> Option<CrcEpochs> {
        let (body, crc) = b.split_at_checked(b.len().checked_sub(4)?)?;
        if crc32fast::hash(body).to_be_bytes() != crc || body.get(..8)? != MAGIC {
            return None;
        }
        let n = u32::from_be_bytes(body.get(8..12)?.try_into().ok()?) as usize;
        let entries = body.get(12..)?;
        if entries.len() != n.checked_mul(ENTRY_LEN)? {
            return None;
        }
        let epochs: Vec<(u64, bool)> = entries
            .chunks_exact(ENTRY_LEN)
            .map(|e| (u64::from_be_bytes(e[..8].try_into().unwrap_or_default()), e[8] != 0))
            .collect();
        epochs.windows(2).all(|w| w[0].0 < w[1].0).then_some(CrcEpochs { epochs })
    }

    /// Reads the file; missing or damaged reads as unknown (no entries).
    pub(crate) fn read(fs: &FileOps, path: &Path) -> FsResult<CrcEpochs> {
        Ok(fs.read_optional(path)?.as_deref().and_then(CrcEpochs::decode).unwrap_or_default())
    }

    /// Whether the record at `pos` was written with the record CRC on (so one without the
    /// property is damaged). `false` where unknown.
    pub(crate) fn requires_crc(&self, pos: u64) -> bool {
        self.epochs.iter().rev().find(|(at, _)| *at <= pos).is_some_and(|&(_, on)| on)
    }

    /// Records that records from `write_pos` on are written with the record CRC `on`:
    /// forgets entries at or past `write_pos` (a log cut below them) and writes the file
    /// if anything changed.
    pub(crate) fn record(&mut self, fs: &FileOps, path: &Path, write_pos: u64, on: bool) -> FsResult<()> {
        let before = self.epochs.len();
        self.epochs.retain(|&(at, _)| at < write_pos);
        let same = self.epochs.last().is_some_and(|&(_, last)| last == on);
        if !same {
            self.epochs.push((write_pos, on));
        }
        if same && self.epochs.len() == before {
            return Ok(());
        }
        fs.write_file_durable(path, &self.encode(), None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_changes_and_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let (fs, path) = (FileOps::default(), dir.path().join("record_crc"));
        let mut e = CrcEpochs::read(&fs, &path).unwrap();
        assert!(!e.requires_crc(0), "unknown: never required");
        e.record(&fs, &path, 100, false).unwrap();
        e.record(&fs, &path, 200, true).unwrap();
        e.record(&fs, &path, 300, true).unwrap();
        let back = CrcEpochs::read(&fs, &path).unwrap();
        assert_eq!(back, e);
        assert_eq!(e.epochs, vec![(100, false), (200, true)]);
        assert!(
            !e.requires_crc(50) && !e.requires_crc(150) && e.requires_crc(200) && e.requires_crc(1 << 40)
        );
        // The log was cut at 150: the entry at 200 goes, and "on" from 150.
        e.record(&fs, &path, 150, true).unwrap();
        assert_eq!(e.epochs, vec![(100, false), (150, true)]);
        let mut raw = std::fs::read(&path).unwrap();
        raw[13] ^= 1;
        std::fs::write(&path, raw).unwrap();
        assert_eq!(CrcEpochs::read(&fs, &path).unwrap(), CrcEpochs::default(), "damaged reads as unknown");
    }
}
