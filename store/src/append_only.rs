//! An append-only list that lends `&T` for as long as the list lives (ours): the segment
//! list of a CommitLog, the files of a consume queue, the per-topic logs of a store.
//!
//! Readers take the read lock only to find an element, then use it without any lock. The
//! one invariant that makes this sound, stated once: **an element is never removed or
//! replaced while the list lives**, and each is boxed in an `Arc`, so its address is fixed
//! even when the vector reallocates. (Checked against `boxcar` 0.2.14, a lock-free
//! append-only vector: it would drop the read lock, but cannot hand back the elements by
//! value at close, which the store's per-topic shutdown needs, and the lock is held only
//! for an index lookup.)

use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard};

/// An append-only `Vec<Arc<T>>` whose elements can be borrowed for `&self`.
#[derive(Debug)]
pub(crate) struct AppendOnly<T> {
    items: RwLock<Vec<Arc<T>>>,
}

impl<T> Default for AppendOnly<T> {
    fn default() -> Self {
        Self { items: RwLock::new(Vec::new()) }
    }
}

impl<T> AppendOnly<T> {
    pub(crate) fn new(items: Vec<Arc<T>>) -> Self {
        Self { items: RwLock::new(items) }
    }

    fn read(&self) -> RwLockReadGuard<'_, Vec<Arc<T>>> {
        self.items.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Element `i`, borrowed for as long as the list.
    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        let ptr: *const T = Arc::as_ptr(self.read().get(i)?);
        // SAFETY: elements are never removed or replaced while `self` lives (the type's
        // invariant: only `push` changes the vector), and the `Arc` the vector holds keeps
        // the element alive at this address however the vector reallocates; so the element
        // outlives the returned borrow of `self`.
        Some(unsafe { &*ptr })
    }

    /// Appends `item`; returns its index.
    pub(crate) fn push(&self, item: Arc<T>) -> usize {
        let mut items = self.items.write().unwrap_or_else(PoisonError::into_inner);
        items.push(item);
        items.len() - 1
    }

    pub(crate) fn len(&self) -> usize {
        self.read().len()
    }

    /// A snapshot of the elements (shared).
    pub(crate) fn to_vec(&self) -> Vec<Arc<T>> {
        self.read().clone()
    }

    /// The elements, once nothing borrows the list any more.
    pub(crate) fn into_vec(self) -> Vec<Arc<T>> {
        self.items.into_inner().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrows_survive_growth() {
        let list = AppendOnly::default();
        list.push(Arc::new(String::from("first")));
        let first = list.get(0).unwrap();
        for i in 0..1000 {
            list.push(Arc::new(i.to_string()));
        }
        assert_eq!(first, "first");
        assert_eq!(list.get(1000).map(String::as_str), Some("999"));
        assert_eq!(list.len(), 1001);
        assert!(list.get(1001).is_none());
    }
}
