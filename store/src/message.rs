//! The message a producer sends (in progress).

/// A message to append (in progress).
#[derive(Debug, Clone, Default)]
pub struct Message {}
