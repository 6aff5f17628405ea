//! A RocketMQ-style CommitLog message store on memory-mapped segments, generic over the put-message lock.
//!
//! (in progress: see issue 3)

pub mod codec;
mod message;

pub use codec::{DecodeError, StoredMessage, ValidationError};
pub use message::Message;
