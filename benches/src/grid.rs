//! The sweep's grid: which strategies, thread counts, message sizes, layouts,
//! topic counts and flush modes to measure, parsed from comma lists.

use crate::strategy::{DEFAULT_STRATEGIES, Strategy, StrategyError};
use std::fmt;
use std::str::FromStr;

/// Default thread counts: under, at and past the 2 cores of the reference machine (issue 4).
pub const DEFAULT_THREADS: &[usize] = &[1, 2, 4, 8, 16];
/// Default message body sizes in bytes (issue 4).
pub const DEFAULT_SIZES: &[usize] = &[128, 1024, 4096, 16384];
/// Largest thread count accepted: past this the run measures the scheduler, not the lock (ours).
pub const MAX_THREADS: usize = 1024;
/// Largest message body accepted in bytes: RocketMQ's default `maxMessageSize`, 4 MiB.
pub const MAX_MSG_SIZE: usize = 4 * 1024 * 1024;
/// Largest topic count accepted (ours; the research question goes to 256).
pub const MAX_TOPICS: usize = 4096;

/// How topics map to logs and locks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Layout {
    /// `single`: one CommitLog and one put-message lock for every topic (RocketMQ).
    Single,
    /// `per-topic`: one log and one lock per topic (Kafka-style partitions).
    PerTopic,
}

/// When a put counts as done with respect to durability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FlushMode {
    /// `async`: a background thread flushes periodically (RocketMQ `ASYNC_FLUSH`).
    Async,
    /// `sync`: the put waits for a group commit covering it (RocketMQ `SYNC_FLUSH`).
    Sync,
}

impl Layout {
    /// The name used in flags, the CSV and the report.
    pub fn name(&self) -> &'static str {
        match self {
            Layout::Single => "single",
            Layout::PerTopic => "per-topic",
        }
    }
}

impl FlushMode {
    /// The name used in flags, the CSV and the report.
    pub fn name(&self) -> &'static str {
        match self {
            FlushMode::Async => "async",
            FlushMode::Sync => "sync",
        }
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for FlushMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Layout {
    type Err = GridError;
    fn from_str(s: &str) -> Result<Self, GridError> {
        match s.trim() {
            "single" => Ok(Layout::Single),
            "per-topic" => Ok(Layout::PerTopic),
            other => Err(GridError::BadValue {
                flag: "--layout",
                value: other.to_string(),
                expected: "single or per-topic",
            }),
        }
    }
}

impl FromStr for FlushMode {
    type Err = GridError;
    fn from_str(s: &str) -> Result<Self, GridError> {
        match s.trim() {
            "async" => Ok(FlushMode::Async),
            "sync" => Ok(FlushMode::Sync),
            other => Err(GridError::BadValue {
                flag: "--flush",
                value: other.to_string(),
                expected: "async or sync",
            }),
        }
    }
}

/// A grid value that does not parse or is out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GridError {
    /// One element of a comma list is bad.
    #[error("bad value `{value}` for {flag}: expected {expected}")]
    BadValue {
        /// The flag the value came from.
        flag: &'static str,
        /// The offending element.
        value: String,
        /// What would have been accepted.
        expected: &'static str,
    },
    /// A list flag was given but holds no elements.
    #[error("{0} needs at least one value")]
    Empty(&'static str),
    /// An unknown strategy name.
    #[error("--strategies: {0}")]
    Strategy(#[from] StrategyError),
}

/// One point of the grid (one cell, before repetition).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cell {
    /// The lock strategy (or `memcpy-limit`).
    pub strategy: Strategy,
    /// Worker threads putting concurrently.
    pub threads: usize,
    /// Message body size in bytes.
    pub msg_size: usize,
    /// Log/lock layout.
    pub layout: Layout,
    /// Number of topics the workers spread messages over (round robin).
    pub topics: usize,
    /// Flush mode.
    pub flush: FlushMode,
    /// Repetition index, from 0.
    pub rep: u32,
}

/// The parsed grid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grid {
    /// Lock strategies, in report column order (without `memcpy-limit`).
    pub strategies: Vec<Strategy>,
    /// Thread counts, ascending.
    pub threads: Vec<usize>,
    /// Message sizes in bytes, ascending.
    pub sizes: Vec<usize>,
    /// Layouts.
    pub layouts: Vec<Layout>,
    /// Topic counts, ascending.
    pub topics: Vec<usize>,
    /// Flush modes.
    pub flushes: Vec<FlushMode>,
    /// Repetitions per cell (>= 1).
    pub reps: u32,
}

/// Parses a comma list with `parse_one`, rejecting an empty list.
pub fn parse_list<T>(
    flag: &'static str,
    s: &str,
    parse_one: impl Fn(&str) -> Result<T, GridError>,
) -> Result<Vec<T>, GridError> {
    let items: Vec<T> = s
        .split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| parse_one(p.trim()))
        .collect::<Result<_, _>>()?;
    if items.is_empty() {
        return Err(GridError::Empty(flag));
    }
    Ok(items)
}

/// Parses a whole number in `min..=max` for `flag`.
pub fn parse_count(
    flag: &'static str,
    s: &str,
    min: usize,
    max: usize,
    expected: &'static str,
) -> Result<usize, GridError> {
    match s.trim().parse::<usize>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(GridError::BadValue { flag, value: s.trim().to_string(), expected }),
    }
}

fn sorted_dedup<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v.dedup();
    v
}

fn keep_first<T: PartialEq + Clone>(v: Vec<T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(v.len());
    for x in v {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

/// The raw comma lists, as given on the command line (`None` = default).
#[derive(Debug, Clone, Default)]
pub struct GridArgs {
    /// `--strategies`.
    pub strategies: Option<String>,
    /// `--threads`.
    pub threads: Option<String>,
    /// `--sizes`.
    pub sizes: Option<String>,
    /// `--layout`.
    pub layouts: Option<String>,
    /// `--topics`.
    pub topics: Option<String>,
    /// `--flush`.
    pub flushes: Option<String>,
    /// `--reps`.
    pub reps: Option<u32>,
}

impl Grid {
    /// The default grid (issue 4): all strategies, threads 1..16, sizes 128 B..16 KiB,
    /// single log, one topic, async flush, 3 repetitions.
    pub fn default_grid() -> Grid {
        Grid {
            strategies: DEFAULT_STRATEGIES.to_vec(),
            threads: DEFAULT_THREADS.to_vec(),
            sizes: DEFAULT_SIZES.to_vec(),
            layouts: vec![Layout::Single],
            topics: vec![1],
            flushes: vec![FlushMode::Async],
            reps: 3,
        }
    }

    /// The `--smoke` grid: three strategies, 1 and 4 threads, 128 B and 4 KiB, one repetition.
    pub fn smoke_grid() -> Grid {
        Grid {
            strategies: vec![Strategy::Spin, Strategy::Abs, Strategy::ParkingLot],
            threads: vec![1, 4],
            sizes: vec![128, 4096],
            layouts: vec![Layout::Single],
            topics: vec![1],
            flushes: vec![FlushMode::Async],
            reps: 1,
        }
    }

    /// Applies the given lists over `base`.
    ///
    /// # Errors
    /// [`GridError`] naming the flag and the bad element: unknown strategy, thread count
    /// outside `1..=MAX_THREADS`, size outside `1..=MAX_MSG_SIZE`, topics outside
    /// `1..=MAX_TOPICS`, unknown layout or flush mode, reps of 0, or an empty list.
    pub fn parse(base: Grid, args: &GridArgs) -> Result<Grid, GridError> {
        let mut g = base;
        if let Some(s) = &args.strategies {
            let all = parse_list("--strategies", s, |p| Ok(p.parse::<Strategy>()?))?;
            // memcpy-limit is always measured; listing it is allowed but adds nothing.
            let locks: Vec<Strategy> = keep_first(all).into_iter().filter(|s| s.is_lock()).collect();
            g.strategies = locks;
        }
        if let Some(s) = &args.threads {
            g.threads = sorted_dedup(parse_list("--threads", s, |p| {
                parse_count("--threads", p, 1, MAX_THREADS, "a thread count from 1 to 1024")
            })?);
        }
        if let Some(s) = &args.sizes {
            g.sizes = sorted_dedup(parse_list("--sizes", s, |p| {
                parse_count("--sizes", p, 1, MAX_MSG_SIZE, "a message size in bytes from 1 to 4194304")
            })?);
        }
        if let Some(s) = &args.layouts {
            g.layouts = keep_first(parse_list("--layout", s, |p| p.parse::<Layout>())?);
        }
        if let Some(s) = &args.topics {
            g.topics = sorted_dedup(parse_list("--topics", s, |p| {
                parse_count("--topics", p, 1, MAX_TOPICS, "a topic count from 1 to 4096")
            })?);
        }
        if let Some(s) = &args.flushes {
            g.flushes = keep_first(parse_list("--flush", s, |p| p.parse::<FlushMode>())?);
        }
        if let Some(r) = args.reps {
            if r == 0 {
                return Err(GridError::BadValue {
                    flag: "--reps",
                    value: "0".into(),
                    expected: "at least 1 repetition",
                });
            }
            g.reps = r;
        }
        Ok(g)
    }

    /// Every cell to run, in run order: scenario (layout, topics, flush), then size,
    /// then threads, then repetition, then strategy, so the strategies of one point are
    /// measured close together in time and drift hits them alike. The `memcpy-limit`
    /// cells (threads 1, first scenario) come first for each size and repetition.
    pub fn cells(&self) -> Vec<Cell> {
        let mut out = Vec::new();
        let mut first_scenario = true;
        for &layout in &self.layouts {
            for &topics in &self.topics {
                for &flush in &self.flushes {
                    for &msg_size in &self.sizes {
                        for rep in 0..self.reps {
                            if first_scenario {
                                out.push(Cell {
                                    strategy: Strategy::MemcpyLimit,
                                    threads: 1,
                                    msg_size,
                                    layout,
                                    topics,
                                    flush,
                                    rep,
                                });
                            }
                            for &threads in &self.threads {
                                for &strategy in &self.strategies {
                                    out.push(Cell {
                                        strategy,
                                        threads,
                                        msg_size,
                                        layout,
                                        topics,
                                        flush,
                                        rep,
                                    });
                                }
                            }
                        }
                    }
                    first_scenario = false;
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> GridArgs {
        GridArgs::default()
    }

    #[test]
    fn no_flags_keep_the_base_grid() {
        assert_eq!(Grid::parse(Grid::default_grid(), &args()).unwrap(), Grid::default_grid());
    }

    #[test]
    fn lists_parse_sort_and_dedup() {
        let a = GridArgs {
            threads: Some("8, 1,8,2".into()),
            sizes: Some("4096,128".into()),
            topics: Some("256,1,16".into()),
            layouts: Some("per-topic,single".into()),
            flushes: Some("sync,async".into()),
            strategies: Some("abs,backoff-k10,abs,memcpy-limit".into()),
            reps: Some(5),
        };
        let g = Grid::parse(Grid::default_grid(), &a).unwrap();
        assert_eq!(g.threads, vec![1, 2, 8]);
        assert_eq!(g.sizes, vec![128, 4096]);
        assert_eq!(g.topics, vec![1, 16, 256]);
        assert_eq!(g.layouts, vec![Layout::PerTopic, Layout::Single]);
        assert_eq!(g.flushes, vec![FlushMode::Sync, FlushMode::Async]);
        assert_eq!(g.strategies, vec![Strategy::Abs, Strategy::Backoff(10)]);
        assert_eq!(g.reps, 5);
    }

    #[test]
    fn bad_values_name_the_flag_and_value() {
        let cases: &[(GridArgs, &str, &str)] = &[
            (GridArgs { threads: Some("1,0".into()), ..args() }, "--threads", "0"),
            (GridArgs { threads: Some("two".into()), ..args() }, "--threads", "two"),
            (GridArgs { threads: Some("2000".into()), ..args() }, "--threads", "2000"),
            (GridArgs { sizes: Some("-5".into()), ..args() }, "--sizes", "-5"),
            (GridArgs { sizes: Some("99999999".into()), ..args() }, "--sizes", "99999999"),
            (GridArgs { topics: Some("0".into()), ..args() }, "--topics", "0"),
            (GridArgs { layouts: Some("sharded".into()), ..args() }, "--layout", "sharded"),
            (GridArgs { flushes: Some("never".into()), ..args() }, "--flush", "never"),
            (GridArgs { reps: Some(0), ..args() }, "--reps", "0"),
        ];
        for (a, flag, value) in cases {
            match Grid::parse(Grid::default_grid(), a) {
                Err(GridError::BadValue { flag: f, value: v, .. }) => {
                    assert_eq!((f, v.as_str()), (*flag, *value));
                }
                other => panic!("{flag}={value}: expected BadValue, got {other:?}"),
            }
        }
    }

    #[test]
    fn empty_lists_and_unknown_strategies_are_errors() {
        let e = Grid::parse(Grid::default_grid(), &GridArgs { threads: Some(" , ".into()), ..args() });
        assert_eq!(e, Err(GridError::Empty("--threads")));
        let e = Grid::parse(Grid::default_grid(), &GridArgs { strategies: Some("abs,mcs".into()), ..args() });
        assert_eq!(e, Err(GridError::Strategy(StrategyError::Unknown("mcs".into()))));
    }

    #[test]
    fn cells_cover_the_grid_once_plus_the_limit() {
        let g = Grid::default_grid();
        let cells = g.cells();
        let locks = g.strategies.len() * g.threads.len() * g.sizes.len() * g.reps as usize;
        let limit = g.sizes.len() * g.reps as usize;
        assert_eq!(cells.len(), locks + limit);
        let limits: Vec<_> = cells.iter().filter(|c| c.strategy == Strategy::MemcpyLimit).collect();
        assert_eq!(limits.len(), limit);
        assert!(limits.iter().all(|c| c.threads == 1));
        let mut uniq = cells.clone();
        uniq.sort_by_key(|c| (c.strategy, c.threads, c.msg_size, c.rep));
        uniq.dedup();
        assert_eq!(uniq.len(), cells.len());
    }

    #[test]
    fn limit_runs_only_in_the_first_scenario() {
        let mut g = Grid::smoke_grid();
        g.flushes = vec![FlushMode::Async, FlushMode::Sync];
        let cells = g.cells();
        assert!(
            cells.iter().filter(|c| c.strategy == Strategy::MemcpyLimit).all(|c| c.flush == FlushMode::Async)
        );
    }
}
