//! The contention sweep and bench harness for abslock.
//!
//! The `sweep` binary (`src/bin/sweep.rs`) measures which put-message lock wins a
//! CommitLog's critical section on two targets (`lock-bound`: the append alone; `store`:
//! the real put path), over threads x message sizes, with strategies interleaved in random
//! order for R rounds and judged by paired ratios; it writes `rounds.csv`, `results.csv`,
//! `report.md` and SVG plots, and `sweep compare` checks two runs' verdicts agree.
//!
//! | module | what |
//! |---|---|
//! | [`strategy`], [`registry`], [`sweep_lock`], [`peers`], [`ablations`] | strategies and their lock types |
//! | [`grid`] | targets and cells |
//! | [`target`], [`window`], [`cpu`], [`latency`] | the critical sections driven; one measured window |
//! | [`run`], [`stats`], [`results`] | rounds, verdicts, the CSV files |
//! | [`report`], [`plots`], [`trace`], [`compare`], [`outputs`], [`machine`] | outputs |
//! | [`pool`], [`counter`] | worker threads and guarded counters for the contended-lock benches |

pub mod ablations;
pub mod compare;
pub mod counter;
pub mod cpu;
pub mod grid;
pub mod latency;
pub mod machine;
pub mod outputs;
pub mod peers;
pub mod plots;
pub mod pool;
pub mod registry;
pub mod report;
pub mod results;
pub mod run;
pub mod stats;
pub mod strategy;
pub mod sweep_lock;
pub mod target;
pub mod trace;
pub mod window;
