//! Lock benches: what one lock+unlock pair costs, alone and under contention.
//!
//! - `locks/uncontended`: one thread, one lock+unlock pair through `lock_api::Mutex`
//!   (or the peer's own API) around an increment, for every abslock strategy
//!   (cas-spin, spin, backoff-k1000, abs, abs-rocketmq) and the peers
//!   `parking_lot::RawMutex`, `std::sync::Mutex`, `spin::Mutex`: the fast path, which
//!   ABS keeps within 1.05x of parking_lot's; and `abs-after-solo`, an ABS lock whose solo
//!   regime was switched on before the measurement (a quiet window sets it aside).
//! - `locks/contended/<strategy>/<cs>`: 2, 4, 8, 16 threads, each taking the lock and
//!   doing a critical section of 0, ~100 ns or ~1 us of arithmetic. Time per
//!   acquisition (all threads together); threads are spawned once per benchmark and
//!   only the batch between two barriers is timed (`iter_custom`).
//!
//! Counts are kept small (10 samples, short measurement) so a full `cargo bench` stays
//! reasonable on 2 cores.

use abslock::{AbsMutexExt, Calibrated, RawAbsLock, RawBackoffLock, RawCasSpinLock, RawSpinLock, RocketMq};
use abslock_benches::counter::{Counter, bump_pool};
use abslock_benches::pool::units_per_ns;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

macro_rules! for_each_strategy {
    ($f:ident, $($arg:expr),*) => {
        $f::<lock_api::Mutex<RawCasSpinLock, u64>>("cas-spin", $($arg),*);
        $f::<lock_api::Mutex<RawSpinLock, u64>>("spin", $($arg),*);
        $f::<lock_api::Mutex<RawBackoffLock, u64>>("backoff-k1000", $($arg),*);
        $f::<lock_api::Mutex<RawAbsLock<Calibrated>, u64>>("abs", $($arg),*);
        $f::<lock_api::Mutex<RawAbsLock<RocketMq>, u64>>("abs-rocketmq", $($arg),*);
        $f::<lock_api::Mutex<parking_lot::RawMutex, u64>>("parking_lot", $($arg),*);
        $f::<std::sync::Mutex<u64>>("std", $($arg),*);
        $f::<spin::Mutex<u64>>("spin-crate", $($arg),*);
    };
}

fn uncontended_one<M: Counter>(
    name: &str,
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
) {
    let m = M::make();
    g.bench_function(name, |b| b.iter(|| black_box(&m).bump_empty()));
}

fn uncontended(c: &mut Criterion) {
    // Calibrate ABS once, outside any measurement.
    let _ = abslock::AbsConfig::calibrated();
    let mut g = c.benchmark_group("locks/uncontended");
    g.sample_size(20).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    for_each_strategy!(uncontended_one, &mut g);
    // A lock whose solo regime was on (by a trial's verdict, here by hand) and that then went quiet: the
    // first window without waiters sets the regime aside, so the release is one CAS again.
    let m = lock_api::Mutex::<RawAbsLock<Calibrated>, u64>::new(0);
    m.set_solo(true);
    g.bench_function("abs-after-solo", |b| b.iter(|| *black_box(&m).lock() += 1));
    // The quiet regime's ablation: every release an RMW, as before round 13.
    uncontended_one::<lock_api::Mutex<RawAbsLock<abslock_benches::ablations::NoQuiet>, u64>>(
        "abs-no-quiet",
        &mut g,
    );
    g.finish();
}

fn contended_one<M: Counter>(name: &str, c: &mut Criterion, cs: &[(&str, u64)]) {
    for &(cs_name, units) in cs {
        let mut g = c.benchmark_group(format!("locks/contended/{name}/{cs_name}"));
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_millis(600));
        for threads in [2usize, 4, 8, 16] {
            let m = Arc::new(M::make());
            let pool = bump_pool(threads, m, units);
            g.bench_with_input(BenchmarkId::new("threads", threads), &threads, |b, _| {
                b.iter_custom(|iters| pool.run(iters));
            });
        }
        g.finish();
    }
}

fn contended(c: &mut Criterion) {
    let _ = abslock::AbsConfig::calibrated();
    let per_ns = units_per_ns();
    let cs = [
        ("cs-0ns", 0u64),
        ("cs-100ns", (100.0 * per_ns).round() as u64),
        ("cs-1us", (1000.0 * per_ns).round() as u64),
    ];
    for_each_strategy!(contended_one, c, &cs);
}

criterion_group!(benches, uncontended, contended);
criterion_main!(benches);
