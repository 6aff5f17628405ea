//! Model-based stress test of the delegating put paths (`Sequencer`, `Combining`): many
//! threads, random batch sizes, injected append errors and panics, callers that panic
//! between requests, and a close with requests in flight. Every request completes exactly
//! once, with the outcome a sequential replay of the applied order gives; the test
//! finishing is the no-lost-wake-up check.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::thread;

use abslock_store::put_path::{Apply, Combining, HandOffError, Job, Sequencer, SequencerConfig};

const INJECTED_PANIC: &str = "injected panic";

/// Silences the panics this test injects (and only those).
fn quiet_injected_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&INJECTED_PANIC) {
                default(info);
            }
        }));
    });
}

#[derive(Debug, Clone, Copy)]
struct Req {
    id: u64,
    /// Records in the batch; the batch takes `records * 10` bytes of the model's log.
    records: u64,
    fail: bool,
    panic: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Injected;

/// A log tail: a position, and the order in which requests were applied.
struct ModelTail {
    pos: u64,
    applied: Arc<Mutex<Vec<Req>>>,
}

impl Apply for ModelTail {
    type Input = Req;
    type Output = Result<u64, Injected>;

    fn apply(&mut self, jobs: &mut [Job<Req, Result<u64, Injected>>]) {
        for j in jobs {
            let r = j.input;
            if r.panic {
                std::panic::panic_any(INJECTED_PANIC);
            }
            self.applied.lock().unwrap().push(r);
            j.output = Some(if r.fail {
                Err(Injected)
            } else {
                let at = self.pos;
                self.pos += r.records * 10;
                Ok(at)
            });
        }
    }
}

type Outcome = Result<Result<u64, Injected>, HandOffError>;

/// What every caller got, by request id.
type Seen = Arc<Mutex<HashMap<u64, Outcome>>>;

fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// Runs `threads` callers of `submit`, each issuing up to `per_thread` random requests;
/// every third caller panics halfway (after a completed request). With `close_after`:
/// callers keep going until they see `Closed` (so each ends with exactly one), and `close`
/// is called once `close_after` requests completed.
fn drive(
    submit: Arc<dyn Fn(Req) -> Outcome + Send + Sync>,
    close: &dyn Fn(),
    threads: u64,
    per_thread: u64,
    close_after: Option<u64>,
) -> HashMap<u64, Outcome> {
    quiet_injected_panics();
    let seen: Seen = Arc::default();
    let done = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (submit, seen, done) = (Arc::clone(&submit), Arc::clone(&seen), Arc::clone(&done));
            thread::spawn(move || {
                let mut rng = 0x9E37_79B9_7F4A_7C15 ^ ((t + 1) * 0x1000_0001);
                for k in 0..per_thread {
                    let x = xorshift(&mut rng);
                    let req = Req {
                        id: (t << 32) | k,
                        records: 1 + x % 16,
                        fail: x.is_multiple_of(53),
                        panic: x.is_multiple_of(211),
                    };
                    let out = submit(req);
                    let closed = out == Err(HandOffError::Closed);
                    assert!(seen.lock().unwrap().insert(req.id, out).is_none(), "one outcome per request");
                    done.fetch_add(1, Ordering::Release);
                    if closed {
                        return;
                    }
                    if t % 3 == 2 && k == per_thread / 2 && close_after.is_none() {
                        std::panic::panic_any(INJECTED_PANIC);
                    }
                }
            })
        })
        .collect();
    if let Some(n) = close_after {
        while done.load(Ordering::Acquire) < n {
            thread::yield_now();
        }
        close();
    }
    let mut panicked = 0;
    for h in handles {
        panicked += u64::from(h.join().is_err());
    }
    if close_after.is_none() {
        assert_eq!(panicked, threads / 3, "exactly the callers told to panic did");
    }
    close();
    Arc::try_unwrap(seen).unwrap().into_inner().unwrap()
}

/// Replays the applied order through a sequential model and compares every outcome.
fn check(seen: &HashMap<u64, Outcome>, applied: &[Req], expect_panics: bool) {
    let mut pos = 0;
    let mut in_log = HashMap::new();
    for r in applied {
        assert!(in_log.insert(r.id, ()).is_none(), "request {} applied twice", r.id);
        let expected = if r.fail {
            Err(Injected)
        } else {
            pos += r.records * 10;
            Ok(pos - r.records * 10)
        };
        assert_eq!(seen.get(&r.id), Some(&Ok(expected)), "request {} got another outcome", r.id);
    }
    let mut panicked = 0;
    for (id, out) in seen {
        match out {
            Ok(_) => assert!(in_log.contains_key(id), "request {id} answered but never applied"),
            Err(HandOffError::Panicked) => {
                panicked += 1;
                assert!(!in_log.contains_key(id), "request {id} applied but answered Panicked");
            }
            Err(e) => assert!(!in_log.contains_key(id), "request {id} applied but answered {e}"),
        }
    }
    if expect_panics {
        assert!(panicked > 0, "the injected panics reached their callers");
    }
}

/// How many requests were refused with `Closed`.
fn closed_count(seen: &HashMap<u64, Outcome>) -> usize {
    seen.values().filter(|o| **o == Err(HandOffError::Closed)).count()
}

fn applied_log() -> (Arc<Mutex<Vec<Req>>>, ModelTail) {
    let applied = Arc::new(Mutex::new(Vec::new()));
    (Arc::clone(&applied), ModelTail { pos: 0, applied })
}

#[test]
fn sequencer_matches_the_sequential_model() {
    let (applied, tail) = applied_log();
    // A tiny queue: puts often find it full and must wait (back-pressure).
    let config = SequencerConfig { queue_capacity: 4, max_batch: 8 };
    let seq = Arc::new(Sequencer::start(tail, config).unwrap());
    let s = Arc::clone(&seq);
    let seen = drive(Arc::new(move |r| s.submit(r)), &|| seq.close(), 12, 1500, None);
    assert_eq!(seen.len() as u64, 12 * 1500 - 4 * (1500 - 1500 / 2 - 1));
    check(&seen, &applied.lock().unwrap(), true);
}

#[test]
fn combining_matches_the_sequential_model() {
    let (applied, tail) = applied_log();
    let comb = Arc::new(Combining::new(tail));
    let c = Arc::clone(&comb);
    let seen = drive(Arc::new(move |r| c.submit(r)), &|| comb.close(), 12, 1500, None);
    assert_eq!(seen.len() as u64, 12 * 1500 - 4 * (1500 - 1500 / 2 - 1));
    check(&seen, &applied.lock().unwrap(), true);
}

#[test]
fn combining_with_more_threads_than_slots() {
    let (applied, tail) = applied_log();
    let comb = Arc::new(Combining::with_slots(tail, 3));
    let c = Arc::clone(&comb);
    let seen = drive(Arc::new(move |r| c.submit(r)), &|| comb.close(), 9, 400, None);
    // Every request of every caller has one outcome; the three told to panic stop halfway.
    assert_eq!(seen.len() as u64, 9 * 400 - 3 * (400 - 400 / 2 - 1));
    check(&seen, &applied.lock().unwrap(), false);
}

#[test]
fn sequencer_close_with_puts_in_flight() {
    let (applied, tail) = applied_log();
    let seq = Arc::new(Sequencer::start(tail, SequencerConfig { queue_capacity: 2, max_batch: 4 }).unwrap());
    let s = Arc::clone(&seq);
    let seen = drive(Arc::new(move |r| s.submit(r)), &|| seq.close(), 8, u64::MAX, Some(3000));
    let applied = applied.lock().unwrap();
    check(&seen, &applied, false);
    assert_eq!(closed_count(&seen), 8, "every caller's first put after the close was refused");
    assert_eq!(
        seq.submit(Req { id: u64::MAX, records: 1, fail: false, panic: false }),
        Err(HandOffError::Closed)
    );
}

#[test]
fn combining_close_with_puts_in_flight() {
    let (applied, tail) = applied_log();
    let comb = Arc::new(Combining::new(tail));
    let c = Arc::clone(&comb);
    let seen = drive(Arc::new(move |r| c.submit(r)), &|| comb.close(), 8, u64::MAX, Some(3000));
    check(&seen, &applied.lock().unwrap(), false);
    assert_eq!(closed_count(&seen), 8, "every caller's first put after the close was refused");
    assert_eq!(
        comb.submit(Req { id: u64::MAX, records: 1, fail: false, panic: false }),
        Err(HandOffError::Closed)
    );
}
