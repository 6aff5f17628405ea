//! [`AbsProfile`]s that change one field of the calibrated config, so a measurement can show what that
//! field buys (ours).

use abslock::{AbsConfig, AbsProfile};
use std::sync::OnceLock;

/// The calibrated config with `crowded_spins: 0`: a waiter that finds `max_spinners` waiters already
/// spinning or yielding always yields at once, as crowded waiters did in rounds 2-3 (the round-4 bursts
/// stay; sweep strategy `abs-yield`).
#[derive(Debug)]
pub enum YieldWhenCrowded {}

impl AbsProfile for YieldWhenCrowded {
    fn config() -> &'static AbsConfig {
        static C: OnceLock<AbsConfig> = OnceLock::new();
        C.get_or_init(|| AbsConfig { crowded_spins: 0, ..*AbsConfig::calibrated() })
    }
}

/// The calibrated config with `crowded_trial: false`: a waiter that finds `max_spinners` waiters already
/// spinning or yielding always spins `crowded_spins` before each yield, as in round 4, without the trial
/// that may switch it to yielding at once (sweep strategy `abs-spin`).
#[derive(Debug)]
pub enum SpinWhenCrowded {}

impl AbsProfile for SpinWhenCrowded {
    fn config() -> &'static AbsConfig {
        static C: OnceLock<AbsConfig> = OnceLock::new();
        C.get_or_init(|| AbsConfig { crowded_trial: false, ..*AbsConfig::calibrated() })
    }
}

/// The calibrated config under the solo restriction ([`AbsProfile::SOLO_RECHECK_US`] 1000, the starvation
/// bound's period in rounds 10-14): waiters park at once, releases wake nobody, and only the starvation bound and each
/// sleeper's own re-check every 1 ms bring a sleeper back, so one thread runs alone between hand-offs
/// (sweep strategy `abs-solo`).
#[derive(Debug)]
pub enum Solo {}

impl AbsProfile for Solo {
    const SOLO_RECHECK_US: u32 = 1000;
    fn config() -> &'static AbsConfig {
        AbsConfig::calibrated()
    }
}

/// The calibrated config with `solo_recheck_us: 0`: no solo trial, so the lock never runs the solo
/// regime (round 8's lock; sweep strategy `abs-no-solo`).
#[derive(Debug)]
pub enum NoSoloTrial {}

impl AbsProfile for NoSoloTrial {
    fn config() -> &'static AbsConfig {
        static C: OnceLock<AbsConfig> = OnceLock::new();
        C.get_or_init(|| AbsConfig { solo_recheck_us: 0, ..*AbsConfig::calibrated() })
    }
}

/// The calibrated config with the direct hand-off of rounds 2-9 at the starvation bound
/// (`AbsProfile::DIRECT_HANDOFF`): the lock passes to the oldest sleeper while it is still asleep,
/// instead of waking it as the heir with the lock released (sweep strategy `abs-direct-handoff`).
#[derive(Debug)]
pub enum DirectHandoff {}

impl AbsProfile for DirectHandoff {
    const DIRECT_HANDOFF: bool = true;
    fn config() -> &'static AbsConfig {
        AbsConfig::calibrated()
    }
}

/// The calibrated config without the quiet regime (`AbsProfile::QUIET` false): every release is an
/// RMW, as in rounds 1-12 (sweep strategy `abs-no-quiet`).
#[derive(Debug)]
pub enum NoQuiet {}

impl AbsProfile for NoQuiet {
    const QUIET: bool = false;
    fn config() -> &'static AbsConfig {
        AbsConfig::calibrated()
    }
}

/// The calibrated config with `park_only_when_crowded: false`: spin mode switches to park mode whenever
/// k runs out at `k_max` too often, as RocketMQ's rule does, even when every waiter has a spare core
/// (round 5's rule; sweep strategy `abs-park`). Its park mode yields `park_yields` times, 64 since round
/// 14 (8 before), also in the uncrowded windows the rule lets it park in.
#[derive(Debug)]
pub enum ParkWhenUncrowded {}

impl AbsProfile for ParkWhenUncrowded {
    fn config() -> &'static AbsConfig {
        static C: OnceLock<AbsConfig> = OnceLock::new();
        C.get_or_init(|| AbsConfig { park_only_when_crowded: false, ..*AbsConfig::calibrated() })
    }
}

/// The calibrated config with rounds 11-13's yield budget: `crowded_yields` and `park_yields` 8 (two
/// futex hand-offs of [`abslock::HANDOFF_YIELDS`] yields, as `max_yields`) instead of
/// [`abslock::YIELD_BUDGET`], so every waiter parks after 8 yields (sweep strategy `abs-8-yields`).
#[derive(Debug)]
pub enum EightYields {}

impl AbsProfile for EightYields {
    fn config() -> &'static AbsConfig {
        static C: OnceLock<AbsConfig> = OnceLock::new();
        C.get_or_init(|| {
            let c = AbsConfig::calibrated();
            AbsConfig { crowded_yields: c.max_yields, park_yields: c.max_yields, ..*c }
        })
    }
}
