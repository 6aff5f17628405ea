//! Pooled write buffers for [`WriteMode::Pooled`](crate::WriteMode::Pooled) (RocketMQ
//! `TransientStorePool`): segment-sized anonymous mappings, touched (and `mlock`ed if
//! asked) once, lent to fresh segments and returned when a segment is fully committed.

use std::sync::{Mutex, PoisonError};

use memmap2::MmapRaw;

use crate::config::PAGE_SIZE;
use crate::io::FileOps;

/// A fixed set of write buffers of one segment each.
#[derive(Debug)]
pub(crate) struct BufferPool {
    free: Mutex<Vec<MmapRaw>>,
}

impl BufferPool {
    /// Allocates `count` buffers of `size` bytes. Allocation failure yields a smaller pool
    /// (segments without a buffer are written straight into their mapping).
    pub(crate) fn new(fs: &FileOps, count: usize, size: usize, mlock: bool) -> Self {
        let mut free = Vec::with_capacity(count);
        for _ in 0..count {
            let Ok(buf) = fs.map_anon(size) else { break };
            let mut at = 0;
            while at < size {
                // SAFETY: `at < size`, inside the fresh private mapping no one else sees.
                unsafe { std::ptr::write_volatile(buf.as_mut_ptr().add(at), 0) };
                at += PAGE_SIZE as usize;
            }
            if mlock {
                let _ = buf.lock();
            }
            free.push(buf);
        }
        Self { free: Mutex::new(free) }
    }

    /// Lends a buffer, or `None` when all are in use.
    pub(crate) fn borrow(&self) -> Option<MmapRaw> {
        self.free.lock().unwrap_or_else(PoisonError::into_inner).pop()
    }

    pub(crate) fn give_back(&self, buf: MmapRaw) {
        self.free.lock().unwrap_or_else(PoisonError::into_inner).push(buf);
    }
}
