//! The contention sweep (in progress).
fn main() {}
