//! Strategy names: the one vocabulary the sweep's flags, CSV and report share.
//!
//! Most strategies are a lock (a `lock_api::RawMutex`) around the CommitLog's critical
//! section, run by [`crate::registry`]. `sequencer` and `combining` are put paths that are not
//! locks ([`Strategy::put_path`] is not [`PutPath::Lock`]): the registry runs their windows
//! through [`crate::window::run_window_with`], giving the sequencer's writer thread's CPU
//! clock so its CPU counts in CPU per message.

use std::fmt;
use std::str::FromStr;

/// One strategy the sweep can measure: a lock, or a delegating put path.
///
/// The names are the strings [`Strategy::name`] returns and [`FromStr`] parses;
/// they appear unchanged in `--strategies`, `results.csv` and `report.md`.
/// Source: ours, after RocketMQ's lock classes where named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Strategy {
    /// `cas-spin`: `abslock::RawCasSpinLock`, RocketMQ `PutMessageSpinLock`'s bare CAS loop.
    CasSpin,
    /// `spin`: `abslock::RawSpinLock`, test-and-test-and-set with a pause hint.
    Spin,
    /// `backoff-k<N>`: `abslock::RawBackoffLock::with_k(N)`, RocketMQ `BackOffSpinLock`
    /// (spin N times, then yield).
    Backoff(u32),
    /// `abs`: `abslock::RawAbsLock` with the machine-calibrated profile.
    Abs,
    /// `abs-rocketmq`: `abslock::RawAbsLock<RocketMq>`, RocketMQ
    /// `AdaptiveBackOffSpinLockImpl`'s constants.
    AbsRocketMq,
    /// `abs-yield`: `abslock::RawAbsLock` with the calibrated profile but `crowded_spins: 0`
    /// ([`crate::ablations::YieldWhenCrowded`]): an ablation, not in the default lists.
    AbsYield,
    /// `abs-spin`: `abslock::RawAbsLock` with the calibrated profile but `crowded_trial: false`
    /// ([`crate::ablations::SpinWhenCrowded`]: crowded waiters always spin `crowded_spins`, round
    /// 4's rule): an ablation, not in the default lists.
    AbsSpin,
    /// `abs-park`: `abslock::RawAbsLock` with the calibrated profile but
    /// `park_only_when_crowded: false` ([`crate::ablations::ParkWhenUncrowded`]: spin mode switches to
    /// park mode even when every waiter has a spare core, round 5's rule): an ablation, not in the
    /// default lists.
    AbsPark,
    /// `abs-solo`: `abslock::RawAbsLock` with the calibrated config under the solo restriction
    /// ([`crate::ablations::Solo`]: waiters park at once and releases wake nobody, so one thread runs
    /// alone between starvation hand-offs): an ablation, not in the default lists.
    AbsSolo,
    /// `abs-no-solo`: `abslock::RawAbsLock` with the calibrated config but `solo_recheck_us: 0`
    /// ([`crate::ablations::NoSoloTrial`]: no solo trial, the regime never runs): an ablation, not in
    /// the default lists.
    AbsNoSolo,
    /// `abs-direct-handoff`: `abslock::RawAbsLock` with the calibrated config and the direct hand-off
    /// at the starvation bound ([`crate::ablations::DirectHandoff`], rounds 2-9): an ablation, not in the
    /// default lists.
    AbsDirectHandoff,
    /// `abs-no-quiet`: `abslock::RawAbsLock` with the calibrated config and no quiet regime
    /// ([`crate::ablations::NoQuiet`]: every release is an RMW, rounds 1-12): an ablation, not in the
    /// default lists.
    AbsNoQuiet,
    /// `abs-8-yields`: `abslock::RawAbsLock` with the calibrated config but rounds 11-13's yield budget
    /// ([`crate::ablations::EightYields`]: a waiter parks after 8 yields, not
    /// [`abslock::YIELD_BUDGET`]): an ablation, not in the default lists.
    Abs8Yields,
    /// `parking_lot`: `parking_lot::RawMutex` (peer).
    ParkingLot,
    /// `std`: `std::sync::Mutex<()>` (peer).
    Std,
    /// `spin-crate`: `spin::Mutex<()>` (peer).
    SpinCrate,
    /// `sequencer`: one writer thread owns the log's tail (`abslock_store::put_path::Sequencer`,
    /// rocketmq-rust's design); the log's own lock is `parking_lot::RawMutex`, taken by the
    /// writer only.
    Sequencer,
    /// `combining`: flat combining (`abslock_store::put_path::Combining`; Hendler et al.,
    /// SPAA 2010) over the same critical section, log lock `parking_lot::RawMutex`.
    Combining,
}

/// How a strategy puts a record: the seam for put paths that are not locks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PutPath {
    /// Each worker takes a `lock_api::RawMutex` around the critical section itself.
    Lock,
    /// Each worker hands its record to one writer thread and waits for its offset.
    Sequencer,
    /// Each worker publishes its record; whoever holds the combiner lock appends them all.
    Combining,
}

/// Every strategy with a fixed name, in report column order (`backoff-k<N>` for any N too).
pub const ALL_STRATEGIES: &[Strategy] = &[
    Strategy::CasSpin,
    Strategy::Spin,
    Strategy::Backoff(10),
    Strategy::Backoff(100),
    Strategy::Backoff(1000),
    Strategy::Abs,
    Strategy::AbsRocketMq,
    Strategy::AbsYield,
    Strategy::AbsSpin,
    Strategy::AbsPark,
    Strategy::AbsSolo,
    Strategy::AbsNoSolo,
    Strategy::AbsDirectHandoff,
    Strategy::AbsNoQuiet,
    Strategy::Abs8Yields,
    Strategy::ParkingLot,
    Strategy::Std,
    Strategy::SpinCrate,
    Strategy::Sequencer,
    Strategy::Combining,
];

/// The reference every other strategy is paired with in each round.
pub const REFERENCE: Strategy = Strategy::ParkingLot;

/// The largest k `backoff-k<N>` accepts: 10^7 spins is seconds of spinning
/// before a single yield, far past anything meaningful (ours).
pub const MAX_BACKOFF_K: u32 = 10_000_000;

/// Why a strategy name did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StrategyError {
    /// The name is none of the known strategies.
    #[error(
        "unknown strategy `{0}`: expected one of cas-spin, spin, backoff-k<N> (e.g. backoff-k100), \
         abs, abs-rocketmq, abs-yield, abs-spin, abs-park, abs-solo, abs-no-solo, abs-direct-handoff, abs-no-quiet, abs-8-yields, parking_lot, std, spin-crate, sequencer, combining"
    )]
    Unknown(String),
    /// `backoff-k<N>` with an N that is not a number in `0..=MAX_BACKOFF_K`.
    #[error("bad k in `{0}`: write backoff-k<N> with N a whole number from 0 to {MAX_BACKOFF_K}")]
    BadK(String),
}

impl Strategy {
    /// The strategy's name as used in flags, the CSV and the report.
    pub fn name(&self) -> String {
        match self {
            Strategy::CasSpin => "cas-spin".into(),
            Strategy::Spin => "spin".into(),
            Strategy::Backoff(k) => format!("backoff-k{k}"),
            Strategy::Abs => "abs".into(),
            Strategy::AbsRocketMq => "abs-rocketmq".into(),
            Strategy::AbsYield => "abs-yield".into(),
            Strategy::AbsSpin => "abs-spin".into(),
            Strategy::AbsPark => "abs-park".into(),
            Strategy::AbsSolo => "abs-solo".into(),
            Strategy::AbsNoSolo => "abs-no-solo".into(),
            Strategy::AbsDirectHandoff => "abs-direct-handoff".into(),
            Strategy::AbsNoQuiet => "abs-no-quiet".into(),
            Strategy::Abs8Yields => "abs-8-yields".into(),
            Strategy::ParkingLot => "parking_lot".into(),
            Strategy::Std => "std".into(),
            Strategy::SpinCrate => "spin-crate".into(),
            Strategy::Sequencer => "sequencer".into(),
            Strategy::Combining => "combining".into(),
        }
    }

    /// How this strategy puts a record.
    pub fn put_path(&self) -> PutPath {
        match self {
            Strategy::Sequencer => PutPath::Sequencer,
            Strategy::Combining => PutPath::Combining,
            _ => PutPath::Lock,
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for Strategy {
    type Err = StrategyError;

    /// Parses a name; surrounding whitespace is ignored, case is not.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        Ok(match s {
            "cas-spin" => Strategy::CasSpin,
            "spin" => Strategy::Spin,
            "abs" => Strategy::Abs,
            "abs-rocketmq" => Strategy::AbsRocketMq,
            "abs-yield" => Strategy::AbsYield,
            "abs-spin" => Strategy::AbsSpin,
            "abs-park" => Strategy::AbsPark,
            "abs-solo" => Strategy::AbsSolo,
            "abs-no-solo" => Strategy::AbsNoSolo,
            "abs-direct-handoff" => Strategy::AbsDirectHandoff,
            "abs-no-quiet" => Strategy::AbsNoQuiet,
            "abs-8-yields" => Strategy::Abs8Yields,
            "parking_lot" => Strategy::ParkingLot,
            "std" => Strategy::Std,
            "spin-crate" => Strategy::SpinCrate,
            "sequencer" => Strategy::Sequencer,
            "combining" => Strategy::Combining,
            _ => {
                let Some(k) = s.strip_prefix("backoff-k") else {
                    return Err(StrategyError::Unknown(s.to_string()));
                };
                // Reject signs and blanks that `u32::from_str` would accept or explain badly.
                if k.is_empty() || !k.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(StrategyError::BadK(s.to_string()));
                }
                match k.parse::<u32>() {
                    Ok(k) if k <= MAX_BACKOFF_K => Strategy::Backoff(k),
                    _ => return Err(StrategyError::BadK(s.to_string())),
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_name_round_trips() {
        for s in ALL_STRATEGIES {
            assert_eq!(s.name().parse::<Strategy>().unwrap(), *s);
        }
        assert_eq!("sequencer".parse::<Strategy>().unwrap().put_path(), PutPath::Sequencer);
        assert_eq!("combining".parse::<Strategy>().unwrap().put_path(), PutPath::Combining);
        assert_eq!(Strategy::ParkingLot.put_path(), PutPath::Lock);
    }

    #[test]
    fn backoff_k_parses_its_number() {
        assert_eq!("backoff-k10".parse(), Ok(Strategy::Backoff(10)));
        assert_eq!("backoff-k0".parse(), Ok(Strategy::Backoff(0)));
        assert_eq!(" backoff-k1000 ".parse(), Ok(Strategy::Backoff(1000)));
    }

    #[test]
    fn bad_k_is_a_typed_error() {
        for bad in ["backoff-k", "backoff-k-1", "backoff-k+5", "backoff-kx", "backoff-k99999999999"] {
            assert_eq!(bad.parse::<Strategy>(), Err(StrategyError::BadK(bad.to_string())), "{bad}");
        }
    }

    #[test]
    fn unknown_names_are_rejected_with_the_name() {
        for bad in ["", "Spin", "parking-lot", "mutex", "abs_rocketmq", "memcpy-limit"] {
            let err = bad.parse::<Strategy>().unwrap_err();
            assert_eq!(err, StrategyError::Unknown(bad.to_string()));
            assert!(err.to_string().contains("expected one of"));
        }
    }
}
