//! The contention sweep and bench harness for abslock.
//!
//! The `sweep` binary (`src/bin/sweep.rs`) measures which put-message lock wins a
//! CommitLog's critical section, over a grid of strategy x threads x message size
//! (x layout, topics, flush mode), and writes `results.csv`, `report.md` and SVG
//! plots. The modules here are its parts, one concept each:
//!
//! | module | what |
//! |---|---|
//! | [`strategy`] | strategy names (`cas-spin`, `abs`, `parking_lot`, ...) |
//! | [`grid`] | the grid and its flags |
//! | [`sweep_lock`], [`peers`], [`registry`] | raw lock types per strategy |
//! | [`timed`] | `Timed<R>`: acquire/hold sampling wrapper |
//! | [`target`], [`emulated`], [`store_target`], [`ring`] | the critical section driven |
//! | [`worker`], [`limit`], [`run`] | running cells |
//! | [`pool`] | worker threads for the criterion benches |
//! | [`cpu`], [`stats`], [`row`] | measurement and derived figures |
//! | [`csv`], [`report`], [`plots`], [`outputs`], [`machine`], [`progress`] | outputs |

pub mod cpu;
pub mod csv;
pub mod emulated;
pub mod grid;
pub mod limit;
pub mod machine;
pub mod outputs;
pub mod peers;
pub mod plots;
pub mod pool;
pub mod progress;
pub mod registry;
pub mod report;
pub mod ring;
pub mod row;
pub mod run;
pub mod stats;
pub mod store_target;
pub mod strategy;
pub mod sweep_lock;
pub mod target;
pub mod timed;
pub mod worker;
