//! One measured window: `threads` workers putting in a loop, a warm-up, then a timed span
//! that ends at its deadline or when the target's byte cap is reached (the warm segments
//! are used up), whichever is first. Each worker counts its own puts and reads its own CPU
//! clock at both ends of its span.

use crate::cpu;
use crate::latency::{self, Percentiles};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long and how wide a window is.
#[derive(Debug, Clone)]
pub struct WindowSpec {
    /// Worker threads putting concurrently.
    pub threads: usize,
    /// Puts before the timed span starts (caches, branch predictors, lock adaptation).
    pub warmup: Duration,
    /// Longest timed span.
    pub measure: Duration,
    /// Cores to pin workers to round robin; `None` = unpinned.
    pub pin: Option<Vec<core_affinity::CoreId>>,
}

/// What one worker's put step reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Put done; keep going.
    More,
    /// Put done and the target's byte cap is reached: end the window.
    Full,
}

/// The measured span of a window.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Window {
    /// Messages put in the timed span, all workers.
    pub messages: u64,
    /// Length of the timed span, s.
    pub seconds: f64,
    /// CPU the workers used in the span, ns (their own thread clocks, summed).
    pub worker_cpu_ns: u64,
    /// CPU every other thread of the process used in the span, ns (the store's flush,
    /// dispatch and preallocation threads; the sweep's main thread sleeps).
    pub background_cpu_ns: u64,
    /// Whether the span ended at the byte cap rather than the deadline.
    pub capped: bool,
    /// Acquire latency over the span, sampled by [`crate::latency::Sampled`] (`None`: the
    /// lock is not sampled, or no acquisition was).
    pub acquire: Option<Percentiles>,
}

impl Window {
    /// Messages per second, 0 for an empty span.
    pub fn msgs_per_s(&self) -> f64 {
        if self.seconds > 0.0 { self.messages as f64 / self.seconds } else { 0.0 }
    }
}

/// The error of a window whose byte cap was reached before its span began.
pub const WARM_SPACE_FILLED: &str =
    "the target's warm space filled during the warm-up: raise --segment-mib or lower --warmup-ms";

/// Puts between two clock reads of a worker: a span's ends are seen within this many puts.
const CHECK_EVERY: u64 = 8;

/// Runs one window: `make_worker(i)` builds worker `i`'s put step on its own thread (not
/// timed); after a common start the step runs until the span ends. `abort` (Ctrl-C,
/// SIGTERM) ends it early.
///
/// Each worker times itself against the common schedule (warm-up until `t0`, span until
/// `t1`, or until a worker reports the byte cap), reading the clock every
/// 8 puts and its own CPU clock at both ends of its span: the main thread,
/// which may wait long for a core when the workers oversubscribe them, takes no part.
///
/// # Errors
/// The first error a worker's step returned (the window is then discarded), or the cap
/// reached during the warm-up.
pub fn run_window<W, E>(
    spec: &WindowSpec,
    abort: &AtomicBool,
    make_worker: impl Fn(usize) -> W + Sync,
) -> Result<Window, String>
where
    W: FnMut() -> Result<Step, E>,
    E: std::fmt::Display,
{
    run_window_with(spec, abort, &|| 0, make_worker)
}

/// As [`run_window`], with `own_cpu_ns`: a CPU clock, ns, of threads that work for the
/// workers (a sequencer's writer), read where the span's process CPU is read; its span
/// counts in [`Window::worker_cpu_ns`], not in the background.
///
/// # Errors
/// As [`run_window`].
pub fn run_window_with<W, E>(
    spec: &WindowSpec,
    abort: &AtomicBool,
    own_cpu_ns: &(dyn Fn() -> u64 + Sync),
    make_worker: impl Fn(usize) -> W + Sync,
) -> Result<Window, String>
where
    W: FnMut() -> Result<Step, E>,
    E: std::fmt::Display,
{
    let threads = spec.threads.max(1);
    let sh = Shared {
        start: Barrier::new(threads + 1),
        base: Mutex::new(None),
        stop: AtomicBool::new(false),
        end_ns: AtomicU64::new(u64::MAX),
        process_cpu: Mutex::new((None, None)),
        own_cpu_ns,
        totals: Mutex::new((0, 0)),
        acquire: Mutex::new(None),
        error: Mutex::new(None),
    };
    std::thread::scope(|sc| {
        for i in 0..threads {
            let (sh, make_worker) = (&sh, &make_worker);
            let core = spec.pin.as_ref().map(|c| c[i % c.len()]);
            sc.spawn(move || {
                if let Some(core) = core {
                    core_affinity::set_for_current(core);
                }
                let step = make_worker(i);
                sh.start.wait();
                worker(sh, spec, abort, step);
            });
        }
        *lock(&sh.base) = Some(Instant::now());
        sh.start.wait();
    });
    if let Some(e) = sh.error.into_inner().unwrap_or_else(PoisonError::into_inner) {
        return Err(e);
    }
    if abort.load(Ordering::Relaxed) {
        return Err("interrupted".into());
    }
    let (messages, worker_cpu_ns) = sh.totals.into_inner().unwrap_or_else(PoisonError::into_inner);
    let end_ns = sh.end_ns.load(Ordering::Acquire);
    let capped = end_ns != u64::MAX;
    let span = spec.measure.as_nanos() as u64;
    let seconds = if capped { end_ns.saturating_sub(spec.warmup.as_nanos() as u64).min(span) } else { span };
    let acquire = sh.acquire.into_inner().unwrap_or_else(PoisonError::into_inner);
    let (p0, p1) = sh.process_cpu.into_inner().unwrap_or_else(PoisonError::into_inner);
    let span_of = |a: Option<(u64, u64)>, b: Option<(u64, u64)>, f: fn((u64, u64)) -> u64| {
        b.zip(a).map_or(0, |(b, a)| f(b).saturating_sub(f(a)))
    };
    let process = span_of(p0, p1, |c| c.0);
    let worker_cpu_ns = worker_cpu_ns + span_of(p0, p1, |c| c.1);
    Ok(Window {
        messages,
        seconds: seconds as f64 / 1e9,
        worker_cpu_ns,
        background_cpu_ns: process.saturating_sub(worker_cpu_ns),
        capped,
        acquire: acquire.as_ref().and_then(Percentiles::of),
    })
}

/// (Process CPU, CPU of the threads working for the workers), ns.
type CpuReading = (u64, u64);

struct Shared<'a> {
    start: Barrier,
    /// The common time origin, set just before the start.
    base: Mutex<Option<Instant>>,
    stop: AtomicBool,
    /// When a worker saw the byte cap, ns after `base` (`u64::MAX`: not capped).
    end_ns: AtomicU64,
    /// (Process CPU, `own_cpu_ns`) at the span's start (first worker in) and end (the
    /// worker that ends it).
    process_cpu: Mutex<(Option<CpuReading>, Option<CpuReading>)>,
    /// CPU clock of the threads working for the workers (see [`run_window_with`]).
    own_cpu_ns: &'a (dyn Fn() -> u64 + Sync),
    /// (messages, worker CPU ns) summed over workers' spans.
    totals: Mutex<(u64, u64)>,
    /// Acquire-latency samples merged over workers' spans.
    acquire: Mutex<Option<hdrhistogram::Histogram<u64>>>,
    error: Mutex<Option<String>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn thread_cpu() -> u64 {
    cpu::thread_ns()
}

impl Shared<'_> {
    /// (Process CPU, CPU of the threads working for the workers), ns.
    fn cpu_now(&self) -> CpuReading {
        (cpu::process_ns(), (self.own_cpu_ns)())
    }
}

fn worker<W, E>(sh: &Shared<'_>, spec: &WindowSpec, abort: &AtomicBool, mut step: W)
where
    W: FnMut() -> Result<Step, E>,
    E: std::fmt::Display,
{
    let Some(base) = *lock(&sh.base) else { return };
    let (t0, t1) = (base + spec.warmup, base + spec.warmup + spec.measure);
    // (messages, CPU ns) when this worker's span began.
    let mut began: Option<(u64, u64)> = None;
    let mut n = 0u64;
    let end = |sh: &Shared<'_>| {
        if !sh.stop.swap(true, Ordering::AcqRel) {
            lock(&sh.process_cpu).1 = Some(sh.cpu_now());
        }
    };
    while !sh.stop.load(Ordering::Relaxed) && !abort.load(Ordering::Relaxed) {
        let result = step();
        let full = match result {
            Ok(s) => s == Step::Full,
            Err(e) => {
                lock(&sh.error).get_or_insert_with(|| e.to_string());
                end(sh);
                break;
            }
        };
        n += 1;
        if n.is_multiple_of(CHECK_EVERY) || full {
            let now = Instant::now();
            if began.is_none() && now >= t0 {
                began = Some((n, thread_cpu()));
                latency::start();
                let mut p = lock(&sh.process_cpu);
                if p.0.is_none() {
                    p.0 = Some(sh.cpu_now());
                }
            }
            if full {
                if began.is_none() {
                    lock(&sh.error).get_or_insert_with(|| WARM_SPACE_FILLED.into());
                } else {
                    sh.end_ns.fetch_min((now - base).as_nanos() as u64, Ordering::AcqRel);
                }
                end(sh);
                break;
            }
            if now >= t1 {
                end(sh);
                break;
            }
        }
    }
    let samples = latency::take();
    if let Some((n0, c0)) = began {
        if let Some(h) = samples {
            latency::merge(&mut lock(&sh.acquire), h);
        }
        let mut t = lock(&sh.totals);
        t.0 += n - n0;
        t.1 += thread_cpu().saturating_sub(c0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(threads: usize) -> WindowSpec {
        WindowSpec {
            threads,
            warmup: Duration::from_millis(2),
            measure: Duration::from_millis(20),
            pin: None,
        }
    }

    #[test]
    fn counts_puts_and_worker_cpu() {
        let abort = AtomicBool::new(false);
        let w = run_window(&spec(2), &abort, |_| || Ok::<_, String>(Step::More)).unwrap();
        assert!(w.messages > 0);
        assert!(w.seconds > 0.0);
        assert!(w.worker_cpu_ns > 0);
        assert!(!w.capped);
    }

    #[test]
    fn the_byte_cap_ends_the_span_and_a_worker_error_discards_it() {
        let abort = AtomicBool::new(false);
        let no_warmup = WindowSpec { warmup: Duration::ZERO, ..spec(1) };
        let w = run_window(&no_warmup, &abort, |_| {
            let mut n = 0;
            move || {
                n += 1;
                Ok::<_, String>(if n > 1000 { Step::Full } else { Step::More })
            }
        })
        .unwrap();
        assert!(w.capped);
        assert!(w.messages <= 1001);
        let e = run_window(&spec(2), &abort, |_| || Err::<Step, _>("disk full")).unwrap_err();
        assert_eq!(e, "disk full");
        abort.store(true, Ordering::Relaxed);
        let e = run_window(&spec(2), &abort, |_| || Ok::<_, String>(Step::More)).unwrap_err();
        assert_eq!(e, "interrupted");
    }
}
