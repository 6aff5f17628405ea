//! The CommitLog store (in progress).
