//! The crowded-spin trial as a pure function: [`decide_crowded`]`(trial, yielded, window_ps)`.
//!
//! Like [`decide`](super::policy::decide), the lock's holder calls it at the end of each window, so it
//! needs no synchronisation of its own, and tests feed it numbers directly.

/// Windows at the start of each trial cycle that keep the current choice, then [`TRIAL_PATTERN`]'s
/// windows try both settings, then the rest of [`TRIAL_PERIOD`] keeps the winner.
pub const TRIAL_START: u32 = 16;
/// The settings tried, one window each (`true`: crowded waiters yield at once), in an ABBA order so a
/// drift in load over the trial favours neither.
pub const TRIAL_PATTERN: [bool; 8] = [false, true, true, false, false, true, true, false];
/// Windows in one trial cycle: a trial every 256 windows, so the losing setting runs 4 windows in 256
/// (1.6% of the time). Windows are [`AbsConfig::window`](crate::AbsConfig::window) acquisitions (1024
/// by default).
pub const TRIAL_PERIOD: u32 = 256;
/// Yielding at once must take this many percent less time per acquisition than spinning to win a
/// trial: on a tie, crowded waiters keep spinning, which is what keeps the acquire tail short.
pub const TRIAL_MARGIN_PERCENT: u64 = 5;
/// A trial window slower than this per acquisition (1 ms, in ps) voids the trial: the lock sat idle for
/// about a second or more inside it, so its time measures the application, not the setting. It also keeps
/// each arm's sum of 4 windows below `u32::MAX`.
pub const TRIAL_VOID_PS: u32 = 1_000_000_000;

/// One setting's windows in the current trial: their summed time per acquisition and the slowest
/// window's, in ps (each window is below [`TRIAL_VOID_PS`], so the sum of 4 fits a `u32`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TrialArm {
    /// Sum over the setting's windows so far of each window's time per acquisition, in ps.
    pub total_ps: u32,
    /// The largest of those, in ps.
    pub slowest_ps: u32,
}

impl TrialArm {
    fn add(self, ps: u32) -> TrialArm {
        TrialArm { total_ps: self.total_ps.saturating_add(ps), slowest_ps: self.slowest_ps.max(ps) }
    }

    /// The sum without the slowest window: one window in which the holder lost its core to another
    /// thread says nothing about the setting.
    fn trimmed(self) -> u64 {
        u64::from(self.total_ps.saturating_sub(self.slowest_ps))
    }
}

/// The crowded-spin trial's state between windows (kept by the lock holder).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CrowdedTrial {
    /// Window number within the cycle, `0..TRIAL_PERIOD`.
    pub position: u32,
    /// This cycle's windows whose crowded waiters spun.
    pub spin: TrialArm,
    /// This cycle's windows whose crowded waiters yielded at once.
    pub yielded: TrialArm,
    /// A window of this cycle's trial did not qualify (see [`TrialWindow::saturated`], [`TRIAL_VOID_PS`]):
    /// the trial keeps spinning.
    pub void: bool,
}

/// The window that just ended, as the trial sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrialWindow {
    /// Whether crowded waiters yielded at once during it.
    pub yielded: bool,
    /// Its time per acquisition, in ps (0 if the lock did not time it: outside a trial).
    pub ps: u32,
    /// Whether the setting could matter in it: spin mode, and on average at least `max_spinners` + 1
    /// waiters per acquisition, so some were crowded (a mean over the window, unlike
    /// [`WindowStats::crowded`](crate::WindowStats::crowded), which is set by any one acquisition). A
    /// trial window that is not saturated voids the trial: there, time per acquisition measures how
    /// often the application takes the lock, not the setting.
    pub saturated: bool,
}

/// Whether the lock must read the clock at the end of the window at `position`: only to start the
/// trial's first window and to time each trial window (ours).
pub fn trial_timed(position: u32) -> bool {
    (TRIAL_START.saturating_sub(1)..TRIAL_START + TRIAL_PATTERN.len() as u32).contains(&position)
}

/// The crowded-spin rule (ours): whether crowded waiters (past the canSpin limit) spin
/// `crowded_spins` before each yield or yield at once is decided by measuring both. Every
/// [`TRIAL_PERIOD`] windows, [`TRIAL_PATTERN`] runs each setting for 4 windows; the one with the shorter
/// time per acquisition (the lock's throughput) over its 3 fastest windows is kept for the rest of the
/// cycle, spinning unless yielding wins by [`TRIAL_MARGIN_PERCENT`]. Each setting's slowest window is
/// dropped because a window in which the holder lost its core says nothing about the setting, and on
/// the store path such windows made the trial choose yielding where spinning is right. A trial any of
/// whose windows did not qualify ([`TrialWindow::saturated`], [`TRIAL_VOID_PS`]) keeps spinning. Takes the
/// trial state and the window that just ended; returns the next state and whether the next window
/// yields.
///
/// Why a measurement and not a signal: with nothing outside the lock, a crowded waiter that spins wins
/// the lock from a holder that would have taken it again, and each change of holder moves the lock's
/// lines between cores, so yielding at once is faster; on the store's put path and with work outside the
/// lock, the spin is what keeps a waiter from losing a scheduler slice, so spinning is faster, with a
/// p99.9 acquire latency hundreds of times lower. Neither the crowded spins' success rate nor the share
/// of contended acquisitions tells the two apart (`docs/abs.md`, round 5, gives both measurements).
pub fn decide_crowded(trial: CrowdedTrial, window: TrialWindow) -> (CrowdedTrial, bool) {
    let trial_end = TRIAL_START + TRIAL_PATTERN.len() as u32;
    let mut next = trial;
    if (TRIAL_START..trial_end).contains(&trial.position) {
        if !window.saturated || window.ps >= TRIAL_VOID_PS {
            next.void = true;
        } else if window.yielded {
            next.yielded = next.yielded.add(window.ps);
        } else {
            next.spin = next.spin.add(window.ps);
        }
    }
    next.position = trial.position.wrapping_add(1) % TRIAL_PERIOD;
    let yield_next = if (TRIAL_START..trial_end).contains(&next.position) {
        TRIAL_PATTERN[(next.position - TRIAL_START) as usize]
    } else if next.position == trial_end {
        let (spin, yields) = (next.spin.trimmed(), next.yielded.trimmed());
        let void = next.void;
        next.spin = TrialArm::default();
        next.yielded = TrialArm::default();
        next.void = false;
        !void
            && spin > 0
            && u128::from(yields) * 100 < u128::from(spin) * u128::from(100 - TRIAL_MARGIN_PERCENT)
    } else {
        window.yielded
    };
    (next, yield_next)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs one whole trial from the start of a cycle with the given time per acquisition for each
    /// setting; returns the setting chosen for the windows after it.
    fn run_trial(spin_ps: u32, yield_ps: u32) -> bool {
        let mut trial = CrowdedTrial::default();
        let mut yielding = false;
        for _ in 0..TRIAL_START + TRIAL_PATTERN.len() as u32 {
            let ps = if yielding { yield_ps } else { spin_ps };
            (trial, yielding) = decide_crowded(trial, TrialWindow { yielded: yielding, ps, saturated: true });
        }
        assert_eq!(trial.position, TRIAL_START + TRIAL_PATTERN.len() as u32);
        assert_eq!((trial.spin, trial.yielded), Default::default(), "the sums restart after each trial");
        assert!(!trial.void);
        yielding
    }

    #[test]
    fn tries_each_setting_in_the_pattern_order() {
        let mut trial = CrowdedTrial::default();
        let mut yielding = false;
        let mut seen = Vec::new();
        for _ in 0..TRIAL_START + TRIAL_PATTERN.len() as u32 - 1 {
            (trial, yielding) =
                decide_crowded(trial, TrialWindow { yielded: yielding, ps: 1000, saturated: true });
            if trial.position >= TRIAL_START {
                seen.push(yielding);
            }
        }
        assert_eq!(seen, TRIAL_PATTERN);
    }

    #[test]
    fn keeps_spinning_before_the_first_trial() {
        let mut trial = CrowdedTrial::default();
        for _ in 0..TRIAL_START - 1 {
            let (next, yielding) =
                decide_crowded(trial, TrialWindow { yielded: false, ps: 1, saturated: true });
            assert!(!yielding);
            trial = next;
        }
    }

    #[test]
    fn yields_only_when_yielding_wins_by_the_margin() {
        assert!(run_trial(100_000, 90_000), "10% faster wins");
        assert!(!run_trial(100_000, 96_000), "4% faster is a tie: keep spinning");
        assert!(!run_trial(100_000, 100_000));
        assert!(!run_trial(90_000, 100_000));
    }

    #[test]
    fn no_time_measured_means_spinning() {
        // Under loom (or a clock that does not move) every window measures 0 ps.
        assert!(!run_trial(0, 0));
    }

    #[test]
    fn the_choice_holds_until_the_next_trial_then_repeats() {
        let mut trial = CrowdedTrial::default();
        let mut yielding = false;
        for _ in 0..TRIAL_START + TRIAL_PATTERN.len() as u32 {
            let ps = if yielding { 50_000 } else { 100_000 };
            (trial, yielding) = decide_crowded(trial, TrialWindow { yielded: yielding, ps, saturated: true });
        }
        assert!(yielding);
        // Kept for the rest of the cycle, whatever the windows measure.
        while trial.position != 0 {
            (trial, yielding) =
                decide_crowded(trial, TrialWindow { yielded: yielding, ps: 1, saturated: true });
            assert!(yielding);
        }
        // The next cycle keeps it for TRIAL_START windows, then tries again, this time with spinning
        // faster.
        for _ in 0..TRIAL_START + TRIAL_PATTERN.len() as u32 {
            let ps = if yielding { 100_000 } else { 50_000 };
            (trial, yielding) = decide_crowded(trial, TrialWindow { yielded: yielding, ps, saturated: true });
        }
        assert!(!yielding);
    }

    /// A window of 1 ms or more per acquisition (an idle lock) voids the trial, on either side.
    #[test]
    fn an_idle_window_voids_the_trial() {
        assert!(!run_trial(u32::MAX, u32::MAX));
        assert!(!run_trial(TRIAL_VOID_PS, 1), "a slow spin arm would otherwise make yielding win");
        assert!(!run_trial(1_000_000, TRIAL_VOID_PS));
        assert!(run_trial(TRIAL_VOID_PS - 1, 1));
    }

    /// One window that is not saturated (no crowded waiters on average, or park mode) voids the trial,
    /// and the next one starts clean.
    #[test]
    fn a_window_without_crowded_waiters_voids_the_trial() {
        let mut trial = CrowdedTrial::default();
        let mut yielding = false;
        for _ in 0..TRIAL_START + TRIAL_PATTERN.len() as u32 {
            let saturated = trial.position != TRIAL_START + 3;
            let ps = if yielding { 10_000 } else { 100_000 };
            (trial, yielding) = decide_crowded(trial, TrialWindow { yielded: yielding, ps, saturated });
        }
        assert!(!yielding, "yielding was 10x faster, but one window was not crowded");
        assert!(!trial.void, "the next trial starts clean");
    }

    /// Only the window before the trial and the trial's own windows are timed.
    #[test]
    fn the_clock_is_read_only_around_the_trial() {
        let timed: Vec<u32> = (0..TRIAL_PERIOD).filter(|&p| trial_timed(p)).collect();
        assert_eq!(timed, (TRIAL_START - 1..TRIAL_START + TRIAL_PATTERN.len() as u32).collect::<Vec<_>>());
    }

    #[test]
    fn hand_built_states_do_not_panic() {
        let arm = TrialArm { total_ps: 1, slowest_ps: u32::MAX };
        let trial = CrowdedTrial { position: u32::MAX, spin: arm, yielded: arm, void: false };
        // Out of the trial: the position wraps to the cycle's start and the setting is kept.
        let (next, yielding) =
            decide_crowded(trial, TrialWindow { yielded: true, ps: u32::MAX, saturated: true });
        assert_eq!((next.position, yielding), (0, true));
        // A verdict over arms whose slowest window exceeds their total: the trimmed sums are 0, so spin.
        let trial = CrowdedTrial { position: TRIAL_START + 7, ..trial };
        let (next, yielding) = decide_crowded(trial, TrialWindow { yielded: false, ps: 5, saturated: true });
        assert!(!yielding);
        assert_eq!((next.spin, next.yielded), Default::default());
    }

    /// Each setting's slowest window is dropped: one spin window in which the holder lost its core does
    /// not make yielding win. Only the slowest: load can only add time to a window, never remove it.
    #[test]
    fn one_outlier_window_does_not_decide() {
        let windows = |spin: [u32; 4], yields: [u32; 4]| {
            let mut trial = CrowdedTrial::default();
            let mut yielding = false;
            let (mut s, mut y) = (spin.into_iter(), yields.into_iter());
            for _ in 0..TRIAL_START + TRIAL_PATTERN.len() as u32 {
                let in_trial =
                    (TRIAL_START..TRIAL_START + TRIAL_PATTERN.len() as u32).contains(&trial.position);
                let ps = match (in_trial, yielding) {
                    (false, _) => 1,
                    (true, true) => y.next().expect("4 yield windows"),
                    (true, false) => s.next().expect("4 spin windows"),
                };
                (trial, yielding) =
                    decide_crowded(trial, TrialWindow { yielded: yielding, ps, saturated: true });
            }
            yielding
        };
        assert!(!windows([100, 100, 100, 10_000], [100, 100, 100, 100]), "a slow spin window");
        assert!(windows([100, 100, 100, 10_000], [80, 80, 80, 10_000]), "both lost a window");
    }
}
