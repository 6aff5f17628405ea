//! The adaptation rule as a pure function: [`decide`]`(config, window) -> `[`Decision`].
//!
//! The lock's holder calls it at the end of each window of acquisitions, so it runs while the lock is
//! held and never needs its own synchronisation; tests feed it numbers directly.

use super::config::AbsConfig;
use super::stats::Mode;

/// What one window of acquisitions saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowStats {
    /// The waiting mode during the window.
    pub mode: Mode,
    /// k during the window (spins before yielding).
    pub k: u32,
    /// Acquisitions in the window (fast and slow path).
    pub acquisitions: u64,
    /// Times a waiter's k spins ran out without the lock during the window (RocketMQ's "r": counted
    /// when it happens, so starving waiters count too).
    pub exhausted: u64,
    /// Mean number of waiters seen at each acquisition, in thousandths (ours; stands in for RocketMQ's
    /// `tps * threads`).
    pub contention_milli: u64,
    /// `contention_milli` recorded when the lock last switched to park mode (0 if never).
    pub critical_milli: u64,
    /// Whether, at some acquisition of the window, the holder and the threads waiting (spinning,
    /// yielding or asleep) outnumbered the cores (`std::thread::available_parallelism`): more threads
    /// wanted the lock than there were cores. A window without such an acquisition is *uncrowded*:
    /// every waiter had a core of its own, as when a lock has as many threads as cores. Not the
    /// crowded-spin trial's measure ([`TrialWindow::saturated`](crate::TrialWindow::saturated), a mean).
    /// Ours.
    pub crowded: bool,
}

/// The policy's verdict for the next window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Keep mode and k.
    Hold,
    /// Spin mode: spinning ran out too often; spin longer.
    RaiseK(u32),
    /// Spin mode: spinning almost always succeeds; spin less.
    LowerK(u32),
    /// Spinning still fails at `k_max` (and, with [`AbsConfig::park_only_when_crowded`], the window
    /// was crowded): park waiters; remember the contention level.
    SwitchToPark {
        /// Contention at the switch, in thousandths of a waiter.
        critical_milli: u64,
    },
    /// Park mode: contention fell to `return_percent` of the switch level; spin again with this k.
    SwitchToSpin(u32),
}

/// The adaptation rule (RocketMQ `AdaptiveBackOffSpinLockImpl`'s, over acquisition windows).
///
/// Spin mode: if `exhausted * raise_ratio >= acquisitions` (and something ran out), raise k, or switch
/// to park mode when k is already `k_max`; else if `exhausted * lower_ratio <= acquisitions`, lower k
/// toward `k_min`. Park mode: when `contention * 100 <= critical * return_percent`, switch back to
/// spinning with k lowered once. An empty window holds.
///
/// Ours on top: with [`AbsConfig::park_only_when_crowded`], an uncrowded window (the holder and its
/// waiters never outnumbered the cores, [`WindowStats::crowded`]) whose k ran out at `k_max` holds spin
/// mode instead of switching to park. Parking frees a core
/// only for a thread that wants one; when each waiter has a spare core, it frees nothing, and every
/// park costs a releasing holder a wake-up (`docs/abs.md`, round 6).
pub fn decide(config: &AbsConfig, w: &WindowStats) -> Decision {
    if w.acquisitions == 0 {
        return Decision::Hold;
    }
    match w.mode {
        Mode::Spin => {
            let exhausted = u128::from(w.exhausted);
            let acquisitions = u128::from(w.acquisitions);
            if w.exhausted > 0 && exhausted * u128::from(config.raise_ratio) >= acquisitions {
                if w.k >= config.k_max {
                    if config.park_only_when_crowded && !w.crowded {
                        Decision::Hold
                    } else {
                        Decision::SwitchToPark { critical_milli: w.contention_milli }
                    }
                } else {
                    Decision::RaiseK(config.raised(w.k))
                }
            } else if exhausted * u128::from(config.lower_ratio) <= acquisitions && w.k > config.k_min {
                Decision::LowerK(config.lowered(w.k))
            } else {
                Decision::Hold
            }
        }
        Mode::Park => {
            let now = u128::from(w.contention_milli) * 100;
            let limit = u128::from(w.critical_milli) * u128::from(config.return_percent);
            if now <= limit { Decision::SwitchToSpin(config.lowered(w.k)) } else { Decision::Hold }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: AbsConfig = AbsConfig::ROCKETMQ;

    fn spin(k: u32, acquisitions: u64, exhausted: u64) -> WindowStats {
        WindowStats {
            mode: Mode::Spin,
            k,
            acquisitions,
            exhausted,
            contention_milli: 3000,
            critical_milli: 0,
            crowded: true,
        }
    }

    fn park(k: u32, contention_milli: u64, critical_milli: u64) -> WindowStats {
        WindowStats {
            mode: Mode::Park,
            k,
            acquisitions: 1024,
            exhausted: 0,
            contention_milli,
            critical_milli,
            crowded: true,
        }
    }

    #[test]
    fn raises_when_one_in_320_runs_out() {
        assert_eq!(decide(&R, &spin(1000, 3200, 10)), Decision::RaiseK(2000));
        assert_eq!(decide(&R, &spin(8000, 3200, 10)), Decision::RaiseK(9000));
    }

    #[test]
    fn holds_between_the_two_ratios() {
        // 1/320 > 5/3200 > 1/1280.
        assert_eq!(decide(&R, &spin(2000, 3200, 5)), Decision::Hold);
    }

    #[test]
    fn lowers_when_at_most_one_in_1280_runs_out() {
        assert_eq!(decide(&R, &spin(3000, 2560, 2)), Decision::LowerK(2000));
        assert_eq!(decide(&R, &spin(3000, 2560, 0)), Decision::LowerK(2000));
    }

    #[test]
    fn never_lowers_below_k_min() {
        assert_eq!(decide(&R, &spin(1000, 2560, 0)), Decision::Hold);
    }

    #[test]
    fn switches_to_park_at_k_max_and_records_contention() {
        assert_eq!(decide(&R, &spin(10_000, 1024, 512)), Decision::SwitchToPark { critical_milli: 3000 });
    }

    /// A config that parks only when crowded, with RocketMQ's numbers otherwise.
    const CROWD: AbsConfig = AbsConfig { park_only_when_crowded: true, ..R };

    fn at_k_max(crowded: bool) -> WindowStats {
        WindowStats { crowded, ..spin(10_000, 1024, 512) }
    }

    #[test]
    fn an_uncrowded_window_holds_spin_mode_at_k_max() {
        assert_eq!(decide(&CROWD, &at_k_max(false)), Decision::Hold);
    }

    #[test]
    fn a_crowded_window_still_switches_to_park() {
        assert_eq!(decide(&CROWD, &at_k_max(true)), Decision::SwitchToPark { critical_milli: 3000 });
    }

    #[test]
    fn rocketmq_parks_whatever_the_crowd() {
        assert_eq!(decide(&R, &at_k_max(false)), Decision::SwitchToPark { critical_milli: 3000 });
    }

    #[test]
    fn the_rule_only_touches_the_switch_to_park() {
        // Below k_max an uncrowded window still raises k, and park mode still returns by RocketMQ's rule.
        assert_eq!(
            decide(&CROWD, &WindowStats { crowded: false, ..spin(1000, 3200, 10) }),
            Decision::RaiseK(2000)
        );
        // In park mode the crowd changes nothing: the same decisions as RocketMQ's, holding or returning.
        for w in [park(10_000, 8001, 10_000), park(10_000, 8000, 10_000)] {
            for crowded in [false, true] {
                assert_eq!(decide(&CROWD, &WindowStats { crowded, ..w }), decide(&R, &w));
            }
        }
        assert_eq!(decide(&R, &park(10_000, 8000, 10_000)), Decision::SwitchToSpin(9000));
    }

    #[test]
    fn returns_to_spin_at_80_percent_of_the_switch_contention() {
        assert_eq!(decide(&R, &park(10_000, 8000, 10_000)), Decision::SwitchToSpin(9000));
        assert_eq!(decide(&R, &park(10_000, 0, 10_000)), Decision::SwitchToSpin(9000));
    }

    #[test]
    fn stays_parked_above_80_percent() {
        assert_eq!(decide(&R, &park(10_000, 8001, 10_000)), Decision::Hold);
        assert_eq!(decide(&R, &park(10_000, 15_000, 10_000)), Decision::Hold);
    }

    #[test]
    fn empty_window_holds_in_both_modes() {
        assert_eq!(decide(&R, &spin(1000, 0, 0)), Decision::Hold);
        let mut w = park(10_000, 0, 10_000);
        w.acquisitions = 0;
        assert_eq!(decide(&R, &w), Decision::Hold);
    }

    #[test]
    fn huge_counts_do_not_overflow() {
        assert_eq!(
            decide(&R, &spin(10_000, u64::MAX, u64::MAX)),
            Decision::SwitchToPark { critical_milli: 3000 }
        );
        assert_eq!(decide(&R, &park(10_000, u64::MAX, u64::MAX)), Decision::Hold);
    }
}
