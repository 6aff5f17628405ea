//! The solo trial as a pure function: [`decide_solo`]`(trial, window, solo) -> (trial, solo)`.
//!
//! Like [`decide_crowded`](super::trial::decide_crowded), the lock's holder calls it at the end of each
//! adaptation window, so it needs no synchronisation of its own, and tests feed it numbers directly.
//! Unlike that trial, its arms are spans of time, not of windows: the solo regime's cost (a lock left
//! idle while its sleepers wait for their re-check) and its gain (one thread running alone) both take
//! a fraction of a millisecond or more to show, while a window of 1024 acquisitions of a 128-byte append
//! lasts ~0.1 ms (parking_lot puts 7-8 million such appends per second in the sweep's default runs).

/// The settings tried, one arm each (`true`: the solo regime), in ABBA order so that a drift in load over
/// the trial favours neither. Arms are compared in pairs: (1, 2), (3, 4), (5, 6), (7, 8).
pub const SOLO_PATTERN: [bool; 8] = [false, true, true, false, false, true, true, false];
/// Shortest timed part of an arm, in microseconds: an arm ends at the first window end at least this
/// long after its timing began, which is [`SOLO_SETTLE_US`] after the arm began (so an arm lasts at
/// least 0.75 ms).
/// Short, because a solo arm where the regime loses costs that lock a quarter to a third of its throughput while
/// it runs; at 0.5 ms, a few windows of the fastest append (1024 acquisitions of a 128-byte record take
/// ~0.1 ms).
pub const SOLO_ARM_US: u64 = 500;
/// Untimed start of each arm, in microseconds: the switch takes effect gradually (waiters already
/// spinning finish their round before they park; after a solo arm, sleepers come back one release at a
/// time or at their re-check), and arms timed from their switch measured mostly the switch: the trial
/// then rarely chose the regime at 4 threads and 128-byte records, where it wins (`docs/abs.md`, round 9).
pub const SOLO_SETTLE_US: u64 = 250;
/// Pairs of arms, of the 4, in which the solo arm must take [`SOLO_MARGIN_PERCENT`] less time per
/// acquisition than its partner for the solo regime to win the trial. One pair may lose to an arm in which
/// the holder lost its core to another process.
pub const SOLO_WINS_NEEDED: u8 = 3;
/// How much faster a solo arm must be to win its pair: more than this many percent less time per
/// acquisition than its partner. On a tie the
/// lock stays out of the solo regime, whose acquire tail is longer (a sleeper waits for its re-check).
pub const SOLO_MARGIN_PERCENT: u64 = 5;
/// A solo arm this many percent slower than its partner ends the trial at once, lost: where threads work
/// outside the lock the regime is 25-35% slower (`docs/abs.md`, round 8), and each further solo arm
/// would cost that much again. A trial also ends as soon as it can no longer reach
/// [`SOLO_WINS_NEEDED`].
pub const SOLO_DECISIVE_LOSS_PERCENT: u64 = 15;
/// Time from the end of one trial to the start of the next after a win, in microseconds. After `n`
/// losses in a row it is this times `2^n` ([`SOLO_MAX_BACKOFF`]), so where the regime loses, its arms,
/// which cost that lock a quarter to a third of its throughput while they run, take a shrinking share of
/// time.
pub const SOLO_PERIOD_US: u64 = 250_000;
/// Most doublings of [`SOLO_PERIOD_US`] after losses: while windows see 0.5-16 waiters per acquisition,
/// a trial at least every 8 s.
pub const SOLO_MAX_BACKOFF: u8 = 5;
/// Mean waiters per acquisition (in thousandths, as
/// [`WindowStats::contention_milli`](crate::WindowStats::contention_milli)) a window must reach to start a
/// trial: the regime changes nothing for a lock that nobody waits for, and such a lock never reads the
/// clock for this trial.
pub const SOLO_START_MILLI: u64 = 500;
/// Mean waiters per acquisition (in thousandths) above which the regime does not run: a window this
/// crowded ends a trial and the regime, and starts none. Under the regime the sleepers take the lock in
/// turn, one per starvation bound (0.5 ms), so a sleeper's turn comes within about this many bounds:
/// 16 of them, 8 ms. At 16 threads on a `lock-bound`-like critical section the threads' longest waits
/// measured 8.2-8.7 ms in most rounds, two to four times `parking_lot`'s (`examples/wait_tail.rs`,
/// `docs/abs.md`, round 16).
/// Up to round 15 the limit was 4 waiters, now [`SOLO_CROWDED_MILLI`].
pub const SOLO_MAX_MILLI: u64 = 16000;
/// Mean waiters per acquisition (in thousandths) above which the regime also needs short acquisitions
/// ([`SoloWindow::crowded_max_ps`]): each change of holder under the regime leaves one thread with a wait
/// of many bounds, and it changes once per bound, so where fewer than [`SOLO_CROWDED_TURNS`]
/// acquisitions fit in a bound those waits reach the p99.9 of acquire latency. At 16 threads with
/// 16 KiB appends (about 1.6 us each, 300 per bound) the regime put `abs`'s p99.9 at 3.3x
/// `parking_lot`'s in a development run, while with 1 KiB appends (about 125 ns) it put it at 1/30 to
/// 1/200 of `parking_lot`'s in the default sweeps (`docs/abs.md`, round 16). At or below this crowd the
/// regime runs wherever its trial wins, as up to round 15.
pub const SOLO_CROWDED_MILLI: u64 = 4000;
/// Acquisitions the regime needs per starvation bound above [`SOLO_CROWDED_MILLI`] waiters per
/// acquisition: one long wait per bound is then at most 1 in 2000 acquisitions, half of what the p99.9
/// leaves out.
pub const SOLO_CROWDED_TURNS: u64 = 2000;
/// An arm slower than this per acquisition (1 ms, in ps) voids the trial: the lock sat idle, so its time
/// measures the application, not the regime.
pub const SOLO_VOID_PS: u32 = 1_000_000_000;

/// The solo trial's state between windows (kept by the lock holder).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SoloTrial {
    /// 0 between trials; `1..=8`: the arm in progress, which runs [`SOLO_PATTERN`]`[arm - 1]`.
    pub arm: u8,
    /// Trials lost in a row, up to [`SOLO_MAX_BACKOFF`].
    pub losses: u8,
    /// Pairs the solo arm has won in this trial.
    pub wins: u8,
    /// An arm of this trial was idle ([`SOLO_VOID_PS`]): the trial keeps the regime off.
    pub void: bool,
    /// The current arm has run [`SOLO_SETTLE_US`] and is being timed.
    pub settled: bool,
    /// The first arm of the current pair: its time per acquisition, in ps.
    pub previous_ps: u32,
    /// Between trials: when the next one may start; during one: when the current arm started, or once
    /// settled, when its timing started (in us, on the lock's clock).
    pub clock_us: u64,
    /// The lock's acquisition count when the current arm's timing started.
    pub started_at: u64,
    /// Every solo arm timed so far in this trial (between trials: in the last one) took at most
    /// [`SoloWindow::crowded_max_ps`] per acquisition, so its verdict for the regime also holds above
    /// [`SOLO_CROWDED_MILLI`] waiters per acquisition. Set when a trial starts.
    pub short: bool,
}

/// The window that just ended, as the solo trial sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SoloWindow {
    /// The time now, in us (0 when [`solo_timed`] said the clock need not be read).
    pub now_us: u64,
    /// The lock's acquisition count at the window's end.
    pub acquisitions: u64,
    /// The window's mean waiters per acquisition, in thousandths.
    pub contention_milli: u64,
    /// The longest time per acquisition, in ps, at which the regime may run above
    /// [`SOLO_CROWDED_MILLI`] waiters per acquisition: the lock's starvation bound divided by
    /// [`SOLO_CROWDED_TURNS`] (250 000 for the default 500 us); 0 for never (no bound, so a sleeper's
    /// turn never comes, or the bound of 0, which hands off at every release).
    pub crowded_max_ps: u32,
}

/// Whether the lock must read the clock at this window's end: during a trial, and between trials at a
/// window contended enough to start one.
pub fn solo_timed(trial: &SoloTrial, contention_milli: u64) -> bool {
    trial.arm != 0 || (SOLO_START_MILLI..=SOLO_MAX_MILLI).contains(&contention_milli)
}

/// The solo rule (ours): whether the lock runs the solo regime (waiters park at once, releases wake
/// nobody, sleepers re-check by themselves) is decided by measuring both. A trial runs
/// [`SOLO_PATTERN`]'s 8 arms, each timed over at least [`SOLO_ARM_US`] after [`SOLO_SETTLE_US`], and compares their time per acquisition
/// (the lock's throughput) in ABBA pairs; the regime wins with [`SOLO_WINS_NEEDED`] of 4 pairs won by
/// [`SOLO_MARGIN_PERCENT`], and is kept until the next trial; a trial ends early, lost, once it cannot
/// reach that, once a solo arm is [`SOLO_DECISIVE_LOSS_PERCENT`] slower than its partner, or once an arm
/// is idle. Trials start at a window with at least
/// [`SOLO_START_MILLI`] and at most [`SOLO_MAX_MILLI`] waiters per acquisition (a more crowded window
/// ends the regime and any trial), [`SOLO_PERIOD_US`] after the last one, doubling after
/// each loss. A solo arm slower than [`SoloWindow::crowded_max_ps`] per acquisition loses the trial at
/// the end of its pair if that window has more than [`SOLO_CROWDED_MILLI`] waiters per acquisition (one
/// such arm is enough, unlike a pair lost on time, of which one is allowed), and a verdict whose solo arms
/// were not all that short ([`SoloTrial::short`]) is dropped at such a window (then the next trial, due
/// on the schedule, times the acquisitions again; a verdict that was short holds until it, even if the
/// acquisitions grow meanwhile). Takes the trial state, the window that just ended, and whether the regime ran in it;
/// returns the next state and whether it runs in the next window.
///
/// Why a measurement and not a signal: the regime pays where one thread saturates the lock (a lone thread
/// out-runs any group that shares the lock, since every change of holder moves the protected data between
/// cores), and costs where threads also work outside the lock, which it serializes too. Both show only
/// as throughput (`docs/abs.md`, round 9).
pub fn decide_solo(trial: SoloTrial, window: SoloWindow, solo: bool) -> (SoloTrial, bool) {
    let mut next = trial;
    let now = window.now_us;
    if window.contention_milli > SOLO_MAX_MILLI {
        // Too crowded: no regime, no trial (one in progress ends, neither won nor lost, and the next may
        // start at the next window within the limits).
        if trial.arm != 0 {
            next = SoloTrial { losses: trial.losses.min(SOLO_MAX_BACKOFF), ..SoloTrial::default() };
        }
        return (next, false);
    }
    let crowded = window.contention_milli > SOLO_CROWDED_MILLI;
    if trial.arm == 0 {
        if crowded && solo && !trial.short {
            // The verdict was won with acquisitions too long for this crowd: dropped, as above the
            // limit, and the next trial, due on the schedule, times them again.
            return (next, false);
        }
        if window.contention_milli < SOLO_START_MILLI || now < trial.clock_us {
            return (next, solo);
        }
        let start = SoloTrial {
            arm: 1,
            losses: trial.losses,
            wins: 0,
            void: false,
            settled: false,
            previous_ps: 0,
            clock_us: now,
            started_at: window.acquisitions,
            short: true,
        };
        return (start, SOLO_PATTERN[0]);
    }
    let arm = usize::from(trial.arm.min(SOLO_PATTERN.len() as u8)) - 1;
    let elapsed = now.saturating_sub(trial.clock_us);
    if !trial.settled {
        if elapsed >= SOLO_SETTLE_US {
            next.settled = true;
            next.clock_us = now;
            next.started_at = window.acquisitions;
        }
        return (next, SOLO_PATTERN[arm]);
    }
    if elapsed < SOLO_ARM_US {
        return (next, SOLO_PATTERN[arm]);
    }
    let acquisitions = window.acquisitions.wrapping_sub(trial.started_at).max(1);
    let ps = u32::try_from(u128::from(elapsed) * 1_000_000 / u128::from(acquisitions)).unwrap_or(u32::MAX);
    if ps >= SOLO_VOID_PS {
        next.void = true;
    }
    // Whether the trial is lost before its last arm: a decisive loss, or too few pairs left to win.
    let mut lost = false;
    if arm % 2 == 0 {
        next.previous_ps = ps;
    } else {
        let (solo_ps, other_ps) =
            if SOLO_PATTERN[arm] { (ps, trial.previous_ps) } else { (trial.previous_ps, ps) };
        let long = solo_ps > window.crowded_max_ps;
        next.short &= !long;
        let (solo_ps, other_ps) = (u128::from(solo_ps), u128::from(other_ps));
        if solo_ps * 100 < other_ps * u128::from(100 - SOLO_MARGIN_PERCENT) {
            next.wins = next.wins.saturating_add(1);
        }
        let pairs_left = (SOLO_PATTERN.len() - 1 - arm) / 2;
        // Too long for this crowd: the regime cannot run here, however much faster.
        lost = (crowded && long)
            || solo_ps * 100 >= other_ps * u128::from(100 + SOLO_DECISIVE_LOSS_PERCENT)
            || usize::from(next.wins) + pairs_left < usize::from(SOLO_WINS_NEEDED);
    }
    if arm + 1 < SOLO_PATTERN.len() && !lost && !next.void {
        next.arm = trial.arm + 1;
        next.settled = false;
        next.clock_us = now;
        next.started_at = window.acquisitions;
        return (next, SOLO_PATTERN[arm + 1]);
    }
    let won = !lost && !next.void && next.wins >= SOLO_WINS_NEEDED;
    next.losses = if won { 0 } else { trial.losses.saturating_add(1).min(SOLO_MAX_BACKOFF) };
    next.arm = 0;
    next.wins = 0;
    next.void = false;
    next.settled = false;
    next.previous_ps = 0;
    next.clock_us = now.saturating_add(SOLO_PERIOD_US << next.losses);
    (next, won)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default bound's [`SoloWindow::crowded_max_ps`] (500 us over 2000 acquisitions).
    const SHORT: u32 = 250_000;

    /// Runs one whole trial from `trial` (between trials) with each setting's time per acquisition in ns
    /// per arm, in windows of 100 us with 1 waiter per acquisition; returns the state after it and the
    /// verdict.
    fn run_trial(trial: SoloTrial, start_us: u64, off_ns: [u64; 4], solo_ns: [u64; 4]) -> (SoloTrial, bool) {
        run_trial_with(1000, SHORT, trial, start_us, off_ns, solo_ns)
    }

    /// [`run_trial`] with `contention_milli` waiters per acquisition (thousandths) and `crowded_max_ps`
    /// in every window.
    fn run_trial_with(
        contention_milli: u64,
        crowded_max_ps: u32,
        trial: SoloTrial,
        start_us: u64,
        off_ns: [u64; 4],
        solo_ns: [u64; 4],
    ) -> (SoloTrial, bool) {
        let (mut off, mut on) = (off_ns.into_iter(), solo_ns.into_iter());
        let window =
            |now_us, acquisitions| SoloWindow { now_us, acquisitions, contention_milli, crowded_max_ps };
        let (mut now, mut n) = (start_us, 1_000_u64);
        let (mut trial, mut solo) = decide_solo(trial, window(now, n), false);
        assert_eq!((trial.arm, solo), (1, false), "a trial starts at a contended window");
        let mut ns = off.next().expect("4 off arms");
        loop {
            now += 100;
            n += 100_000 / ns;
            let arm = trial.arm;
            (trial, solo) = decide_solo(trial, window(now, n), solo);
            if trial.arm == 0 {
                return (trial, solo);
            }
            if trial.arm != arm {
                assert_eq!(solo, SOLO_PATTERN[usize::from(trial.arm) - 1]);
                ns = if solo { on.next().expect("4 solo arms") } else { off.next().expect("4 off arms") };
            }
        }
    }

    #[test]
    fn the_regime_wins_only_by_the_margin_in_enough_pairs() {
        let idle = SoloTrial::default();
        assert!(run_trial(idle, 0, [100; 4], [70; 4]).1, "30% faster in every pair");
        assert!(!run_trial(idle, 0, [100; 4], [97; 4]).1, "3% faster is a tie");
        assert!(!run_trial(idle, 0, [100; 4], [95; 4]).1, "5% faster is still a tie");
        assert!(run_trial(idle, 0, [100; 4], [94; 4]).1, "6% faster wins");
        assert!(!run_trial(idle, 0, [100; 4], [100; 4]).1);
        assert!(!run_trial(idle, 0, [70; 4], [100; 4]).1, "slower");
        assert!(run_trial(idle, 0, [100; 4], [70, 70, 70, 110]).1, "one pair lost, not decisively");
        assert!(!run_trial(idle, 0, [100; 4], [70, 70, 110, 110]).1, "two pairs lost");
        assert!(!run_trial(idle, 0, [100; 4], [70, 70, 70, 500]).1, "a decisive loss");
    }

    /// A trial stops at its first decisive loss (one solo arm), or once it cannot reach enough wins: where
    /// the regime loses, it runs as few solo arms as possible.
    #[test]
    fn a_lost_trial_stops_early() {
        let arms_run = |off: [u64; 4], solo: [u64; 4]| {
            let (trial, verdict) = run_trial(SoloTrial::default(), 0, off, solo);
            assert!(!verdict);
            // Windows of 100 us from 0; the verdict's window sets the next trial's time.
            let arm_us = SOLO_SETTLE_US.div_ceil(100) * 100 + SOLO_ARM_US.div_ceil(100) * 100;
            (trial.clock_us - (SOLO_PERIOD_US << trial.losses)) / arm_us
        };
        assert_eq!(arms_run([100; 4], [130; 4]), 2, "decisive: after the first pair");
        assert_eq!(arms_run([100; 4], [100; 4]), 4, "two ties leave too few pairs to win");
        assert_eq!(arms_run([100; 4], [115; 4]), 2, "15% slower is decisive");
        assert_eq!(arms_run([100; 4], [114; 4]), 4, "14% slower is not");
        assert_eq!(arms_run([100; 4], [70, 100, 100, 70]), 6);
    }

    #[test]
    fn arms_last_at_least_the_arm_time_and_follow_the_pattern() {
        let (mut trial, mut solo) = decide_solo(
            SoloTrial::default(),
            SoloWindow { now_us: 10, acquisitions: 0, contention_milli: 1000, crowded_max_ps: SHORT },
            false,
        );
        let mut seen = vec![(10_u64, solo)];
        let mut acquisitions = 0;
        for i in 1..=200_u64 {
            let arm = trial.arm;
            acquisitions += if solo { 20 } else { 10 };
            (trial, solo) = decide_solo(
                trial,
                SoloWindow { now_us: 10 + 100 * i, acquisitions, contention_milli: 0, crowded_max_ps: SHORT },
                solo,
            );
            if trial.arm != arm {
                seen.push((10 + 100 * i, solo));
            }
        }
        let starts: Vec<u64> = seen.iter().map(|s| s.0).collect();
        assert!(starts.windows(2).all(|w| w[1] - w[0] >= SOLO_SETTLE_US + SOLO_ARM_US), "{starts:?}");
        let settings: Vec<bool> = seen.iter().map(|s| s.1).take(8).collect();
        assert_eq!(settings, SOLO_PATTERN, "low contention inside a trial does not stop it");
    }

    #[test]
    fn an_uncontended_lock_never_starts_a_trial_or_reads_the_clock() {
        let trial = SoloTrial::default();
        assert!(!solo_timed(&trial, SOLO_START_MILLI - 1));
        let quiet = SoloWindow {
            now_us: 0,
            acquisitions: 5,
            contention_milli: SOLO_START_MILLI - 1,
            crowded_max_ps: SHORT,
        };
        assert_eq!(decide_solo(trial, quiet, false), (trial, false));
        assert!(solo_timed(&trial, SOLO_START_MILLI));
        assert!(solo_timed(&SoloTrial { arm: 3, ..trial }, 0), "inside a trial every window end is timed");
    }

    #[test]
    fn a_crowd_beyond_the_limit_ends_the_regime_and_the_trial() {
        let crowded = SoloWindow {
            now_us: 10,
            acquisitions: 5,
            contention_milli: SOLO_MAX_MILLI + 1,
            crowded_max_ps: SHORT,
        };
        let (won, solo) = run_trial(SoloTrial::default(), 0, [100; 4], [50; 4]);
        assert!(solo);
        assert_eq!(
            decide_solo(won, crowded, true),
            (won, false),
            "the verdict is dropped, the schedule kept"
        );
        assert!(!solo_timed(&won, SOLO_MAX_MILLI + 1), "no clock read for a crowded window");
        let in_trial = SoloTrial { arm: 3, wins: 1, losses: 2, clock_us: 5, ..SoloTrial::default() };
        let (next, solo) = decide_solo(in_trial, crowded, true);
        assert!(!solo);
        assert_eq!(next, SoloTrial { losses: 2, ..SoloTrial::default() }, "ended, neither won nor lost");
        let at_limit = SoloWindow { contention_milli: SOLO_MAX_MILLI, ..crowded };
        assert_eq!(
            decide_solo(SoloTrial::default(), at_limit, false).0.arm,
            1,
            "at the limit a trial starts"
        );
    }

    #[test]
    fn above_the_crowded_limit_the_regime_needs_short_acquisitions() {
        let crowd = SOLO_CROWDED_MILLI + 1;
        let idle = SoloTrial::default();
        // 1 us per solo acquisition is 4x the default bound's 250 ns: lost at the first pair, though the
        // regime halves the time.
        let (long, solo) = run_trial_with(crowd, SHORT, idle, 0, [2000; 4], [1000; 4]);
        assert!(!solo);
        assert_eq!((long.losses, long.short), (1, false));
        let ended_at = long.clock_us - (SOLO_PERIOD_US << 1);
        assert!(ended_at <= 2 * (SOLO_SETTLE_US + SOLO_ARM_US + 100), "ended after the first pair: {long:?}");
        // 100 ns per solo acquisition wins in the same crowd.
        let (short, solo) = run_trial_with(crowd, SHORT, idle, 0, [200; 4], [100; 4]);
        assert!(solo && short.short);
        // At the limit long acquisitions win as before, with or without a bound (`crowded_max_ps` 0).
        assert!(run_trial_with(SOLO_CROWDED_MILLI, SHORT, idle, 0, [2000; 4], [1000; 4]).1);
        assert!(run_trial_with(SOLO_CROWDED_MILLI, 0, idle, 0, [2000; 4], [1000; 4]).1);
        // Without a bound nothing is short enough for a crowd: 10 ns acquisitions lose there.
        let (unbounded, solo) = run_trial_with(crowd, 0, idle, 0, [20; 4], [10; 4]);
        assert!(!solo && !unbounded.short);
    }

    #[test]
    fn a_verdict_won_with_long_acquisitions_is_dropped_in_a_crowd() {
        let (long, solo) = run_trial(SoloTrial::default(), 0, [2000; 4], [1000; 4]);
        assert!(solo && !long.short, "won below the crowded limit: {long:?}");
        let crowded = SoloWindow {
            now_us: long.clock_us - 1,
            acquisitions: 1,
            contention_milli: 8000,
            crowded_max_ps: SHORT,
        };
        assert_eq!(decide_solo(long, crowded, true), (long, false), "dropped, the schedule kept");
        let (short, solo) = run_trial(SoloTrial::default(), 0, [200; 4], [100; 4]);
        assert!(solo && short.short);
        let crowded = SoloWindow { now_us: short.clock_us - 1, ..crowded };
        assert_eq!(decide_solo(short, crowded, true), (short, true), "a short verdict holds in the crowd");
        // A lock that has run no trial (`set_solo` by hand) counts as not short.
        assert_eq!(decide_solo(SoloTrial::default(), crowded, true), (SoloTrial::default(), false));
    }

    #[test]
    fn losses_back_off_and_a_win_resets_the_period() {
        let mut trial = SoloTrial::default();
        let mut now = 0;
        let mut losses = Vec::new();
        for _ in 0..7 {
            (trial, _) = run_trial(trial, now, [100; 4], [100; 4]);
            let end = trial.clock_us;
            // Not due a microsecond before its time.
            let early = SoloWindow {
                now_us: end - 1,
                acquisitions: 0,
                contention_milli: 1000,
                crowded_max_ps: SHORT,
            };
            assert_eq!(decide_solo(trial, early, false).0.arm, 0);
            losses.push(trial.losses);
            now = end;
        }
        assert_eq!(losses, [1, 2, 3, 4, 5, 5, 5]);
        let (after_win, solo) = run_trial(trial, now, [100; 4], [50; 4]);
        assert!(solo);
        assert_eq!(after_win.losses, 0);
        assert!(after_win.clock_us >= now + SOLO_PERIOD_US && after_win.clock_us < now + 2 * SOLO_PERIOD_US);
    }

    #[test]
    fn the_verdict_holds_between_trials() {
        let (trial, solo) = run_trial(SoloTrial::default(), 0, [100; 4], [50; 4]);
        assert!(solo);
        let between = SoloWindow {
            now_us: trial.clock_us - 1,
            acquisitions: 1,
            contention_milli: 3000,
            crowded_max_ps: SHORT,
        };
        assert_eq!(decide_solo(trial, between, true), (trial, true));
    }

    #[test]
    fn an_idle_arm_voids_the_trial() {
        // Windows of 2 ms with 1 acquisition each: 2 ms per acquisition. The first window end settles
        // the first arm, the second times it.
        let mut trial = SoloTrial { arm: 1, clock_us: 0, started_at: 0, ..SoloTrial::default() };
        let mut solo = false;
        for i in 1..=2_u64 {
            (trial, solo) = decide_solo(
                trial,
                SoloWindow {
                    now_us: i * 2000,
                    acquisitions: i,
                    contention_milli: 1000,
                    crowded_max_ps: SHORT,
                },
                solo,
            );
        }
        assert_eq!(trial.arm, 0, "the trial ends at the idle arm");
        assert!(!solo);
        assert_eq!(trial.losses, 1, "a void trial counts as a loss");
    }

    #[test]
    fn hand_built_states_do_not_panic() {
        let wild = SoloTrial {
            arm: u8::MAX,
            losses: u8::MAX,
            wins: u8::MAX,
            void: false,
            settled: true,
            previous_ps: u32::MAX,
            clock_us: u64::MAX,
            started_at: u64::MAX,
            short: true,
        };
        let w = SoloWindow {
            now_us: u64::MAX,
            acquisitions: 0,
            contention_milli: u64::MAX,
            crowded_max_ps: SHORT,
        };
        let _ = decide_solo(wild, w, true);
        let _ = decide_solo(SoloTrial { arm: 8, ..wild }, SoloWindow { now_us: 0, ..w }, false);
        // An arm past the pattern's end gives the verdict, with the back-off within its cap.
        let (next, solo) =
            decide_solo(SoloTrial { clock_us: 0, ..wild }, SoloWindow { contention_milli: 1000, ..w }, true);
        assert_eq!(next.arm, 0);
        assert!(next.losses <= SOLO_MAX_BACKOFF && !solo);
        // A crowded window ends it too, with the back-off within its cap.
        let (next, solo) = decide_solo(wild, w, true);
        assert_eq!(next.arm, 0);
        assert!(next.losses <= SOLO_MAX_BACKOFF && !solo);
    }
}
