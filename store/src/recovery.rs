//! Commitlog recovery (RocketMQ `CommitLog.recoverNormally` / `recoverAbnormally`): open the
//! segments, scan forward from the segment holding the checkpoint, verify every record with
//! the codec (magic, total size, body CRC, record CRC, physical offset), stop at the first
//! invalid one, and fence everything after it.

use std::path::Path;
use std::sync::Arc;

use crate::codec::{self, DecodeOptions, Decoded, RecordCrcCheck};
use crate::commitlog::BLANK_LEN;
use crate::error::OpenError;
use crate::io::FileOps;
use crate::segment::{Segment, parse_file_name};

/// The recovered commitlog.
pub(crate) struct Recovered {
    pub(crate) segments: Vec<Arc<Segment>>,
    /// First invalid (or unwritten) position: the new write position.
    pub(crate) write_pos: u64,
}

/// Opens the segments in `dir`, checks their names and sizes, and finds the write
/// position by scanning from the segment containing `scan_hint`.
///
/// `require_record_crc`: the store writes `__CRC32#`, so a record past the checkpoint
/// without one is torn (its property block is damaged) and ends the scan.
///
/// `crashed`: the store was not closed cleanly (or has no checkpoint); then the tail after
/// the write position is zeroed and synced, so stale bytes can never be replayed.
pub(crate) fn recover_commitlog(
    fs: &FileOps,
    dir: &Path,
    segment_size: u64,
    scan_hint: u64,
    crashed: bool,
    require_record_crc: bool,
) -> Result<Recovered, OpenError> {
    let mut named = Vec::new();
    for (name, path, ft) in fs.list_dir(dir)? {
        if name.ends_with(".tmp") {
            // A segment whose creation never finished.
            fs.remove_file(&path)?;
            continue;
        }
        if let Some(start) = parse_file_name(&name)
            && ft.is_file()
        {
            named.push((start, path));
        }
    }
    named.sort();
    let mut segments: Vec<Arc<Segment>> = Vec::with_capacity(named.len());
    for (start, path) in named {
        if start % segment_size != 0 {
            return Err(OpenError::Corrupt {
                path,
                reason: format!("start offset {start} is not a multiple of segment_size {segment_size}"),
            });
        }
        if let Some(prev) = segments.last()
            && prev.end() != start
        {
            return Err(OpenError::Corrupt {
                path,
                reason: format!("segment {:020} is missing before it", prev.end()),
            });
        }
        let file_len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        if file_len != segment_size {
            return Err(OpenError::Corrupt {
                path,
                reason: format!(
                    "segment is {file_len} bytes, expected segment_size {segment_size} (was the store made with another segment_size?)"
                ),
            });
        }
        segments.push(Arc::new(Segment::open(fs, path, start, segment_size)?));
    }
    let Some(first) = segments.first() else {
        return Ok(Recovered { segments, write_pos: 0 });
    };
    let first_start = first.start();
    let files_end = segments.last().map_or(first_start, |s| s.end());
    // A checkpoint claiming more than the files hold is not trusted at all.
    let scan_hint = if scan_hint > files_end { first_start } else { scan_hint };
    let hint = scan_hint.max(first_start);
    let idx = (((hint - first_start) / segment_size) as usize).min(segments.len() - 1);
    // Scan the checkpoint's whole segment after a clean close too: a checkpoint claiming
    // bytes past the last record (zeros) must not become the write position, or records
    // put behind that gap would be lost at the next scan, which stops at the gap.
    let mut scan_start = segments[idx].start();
    let mut pos = scan_forward(&segments, idx, scan_start, scan_hint, require_record_crc);
    if pos == scan_start && scan_start > first_start {
        // Not one record where the checkpoint points: distrust it, scan from the start.
        scan_start = first_start;
        pos = scan_forward(&segments, 0, first_start, first_start, require_record_crc);
    }
    // Drop segments wholly past the write position: preallocated or stale.
    while segments.len() > 1 && segments.last().is_some_and(|s| s.start() > pos) {
        if let Some(seg) = segments.pop() {
            let path = seg.path().to_path_buf();
            drop(seg);
            fs.remove_file(&path)?;
        }
    }
    if segments.len() == 1 && segments[0].start() > pos {
        // Cannot happen: the scan starts at a segment start <= pos.
        return Err(OpenError::Corrupt {
            path: dir.to_path_buf(),
            reason: "write position before first segment".into(),
        });
    }
    if crashed
        && let Some(last) = segments.last()
        && last.start() <= pos
        && pos < last.end()
    {
        last.zero_tail(fs, (pos - last.start()) as usize)?;
    }
    // Make what the scan accepted durable: it may sit only in the page cache.
    for seg in segments.iter().filter(|s| s.end() > scan_start && s.start() < pos) {
        seg.sync(fs, 0, (pos.min(seg.end()) - seg.start()) as usize)?;
    }
    // A tail too short for the blank a roll writes (< 8 bytes; only a damaged or hostile
    // file ends a segment so): zero it and let the next put start the next segment.
    if let Some(last) = segments.last()
        && last.start() <= pos
        && pos < last.end()
        && last.end() - pos < BLANK_LEN
    {
        last.zero_tail(fs, (pos - last.start()) as usize)?;
        pos = last.end();
    }
    Ok(Recovered { segments, write_pos: pos })
}

/// Scans from `pos` in `segments[idx]` while records and blanks are valid; returns the
/// first invalid position. Records at or past `scan_hint` must carry a record CRC when
/// `require_record_crc`.
fn scan_forward(
    segments: &[Arc<Segment>],
    mut idx: usize,
    mut pos: u64,
    scan_hint: u64,
    require_record_crc: bool,
) -> u64 {
    'segments: while idx < segments.len() {
        let seg = &segments[idx];
        loop {
            let avail = seg.end() - pos;
            if avail < BLANK_LEN {
                // SAFETY: `[pos, end)` lies in the segment; no other thread exists during recovery.
                let tail = unsafe { seg.bytes((pos - seg.start()) as usize, avail as usize) };
                // Too short for a record or a blank: a zeroed one is a segment that recovery
                // closed (see above); step over it.
                if tail.iter().all(|&b| b == 0) && idx + 1 < segments.len() {
                    pos = seg.end();
                    idx += 1;
                    continue 'segments;
                }
                break 'segments;
            }
            // SAFETY: `[pos, end)` lies in the segment; no other thread exists during recovery.
            let bytes = unsafe { seg.bytes((pos - seg.start()) as usize, avail as usize) };
            let opts = DecodeOptions {
                expected_physical_offset: Some(pos),
                verify_body_crc: true,
                // Below the checkpoint the log was flushed whole: no torn tail can be there,
                // and records written before `append_record_crc` was switched on stay valid.
                record_crc: if require_record_crc && pos >= scan_hint {
                    RecordCrcCheck::Require
                } else {
                    RecordCrcCheck::IfPresent
                },
            };
            match codec::decode_with(bytes, &opts) {
                Ok(Decoded::Message(m)) => pos += u64::from(m.total_size()),
                Ok(Decoded::Blank { size }) if u64::from(size) == avail => {
                    pos = seg.end();
                    idx += 1;
                    continue 'segments;
                }
                _ => break 'segments,
            }
        }
    }
    pos
}
