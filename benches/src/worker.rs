//! Running one cell: spawn the workers, warm up, measure for a fixed time, collect.
//!
//! One message per (topic, queue) is put first (untimed), so every log and consume queue
//! exists. Threads are spawned and meet at a `Barrier` before anything is timed. The main
//! thread flips a phase word: warm-up (puts not counted), measure (counted, CPU time
//! and wall time taken at the flips), stop. Each worker counts its own messages
//! (fairness) and samples acquire/hold times through [`crate::timed`].

use crate::cpu::process_cpu_seconds;
use crate::sweep_lock::{AbsView, SweepLock, TracePoint};
use crate::target::{PutTarget, TargetError};
use crate::timed::{self, Samples};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Barrier, Mutex, PoisonError};
use std::time::{Duration, Instant};

const WARMUP: u8 = 0;
const MEASURE: u8 = 1;
const STOP: u8 = 2;

/// How long a cell warms up and measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellTiming {
    /// Warm-up before measuring (puts not counted).
    pub warmup: Duration,
    /// Measured window.
    pub measure: Duration,
}

/// What the workers of one cell did in the measured window.
#[derive(Debug, Clone)]
pub struct CellOutcome {
    /// Messages put in the window, over all threads.
    pub messages: u64,
    /// Wall seconds of the window.
    pub seconds: f64,
    /// Process CPU seconds (user + sys) in the window.
    pub cpu_seconds: f64,
    /// Messages per worker thread.
    pub per_thread: Vec<u64>,
    /// Acquire/hold samples merged over threads (ns).
    pub samples: Samples,
    /// ABS statistics at the end (switches and parks as deltas over the window), if ABS.
    pub abs: Option<AbsView>,
    /// ABS adaptation trace of the busiest lock (warm-up included), if ABS and asked for.
    pub trace: Vec<TracePoint>,
    /// Flushes in the window, if the target counts them.
    pub flushes: Option<u64>,
    /// Segment rolls in the window, if the target counts them.
    pub rolls: Option<u64>,
}

/// Options of one run of [`run_cell`].
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Worker threads.
    pub threads: usize,
    /// Number of topics; worker `i`'s `j`-th message goes to topic `(i + j) % topics`.
    pub topics: usize,
    /// Message body size in bytes.
    pub msg_size: usize,
    /// Warm-up and measured window.
    pub timing: CellTiming,
    /// Cores to pin workers to, round robin; `None` = unpinned.
    pub pin: Option<Vec<core_affinity::CoreId>>,
    /// Record up to this many ABS adaptation decisions (0 = no trace).
    pub trace_capacity: usize,
}

/// Queues per topic for `threads` workers: one queue per worker (ours).
///
/// The store holds a topic-queue stripe lock across the put-message lock (as RocketMQ does), so
/// workers sharing a queue queue up on that stripe lock instead of on the lock under test. With
/// RocketMQ's 4 queues per topic (`defaultTopicQueueNums`) at most 4 workers ever contended on the
/// put-message lock; one queue per worker lets every worker reach it (stripe collisions aside: the
/// store hashes (topic, queue) over 32 stripes).
pub fn queues_per_topic(threads: usize) -> usize {
    threads.max(1)
}

fn abs_totals<R: SweepLock, T: PutTarget<R>>(target: &T) -> Option<AbsView> {
    let mut acc: Option<AbsView> = None;
    target.for_each_put_lock(&mut |l| {
        if let Some(v) = l.inner().abs_view() {
            let a = acc.get_or_insert(AbsView::default());
            // k and mode of the busiest lock speak for the log.
            if v.acquisitions >= a.acquisitions {
                a.k = v.k;
                a.parking = v.parking;
            }
            a.acquisitions += v.acquisitions;
            a.contended += v.contended;
            a.parks += v.parks;
            a.mode_switches += v.mode_switches;
        }
    });
    acc
}

/// Runs one cell on `target` (see the module doc).
///
/// # Errors
/// The first [`TargetError`] a worker met (preparing or putting); the cell is then abandoned.
pub fn run_cell<R: SweepLock, T: PutTarget<R>>(
    target: &T,
    opts: &RunOptions,
) -> Result<CellOutcome, TargetError> {
    let threads = opts.threads.max(1);
    let topics = opts.topics.max(1);
    let body: Vec<u8> = (0..opts.msg_size).map(|i| (i % 251) as u8).collect();
    let queues = queues_per_topic(threads);
    let mut msgs = Vec::with_capacity(topics * queues);
    for t in 0..topics {
        for q in 0..queues {
            msgs.push(target.prepare(t, q as u32, &body)?);
        }
    }
    // Prime: one put per (topic, queue) before anything is timed, so per-topic logs
    // and consume queues exist before the warm-up (a store creates them on first use).
    for m in &msgs {
        target.put(m)?;
    }
    if opts.trace_capacity > 0 {
        target.for_each_put_lock(&mut |l| l.inner().enable_trace(opts.trace_capacity));
    }
    let phase = AtomicU8::new(WARMUP);
    let barrier = Barrier::new(threads + 1);
    let error: Mutex<Option<TargetError>> = Mutex::new(None);
    let msgs = &msgs;

    let (per_thread, samples, window) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let (phase, barrier, error, pin) = (&phase, &barrier, &error, &opts.pin);
                s.spawn(move || {
                    if let Some(cores) = pin
                        && !cores.is_empty()
                    {
                        core_affinity::set_for_current(cores[i % cores.len()]);
                    }
                    let queue = i % queues;
                    let pick = |j: usize| &msgs[((i + j) % topics) * queues + queue];
                    let fail = |e: TargetError| {
                        error.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(e);
                        phase.store(STOP, Ordering::Relaxed);
                    };
                    barrier.wait();
                    let mut j = 0usize;
                    while phase.load(Ordering::Relaxed) == WARMUP {
                        if let Err(e) = target.put(pick(j)) {
                            fail(e);
                            break;
                        }
                        j += 1;
                    }
                    timed::start_sampling();
                    let mut n = 0u64;
                    while phase.load(Ordering::Relaxed) == MEASURE {
                        if let Err(e) = target.put(pick(j)) {
                            fail(e);
                            break;
                        }
                        j += 1;
                        n += 1;
                    }
                    (n, timed::take_samples())
                })
            })
            .collect();

        barrier.wait();
        std::thread::sleep(opts.timing.warmup);
        let abs_before = abs_totals(target);
        let flushes_before = target.flushes();
        let rolls_before = target.rolls();
        let cpu0 = process_cpu_seconds();
        let t0 = Instant::now();
        // Only flip to MEASURE if no worker has failed (STOP) meanwhile.
        let _ = phase.compare_exchange(WARMUP, MEASURE, Ordering::Relaxed, Ordering::Relaxed);
        std::thread::sleep(opts.timing.measure);
        phase.store(STOP, Ordering::Relaxed);
        let seconds = t0.elapsed().as_secs_f64();
        let cpu1 = process_cpu_seconds();
        let flushes_after = target.flushes();
        let rolls_after = target.rolls();

        let mut per_thread = Vec::with_capacity(threads);
        let mut samples = Samples::new();
        for h in handles {
            let (n, s) = h.join().expect("worker threads do not panic");
            per_thread.push(n);
            samples.merge(&s);
        }
        let flushes = flushes_after.zip(flushes_before).map(|(a, b)| a.saturating_sub(b));
        let rolls = rolls_after.zip(rolls_before).map(|(a, b)| a.saturating_sub(b));
        (per_thread, samples, (seconds, cpu1 - cpu0, abs_before, flushes, rolls))
    });
    if let Some(e) = error.into_inner().unwrap_or_else(PoisonError::into_inner) {
        return Err(e);
    }
    let (seconds, cpu_seconds, abs_before, flushes, rolls) = window;
    let abs = abs_totals(target).map(|mut after| {
        if let Some(before) = abs_before {
            after.mode_switches = after.mode_switches.saturating_sub(before.mode_switches);
            after.parks = after.parks.saturating_sub(before.parks);
            after.acquisitions = after.acquisitions.saturating_sub(before.acquisitions);
            after.contended = after.contended.saturating_sub(before.contended);
        }
        after
    });
    let mut trace = Vec::new();
    if opts.trace_capacity > 0 {
        let mut best = 0u64;
        target.for_each_put_lock(&mut |l| {
            let t = l.inner().trace();
            let acq = l.inner().abs_view().map_or(0, |v| v.acquisitions);
            if trace.is_empty() || acq > best {
                best = acq;
                trace = t;
            }
        });
    }
    Ok(CellOutcome {
        messages: per_thread.iter().sum(),
        seconds,
        cpu_seconds,
        per_thread,
        samples,
        abs,
        trace,
        flushes,
        rolls,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emulated::EmulatedLog;
    use crate::grid::{FlushMode, Layout};
    use crate::ring::Ring;
    use crate::timed::Timed;
    use lock_api::RawMutex;
    use std::sync::Arc;

    fn opts(threads: usize, topics: usize) -> RunOptions {
        RunOptions {
            threads,
            topics,
            msg_size: 64,
            timing: CellTiming { warmup: Duration::from_millis(2), measure: Duration::from_millis(20) },
            pin: None,
            trace_capacity: 0,
        }
    }

    #[test]
    fn counts_add_up_per_thread_and_flushes_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        let ring = Arc::new(Ring::create(dir.path(), "ring", 1 << 20).unwrap());
        let log =
            EmulatedLog::<parking_lot::RawMutex>::new(ring, Layout::PerTopic, 3, FlushMode::Async, &|| {
                parking_lot::RawMutex::INIT
            })
            .unwrap();
        let o = run_cell(&log, &opts(3, 3)).unwrap();
        assert_eq!(o.per_thread.len(), 3);
        assert_eq!(o.per_thread.iter().sum::<u64>(), o.messages);
        assert!(o.messages > 0, "some message was put in the window");
        assert!(o.seconds > 0.0);
        assert!(o.abs.is_none() && o.trace.is_empty());
        assert!(o.flushes.is_some());
    }

    /// A target that fails after `ok` puts.
    struct Failing {
        lock: Timed<parking_lot::RawMutex>,
        left: std::sync::atomic::AtomicI64,
    }

    impl PutTarget<parking_lot::RawMutex> for Failing {
        type Msg = ();
        fn prepare(&self, _: usize, _: u32, _: &[u8]) -> Result<(), TargetError> {
            Ok(())
        }
        fn put(&self, _: &()) -> Result<(), TargetError> {
            if self.left.fetch_sub(1, Ordering::Relaxed) <= 0 {
                return Err(TargetError::Store("disk full".into()));
            }
            Ok(())
        }
        fn for_each_put_lock(&self, f: &mut dyn FnMut(&Timed<parking_lot::RawMutex>)) {
            f(&self.lock);
        }
        fn flushes(&self) -> Option<u64> {
            None
        }
    }

    #[test]
    fn the_first_put_error_fails_the_cell() {
        for ok in [0, 3, 100] {
            let t = Failing { lock: Timed::INIT, left: std::sync::atomic::AtomicI64::new(ok) };
            match run_cell(&t, &opts(2, 1)) {
                Err(TargetError::Store(msg)) => assert_eq!(msg, "disk full"),
                other => panic!("expected the store error, got {other:?}"),
            }
        }
    }
}
