//! The store target: the real `MessageStore::put_message` path. Each window opens a new,
//! empty store whose one commitlog segment is warm before the clock starts, with
//! preallocation off and a byte cap below the segment's end, so no roll and no segment
//! creation happens inside the window; the store's flush and dispatch threads run as in
//! production and their CPU is reported in its own column. Under `PutPath::Sequencer` the
//! writer thread's CPU counts as the workers' (it does their critical sections).
//!
//! Where the set-up time goes (measured on the reference VM, 128 MiB segment on tmpfs): a
//! fresh segment costs about 1.2 ms per MiB (`posix_fallocate` 45 ms, populating the mapping
//! 45 ms, unmapping 10 ms, unlinking 20 ms), about 150 ms per window against a 35 ms span.
//! So under `Layout::Single` every window's store starts on the same warm segment of the
//! largest size (`MessageStore::open_over_warm_segments`, given back zeroed by
//! `close_into_warm_segments`): the file stays allocated and mapped across windows, and a
//! window's set-up is the store's open and close plus zeroing what the window before wrote
//! (about 25 GB/s through the mapping). Under `Layout::PerTopic` (one log per topic, made by
//! the first put) each window still creates its segments, sized from the fastest rate seen
//! so far in the same cell (remembered per cell: the sweep visits every cell in every
//! round): (warm-up + span) x rate x 1.5, between 4 MiB and the largest size; the cell's
//! first window takes the largest.

use super::{Outcome, slack};
use crate::grid::Cell;
use crate::sweep_lock::SweepLock;
use crate::window::{Step, WindowSpec, run_window_with};
use abslock_store::{Layout, Message, MessageStore, PutPath, StoreConfig, WarmSegments, WarmUp};
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
    /// The warm segment `Layout::Single` windows start on, between windows (`None` before
    /// the first window, or after a window lost it to an error: the next one makes another).
    warm: Mutex<Option<WarmSegments>>,
}

/// The directory inside the run directory that keeps the store target's warm segment.
const WARM_DIR: &str = "store-warm";

impl StoreTarget {
    /// A store target creating its stores under `parent`, segments of at most `max_segment` bytes.
    pub fn new(parent: PathBuf, max_segment: u64) -> StoreTarget {
        StoreTarget { parent, max_segment, rates: Mutex::new(Vec::new()), warm: Mutex::new(None) }
    }

    /// The segment size of the next window of `cell` with `spec`: the largest under
    /// `Layout::Single` (the warm segment is reused), else sized to the cell's rate.
    pub fn segment_size_for(&self, cell: &Cell, spec: &WindowSpec) -> u64 {
        if matches!(cell.layout, Layout::Single) {
            return self.max_segment;
        }
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
        let config = Self::config(cell, segment_size, put_path);
        let opened = if matches!(cell.layout, Layout::Single) {
            let warm = self.take_warm()?;
            MessageStore::open_over_warm_segments(dir, config, make, warm)
        } else {
            MessageStore::open_with_lock(dir, config, make)
        };
        opened.map_err(|e| format!("cannot open the store: {e}"))
    }

    /// The warm segment of `Layout::Single` windows, made (and warmed) if there is none.
    fn take_warm(&self) -> Result<WarmSegments, String> {
        if let Some(w) = self.warm.lock().unwrap_or_else(PoisonError::into_inner).take() {
            return Ok(w);
        }
        let home = self.parent.join(WARM_DIR);
        std::fs::create_dir_all(&home).map_err(|e| format!("cannot create {}: {e}", home.display()))?;
        WarmSegments::create(&home, self.max_segment, 1)
            .map_err(|e| format!("cannot create the store target's warm segment: {e}"))
    }

    /// Closes `store`; under `Layout::Single` its segment goes back to the warm slot.
    fn close<R: SweepLock>(&self, store: MessageStore<R>, cell: &Cell) -> Result<(), String> {
        if !matches!(cell.layout, Layout::Single) {
            return store.close().map_err(|e| format!("close: {e}"));
        }
        let warm =
            store.close_into_warm_segments(&self.parent.join(WARM_DIR)).map_err(|e| format!("close: {e}"))?;
        *self.warm.lock().unwrap_or_else(PoisonError::into_inner) = Some(warm);
        Ok(())
    }

    fn config(cell: &Cell, segment_size: u64, put_path: PutPath) -> StoreConfig {
        StoreConfig {
            put_path,
            segment_size,
            flush: cell.flush,
            layout: cell.layout,
            warm_up: WarmUp { enabled: true, mlock: false },
            preallocate: false,
            consume_queue_entries: CONSUME_QUEUE_ENTRIES,
            ..StoreConfig::default()
        }
    }

    /// Runs one window of `cell` on a new, empty store under locks from `make`; the store's
    /// directory is removed afterwards (its warm segment kept, under `Layout::Single`).
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
        self.close(store, cell)?;
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
    fn per_topic_segment_sizes_remember_every_cell_the_run_interleaves() {
        let t = StoreTarget::new(PathBuf::from("/nonexistent"), 128 << 20);
        let cell = |threads| Cell {
            target: Target::Store,
            threads,
            size: 128,
            layout: Layout::PerTopic,
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
        let single = Cell { layout: Layout::Single, ..a };
        t.note_rate(&single, 10e6);
        assert_eq!(t.segment_size_for(&single, &spec), 128 << 20, "single: the reused warm segment, largest");
    }

    #[test]
    fn single_layout_windows_reuse_one_warm_segment() {
        let parent = tempfile::tempdir().unwrap();
        let t = StoreTarget::new(parent.path().to_path_buf(), 4 << 20);
        let cell = Cell {
            target: Target::Store,
            threads: 2,
            size: 128,
            layout: Layout::Single,
            topics: 1,
            flush: FlushMode::ASYNC,
        };
        let spec = WindowSpec {
            threads: 2,
            warmup: Duration::from_millis(1),
            measure: Duration::from_millis(5),
            pin: None,
        };
        let abort = AtomicBool::new(false);
        for _ in 0..2 {
            // Whether any put lands inside a 5 ms span depends on the scheduler (a loaded CI machine once
            // gave none), so the verdict is only that the window ran and gave its segment back.
            let o = t.window(&cell, &spec, &abort, || <parking_lot::RawMutex as lock_api::RawMutex>::INIT);
            assert!(o.is_ok(), "{:?}", o.err());
            assert!(t.warm.lock().unwrap().as_ref().is_some_and(|w| w.len() == 1), "the segment came back");
        }
        let left: Vec<_> =
            std::fs::read_dir(parent.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(
            left,
            vec![std::ffi::OsString::from(WARM_DIR)],
            "store directories removed, warm one kept"
        );
    }
}
