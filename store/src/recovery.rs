//! Commitlog recovery (after RocketMQ `CommitLog.recoverNormally` / `recoverAbnormally`,
//! with the recovery modes of RocksDB and fjall): open the segments, verify every record
//! of the log with the codec (magic, total size, body CRC, the record CRC where the log was
//! written with it, physical offset), and decide what to do with the first one that fails.
//!
//! Nothing is changed on disk before the decision: a [`RecoveryMode::Strict`] failure
//! leaves the files as they were. A cut copies (or moves) every byte past it to `cut/`
//! before zeroing it in the log, so stale records can never be replayed and nothing is lost.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::codec::{self, DecodeError, DecodeOptions, Decoded, RecordCrcCheck};
use crate::commitlog::BLANK_LEN;
use crate::config::RecoveryMode;
use crate::crc_epochs::CrcEpochs;
use crate::error::{Corruption, OpenError};
use crate::io::FileOps;
use crate::recovery_report::Cut;
use crate::segment::{Segment, file_name, parse_file_name};

/// Directory under a log's directory that receives the bytes a cut removes from the log.
pub(crate) const CUT_DIR: &str = "cut";

/// What recovery knows before it scans.
pub(crate) struct RecoveryInput<'a> {
    pub(crate) fs: &'a FileOps,
    /// The `commitlog/` directory.
    pub(crate) dir: &'a Path,
    /// Where moved-aside bytes go.
    pub(crate) cut_dir: PathBuf,
    pub(crate) segment_size: u64,
    /// The checkpoint's flushed commitlog offset, if there is a valid checkpoint.
    pub(crate) checkpoint: Option<u64>,
    /// Not closed cleanly: what the scan accepts may sit only in the page cache.
    pub(crate) crashed: bool,
    pub(crate) mode: RecoveryMode,
    pub(crate) crc: &'a CrcEpochs,
}

/// What recovery will do, decided without changing anything on disk.
pub(crate) struct RecoveryPlan {
    segments: Vec<Arc<Segment>>,
    /// Files left by a segment creation that never finished.
    leftovers: Vec<PathBuf>,
    /// End of the last valid record.
    pos: u64,
    durable_end: u64,
    /// The cut: its cause and the last non-zero byte past it.
    cut: Option<(DecodeError, u64)>,
}

/// The recovered commitlog.
pub(crate) struct Recovered {
    pub(crate) segments: Vec<Arc<Segment>>,
    /// End of the last valid record: the new write position.
    pub(crate) write_pos: u64,
    /// Below this the log was known durable.
    pub(crate) durable_end: u64,
    pub(crate) cut: Option<Cut>,
}

impl RecoveryPlan {
    /// Whether the directory held no segment at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.segments.is_empty() && self.leftovers.is_empty()
    }
}

/// Opens the segments in `dir`, checks their names and sizes, verifies every record and
/// finds the write position; decides to cut, or fails per `mode` (see [`RecoveryMode`]).
/// Changes nothing on disk.
pub(crate) fn plan_recovery(input: &RecoveryInput<'_>) -> Result<RecoveryPlan, OpenError> {
    let RecoveryInput { fs, dir, segment_size, .. } = *input;
    let (segments, leftovers) = open_segments(fs, dir, segment_size)?;
    let Some(first) = segments.first() else {
        return Ok(RecoveryPlan { segments, leftovers, pos: 0, durable_end: 0, cut: None });
    };
    let first_start = first.start();
    let files_end = segments.last().map_or(first_start, |s| s.end());
    // A checkpoint claiming more than the files hold is not trusted at all.
    let durable_end = input.checkpoint.filter(|&c| c <= files_end).unwrap_or(0).max(first_start);
    let (pos, cause) = scan(&segments, input.crc);
    let mut cut = None;
    if let Some(last) = last_nonzero_from(&segments, pos) {
        let cause = cause.unwrap_or(DecodeError::Unwritten);
        if pos < durable_end && input.mode == RecoveryMode::Strict {
            let path =
                segment_of(&segments, pos).map_or_else(|| dir.to_path_buf(), |s| s.path().to_path_buf());
            return Err(OpenError::Damaged { path, physical_offset: pos, durable_end, source: cause });
        }
        cut = Some((cause, last));
    }
    Ok(RecoveryPlan { segments, leftovers, pos, durable_end, cut })
}

/// Carries out `plan`: removes leftovers, moves the bytes past a cut aside and zeroes
/// them, removes empty segments past the write position, and (after a crash) syncs what
/// the scan accepted past the durable end.
pub(crate) fn apply_recovery(input: &RecoveryInput<'_>, plan: RecoveryPlan) -> Result<Recovered, OpenError> {
    let fs = input.fs;
    let RecoveryPlan { mut segments, leftovers, mut pos, durable_end, cut: planned } = plan;
    for path in leftovers {
        fs.remove_file(&path)?;
    }
    let mut cut = None;
    if let Some((cause, last)) = planned {
        let (bytes, moved_to) = move_aside(fs, &input.cut_dir, &mut segments, pos, last)?;
        cut =
            Some(Cut { physical_offset: pos, cause, below_durable_end: pos < durable_end, bytes, moved_to });
    }
    // Segments wholly past the write position are all zeros now (preallocated): remove.
    while segments.len() > 1 && segments.last().is_some_and(|s| s.start() > pos) {
        if let Some(seg) = segments.pop() {
            let path = seg.path().to_path_buf();
            drop(seg);
            fs.remove_file(&path)?;
        }
    }
    if input.crashed {
        // Make what the scan accepted durable: past the checkpoint it may sit only in the
        // page cache.
        for seg in segments.iter().filter(|s| s.end() > durable_end && s.start() < pos) {
            let (from, to) = (durable_end.max(seg.start()), pos.min(seg.end()));
            if from < to {
                seg.sync(fs, (from - seg.start()) as usize, (to - from) as usize)?;
            }
        }
    }
    // A tail too short for the blank a roll writes (< 8 bytes, all zeros after the move):
    // let the next put start the next segment.
    if let Some(last) = segments.last()
        && last.start() <= pos
        && pos < last.end()
        && last.end() - pos < BLANK_LEN
    {
        pos = last.end();
    }
    Ok(Recovered { segments, write_pos: pos, durable_end, cut })
}

/// Opens every segment file, checking names, contiguity and sizes; also returns the
/// leftovers of segment creations that never finished.
fn open_segments(
    fs: &FileOps,
    dir: &Path,
    segment_size: u64,
) -> Result<(Vec<Arc<Segment>>, Vec<PathBuf>), OpenError> {
    let mut named = Vec::new();
    let mut leftovers = Vec::new();
    for (name, path, ft) in fs.list_dir(dir)? {
        if name.ends_with(".tmp") {
            leftovers.push(path);
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
            return Err(OpenError::Corrupt { path, reason: Corruption::OffGrid { start, segment_size } });
        }
        if let Some(prev) = segments.last()
            && prev.end() != start
        {
            return Err(OpenError::Corrupt {
                path,
                reason: Corruption::MissingSegment { missing: prev.end() },
            });
        }
        let file_len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        if file_len != segment_size {
            return Err(OpenError::Corrupt {
                path,
                reason: Corruption::WrongLength { len: file_len, segment_size },
            });
        }
        segments.push(Arc::new(Segment::open(fs, path, start, segment_size)?));
    }
    Ok((segments, leftovers))
}

fn segment_of(segments: &[Arc<Segment>], pos: u64) -> Option<&Arc<Segment>> {
    segments.iter().find(|s| s.start() <= pos && pos < s.end())
}

/// The whole segment's bytes (recovery only: no other thread exists yet).
fn all_bytes(seg: &Segment) -> &[u8] {
    // SAFETY: the range is the whole mapping; during recovery no other thread can reach the
    // segment, so nothing writes it while the slice lives.
    unsafe { seg.bytes(0, (seg.end() - seg.start()) as usize) }
}

/// Scans from the first segment while records and blanks are valid; returns the first
/// invalid position and why it is invalid (`None`: the files end there).
fn scan(segments: &[Arc<Segment>], crc: &CrcEpochs) -> (u64, Option<DecodeError>) {
    let Some(first) = segments.first() else { return (0, None) };
    let mut pos = first.start();
    for (idx, seg) in segments.iter().enumerate() {
        let bytes = all_bytes(seg);
        loop {
            let rel = (pos - seg.start()) as usize;
            let rest = &bytes[rel..];
            if (rest.len() as u64) < BLANK_LEN {
                // Too short for a record or a blank: a zeroed one is a segment that an
                // earlier recovery closed; step over it.
                if rest.iter().all(|&b| b == 0) && idx + 1 < segments.len() {
                    pos = seg.end();
                    break;
                }
                return (
                    pos,
                    Some(DecodeError::Truncated { needed: BLANK_LEN as usize, available: rest.len() }),
                );
            }
            let opts = DecodeOptions {
                expected_physical_offset: Some(pos),
                verify_body_crc: true,
                // Per record: required only where the log was written with it, so a
                // setting changed between runs never rejects the other's records.
                record_crc: if crc.requires_crc(pos) {
                    RecordCrcCheck::Require
                } else {
                    RecordCrcCheck::IfPresent
                },
            };
            match codec::decode_with(rest, &opts) {
                Ok(Decoded::Message(m)) => pos += u64::from(m.total_size()),
                Ok(Decoded::Blank { size }) if size as usize == rest.len() => {
                    pos = seg.end();
                    break;
                }
                Ok(Decoded::Blank { size }) => {
                    return (pos, Some(DecodeError::BadBlankSize { size, available: rest.len() }));
                }
                Err(e) => return (pos, Some(e)),
            }
        }
    }
    (pos, None)
}

/// The physical offset of the last non-zero byte at or after `pos`, if any.
fn last_nonzero_from(segments: &[Arc<Segment>], pos: u64) -> Option<u64> {
    segments.iter().rev().filter(|s| s.end() > pos).find_map(|seg| {
        let from = pos.saturating_sub(seg.start()) as usize;
        let at = all_bytes(seg)[from..].iter().rposition(|&b| b != 0)?;
        Some(seg.start() + (from + at) as u64)
    })
}

/// A file name in `cut_dir` for bytes starting at `offset` that no earlier cut used.
fn free_name(cut_dir: &Path, offset: u64) -> PathBuf {
    let base = cut_dir.join(file_name(offset));
    if !base.exists() {
        return base;
    }
    (1u32..).map(|k| base.with_extension(k.to_string())).find(|p| !p.exists()).unwrap_or(base)
}

/// Moves `[pos, last]` out of the log: the partial segment's bytes are copied to a file and
/// then zeroed, later segments holding data are renamed whole. Returns the bytes moved and
/// the files written.
fn move_aside(
    fs: &FileOps,
    cut_dir: &Path,
    segments: &mut Vec<Arc<Segment>>,
    pos: u64,
    last: u64,
) -> Result<(u64, Vec<PathBuf>), OpenError> {
    fs.create_dir_all(cut_dir)?;
    let mut moved = Vec::new();
    let mut bytes = 0;
    let first = segments.first().map(Arc::clone);
    // The segment holding `pos` keeps its file (its records before `pos` stay) when the cut
    // is inside it, or when it is the first segment.
    let partial = segment_of(segments, pos)
        .filter(|s| s.start() < pos || first.as_ref().is_some_and(|f| Arc::ptr_eq(f, s)))
        .map(Arc::clone);
    if let Some(seg) = partial {
        let rel = (pos - seg.start()) as usize;
        let end = (last.min(seg.end() - 1) - seg.start()) as usize + 1;
        let data = all_bytes(&seg);
        if end > rel {
            let to = free_name(cut_dir, pos);
            fs.write_file_durable(&to, &data[rel..end], None)?;
            bytes += (end - rel) as u64;
            moved.push(to);
        }
        seg.zero_tail(fs, rel)?;
    }
    // Later segments: moved whole if they hold any byte, else removed.
    while segments.len() > 1 && segments.last().is_some_and(|s| s.start() >= pos) {
        let Some(seg) = segments.pop() else { break };
        let (start, end, path) = (seg.start(), seg.end(), seg.path().to_path_buf());
        let has_data = all_bytes(&seg).iter().any(|&b| b != 0);
        drop(seg);
        if has_data {
            let to = free_name(cut_dir, start);
            bytes += last.min(end - 1) + 1 - start;
            fs.rename(&path, &to)?;
            moved.push(to);
        } else {
            fs.remove_file(&path)?;
        }
    }
    moved.sort();
    Ok((bytes, moved))
}
