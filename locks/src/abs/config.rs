//! [`AbsConfig`]: the bounds and ratios the adaptive lock tunes itself within.

use super::calibrate::MeasuredCosts;
use crate::sync::OnceLock;

/// The measured configuration, once [`AbsConfig::calibrated`] has run.
static CALIBRATED: OnceLock<AbsConfig> = OnceLock::new();

/// Tuning bounds of [`RawAbsLock`](crate::RawAbsLock). All k values count pause hints (a waiter reads
/// the lock word between bursts of 1, 2, 4 ... 64 of them); windows count acquisitions.
///
/// Two presets: [`AbsConfig::ROCKETMQ`] keeps the upstream constants; [`AbsConfig::calibrated`] derives
/// the bounds from costs measured on this machine (the default for [`AbsMutex`](crate::AbsMutex)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbsConfig {
    /// k a fresh lock starts with (spins before yielding).
    pub k_init: u32,
    /// Lowest k; lowering stops here.
    pub k_min: u32,
    /// Highest k; when spinning still fails at this k, waiters switch to parking (with
    /// [`park_only_when_crowded`](Self::park_only_when_crowded), only in a crowded window). The lock keeps k in 28
    /// bits, so any k above 268 435 455 (2^28 - 1) acts as that; [`K_CEILING`] is far below it.
    pub k_max: u32,
    /// Additive step: raising adds it once doubling would pass `k_max`; lowering subtracts it.
    pub k_step: u32,
    /// Raise k when `exhausted * raise_ratio >= acquisitions` in a window (RocketMQ: 320).
    pub raise_ratio: u32,
    /// Lower k when `exhausted * lower_ratio <= acquisitions` in a window (RocketMQ: 1280).
    pub lower_ratio: u32,
    /// In park mode, return to spinning when contention falls to this percentage of the contention
    /// recorded at the switch (RocketMQ: 80).
    pub return_percent: u32,
    /// In spin mode, yields a waiter makes before it parks anyway (`u32::MAX`: never, as RocketMQ),
    /// unless it found the cores taken (see [`crowded_yields`](Self::crowded_yields)). Calibrated: 8,
    /// two futex hand-offs of [`HANDOFF_YIELDS`] yields (the spin-then-block rule).
    pub max_yields: u32,
    /// In park mode, spins a waiter makes before it parks (and again after each of its `park_yields`).
    pub park_spins: u32,
    /// In park mode, yields a waiter makes before it parks (RocketMQ: 0, its park mode is a plain mutex).
    /// A waiter inside `sched_yield` leaves the holder's cache line alone, while one that parks costs the
    /// holder a futex wake (1.8-2.3 us on the project's machines) at its next release, which is why park
    /// mode yields at all (`docs/abs.md`, round 3). Calibrated: [`YIELD_BUDGET`], as `crowded_yields`
    /// (`max_yields` before round 14). Ours.
    pub park_yields: u32,
    /// Acquisitions per adaptation window (a multiple of
    /// [`AbsProfile::CHECK_INTERVAL`](crate::AbsProfile::CHECK_INTERVAL) in effect).
    pub window: u32,
    /// Waiters that may spin k at once; a waiter that finds this many spinning or yielding spins only
    /// `crowded_spins` (or, when the crowded-spin trial chose it, nothing) before each yield (after Go's
    /// `canSpin`, relaxed: Go does not spin at all then). `0`: the number of cores minus one (at least
    /// 1). `u32::MAX`: no limit (RocketMQ). Ours.
    pub max_spinners: u32,
    /// In spin mode, pauses a waiter spins before each of its `crowded_yields` yields (and before it
    /// parks) when it found `max_spinners` waiters already spinning or yielding; at most k, so `u32::MAX`
    /// makes `max_spinners` limit nothing. Calibrated: `k_min`, about one yield's cost, which with
    /// `crowded_yields` is park mode's budget (`park_spins`, `park_yields`). RocketMQ: 0 (never used, its
    /// `max_spinners` is `u32::MAX`). A trade-off, measured both ways in `docs/abs.md`, rounds 4 and 5
    /// (sweep strategy `abs-yield` is `crowded_spins: 0`, `abs-spin` is `crowded_trial: false`), which
    /// [`crowded_trial`](Self::crowded_trial) settles per lock at run time:
    /// - spinning: a `sched_yield` among runnable threads can cost a whole scheduler slice, so on the
    ///   real put path (the store target, most of a put outside the lock) spinning first keeps the
    ///   p99.9 acquire latency at 16 threads near `parking_lot`'s, where yielding at once put it in the
    ///   hundreds of microseconds;
    /// - yielding at once: better where threads do nothing but take the lock (the lock-bound target at
    ///   4-16 threads with 128 B and 1 KiB records): a waiter that catches the lock early is one more
    ///   change of holder, and each moves the lock's cache lines between cores.
    ///
    /// Ours.
    pub crowded_spins: u32,
    /// In spin mode, yields a waiter makes before it parks when it found `max_spinners` waiters already
    /// spinning or yielding (the canSpin test above), instead of `max_yields` (`u32::MAX`: never).
    /// Past the cores a sleeper costs the lock, not only itself: the thread that wakes it does so after
    /// freeing the lock, and unless another waiter is awake the lock stays free for that futex wake
    /// (1.8 us on round 14's 2-core AMD VM, about eighteen 100 ns critical sections), while a waiter
    /// inside `sched_yield` costs the holder nothing. Calibrated config: [`YIELD_BUDGET`], a chosen
    /// constant, not a measurement. RocketMQ: `u32::MAX`, as its `max_yields` (never used: its
    /// `max_spinners` is `u32::MAX`). Ours (`docs/abs.md`, round 14).
    pub crowded_yields: u32,
    /// Whether the lock measures both sides of the `crowded_spins` trade-off and keeps the faster
    /// ([`decide_crowded`](crate::decide_crowded)): every 256 windows, 4 windows with crowded waiters
    /// spinning `crowded_spins` and 4 with them yielding at once, in ABBA order, compared by time per
    /// acquisition over each setting's 3 fastest windows (the holder reads the clock at the end of those
    /// 8 windows and of the one before them, nowhere else); spinning is kept unless yielding is more than
    /// 5% faster, and a trial with a window without crowded waiters, in park mode or idle is void (keep
    /// spinning). The first trial starts after 16 windows. `false`: crowded waiters always spin
    /// `crowded_spins` (round 4's rule). Calibrated: `true`. RocketMQ: `false` (its `crowded_spins` is
    /// 0, so there is nothing to try). Ours.
    pub crowded_trial: bool,
    /// Whether spin mode switches to park mode only in a crowded window: one in which, at some
    /// acquisition, the holder and the threads waiting outnumbered the cores
    /// ([`WindowStats::crowded`](crate::WindowStats::crowded); the number of cores, not `max_spinners`,
    /// so a `max_spinners` set by hand does not change it). An uncrowded window whose k
    /// ran out at `k_max` holds spin mode instead: parking frees a core only for a thread that wants
    /// one, and each park costs the releasing holder a wake-up. With as many threads as cores (2 on a
    /// 2-core machine), RocketMQ's rule parks the waiters of a short critical section, whose k runs out
    /// while the holder re-acquires; `docs/abs.md`, round 6, gives the figures (sweep and grid strategy
    /// `abs-park` is `park_only_when_crowded: false`). Calibrated: `true`. RocketMQ: `false` (upstream
    /// parks whatever the crowd). Ours.
    pub park_only_when_crowded: bool,
    /// Waiters that may spin or yield at once; a newcomer that finds this many parks at once (an entry
    /// cap on the threads circulating over the lock, after Dice, "Malthusian Locks", EuroSys 2017). `0`:
    /// the number of cores. `u32::MAX`: no cap, the calibrated default and RocketMQ's: the cap cost
    /// 1.2-1.8x abs's time at a 0 ns critical section over 4-16 threads (a futex wait and wake per culled newcomer;
    /// `docs/abs.md`), while the wake rule already keeps the sleepers asleep. Ours.
    pub max_active: u32,
    /// Starvation bound, in microseconds, applied twice. Per lock: at most once per this period, a holder
    /// releasing over sleepers wakes the oldest one as the heir, which is then handed the lock at the
    /// first release after it runs and asks (parking_lot's eventual fairness hands off about every
    /// 0.5 ms). Sleepers are queued first in, first out, so each is handed the lock within (its place in
    /// the queue) periods plus its wake-up; the lock reads the bound at its first release over sleepers
    /// and then at most once per 256 acquisitions, and if it reads 0 or `u32::MAX` it keeps that value
    /// for the rest of its life. Per waiter: a waiter that has waited longer than this since its first
    /// yield (time asleep after it counts; the clock is read before that yield and after each yield)
    /// stops yielding and asks to be handed the lock as an heir does, for at most the rest of its yield
    /// budget, then sleeps as before (Go's starvation mode hands the lock to a waiter that has waited
    /// over 1 ms). `0`: every release over sleepers wakes an heir (heirs then pile up, each spinning or
    /// yielding: for tests and models, not for use); yielders are not bounded then. `u32::MAX`: never
    /// (RocketMQ). Ours.
    pub starve_after_us: u32,
    /// Solo trial and re-check period, in microseconds; `0`: no trial (RocketMQ). When not 0, the lock
    /// measures the solo regime against its usual waiting ([`decide_solo`](crate::decide_solo)). Under
    /// the regime waiters park at once, no release wakes a sleeper, and each sleeper re-checks the lock
    /// every this many microseconds times the threads waiting (a hand-off still brings one
    /// back: the starvation bound, `unlock_fair`, `bump`). A trial starts at a contended window (half a
    /// waiter to 16 waiters per acquisition; a more crowded window ends the regime and any trial, since
    /// its sleepers would wait many starvation bounds each; above 4 the regime also needs acquisitions
    /// of at most 1/2000 of the starvation bound, [`SOLO_CROWDED_MILLI`](crate::SOLO_CROWDED_MILLI)) 0.25 s after the last one, doubling the gap after each loss up to 8 s; it
    /// runs up to 8 arms in ABBA order, each 0.25 ms to settle then at least 0.5 ms timed, and keeps the
    /// regime until the next trial if it took more than 5% less time per acquisition in 3 of 4 pairs. It
    /// stops at the first pair the regime loses by 15% or more, so where it loses it runs about 0.75 ms
    /// of solo per trial. Without a starvation bound (`starve_after_us` `u32::MAX`) nothing bounds a solo
    /// sleeper's wait but the regime's end (a re-check rarely finds the lock free against a holder that
    /// takes it straight back), as nothing bounds any sleeper's wait without one. It pays where one thread saturates the lock (a lone thread out-runs any group
    /// sharing it, since each change of holder moves the protected data between cores) and costs where
    /// threads also work outside the lock (`docs/abs.md`, rounds 8 and 9). Calibrated: 1000, the
    /// starvation bound's period in rounds 10-14 (the bound is 500 since round 15). Ours (concurrency restriction taken to one circulating thread, after
    /// Dice, "Malthusian Locks", EuroSys 2017).
    pub solo_recheck_us: u32,
}

/// [`AbsConfig`]'s thread limits with `0` resolved against this machine's core count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    pub(crate) max_spinners: u32,
    pub(crate) max_active: u32,
    pub(crate) starve_after: Option<u32>,
}

/// `std::thread::available_parallelism`, read once per process (a syscall), 1 if unknown.
#[cfg(not(abslock_loom))]
pub(crate) fn cores() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static CORES: AtomicU32 = AtomicU32::new(0);
    match CORES.load(Ordering::Relaxed) {
        0 => {
            let n = std::thread::available_parallelism()
                .map_or(1, |n| u32::try_from(n.get()).unwrap_or(u32::MAX));
            CORES.store(n, Ordering::Relaxed);
            n
        }
        n => n,
    }
}

/// Under loom the models assume the project's 2-core machine.
#[cfg(abslock_loom)]
pub(crate) fn cores() -> u32 {
    2
}

/// Upper clamp for any derived k, whatever the measured costs (1 000 000 pauses is ~25 ms here).
pub const K_CEILING: u32 = 1_000_000;
/// Yields a crowded waiter makes before it parks (`crowded_yields`), and any waiter in park mode
/// (`park_yields`), in every config [`AbsConfig::from_costs`] derives: the calibrated one and the one
/// from [`MeasuredCosts::REFERENCE`] (ours). The spin-then-block rule prices
/// blocking at the waiter's own cost, two hand-offs (8 yields at [`HANDOFF_YIELDS`], still
/// `max_yields`), as rounds 11-13 did for every waiter. Past the cores blocking also costs the lock: the
/// releasing thread wakes a sleeper after freeing the lock, and unless another waiter is awake the lock
/// stays free for that futex wake. With `park_only_when_crowded` the lock enters park mode only from a
/// crowded window, so park mode's waiters get the same budget. A chosen value, not a measured one:
/// `docs/abs.md`, round 14, compares it with 8 (the `abs-8-yields` ablation).
pub const YIELD_BUDGET: u32 = 64;
/// The calibrated `max_yields` (two hand-offs of [`HANDOFF_YIELDS`] yields), under its name before
/// round 14, when it bounded every waiter's yields.
#[deprecated(
    note = "the calibrated `max_yields` is `2 * HANDOFF_YIELDS`; crowded waiters use `YIELD_BUDGET`"
)]
pub const YIELD_CEILING: u32 = 2 * HANDOFF_YIELDS;
/// What [`AbsConfig::from_costs`] takes a futex hand-off (a futex wake plus a context switch on one
/// core) to cost, in yields, whatever [`MeasuredCosts::handoff_ns`] says (ours). On both machines this
/// project has run on, a hand-off measured 3.5-4.5 yields while the machine was idle. Load moves the
/// measurement both ways: the woken thread waits for its core behind other runnable threads, and a
/// yield on a loaded core costs more too, so with four busy processes on 2 cores three processes of
/// round 10's build measured 2.8-4.9 yields and derived `k_max` 143-207 and `max_yields` 7-10
/// (`docs/abs.md`, "Calibration"); a clean-clone CI run once measured 200 us and derived `k_max` near
/// 17 000 (commit 11620ee). As a constant ratio it leaves `k_min` the only measured bound (`k_max = 8
/// k_min`, `max_yields = 8`), which holds still under load. On a machine whose hand-off costs far more
/// or far less than 4 yields, `k_max` and `max_yields` are off by that factor from the spin-then-block
/// rule.
pub const HANDOFF_YIELDS: u32 = 4;
/// Default adaptation window, in acquisitions (ours; RocketMQ uses one wall-clock second).
pub const DEFAULT_WINDOW: u32 = 1024;
/// Default starvation bound, in microseconds: one hand-off to the oldest sleeper per this period, and
/// the longest a waiter yields before it asks to be handed the lock. 500 us is parking_lot's mean
/// interval between fair unlocks (a random 0-1 ms); Go's `starvationThresholdNs` is 1 ms. Rounds 10-14
/// used 1000 us; round 15 halved it with the per-waiter bound: at 16 threads x 16 KiB on the sweep's
/// `lock-bound` target, 1000 us left abs's p99.9 acquire latency at 1.1x parking_lot's and 500 us put it
/// at 0.5-0.6x (`examples/wait_tail.rs`, `docs/abs.md`).
pub const DEFAULT_STARVE_AFTER_US: u32 = 500;
/// [`AbsConfig::solo_recheck_us`] of the calibrated and reference configs, in microseconds (ours): as
/// long as rounds 10-14's starvation bound, so a sleeper waits for a free lock about as long as for its
/// turn (the bound is 500 us since round 15; the solo trial was not re-tuned with it).
pub const DEFAULT_SOLO_RECHECK_US: u32 = 1000;

impl AbsConfig {
    /// RocketMQ 5.3.2's `AdaptiveBackOffSpinLockImpl` constants: k from 1000 (its initial and minimum
    /// "spin degree") up to 10 000 in steps of 1000, raise when at least 1 in 320 lock calls ran out of
    /// spins, lower when at most 1 in 1280 did, return from the mutex at 80% of the switch contention.
    /// Its spin mode never parks (`max_yields = u32::MAX`). Windows are 1024 acquisitions here, not one
    /// second, so the rule reacts at the same pace on any machine.
    pub const ROCKETMQ: AbsConfig = AbsConfig {
        k_init: 1000,
        k_min: 1000,
        k_max: 10_000,
        k_step: 1000,
        raise_ratio: 320,
        lower_ratio: 1280,
        return_percent: 80,
        max_yields: u32::MAX,
        park_spins: 0,
        park_yields: 0,
        window: DEFAULT_WINDOW,
        max_spinners: u32::MAX,
        crowded_spins: 0,
        crowded_yields: u32::MAX,
        crowded_trial: false,
        park_only_when_crowded: false,
        max_active: u32::MAX,
        starve_after_us: u32::MAX,
        solo_recheck_us: 0,
    };

    /// The configuration derived from this machine's costs, measured once per process: the first call
    /// measures (on helper threads it waits for: a few ms on an idle machine, about a second per core on a
    /// loaded one; see [`MeasuredCosts::measure`]), later calls return the same value. Call it at start-up
    /// to have measured bounds from the first acquisition; locks never wait for it (they use
    /// [`AbsConfig::calibrated_or_reference`]).
    #[cfg(not(abslock_loom))]
    pub fn calibrated() -> &'static AbsConfig {
        CALIBRATED.get_or_init(|| AbsConfig::from_costs(&MeasuredCosts::measure()))
    }

    /// Under loom no measurement runs: the config is derived from [`MeasuredCosts::REFERENCE`].
    #[cfg(abslock_loom)]
    pub fn calibrated() -> &'static AbsConfig {
        CALIBRATED.get_or_init(|| AbsConfig::from_costs(&MeasuredCosts::REFERENCE))
    }

    /// The calibrated configuration if it is ready, else the one derived from
    /// [`MeasuredCosts::REFERENCE`], after starting the measurement once on a background thread. Never
    /// blocks, so a lock works with sane bounds from its first acquisition and switches to the measured
    /// ones when they land (what [`Calibrated`](crate::Calibrated) locks call).
    pub fn calibrated_or_reference() -> &'static AbsConfig {
        if let Some(c) = CALIBRATED.get() {
            return c;
        }
        #[cfg(not(abslock_loom))]
        {
            static STARTED: std::sync::Once = std::sync::Once::new();
            STARTED.call_once(|| {
                // If the thread cannot be spawned, the reference bounds stay in force.
                let _ = std::thread::Builder::new().name("abslock-calibrate".into()).spawn(|| {
                    let _ = AbsConfig::calibrated();
                });
            });
        }
        static REFERENCE: OnceLock<AbsConfig> = OnceLock::new();
        REFERENCE.get_or_init(|| AbsConfig::from_costs(&MeasuredCosts::REFERENCE))
    }

    /// Derives bounds from measured costs by the spin-then-block rule (Karlin, Li, Manasse and Owicki,
    /// SOSP 1991: spin for as long as blocking would cost, which is 2-competitive), for the spin before
    /// parking and for the yields before parking; only `k_min` comes from a measurement. Blocking
    /// costs two hand-offs (the sleeper's park and the wake-up that ends it), and a hand-off is taken as
    /// [`HANDOFF_YIELDS`] yields (the measured `handoff_ns` is reported, not used: it moves with load):
    ///
    /// - spin about one yield's cost before yielding: `k_min = yield_ns / spin_ns`;
    /// - spin at most what blocking costs before giving up on spinning: `k_max = 2 x 4 k_min`;
    /// - yield about what blocking costs before parking: `max_yields = 2 x 4`;
    /// - past the cores, yield [`YIELD_BUDGET`] times before parking (`crowded_yields`, and in park
    ///   mode, entered only from a crowded window, `park_yields`; park mode only drops the long spin):
    ///   there blocking also costs the lock a wake-up while it is free, which the rule leaves out.
    ///
    /// Costs that are not finite or not positive are replaced by [`MeasuredCosts::REFERENCE`]'s and
    /// every result is clamped, so the bounds are ordered (`1 <= k_min <= k_init <= k_max <=
    /// K_CEILING`) for any input. Never panics.
    pub fn from_costs(costs: &MeasuredCosts) -> AbsConfig {
        let costs = costs.sanitized();
        let k_min = {
            let r = (costs.yield_ns / costs.spin_ns).round();
            if r.is_finite() { r.clamp(1.0, f64::from(K_CEILING)) as u32 } else { K_CEILING }
        };
        let k_max = k_min.saturating_mul(2 * HANDOFF_YIELDS).min(K_CEILING);
        let max_yields = 2 * HANDOFF_YIELDS;
        AbsConfig {
            k_init: k_min,
            k_min,
            k_max,
            k_step: k_min,
            raise_ratio: Self::ROCKETMQ.raise_ratio,
            lower_ratio: Self::ROCKETMQ.lower_ratio,
            return_percent: Self::ROCKETMQ.return_percent,
            max_yields,
            park_spins: k_min,
            park_yields: YIELD_BUDGET,
            window: DEFAULT_WINDOW,
            max_spinners: 0,
            crowded_spins: k_min,
            crowded_yields: YIELD_BUDGET,
            crowded_trial: true,
            park_only_when_crowded: true,
            max_active: u32::MAX,
            starve_after_us: DEFAULT_STARVE_AFTER_US,
            solo_recheck_us: DEFAULT_SOLO_RECHECK_US,
        }
    }

    /// The thread limits with `0` replaced by this machine's figures.
    pub(crate) fn limits(&self) -> Limits {
        let cores = cores().max(1);
        let pick = |v: u32, auto: u32| if v == 0 { auto.max(1) } else { v };
        Limits {
            max_spinners: pick(self.max_spinners, cores - 1),
            max_active: pick(self.max_active, cores),
            starve_after: (self.starve_after_us != u32::MAX).then_some(self.starve_after_us),
        }
    }

    /// k after one raise: double while that stays within `k_max`, else add `k_step`, capped at `k_max`.
    pub fn raised(&self, k: u32) -> u32 {
        let doubled = k.saturating_mul(2);
        if doubled <= self.k_max {
            doubled.max(self.k_min)
        } else {
            k.saturating_add(self.k_step.max(1)).min(self.k_max)
        }
    }

    /// k after one lower: subtract `k_step`, floored at `k_min`.
    pub fn lowered(&self, k: u32) -> u32 {
        k.saturating_sub(self.k_step.max(1)).max(self.k_min)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_ordered(c: &AbsConfig) {
        assert!(c.k_min >= 1, "{c:?}");
        assert!(c.k_min <= c.k_init && c.k_init <= c.k_max && c.k_max <= K_CEILING, "{c:?}");
        assert!(
            c.max_yields >= 1 && c.max_yields <= YIELD_BUDGET && c.crowded_yields <= YIELD_BUDGET,
            "{c:?}"
        );
        assert!(c.k_step >= 1, "{c:?}");
    }

    #[test]
    fn reference_costs_give_documented_bounds() {
        let c = AbsConfig::from_costs(&MeasuredCosts::REFERENCE);
        // 650 ns yield / 25 ns spin; 8 times that; 2 hand-offs of 4 yields; the crowded budget.
        assert_eq!((c.k_min, c.k_max, c.max_yields, c.crowded_yields), (26, 208, 8, YIELD_BUDGET));
        assert_ordered(&c);
    }

    #[test]
    fn park_mode_yields_in_the_calibrated_profile_and_not_in_rocketmqs() {
        let c = AbsConfig::from_costs(&MeasuredCosts::REFERENCE);
        assert_eq!((c.park_spins, c.park_yields), (c.k_min, c.crowded_yields));
        // Upstream's park mode is its ReentrantLock: no spinning, no yielding.
        assert_eq!((AbsConfig::ROCKETMQ.park_spins, AbsConfig::ROCKETMQ.park_yields), (0, 0));
    }

    #[test]
    fn crowded_waiters_spin_k_min_in_the_calibrated_profile_and_not_in_rocketmqs() {
        let c = AbsConfig::from_costs(&MeasuredCosts::REFERENCE);
        assert_eq!(c.crowded_spins, c.k_min);
        assert_eq!(AbsConfig::ROCKETMQ.crowded_spins, 0);
    }

    #[test]
    fn the_measured_hand_off_moves_no_bound() {
        let reference = AbsConfig::from_costs(&MeasuredCosts::REFERENCE);
        // The clean-clone CI run's ~200 us, a load-inflated 4.8 yields, a load-deflated 2.5 yields.
        for handoff_ns in [200_000.0, 3_120.0, 1_625.0, f64::NAN] {
            let c = AbsConfig::from_costs(&MeasuredCosts { handoff_ns, ..MeasuredCosts::REFERENCE });
            assert_eq!(c, reference, "hand-off {handoff_ns} ns");
        }
        // Only the yield's cost in spins moves k_min, and k_max and max_yields follow it.
        let slower_yield =
            AbsConfig::from_costs(&MeasuredCosts { yield_ns: 1_000.0, ..MeasuredCosts::REFERENCE });
        assert_eq!((slower_yield.k_min, slower_yield.k_max, slower_yield.max_yields), (40, 320, 8));
    }

    #[test]
    fn absurd_costs_still_give_ordered_finite_bounds() {
        let odd = [0.0, -1.0, 1e-300, 1e-9, 0.5, 1.0, 25.0, 1e6, 1e300, f64::MAX, f64::INFINITY, f64::NAN];
        for &s in &odd {
            for &y in &odd {
                for &h in &odd {
                    let c = AbsConfig::from_costs(&MeasuredCosts { spin_ns: s, yield_ns: y, handoff_ns: h });
                    assert_ordered(&c);
                    assert!(
                        c.k_max <= 8 * c.k_min && c.max_yields == 8 && c.crowded_yields == YIELD_BUDGET,
                        "{c:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn raise_doubles_then_steps_and_lower_floors() {
        let r = AbsConfig::ROCKETMQ;
        assert_eq!(r.raised(1000), 2000);
        assert_eq!(r.raised(4000), 8000);
        assert_eq!(r.raised(8000), 9000);
        assert_eq!(r.raised(9500), 10_000);
        assert_eq!(r.raised(10_000), 10_000);
        assert_eq!(r.lowered(3000), 2000);
        assert_eq!(r.lowered(1000), 1000);
        assert_eq!(r.lowered(1500), 1000);
    }
}
