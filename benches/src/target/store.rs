//! The store target: the real `MessageStore::put_message` path. Each window opens a fresh
//! store whose first segment is created and warmed at open (before the clock), with
//! preallocation off and a byte cap below the segment's end, so no roll and no segment
//! creation happens inside the window; the store's flush and dispatch threads run as in
//! production and their CPU is reported in its own column. Under `PutPath::Sequencer` the
//! writer thread's CPU counts as the workers' (it does their critical sections).
//!
//! Creating and warming a segment costs about 4 ms per MiB on the reference VM (fresh
//! memory faults through to the host), so a window's segment is sized from the fastest rate
//! seen so far in the same cell (remembered per cell: the sweep visits every cell in every
//! round): (warm-up + span) x rate x 1.5, between 4 MiB and the largest size; the cell's
//! first window takes the largest.

use super::{Outcome, slack};
use crate::grid::Cell;
use crate::sweep_lock::SweepLock;
use crate::window::{Step, WindowSpec, run_window_with};
use abslock_store::{Layout, Message, MessageStore, PutPath, StoreConfig, WarmUp};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicBool;

/// Entries per consume-queue file in sweep stores (320 KiB files; RocketMQ's 300 000 would
/// make 6 MB files per queue and worker).
pub const CONSUME_QUEUE_ENTRIES: u64 = 16_384;

/// The largest store segment, in `--segment-mib` units.
pub const STORE_SEGMENTS_MAX: u64 = 4;

/// Bytes of the encoded record around a body of `size` bytes in a sweep store: an upper
/// bound for the slack (topic `topic-N`, no properties but the record CRC).
pub fn record_len(size: usize) -> usize {
    size + 160
}

/// The store target of one run.
#[derive(Debug)]
pub struct StoreTarget {
    /// Where each window's store directory is created (inside the run directory).
    pub parent: PathBuf,
    /// Largest commitlog segment of a window, bytes (divided among topics under `per-topic`).
    pub max_segment: u64,
    /// Per cell seen so far, the fastest rate seen in it, bytes/s (a few dozen cells: a list).
    rates: Mutex<Vec<(Cell, f64)>>,
}

impl StoreTarget {
    /// A store target creating its stores under `parent`, segments of at most `max_segment` bytes.
    pub fn new(parent: PathBuf, max_segment: u64) -> StoreTarget {
        StoreTarget { parent, max_segment, rates: Mutex::new(Vec::new()) }
    }

    /// The segment size of the next window of `cell` with `spec`.
    pub fn segment_size_for(&self, cell: &Cell, spec: &WindowSpec) -> u64 {
        let seen = self
            .rates
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|(c, _)| c == cell)
            .copied();
        let total = match seen {
            Some((_, rate)) => {
                let need = rate * (spec.warmup + spec.measure).as_secs_f64() * 1.5;
                (need as u64 + slack(spec.threads, record_len(cell.size))).clamp(4 << 20, self.max_segment)
            }
            _ => self.max_segment,
        };
        let per_log = match cell.layout {
            Layout::PerTopic => total / cell.topics.max(1) as u64,
            _ => total,
        };
        per_log.max(1 << 20).next_multiple_of(1 << 20)
    }

    fn note_rate(&self, cell: &Cell, bytes_per_s: f64) {
        let mut seen = self.rates.lock().unwrap_or_else(PoisonError::into_inner);
        match seen.iter_mut().find(|(c, _)| c == cell) {
            Some((_, r)) => *r = r.max(bytes_per_s),
            None => seen.push((*cell, bytes_per_s)),
        }
    }

    fn open<R: SweepLock>(
        &self,
        dir: &Path,
        cell: &Cell,
        segment_size: u64,
        put_path: PutPath,
        make: impl Fn() -> R + Send + Sync + 'static,
    ) -> Result<MessageStore<R>, String> {
        let config = StoreConfig {
            put_path,
            segment_size,
            flush: cell.flush,
            layout: cell.layout,
            warm_up: WarmUp { enabled: true, mlock: false },
            preallocate: false,
            consume_queue_entries: CONSUME_QUEUE_ENTRIES,
            ..StoreConfig::default()
        };
        MessageStore::open_with_lock(dir, config, make).map_err(|e| format!("cannot open the store: {e}"))
    }

    /// Runs one window of `cell` on a fresh store under locks from `make`; the store's
    /// directory is removed afterwards.
    ///
    /// # Errors
    /// A message if the store cannot be opened or a put fails.
    pub fn window<R: SweepLock>(
        &self,
        cell: &Cell,
        spec: &WindowSpec,
        abort: &AtomicBool,
        make: impl Fn() -> R + Send + Sync + 'static,
    ) -> Result<Outcome, String> {
        self.window_on(cell, spec, abort, PutPath::Lock, make)
    }

    /// As [`window`](Self::window), with the store opened on `put_path` (its log locks from
    /// `make`); the put path's own thread (a sequencer's writer) counts as the workers' CPU.
    ///
    /// # Errors
    /// As [`window`](Self::window).
    pub fn window_on<R: SweepLock>(
        &self,
        cell: &Cell,
        spec: &WindowSpec,
        abort: &AtomicBool,
        put_path: PutPath,
        make: impl Fn() -> R + Send + Sync + 'static,
    ) -> Result<Outcome, String> {
        let dir = tempfile::Builder::new()
            .prefix("store-")
            .tempdir_in(&self.parent)
            .map_err(|e| format!("cannot create a store directory in {}: {e}", self.parent.display()))?;
        let segment_size = self.segment_size_for(cell, spec);
        let store = self.open(dir.path(), cell, segment_size, put_path, make)?;
        let topics = cell.topics.max(1);
        let body = vec![0x5a; cell.size];
        // One queue per worker, so the topic-queue table's stripe lock never caps contention.
        let msgs: Vec<Vec<Message>> = (0..spec.threads)
            .map(|w| {
                (0..topics)
                    .map(|t| Message::new(format!("topic-{t}"), body.clone()).queue_id(w as u32))
                    .collect()
            })
            .collect();
        // Every topic's log exists (and its segment is warm) before the clock starts.
        for m in &msgs[0] {
            store.put_message(m).map_err(|e| format!("first put: {e}"))?;
        }
        let cap = segment_size.saturating_sub(slack(spec.threads, record_len(cell.size)));
        let own_cpu = || store.put_path_cpu_ns().unwrap_or(0);
        let window = run_window_with(spec, abort, &own_cpu, |i| {
            let (store, mine) = (&store, &msgs[i]);
            let mut k = 0usize;
            move || {
                let r = store.put_message(&mine[k % topics])?;
                k += 1;
                Ok::<_, abslock_store::PutError>(if r.physical_offset >= cap {
                    Step::Full
                } else {
                    Step::More
                })
            }
        });
        let mut abs: Option<(u64, u64)> = None;
        store.for_each_put_lock(|l| {
            if let Some(s) = l.abs_stats() {
                let a = abs.get_or_insert((0, 0));
                a.0 += s.acquisitions;
                a.1 += s.contended;
            }
        });
        store.close().map_err(|e| format!("close: {e}"))?;
        drop(dir);
        let window = window?;
        self.note_rate(cell, window.msgs_per_s() * record_len(cell.size) as f64);
        Ok(Outcome { window, abs, trace: Vec::new() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Target;
    use abslock_store::FlushMode;
    use std::time::Duration;

    #[test]
    fn segment_sizes_remember_every_cell_the_run_interleaves() {
        let t = StoreTarget::new(PathBuf::from("/nonexistent"), 128 << 20);
        let cell = |threads| Cell {
            target: Target::Store,
            threads,
            size: 128,
            layout: Layout::Single,
            topics: 1,
            flush: FlushMode::ASYNC,
        };
        let spec = WindowSpec {
            threads: 1,
            warmup: Duration::from_millis(5),
            measure: Duration::from_millis(30),
            pin: None,
        };
        let (a, b) = (cell(1), cell(4));
        assert_eq!(t.segment_size_for(&a, &spec), 128 << 20, "a cell's first window takes the largest");
        t.note_rate(&a, 100e6);
        t.note_rate(&b, 10e6);
        // 100 MB/s x 35 ms x 1.5 = 5.25 MB (+ slack), rounded up to whole MiB.
        let sized = t.segment_size_for(&a, &spec);
        assert!((5 << 20..8 << 20).contains(&sized), "{sized}");
        assert_eq!(t.segment_size_for(&b, &spec), 4 << 20, "clamped at 4 MiB");
        t.note_rate(&a, 50e6);
        assert_eq!(t.segment_size_for(&a, &spec), sized, "the fastest rate seen counts");
    }
}
