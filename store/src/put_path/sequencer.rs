//! [`Sequencer`]: one writer thread owns the log's tail; puts hand it their requests through
//! a bounded queue and wait for the result (ours; the shape of rocketmq-rust's sequencing
//! task).

use std::ptr::NonNull;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use super::completion::Completion;
use super::sync::{AtomicBool, AtomicUsize, Ordering};
use super::{Apply, HandOffError, Job, run_batch};

/// Sizes of a [`Sequencer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SequencerConfig {
    /// Requests the queue holds before a put waits for room (back-pressure). At least 1.
    pub queue_capacity: usize,
    /// Most requests the writer applies in one [`Apply::apply`] call. At least 1.
    pub max_batch: usize,
}

impl Default for SequencerConfig {
    /// 1024 queued requests, batches of up to 64.
    fn default() -> Self {
        SequencerConfig { queue_capacity: 1024, max_batch: 64 }
    }
}

/// A pointer to a request waiting on its put's stack.
struct Ticket<T, O>(NonNull<Completion<T, O>>);

// SAFETY: the ticket moves a `&Completion` to the writer; the completion is `Sync` for
// `T: Send, O: Send` (its cells are handed over by release/acquire), and its put waits for
// DONE before the completion goes out of scope.
unsafe impl<T: Send, O: Send> Send for Ticket<T, O> {}

enum Msg<T, O> {
    Job(Ticket<T, O>),
    /// Sent by `close`: stop once every accepted request is served.
    Stop,
}

/// What puts and the writer share.
struct Gate {
    closed: AtomicBool,
    /// Puts between their `closed` check and the end of their send.
    sending: AtomicUsize,
}

/// A single-writer put path: one thread applies every request, in batches of whatever is
/// queued (up to [`SequencerConfig::max_batch`]).
///
/// A full queue makes [`submit`](Self::submit) wait (back-pressure; it never drops or fails
/// for it). [`close`](Self::close) with submits in flight completes or fails each exactly
/// once: accepted requests are applied, later ones get [`HandOffError::Closed`]. A panic in
/// [`Apply::apply`] fails that batch's unserved requests with [`HandOffError::Panicked`];
/// the writer goes on.
pub struct Sequencer<A: Apply> {
    tx: Sender<Msg<A::Input, A::Output>>,
    gate: Arc<Gate>,
    writer: Mutex<Option<JoinHandle<()>>>,
    /// The writer thread's CPU clock (`pthread_getcpuclockid`), `None` if unavailable.
    writer_clock: Option<libc::clockid_t>,
}

impl<A: Apply> std::fmt::Debug for Sequencer<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sequencer").field("closed", &self.gate.closed.load(Ordering::Relaxed)).finish()
    }
}

impl<A: Apply + 'static> Sequencer<A> {
    /// Starts the writer thread (named `put-sequencer`), which owns `tail`.
    ///
    /// # Errors
    /// The thread could not be spawned.
    ///
    /// # Panics
    /// If `config.queue_capacity` or `config.max_batch` is 0.
    pub fn start(tail: A, config: SequencerConfig) -> std::io::Result<Self> {
        assert!(config.queue_capacity > 0 && config.max_batch > 0, "sequencer sizes must be at least 1");
        let (tx, rx) = crossbeam_channel::bounded(config.queue_capacity);
        let gate = Arc::new(Gate { closed: AtomicBool::new(false), sending: AtomicUsize::new(0) });
        let g = Arc::clone(&gate);
        let writer = std::thread::Builder::new()
            .name("put-sequencer".into())
            .spawn(move || write_loop(tail, &rx, &g, config.max_batch))?;
        let writer_clock = thread_clock(&writer);
        Ok(Sequencer { tx, gate, writer: Mutex::new(Some(writer)), writer_clock })
    }
}

impl<A: Apply> Sequencer<A> {
    /// Hands `input` to the writer and waits for its output (spin briefly, then sleep).
    ///
    /// # Errors
    /// [`HandOffError::Closed`] if the sequencer is closed (nothing applied);
    /// [`HandOffError::Panicked`] if the batch holding it panicked.
    pub fn submit(&self, input: A::Input) -> Result<A::Output, HandOffError> {
        self.gate.sending.fetch_add(1, Ordering::SeqCst);
        if self.gate.closed.load(Ordering::SeqCst) {
            self.gate.sending.fetch_sub(1, Ordering::SeqCst);
            return Err(HandOffError::Closed);
        }
        let cell = Completion::published(input);
        let sent = self.tx.send(Msg::Job(Ticket(NonNull::from(&cell))));
        self.gate.sending.fetch_sub(1, Ordering::SeqCst);
        if sent.is_err() {
            // The writer is gone (it only leaves after `close`): the request never reached it.
            return Err(HandOffError::Closed);
        }
        // SAFETY: we are the request's put; `cell` stays on this stack until DONE (waiting
        // cannot unwind: atomics and futex calls only).
        unsafe { cell.wait_output() }
    }

    /// CPU time the writer thread has used so far, ns (its `pthread_getcpuclockid` clock),
    /// so a caller can count the writer's CPU with the puts it serves. `None` once the
    /// writer has exited (after [`close`](Self::close)) or if the clock cannot be read.
    pub fn writer_cpu_ns(&self) -> Option<u64> {
        let clock = self.writer_clock?;
        // The writer leaves its loop only after `close` marks the gate closed.
        if self.gate.closed.load(Ordering::Acquire) {
            return None;
        }
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid, writable timespec and clock_gettime writes only it; a
        // clock id whose thread has just exited makes the call fail, never touch memory.
        let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
        (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
    }

    /// Stops accepting requests, lets the writer serve every accepted one, and joins it.
    /// Idempotent; also done on drop.
    pub fn close(&self) {
        if self.gate.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        // Wakes a writer blocked on an empty queue; waits for room if the queue is full.
        let _ = self.tx.send(Msg::Stop);
        let writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(w) = writer {
            let _ = w.join();
        }
    }
}

impl<A: Apply> Drop for Sequencer<A> {
    fn drop(&mut self) {
        self.close();
    }
}

/// The CPU clock of the thread behind `handle` (alive: it has not been joined).
fn thread_clock(handle: &JoinHandle<()>) -> Option<libc::clockid_t> {
    use std::os::unix::thread::JoinHandleExt;
    let mut id: libc::clockid_t = 0;
    // SAFETY: the handle is not joined, so its pthread_t names a thread not yet reaped;
    // `id` is writable.
    let rc = unsafe { libc::pthread_getcpuclockid(handle.as_pthread_t(), &mut id) };
    (rc == 0).then_some(id)
}

/// The writer: block for one request, take whatever else is queued, apply, complete.
fn write_loop<A: Apply>(mut tail: A, rx: &Receiver<Msg<A::Input, A::Output>>, gate: &Gate, max_batch: usize) {
    let mut tickets: Vec<Ticket<A::Input, A::Output>> = Vec::with_capacity(max_batch);
    let mut served: Vec<Ticket<A::Input, A::Output>> = Vec::with_capacity(max_batch);
    let mut jobs: Vec<Job<A::Input, A::Output>> = Vec::with_capacity(max_batch);
    let mut stopping = false;
    loop {
        let first = if stopping {
            // Closed: serve until no put is between its check and its send, then drain.
            match rx.recv_timeout(Duration::from_millis(1)) {
                Ok(m) => Some(m),
                Err(RecvTimeoutError::Timeout) if gate.sending.load(Ordering::SeqCst) > 0 => None,
                Err(_) => match rx.try_recv() {
                    Ok(m) => Some(m),
                    Err(_) => return,
                },
            }
        } else {
            match rx.recv() {
                Ok(m) => Some(m),
                Err(_) => return,
            }
        };
        let mut next = first;
        while let Some(m) = next {
            match m {
                Msg::Job(t) => tickets.push(t),
                Msg::Stop => stopping = true,
            }
            next = if tickets.len() < max_batch { rx.try_recv().ok() } else { None };
        }
        if tickets.is_empty() {
            continue;
        }
        for t in tickets.drain(..) {
            // SAFETY: the ticket came through the channel (acquire), its put waits until we
            // complete it; we are its only executor.
            match unsafe { t.0.as_ref().take_input() } {
                Some(input) => {
                    jobs.push(Job { input, output: None });
                    served.push(t);
                }
                // Unreachable (a queued request holds its input); fail it rather than panic.
                // SAFETY: as above.
                None => unsafe { t.0.as_ref().complete(Err(HandOffError::Panicked)) },
            }
        }
        for (t, out) in served.drain(..).zip(run_batch(&mut tail, &mut jobs)) {
            // SAFETY: as above; completed exactly once, then never touched again.
            unsafe { t.0.as_ref().complete(out) };
        }
        jobs.clear();
    }
}

#[cfg(all(test, not(abslock_loom)))]
mod tests {
    use super::*;

    /// Burns CPU in the writer for every request.
    struct Busy;

    impl Apply for Busy {
        type Input = u64;
        type Output = u64;

        fn apply(&mut self, jobs: &mut [Job<u64, u64>]) {
            for j in jobs {
                let mut x = j.input;
                for i in 0..200_000u64 {
                    x = x.wrapping_mul(31).wrapping_add(std::hint::black_box(i));
                }
                j.output = Some(x);
            }
        }
    }

    #[test]
    fn the_writer_cpu_clock_counts_the_writer_and_ends_with_it() {
        let s = Sequencer::start(Busy, SequencerConfig::default()).unwrap();
        let before = s.writer_cpu_ns().expect("the writer lives");
        for i in 0..20 {
            s.submit(i).unwrap();
        }
        let after = s.writer_cpu_ns().expect("the writer lives");
        assert!(after > before, "{before} -> {after}");
        s.close();
        assert_eq!(s.writer_cpu_ns(), None);
    }
}
