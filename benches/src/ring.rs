//! A warm, file-backed memory mapping the emulated CommitLog and the memcpy limit
//! write into at an advancing offset, wrapping around at the end.
//!
//! Every page is touched once at creation, so no page fault lands inside a
//! measured critical section (a cold 4 KiB copy runs ~50x slower than a warm one
//! on the reference machine, see DESIGN.md).

use memmap2::MmapMut;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// Page size assumed for touching and alignment, in bytes.
pub const PAGE: usize = 4096;

/// The warm mapping. Writers get raw pointers into it; who may write where is
/// decided by the caller's locks (see `EmulatedLog`).
#[derive(Debug)]
pub struct Ring {
    map: MmapMut,
    ptr: *mut u8,
    len: usize,
    path: PathBuf,
    _file: File,
}

// SAFETY: `Ring` hands out only its base pointer and length; every write through
// it is made by a caller that holds the lock owning that byte range, and the
// mapping itself lives (unmoved, unmapped) until the `Ring` drops.
unsafe impl Send for Ring {}
// SAFETY: as for `Send`; shared access is only `base()`, `len()` and `msync`.
unsafe impl Sync for Ring {}

impl Ring {
    /// Creates `dir/name` of `len` bytes (rounded up to a page), maps it shared and
    /// touches every page.
    ///
    /// # Errors
    /// Any I/O error creating, sizing or mapping the file (e.g. no space in `dir`).
    pub fn create(dir: &Path, name: &str, len: usize) -> io::Result<Ring> {
        let len = len.max(PAGE).div_ceil(PAGE) * PAGE;
        let path = dir.join(name);
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path)?;
        file.set_len(len as u64)?;
        // SAFETY: the file was just created by us in a directory the sweep owns; no
        // other process is expected to truncate it while mapped.
        let mut map = unsafe { MmapMut::map_mut(&file)? };
        for page in map.chunks_mut(PAGE) {
            page[0] = 1;
        }
        let ptr = map.as_mut_ptr();
        Ok(Ring { map, ptr, len, path, _file: file })
    }

    /// Base address of the mapping.
    pub fn base(&self) -> *mut u8 {
        self.ptr
    }

    /// Length in bytes (a multiple of [`PAGE`]).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the ring is empty (never: at least one page).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The file backing the ring.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `msync`s `len` bytes from `offset` (clamped to the ring).
    ///
    /// # Errors
    /// The I/O error `msync` reports.
    pub fn msync(&self, offset: usize, len: usize) -> io::Result<()> {
        if offset >= self.len || len == 0 {
            return Ok(());
        }
        let len = len.min(self.len - offset);
        self.map.flush_range(offset, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_rounds_to_pages_and_syncs() {
        let dir = tempfile::tempdir().unwrap();
        let r = Ring::create(dir.path(), "r", 5000).unwrap();
        assert_eq!(r.len(), 2 * PAGE);
        assert!(r.path().exists());
        r.msync(0, r.len()).unwrap();
        r.msync(r.len() + 1, 10).unwrap();
    }
}
