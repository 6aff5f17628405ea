//! The file-operation seam: every create, reserve, map, sync, write, rename and remove the
//! store performs goes through [`FileOps`], so tests can inject faults in one place
//! (ours, after redb's crash-consistency storage backend).

pub mod fault;

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use memmap2::{MmapOptions, MmapRaw};

use crate::error::FileError;
use fault::{FaultInjector, FaultPoint};

/// How long opening waits for another holder of the directory lock before reporting the
/// store as in use (ours; covers a fork-to-exec window of another thread's child).
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// Result of a file operation: the error names the path and the operation.
pub(crate) type FsResult<T> = Result<T, FileError>;

/// The store's only door to the file system. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub(crate) struct FileOps {
    faults: FaultInjector,
}

fn err(op: &'static str, path: &Path, source: io::Error) -> FileError {
    FileError::new(op, path, source)
}

/// A full disk while reserving `len` bytes: the error names the size it needed and the
/// configuration fields that lower it, since the file's size is the caller's choice.
fn out_of_space(e: FileError, len: u64, point: FaultPoint) -> FileError {
    if e.io_error().kind() != io::ErrorKind::StorageFull {
        return e;
    }
    let knobs = match point {
        FaultPoint::ConsumeQueueCreate => "consume_queue_entries (20 bytes each per file)",
        _ => "segment_size, preallocate_ahead (or preallocate = false) and retention",
    };
    let (op, path) = (e.op(), e.path().to_path_buf());
    let source = io::Error::new(
        io::ErrorKind::StorageFull,
        format!("{}; it needed {len} bytes; lower StoreConfig's {knobs}", e.io_error()),
    );
    FileError::new(op, &path, source)
}

/// `fallocate(PUNCH_HOLE | KEEP_SIZE)` over `[0, len)`. A file system without hole
/// punching keeps the blocks until the file is closed and unmapped (not an error).
fn punch_hole(file: &File, path: &Path, len: u64) -> FsResult<()> {
    let Ok(len) = libc::off_t::try_from(len) else { return Ok(()) };
    // SAFETY: `file` is an open, writable descriptor for the duration of the call;
    // fallocate takes no pointers.
    let rc = unsafe {
        libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, 0, len)
    };
    if rc != 0 {
        let e = io::Error::last_os_error();
        if !matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::ENOSYS)) {
            return Err(err("release the blocks of", path, e));
        }
    }
    Ok(())
}

/// The temporary name a file is built under before its rename makes it visible.
fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

impl FileOps {
    pub(crate) fn new(faults: FaultInjector) -> Self {
        Self { faults }
    }

    fn check(&self, point: FaultPoint, op: &'static str, path: &Path) -> FsResult<()> {
        self.faults.pass(point);
        self.faults.check(point).map_err(|e| err(op, path, e))
    }

    /// Passes a fault point that never fails (a test may hold a thread there).
    pub(crate) fn pass(&self, point: FaultPoint) {
        self.faults.pass(point);
    }

    pub(crate) fn create_dir_all(&self, path: &Path) -> FsResult<()> {
        fs::create_dir_all(path).map_err(|e| err("create directory", path, e))
    }

    /// Creates `path` with `len` bytes reserved on disk (`posix_fallocate`), built under a
    /// temporary name and renamed into place, so a crash or a full disk never leaves a
    /// half-made file under the final name, and a full disk is an error here rather than a
    /// SIGBUS on a later store into the mapping. The new file reads as zeros.
    pub(crate) fn create_reserved(&self, path: &Path, len: u64, point: FaultPoint) -> FsResult<File> {
        let tmp = tmp_path(path);
        let result = self.create_reserved_at(&tmp, path, len, point);
        if result.is_err() {
            // Best effort: a leftover tmp file is removed again at the next attempt or open.
            let _ = fs::remove_file(&tmp);
        }
        result.map_err(|e| out_of_space(e, len, point))
    }

    fn create_reserved_at(&self, tmp: &Path, path: &Path, len: u64, point: FaultPoint) -> FsResult<File> {
        let _ = fs::remove_file(tmp);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(tmp)
            .map_err(|e| err("create", tmp, e))?;
        self.check(point, "reserve disk space for", path)?;
        let len_off = libc::off_t::try_from(len)
            .map_err(|_| err("reserve disk space for", path, io::Error::from(io::ErrorKind::InvalidInput)))?;
        // SAFETY: `file` is an open, writable descriptor for the duration of the call;
        // posix_fallocate takes no pointers.
        let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len_off) };
        if rc != 0 {
            return Err(err("reserve disk space for", path, io::Error::from_raw_os_error(rc)));
        }
        fs::rename(tmp, path).map_err(|e| err("rename into place", path, e))?;
        if let Some(dir) = path.parent() {
            self.sync_dir(dir)?;
        }
        Ok(file)
    }

    /// Opens an existing file for reading and writing.
    pub(crate) fn open_rw(&self, path: &Path) -> FsResult<File> {
        OpenOptions::new().read(true).write(true).open(path).map_err(|e| err("open", path, e))
    }

    /// Maps `len` bytes of `file` shared and writable.
    pub(crate) fn map(&self, file: &File, path: &Path, len: usize) -> FsResult<MmapRaw> {
        self.check(FaultPoint::Map, "map", path)?;
        MmapOptions::new().len(len).map_raw(file).map_err(|e| err("map", path, e))
    }

    /// An anonymous writable mapping of `len` bytes (a pooled write buffer).
    pub(crate) fn map_anon(&self, len: usize) -> io::Result<MmapRaw> {
        MmapOptions::new().len(len).map_anon().map(MmapRaw::from)
    }

    /// `msync(MS_SYNC)` of `[offset, offset + len)` of a mapping (memmap2 aligns the start
    /// down to a page).
    pub(crate) fn sync_map(&self, map: &MmapRaw, path: &Path, offset: usize, len: usize) -> FsResult<()> {
        self.check(FaultPoint::Sync, "msync", path)?;
        if len == 0 {
            return Ok(());
        }
        map.flush_range(offset, len).map_err(|e| err("msync", path, e))
    }

    /// `fsync` of a directory, so renames and creations in it are durable.
    pub(crate) fn sync_dir(&self, dir: &Path) -> FsResult<()> {
        let d = File::open(dir).map_err(|e| err("open directory", dir, e))?;
        d.sync_all().map_err(|e| err("fsync directory", dir, e))
    }

    /// `pwrite` of all of `data` at `offset` (the pooled write mode's commit). An injected
    /// fault writes the first half, then fails: a short write.
    pub(crate) fn write_at(&self, file: &File, path: &Path, offset: u64, data: &[u8]) -> FsResult<()> {
        if let Err(e) = self.check(FaultPoint::PooledWrite, "write", path) {
            let _ = file.write_all_at(&data[..data.len() / 2], offset);
            return Err(e);
        }
        file.write_all_at(data, offset).map_err(|e| err("write", path, e))
    }

    /// Writes a small file atomically: temporary file, `fsync`, rename, `fsync` of the
    /// directory. Used for the checkpoint.
    pub(crate) fn write_file_atomic(&self, path: &Path, bytes: &[u8]) -> FsResult<()> {
        self.write_file_durable(path, bytes, Some(FaultPoint::CheckpointWrite))
    }

    /// As [`write_file_atomic`](Self::write_file_atomic), asking `point` (if any) first.
    /// Recovery writes the bytes it cuts and the `record_crc` file with it.
    pub(crate) fn write_file_durable(
        &self,
        path: &Path,
        bytes: &[u8],
        point: Option<FaultPoint>,
    ) -> FsResult<()> {
        let tmp = tmp_path(path);
        let result = (|| {
            if let Some(point) = point {
                self.check(point, "write", path)?;
            }
            let mut f = File::create(&tmp).map_err(|e| err("create", &tmp, e))?;
            f.write_all(bytes).map_err(|e| err("write", &tmp, e))?;
            f.sync_all().map_err(|e| err("fsync", &tmp, e))?;
            fs::rename(&tmp, path).map_err(|e| err("rename into place", path, e))?;
            if let Some(dir) = path.parent() {
                self.sync_dir(dir)?;
            }
            Ok(())
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }

    /// Reads a whole small file; `Ok(None)` if it does not exist.
    pub(crate) fn read_optional(&self, path: &Path) -> FsResult<Option<Vec<u8>>> {
        match fs::read(path) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(err("read", path, e)),
        }
    }

    /// Creates an empty marker file (the `abort` file) and makes it durable.
    pub(crate) fn create_marker(&self, path: &Path) -> FsResult<()> {
        File::create(path).map_err(|e| err("create", path, e))?;
        if let Some(dir) = path.parent() {
            self.sync_dir(dir)?;
        }
        Ok(())
    }

    /// Renames `from` to `to` and makes both directories durable.
    pub(crate) fn rename(&self, from: &Path, to: &Path) -> FsResult<()> {
        fs::rename(from, to).map_err(|e| err("move", from, e))?;
        for dir in [from.parent(), to.parent()].into_iter().flatten() {
            self.sync_dir(dir)?;
        }
        Ok(())
    }

    /// Removes a file; a missing file is not an error.
    pub(crate) fn remove_file(&self, path: &Path) -> FsResult<()> {
        match fs::remove_file(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(err("remove", path, e)),
        }
    }

    /// Retention's deletion of one commitlog segment: unlinks `path`, makes the unlink
    /// durable (`fsync` of the directory, so deletions reach the disk in order), then
    /// releases the blocks through `file`, which may still be mapped: the mapping stays
    /// valid and reads zeros, and the disk space is free now rather than at unmap.
    pub(crate) fn delete_segment(&self, path: &Path, file: &File) -> FsResult<()> {
        self.check(FaultPoint::RetentionDelete, "delete", path)?;
        self.remove_file(path)?;
        if let Some(dir) = path.parent() {
            self.sync_dir(dir)?;
        }
        let len = self.file_len(file, path)?;
        punch_hole(file, path, len)
    }

    /// Retention's release of one consume-queue file whose entries are all below the
    /// queue's minimum: its blocks are freed (it reads as zeros) and its size kept, so the
    /// queue's files stay `i * file size` apart.
    pub(crate) fn release_blocks(&self, path: &Path) -> FsResult<()> {
        self.check(FaultPoint::RetentionDelete, "release the blocks of", path)?;
        let file = self.open_rw(path)?;
        let len = self.file_len(&file, path)?;
        punch_hole(&file, path, len)
    }

    /// Removes a directory and everything under it; a missing directory is not an error.
    pub(crate) fn remove_dir_all(&self, dir: &Path) -> FsResult<()> {
        match fs::remove_dir_all(dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(err("remove directory", dir, e)),
        }
    }

    /// Lists the entries of a directory (a missing directory lists as empty).
    pub(crate) fn list_dir(&self, dir: &Path) -> FsResult<Vec<(String, PathBuf, fs::FileType)>> {
        let rd = match fs::read_dir(dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(err("list directory", dir, e)),
        };
        let mut out = Vec::new();
        for entry in rd {
            let entry = entry.map_err(|e| err("list directory", dir, e))?;
            let ft = entry.file_type().map_err(|e| err("stat", &entry.path(), e))?;
            if let Some(name) = entry.file_name().to_str() {
                out.push((name.to_owned(), entry.path(), ft));
            }
        }
        Ok(out)
    }

    /// Takes an exclusive advisory lock (`flock`) on `path`, so two stores never open one
    /// directory. The lock lives as long as the returned file.
    pub(crate) fn lock_file(&self, path: &Path) -> FsResult<Option<File>> {
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| err("create", path, e))?;
        // A lock can be held for a moment by a process that is not a store: a child forked
        // by another thread of the previous holder inherits the lock's open file description
        // until it calls exec (which closes it: std opens files close-on-exec). So retry
        // briefly before reporting the directory as in use.
        let deadline = std::time::Instant::now() + LOCK_WAIT;
        loop {
            // SAFETY: `f` is an open descriptor for the duration of the call; flock takes no
            // pointers.
            let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if rc == 0 {
                return Ok(Some(f));
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(err("lock", path, e));
            }
            if std::time::Instant::now() >= deadline {
                return Ok(None);
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// File length.
    pub(crate) fn file_len(&self, file: &File, path: &Path) -> FsResult<u64> {
        file.metadata().map(|m| m.len()).map_err(|e| err("stat", path, e))
    }
}
