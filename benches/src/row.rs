//! One result row: a measured cell with its derived figures (msgs/s, MB/s, CPU per
//! million, fairness, percentiles), as written to `results.csv` and read by the report.

use crate::grid::Cell;
use crate::stats::jain_index;
use crate::worker::CellOutcome;

/// A measured cell. `None` fields are written as empty CSV fields.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The cell (strategy, threads, size, layout, topics, flush, rep).
    pub cell: Cell,
    /// Messages put in the measured window.
    pub messages: u64,
    /// Measured window, seconds.
    pub seconds: f64,
    /// Messages per second.
    pub msgs_per_s: f64,
    /// Message body megabytes (10^6 bytes) per second.
    pub mb_per_s: f64,
    /// Process CPU seconds (user + sys) per million messages.
    pub cpu_s_per_million: Option<f64>,
    /// Jain's fairness index over the worker threads' message counts.
    pub jain: Option<f64>,
    /// Acquire latency percentiles, ns (sampled).
    pub p50_ns: Option<u64>,
    /// p99 acquire latency, ns.
    pub p99_ns: Option<u64>,
    /// p99.9 acquire latency, ns.
    pub p999_ns: Option<u64>,
    /// ABS mode switches in the window.
    pub abs_switches: Option<u64>,
    /// ABS k at the end of the cell.
    pub abs_final_k: Option<u32>,
    /// Hold time p50, ns (sampled).
    pub hold_p50_ns: Option<u64>,
    /// Hold time p99, ns (sampled).
    pub hold_p99_ns: Option<u64>,
    /// Fewest messages any worker put.
    pub min_thread_msgs: u64,
    /// Most messages any worker put.
    pub max_thread_msgs: u64,
    /// ABS parks in the window.
    pub abs_parks: Option<u64>,
    /// ABS fraction of acquisitions that found the lock held, in the window.
    pub abs_contended_ratio: Option<f64>,
    /// ABS mode at the end: "spin" or "park".
    pub abs_final_mode: Option<&'static str>,
    /// Flushes in the window.
    pub flushes: Option<u64>,
    /// Messages per flush (group commit amortisation).
    pub msgs_per_flush: Option<f64>,
    /// Segment rolls in the window (store target only).
    pub rolls: Option<u64>,
    /// Cores the process kept busy in the window: CPU seconds / wall seconds. Well below
    /// `min(threads, cores)` means other work on the machine took the CPU.
    pub cores_used: Option<f64>,
    /// Whether workers were pinned to cores.
    pub pinned: bool,
    /// Which critical section ran: "store" or "emulated".
    pub target: &'static str,
}

impl Row {
    /// Derives a row from a cell's raw outcome.
    pub fn from_outcome(cell: Cell, o: &CellOutcome, pinned: bool, target: &'static str) -> Row {
        let secs = o.seconds.max(f64::MIN_POSITIVE);
        let msgs_per_s = o.messages as f64 / secs;
        let q = |h: &hdrhistogram::Histogram<u64>, q: f64| (!h.is_empty()).then(|| h.value_at_quantile(q));
        let abs = o.abs;
        Row {
            cell,
            messages: o.messages,
            seconds: o.seconds,
            msgs_per_s,
            mb_per_s: msgs_per_s * cell.msg_size as f64 / 1e6,
            cpu_s_per_million: (o.messages > 0).then(|| o.cpu_seconds / o.messages as f64 * 1e6),
            jain: jain_index(&o.per_thread),
            p50_ns: q(&o.samples.acquire, 0.5),
            p99_ns: q(&o.samples.acquire, 0.99),
            p999_ns: q(&o.samples.acquire, 0.999),
            abs_switches: abs.map(|a| a.mode_switches),
            abs_final_k: abs.map(|a| a.k),
            hold_p50_ns: q(&o.samples.hold, 0.5),
            hold_p99_ns: q(&o.samples.hold, 0.99),
            min_thread_msgs: o.per_thread.iter().copied().min().unwrap_or(0),
            max_thread_msgs: o.per_thread.iter().copied().max().unwrap_or(0),
            abs_parks: abs.map(|a| a.parks),
            abs_contended_ratio: abs
                .and_then(|a| (a.acquisitions > 0).then(|| a.contended as f64 / a.acquisitions as f64)),
            abs_final_mode: abs.map(|a| if a.parking { "park" } else { "spin" }),
            flushes: o.flushes,
            msgs_per_flush: o.flushes.and_then(|f| (f > 0).then(|| o.messages as f64 / f as f64)),
            rolls: o.rolls,
            cores_used: (o.seconds > 0.0).then(|| o.cpu_seconds / o.seconds),
            pinned,
            target,
        }
    }
}
