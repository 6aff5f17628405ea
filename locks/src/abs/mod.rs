//! The adaptive backoff-spin lock and its policy.

pub(crate) mod calibrate;
pub(crate) mod config;
#[cfg(not(abslock_loom))]
pub(crate) mod ext;
pub(crate) mod lock;
pub(crate) mod policy;
pub(crate) mod profile;
pub(crate) mod round_budget;
pub(crate) mod solo_trial;
pub(crate) mod stats;
pub(crate) mod trial;
