//! `StoreTarget`: the real `abslock-store` CommitLog as a [`PutTarget`].
//!
//! Placeholder until the store's put path lands: opening reports that the store is
//! not available, so the sweep says so and the caller can use `--target emulated`.

use crate::grid::Cell;
use crate::sweep_lock::SweepLock;
use crate::target::{PutTarget, TargetError};
use crate::timed::Timed;
use std::marker::PhantomData;
use std::path::Path;

/// The real store, one per cell, under a fresh directory.
pub struct StoreTarget<R> {
    _lock: PhantomData<fn() -> R>,
}

/// Whether the real store can be driven by this build.
pub const STORE_AVAILABLE: bool = false;

impl<R: SweepLock> StoreTarget<R> {
    /// Opens a store for `cell` under `dir` with locks from `make_lock`.
    ///
    /// # Errors
    /// Always [`TargetError::Setup`] in this build: the store's put path has not landed.
    pub fn open<F>(_dir: &Path, _cell: &Cell, _make_lock: F) -> Result<StoreTarget<R>, TargetError>
    where
        F: Fn() -> R + Send + Sync + Clone + 'static,
    {
        Err(TargetError::Setup(
            "the abslock-store put path is not available in this build; use --target emulated".into(),
        ))
    }

    /// Closes the store cleanly.
    ///
    /// # Errors
    /// The store's close error.
    pub fn close(self) -> Result<(), TargetError> {
        Ok(())
    }
}

impl<R: SweepLock> PutTarget<R> for StoreTarget<R> {
    type Msg = ();

    fn prepare(&self, _topic: usize, _queue_id: u32, _body: &[u8]) -> Result<(), TargetError> {
        Err(TargetError::Setup("store not available".into()))
    }

    fn put(&self, _msg: &()) -> Result<(), TargetError> {
        Err(TargetError::Setup("store not available".into()))
    }

    fn for_each_put_lock(&self, _f: &mut dyn FnMut(&Timed<R>)) {}

    fn flushes(&self) -> Option<u64> {
        None
    }
}
