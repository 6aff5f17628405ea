//! How long a waiter spins and yields in one round of its slow path before it parks: chosen from the
//! lock's mode, the policy word's bits and how many waiters were awake when the waiter came (ours).

use super::config::{AbsConfig, Limits};
use super::stats::Mode;

/// One round's budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RoundBudget {
    /// Pauses spun before each yield (and before parking).
    pub(crate) spins: u32,
    /// Yields before parking.
    pub(crate) yields: u32,
    /// Whether `spins` is k, so that running out of it says something about k (RocketMQ's "r").
    pub(crate) spins_k: bool,
}

/// What the policy word says about this round, besides the mode and k.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RoundPolicy {
    /// The lock's mode.
    pub(crate) mode: Mode,
    /// k, in pauses.
    pub(crate) k: u32,
    /// The solo regime runs (or the profile forces it).
    pub(crate) solo: bool,
    /// The crowded waiters' trial chose yielding at once.
    pub(crate) crowded_yield: bool,
}

/// The budget of a round begun with `active_before` other waiters awake (spinning or yielding).
///
/// - Solo: none, park at once, so the holder runs alone until a hand-off.
/// - Spin mode, `max_active` awake already (the entry cap): none.
/// - Spin mode, `max_spinners` awake already (canSpin: the cores are taken): no long spin, but
///   `crowded_spins` (or none, if the trial chose yielding at once) before each of `crowded_yields`
///   yields. A yield among runnable threads can cost a scheduler slice, hence the short spin; past the
///   cores a sleeper costs the lock a wake-up while it is free, hence the longer yield budget.
/// - Spin mode otherwise: k before each of `max_yields` yields.
/// - Park mode: `park_spins` before each of `park_yields` yields.
pub(crate) fn round_budget(
    cfg: &AbsConfig,
    limits: &Limits,
    policy: RoundPolicy,
    active_before: u32,
) -> RoundBudget {
    let none = RoundBudget { spins: 0, yields: 0, spins_k: false };
    match policy.mode {
        _ if policy.solo => none,
        Mode::Spin if active_before >= limits.max_active => none,
        Mode::Spin if active_before >= limits.max_spinners => RoundBudget {
            spins: if policy.crowded_yield { 0 } else { cfg.crowded_spins.min(policy.k) },
            yields: cfg.crowded_yields,
            spins_k: false,
        },
        Mode::Spin => RoundBudget { spins: policy.k, yields: cfg.max_yields, spins_k: true },
        Mode::Park => RoundBudget { spins: cfg.park_spins, yields: cfg.park_yields, spins_k: false },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abs::calibrate::MeasuredCosts;

    fn policy(mode: Mode) -> RoundPolicy {
        RoundPolicy { mode, k: 100, solo: false, crowded_yield: false }
    }

    #[test]
    fn a_crowded_waiter_yields_its_own_budget_and_an_uncrowded_one_max_yields() {
        let cfg = AbsConfig { crowded_yields: 64, max_yields: 8, crowded_spins: 20, ..AbsConfig::ROCKETMQ };
        let limits = Limits { max_spinners: 1, max_active: u32::MAX, starve_after: None };
        let spin = policy(Mode::Spin);
        assert_eq!(
            round_budget(&cfg, &limits, spin, 0),
            RoundBudget { spins: 100, yields: 8, spins_k: true }
        );
        assert_eq!(
            round_budget(&cfg, &limits, spin, 1),
            RoundBudget { spins: 20, yields: 64, spins_k: false }
        );
        let yield_at_once = RoundPolicy { crowded_yield: true, ..spin };
        assert_eq!(round_budget(&cfg, &limits, yield_at_once, 3).spins, 0);
        assert_eq!(round_budget(&cfg, &limits, yield_at_once, 3).yields, 64);
    }

    #[test]
    fn park_mode_and_the_restrictions() {
        let cfg = AbsConfig::from_costs(&MeasuredCosts::REFERENCE);
        let limits = Limits { max_spinners: 1, max_active: 2, starve_after: None };
        let park = round_budget(&cfg, &limits, policy(Mode::Park), 5);
        assert_eq!((park.spins, park.yields), (cfg.park_spins, cfg.park_yields));
        let none = RoundBudget { spins: 0, yields: 0, spins_k: false };
        assert_eq!(round_budget(&cfg, &limits, policy(Mode::Spin), 2), none, "entry cap");
        let solo = RoundPolicy { solo: true, ..policy(Mode::Spin) };
        assert_eq!(round_budget(&cfg, &limits, solo, 0), none);
    }
}
