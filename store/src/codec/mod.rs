//! RocketMQ's CommitLog record codec (in progress).

/// A record failed validation (in progress).
#[derive(Debug)]
#[non_exhaustive]
pub enum ValidationError {}

/// A record failed to decode (in progress).
#[derive(Debug)]
#[non_exhaustive]
pub enum DecodeError {}

/// A decoded record (in progress).
#[derive(Debug)]
pub struct StoredMessage<'a> {
    _bytes: &'a [u8],
}
