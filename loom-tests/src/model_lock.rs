//! Profiles that make ABS's policy and waiting stages reachable inside a model.

use abslock::{AbsConfig, AbsProfile};

/// ABS with tiny bounds and no adaptation inside a model: spin once, yield once, then park; at most one
/// waiter circulating (the entry cap). Its starvation bound never comes due inside a model (time does
/// not pass under loom), so releases over sleepers take the wake path.
#[derive(Debug)]
pub enum SmallSpin {}

/// `SmallSpin`'s bounds.
const SMALL_SPIN: AbsConfig = AbsConfig {
    k_init: 1,
    k_min: 1,
    k_max: 2,
    k_step: 1,
    max_yields: 1,
    park_spins: 1,
    park_yields: 0,
    window: u32::MAX,
    max_spinners: 1,
    crowded_spins: 0,
    crowded_yields: 1,
    max_active: 1,
    starve_after_us: 1,
    ..AbsConfig::ROCKETMQ
};

impl AbsProfile for SmallSpin {
    const CHECK_INTERVAL: u64 = 1 << 40;
    fn config() -> &'static AbsConfig {
        &SMALL_SPIN
    }
}

/// ABS that runs the policy at every acquisition, with ratios that make it change k or mode at almost
/// every window: the adaptation itself runs inside the models.
#[derive(Debug)]
pub enum Adaptive {}

impl AbsProfile for Adaptive {
    const CHECK_INTERVAL: u64 = 1;
    // Its first window would start the quiet regime, whose sleepers re-check instead of parking until
    // woken: these models are about the parking path, and `Quiet` models the regime.
    const QUIET: bool = false;
    fn config() -> &'static AbsConfig {
        static C: AbsConfig = AbsConfig {
            k_init: 1,
            k_min: 1,
            k_max: 1,
            k_step: 1,
            raise_ratio: u32::MAX,
            lower_ratio: 1,
            return_percent: 100,
            max_yields: 0,
            park_spins: 0,
            park_yields: 0,
            window: 1,
            max_spinners: 0,
            crowded_spins: 1,
            crowded_yields: 0,
            crowded_trial: true,
            // Off, so the models keep switching modes; the rule itself is a pure holder-side choice,
            // covered by `policy.rs`'s tests.
            park_only_when_crowded: false,
            max_active: 0,
            starve_after_us: u32::MAX,
            solo_recheck_us: 0,
        };
        &C
    }
}

/// `SmallSpin` without the entry cap and with one crowded spin: a second waiter finds the spinner limit
/// reached and spins `crowded_spins` (1) before each yield, so that branch runs inside the models.
#[derive(Debug)]
pub enum Crowded {}

impl AbsProfile for Crowded {
    const CHECK_INTERVAL: u64 = 1 << 40;
    fn config() -> &'static AbsConfig {
        static C: AbsConfig =
            AbsConfig { k_init: 2, max_active: u32::MAX, max_spinners: 1, crowded_spins: 1, ..SMALL_SPIN };
        &C
    }
}

/// `SmallSpin` whose park mode neither spins nor yields: a waiter in park mode goes to sleep with no
/// yield point on the way (loom runs a thread that spun or yielded again only once the others block), so
/// a model can put it to sleep before another thread's next step, such as switching the solo regime on.
#[derive(Debug)]
pub enum ParkAtOnce {}

impl AbsProfile for ParkAtOnce {
    const CHECK_INTERVAL: u64 = 1 << 40;
    fn config() -> &'static AbsConfig {
        static C: AbsConfig = AbsConfig { park_spins: 0, ..SMALL_SPIN };
        &C
    }
}

/// `SmallSpin` with a starvation bound of 0: every release over sleepers wakes the oldest one as the
/// heir (the lock released), so the heir's request (`HEIR`) and its hand-over (`GIVEN`) race every other
/// path inside the models.
#[derive(Debug)]
pub enum Impatient {}

impl AbsProfile for Impatient {
    const CHECK_INTERVAL: u64 = 1 << 40;
    fn config() -> &'static AbsConfig {
        static C: AbsConfig = AbsConfig { starve_after_us: 0, ..SMALL_SPIN };
        &C
    }
}

/// `Impatient` with the direct hand-off of rounds 2-9 (`AbsProfile::DIRECT_HANDOFF`, the
/// `abs-direct-handoff` ablation): every release over sleepers passes the lock to the oldest one without
/// freeing it.
#[derive(Debug)]
pub enum ImpatientDirect {}

impl AbsProfile for ImpatientDirect {
    const CHECK_INTERVAL: u64 = 1 << 40;
    const DIRECT_HANDOFF: bool = true;
    fn config() -> &'static AbsConfig {
        Impatient::config()
    }
}

/// `SmallSpin` under the solo restriction (`SOLO_RECHECK_US`): waiters park at once and no release wakes
/// them. Its starvation bound never comes due inside a model, so only a sleeper's own re-check (a timed
/// park, modelled as timing out at once) brings it back: a stranded sleeper shows as a loom deadlock.
#[derive(Debug)]
pub enum Solo {}

impl AbsProfile for Solo {
    const CHECK_INTERVAL: u64 = 1 << 40;
    const SOLO_RECHECK_US: u32 = 1;
    fn config() -> &'static AbsConfig {
        &SMALL_SPIN
    }
}

/// [`Solo`] with a starvation bound of 0: every release over sleepers would hand the lock to the oldest.
/// Under loom a solo sleeper leaves the queue in the step it joins it (its re-check times out at once), so
/// these models check exclusion and the re-check beside that release path; a hand-off to a solo sleeper
/// is tested on real threads (`locks/tests/solo.rs`).
#[derive(Debug)]
pub enum SoloImpatient {}

impl AbsProfile for SoloImpatient {
    const CHECK_INTERVAL: u64 = 1 << 40;
    const SOLO_RECHECK_US: u32 = 1;
    fn config() -> &'static AbsConfig {
        static C: AbsConfig = AbsConfig { starve_after_us: 0, ..SMALL_SPIN };
        &C
    }
}

/// `SmallSpin` whose first acquisition ends a window (window 1, checked at every acquisition), so the
/// lock enters the quiet regime before any other thread comes: releases are plain stores, waiters out of
/// spins sleep with a re-check (a timed park, modelled as timing out at once), and the first acquisition
/// or release that sees a waiter ends the regime.
#[derive(Debug)]
pub enum Quiet {}

impl AbsProfile for Quiet {
    const CHECK_INTERVAL: u64 = 1;
    fn config() -> &'static AbsConfig {
        static C: AbsConfig = AbsConfig { window: 1, ..SMALL_SPIN };
        &C
    }
}

/// `SmallSpin` whose waiters count as past the starvation bound after one yield
/// (`AbsProfile::STARVED_AFTER_YIELDS`; time does not pass under loom): a waiter that yields once stops
/// yielding and asks for the lock as an heir (`HEIR`), racing releases, sleepers (the entry cap parks a
/// second waiter at once) and, when it set `AWAKE` for a sleeper, giving that bit up first.
#[derive(Debug)]
pub enum Starving {}

impl AbsProfile for Starving {
    const CHECK_INTERVAL: u64 = 1 << 40;
    const STARVED_AFTER_YIELDS: u32 = 1;
    fn config() -> &'static AbsConfig {
        &SMALL_SPIN
    }
}
