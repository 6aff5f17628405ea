//! loom model checks for abslock; see tests/.
