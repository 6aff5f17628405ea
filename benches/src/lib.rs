//! Bench and sweep harness (in progress).
