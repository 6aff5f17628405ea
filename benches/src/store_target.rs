//! `StoreTarget`: the real `abslock-store` CommitLog as a [`PutTarget`].
//!
//! One store per cell, in a fresh directory under the run directory, with segments
//! large enough to hold a whole default cell (warmed at open, so page faults stay off
//! the put path), the cell's layout and flush mode, and the
//! cell's lock wrapped in [`Timed`]. The directory is removed when the cell ends
//! (unless the whole run directory is kept with `--keep`).

use crate::grid::{Cell, FlushMode, Layout};
use crate::sweep_lock::SweepLock;
use crate::target::{PutTarget, TargetError};
use crate::timed::Timed;
use abslock_store::{Message, MessageStore, StoreConfig, WarmUp};
use std::path::Path;

/// Whether the real store can be driven by this build.
pub const STORE_AVAILABLE: bool = true;

/// Default commitlog segment size for sweep stores, bytes: large enough that a default
/// cell (25 ms warm-up + 180 ms, at most ~2.3 GB/s of records on this project's machine)
/// fits in the first segment, which the store creates and warms at open, before the
/// cell's clock starts. With 16 MiB segments, rolls (inside the put-message lock) waited
/// for the preallocation thread and paced the cells at 1 KiB and up. Three segments (the
/// current one and `preallocate_ahead` = 2 ready) take 1.5 GiB of tmpfs per cell, removed
/// after it (ours; RocketMQ's default is 1 GiB).
pub const DEFAULT_SEGMENT_SIZE: u64 = 512 << 20;

/// Entries per consume-queue file in sweep stores (320 KiB files): RocketMQ's 300 000
/// (6 MB per file) times 16 queues times 256 topics would be 24 GB per cell (ours).
pub const CONSUME_QUEUE_ENTRIES: u64 = 16_384;

/// The real store for one cell.
pub struct StoreTarget<R: SweepLock> {
    store: MessageStore<Timed<R>>,
    dir: tempfile::TempDir,
    keep: bool,
}

impl<R: SweepLock> StoreTarget<R> {
    /// Opens a store for `cell` in a fresh directory under `parent`, segments of
    /// `segment_size` bytes, locks from `make_lock`; `keep` leaves the directory on disk
    /// after [`close`](Self::close).
    ///
    /// # Errors
    /// [`TargetError::Setup`] with the store's open error (I/O, invalid config).
    pub fn open<F>(
        parent: &Path,
        cell: &Cell,
        segment_size: u64,
        keep: bool,
        make_lock: F,
    ) -> Result<StoreTarget<R>, TargetError>
    where
        F: Fn() -> R + Send + Sync + Clone + 'static,
    {
        let dir = tempfile::Builder::new().prefix("store-").tempdir_in(parent).map_err(|e| {
            TargetError::Setup(format!("cannot create a store directory in {}: {e}", parent.display()))
        })?;
        let config = StoreConfig {
            segment_size,
            flush: match cell.flush {
                FlushMode::Async => abslock_store::FlushMode::ASYNC,
                FlushMode::Sync => abslock_store::FlushMode::SYNC,
            },
            layout: match cell.layout {
                Layout::Single => abslock_store::Layout::Single,
                Layout::PerTopic => abslock_store::Layout::PerTopic,
            },
            warm_up: WarmUp { enabled: true, mlock: false },
            preallocate: true,
            consume_queue_entries: CONSUME_QUEUE_ENTRIES,
            ..StoreConfig::default()
        };
        let store = MessageStore::open_with_lock(dir.path(), config, move || Timed::new(make_lock()))
            .map_err(|e| TargetError::Setup(format!("cannot open the store: {e}")))?;
        Ok(StoreTarget { store, dir, keep })
    }

    /// Closes the store cleanly, then removes its directory (unless kept).
    ///
    /// # Errors
    /// [`TargetError::Store`] with the store's close error.
    pub fn close(self) -> Result<(), TargetError> {
        let closed = self.store.close().map_err(|e| TargetError::Store(format!("close: {e}")));
        if self.keep {
            let _ = self.dir.keep();
        }
        closed
    }
}

impl<R: SweepLock> PutTarget<R> for StoreTarget<R> {
    type Msg = Message;

    fn prepare(&self, topic: usize, queue_id: u32, body: &[u8]) -> Result<Message, TargetError> {
        Ok(Message::new(format!("topic-{topic}"), body.to_vec()).queue_id(queue_id))
    }

    #[inline]
    fn put(&self, msg: &Message) -> Result<(), TargetError> {
        self.store.put_message(msg).map(|_| ()).map_err(|e| TargetError::Store(e.to_string()))
    }

    fn for_each_put_lock(&self, f: &mut dyn FnMut(&Timed<R>)) {
        self.store.for_each_put_lock(|l| f(l));
    }

    fn flushes(&self) -> Option<u64> {
        Some(self.store.stats().flushes)
    }

    fn rolls(&self) -> Option<u64> {
        Some(self.store.stats().rolls)
    }
}
