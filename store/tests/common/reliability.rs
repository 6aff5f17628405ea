//! Helpers of the reliability tests (crash loop, fault injection, hostile files, corruption
//! proptest): self-checking message bodies, an independent scan of the commitlog files,
//! byte-level damage, a seeded RNG and a child process that is killed on drop.
//!
//! Include with `#[path = "common/reliability.rs"] mod reliability;`.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use abslock_store::codec::{self, DecodeOptions, Decoded, RecordCrcCheck};

/// splitmix64: a small, seedable generator (tests print their seed to replay a failure).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// Uniform in `[lo, hi]`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
}

/// The splitmix64 finaliser.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of this run: `ABSLOCK_SEED` if set, else from the clock. Printed by callers.
pub fn seed() -> u64 {
    if let Some(s) = std::env::var("ABSLOCK_SEED").ok().and_then(|s| s.parse().ok()) {
        return s;
    }
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    mix(t.as_nanos() as u64 ^ u64::from(std::process::id()))
}

/// A self-checking body for message `id`: the id (8 bytes, big-endian) then 8 to 120 bytes
/// derived from it, so any record read back can be checked against what was written
/// without knowing which records were written.
pub fn body_for(id: u64) -> Vec<u8> {
    let len = 8 + (mix(id) % 113) as usize;
    let mut b = id.to_be_bytes().to_vec();
    let mut x = id;
    while b.len() < 8 + len {
        x = mix(x.wrapping_add(1));
        b.extend_from_slice(&x.to_le_bytes());
    }
    b.truncate(8 + len);
    b
}

/// The id of a body made by [`body_for`], if the body is exactly that body.
pub fn id_if_intact(body: &[u8]) -> Option<u64> {
    let id = u64::from_be_bytes(body.get(..8)?.try_into().ok()?);
    (body_for(id) == body).then_some(id)
}

/// One record found by [`scan_commitlog`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedRecord {
    pub physical_offset: u64,
    pub size: u64,
    pub topic: String,
    pub queue_id: u32,
    pub queue_offset: u64,
    pub body: Vec<u8>,
}

/// What [`scan_commitlog`] found in a commitlog directory.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    /// Valid records in log order, up to the first invalid position.
    pub records: Vec<ScannedRecord>,
    /// The first position that holds no valid record or blank: the log's end.
    pub end: u64,
    /// Positions `>= end` in segment files that hold a non-zero byte (the first one found).
    pub stale_byte_at: Option<u64>,
    /// Segment files `(start, len)`, in order.
    pub segments: Vec<(u64, u64)>,
}

/// Segment files (20-digit names) of `commitlog_dir`, sorted by start offset.
pub fn segment_files(commitlog_dir: &Path) -> Vec<(u64, PathBuf)> {
    let mut v: Vec<(u64, PathBuf)> = std::fs::read_dir(commitlog_dir)
        .map(|rd| {
            rd.filter_map(|e| {
                let e = e.ok()?;
                let name = e.file_name().into_string().ok()?;
                if name.len() != 20 || !name.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                Some((name.parse().ok()?, e.path()))
            })
            .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Scans the segment files of `commitlog_dir` the way recovery should, independently of
/// the store: from the first segment, every record must decode with every check (magic,
/// sizes, body CRC, required record CRC, physical offset); a blank must reach exactly to
/// its segment's end. Stops at the first position that fails.
pub fn scan_commitlog(commitlog_dir: &Path) -> Scan {
    let files = segment_files(commitlog_dir);
    let mut scan = Scan::default();
    let mut contents = Vec::new();
    for (start, path) in &files {
        let bytes = std::fs::read(path).unwrap_or_default();
        scan.segments.push((*start, bytes.len() as u64));
        contents.push((*start, bytes));
    }
    let Some((first, _)) = contents.first() else { return scan };
    let mut pos = *first;
    let mut idx = 0;
    'outer: while idx < contents.len() {
        let (start, bytes) = &contents[idx];
        if *start != pos {
            break;
        }
        let seg_end = start + bytes.len() as u64;
        loop {
            let rel = (pos - start) as usize;
            let opts = DecodeOptions {
                expected_physical_offset: Some(pos),
                verify_body_crc: true,
                record_crc: RecordCrcCheck::Require,
            };
            match codec::decode_with(&bytes[rel..], &opts) {
                Ok(Decoded::Message(m)) => {
                    scan.records.push(ScannedRecord {
                        physical_offset: pos,
                        size: u64::from(m.total_size()),
                        topic: m.topic().to_owned(),
                        queue_id: m.queue_id(),
                        queue_offset: m.queue_offset(),
                        body: m.body().to_vec(),
                    });
                    pos += u64::from(m.total_size());
                }
                Ok(Decoded::Blank { size }) if pos + u64::from(size) == seg_end => {
                    pos = seg_end;
                    idx += 1;
                    continue 'outer;
                }
                _ => break 'outer,
            }
        }
    }
    scan.end = pos;
    for (start, bytes) in &contents {
        let from = pos.saturating_sub(*start) as usize;
        if let Some(i) = bytes.get(from..).and_then(|t| t.iter().position(|&b| b != 0)) {
            scan.stale_byte_at = Some(start + (from + i) as u64);
            break;
        }
    }
    scan
}

/// Every regular file under `dir`, relative path -> length.
pub fn files_under(dir: &Path) -> BTreeMap<String, u64> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, u64>) {
        let Ok(rd) = std::fs::read_dir(dir) else { return };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else if let Ok(m) = e.metadata() {
                out.insert(p.strip_prefix(root).unwrap().to_string_lossy().into_owned(), m.len());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// XORs `len` bytes of `path` from `at` with `mask` (clipped to the file).
pub fn xor_range(path: &Path, at: u64, len: u64, mask: u8) {
    let mut bytes = std::fs::read(path).unwrap();
    let from = (at as usize).min(bytes.len());
    let to = (at.saturating_add(len) as usize).min(bytes.len());
    for b in &mut bytes[from..to] {
        *b ^= mask;
    }
    std::fs::write(path, bytes).unwrap();
}

/// Overwrites `path` at `at` with `data`.
pub fn write_at(path: &Path, at: u64, data: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(data, at).unwrap();
}

/// A child process killed with SIGKILL and reaped when dropped, so a failing parent never
/// leaves a writer behind.
pub struct KillOnDrop(pub Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Re-executes this test binary running only `test_name`, with `envs` set (the child
/// branch of the test reads them), stdout piped, stderr inherited only when
/// `ABSLOCK_CHILD_STDERR` is set.
pub fn spawn_self(test_name: &str, envs: &[(&str, String)]) -> KillOnDrop {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", test_name, "--nocapture", "--test-threads=1"]).stdout(Stdio::piped()).stderr(
        if std::env::var_os("ABSLOCK_CHILD_STDERR").is_some() { Stdio::inherit() } else { Stdio::null() },
    );
    for (k, v) in envs {
        cmd.env(k, v);
    }
    KillOnDrop(cmd.spawn().unwrap())
}
