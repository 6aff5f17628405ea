//! ABS's hand-off paths: the starvation bound (a release over sleepers, once the bound is due, wakes the
//! oldest as the heir and releases; the heir takes the free lock or asks to be handed it at the next
//! release; `ImpatientDirect` keeps the direct hand-off, the lock never free), `unlock_fair`, and a timed
//! lock that gives up while others sleep, each also under the quiet regime (`Quiet`). With `Impatient`
//! the bound is always due, so every release over a sleeper wakes an heir; with `Starving` a waiter is
//! past the per-waiter bound at its first yield and asks as an heir. A lost wake-up shows as a loom
//! deadlock; two holders as a concurrent access to the cell.
#![cfg(abslock_loom)]

use abslock::{Mode, RawAbsLock};
use abslock_loom_tests::{Adaptive, Impatient, ImpatientDirect, ModelLock, Quiet, Solo, Starving};
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;

struct Guarded<P: abslock::AbsProfile> {
    lock: RawAbsLock<P>,
    count: UnsafeCell<u32>,
}

// SAFETY: `count` is only touched while `lock` is held.
unsafe impl<P: abslock::AbsProfile> Sync for Guarded<P> {}

impl<P: abslock::AbsProfile> Guarded<P> {
    fn new() -> Arc<Self> {
        Arc::new(Guarded { lock: RawAbsLock::new(), count: UnsafeCell::new(0) })
    }
    fn bump(&self) {
        // SAFETY: callers hold the lock; loom flags it if another thread is inside too.
        self.count.with_mut(|c| unsafe { *c += 1 });
    }
    fn total(&self) -> u32 {
        // SAFETY: called after every other thread has been joined.
        self.count.with(|c| unsafe { *c })
    }
}

fn increment<P: abslock::AbsProfile>(g: &Guarded<P>) {
    g.lock.acquire();
    g.bump();
    // SAFETY: acquired above.
    unsafe { g.lock.release() };
}

/// Two waiters park (park mode) while the main thread holds the lock; every release over them wakes an
/// heir (or, direct, hands over), and every increment happens exactly once.
fn sleepers_at_the_bound<P: abslock::AbsProfile>() {
    two_waiters_while_held::<P>(Mode::Park);
}

/// Two waiters come while the main thread holds the lock in `mode`; the main thread increments, releases
/// once and joins them: every increment happens exactly once and the lock ends free.
fn two_waiters_while_held<P: abslock::AbsProfile>(mode: Mode) {
    let g = Guarded::<P>::new();
    g.lock.set_mode(mode);
    g.lock.acquire();
    assert_quiet_if_due(&g.lock);
    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let g = Arc::clone(&g);
            thread::spawn(move || increment(&g))
        })
        .collect();
    g.bump();
    // SAFETY: acquired above.
    unsafe { g.lock.release() };
    for w in waiters {
        w.join().unwrap();
    }
    assert_eq!(g.total(), 3);
    assert!(!g.lock.is_held());
}

#[test]
fn sleepers_are_woken_as_heirs_at_the_bound() {
    loom::model(sleepers_at_the_bound::<Impatient>);
}

#[test]
fn sleepers_are_handed_the_lock_directly_at_the_bound() {
    loom::model(sleepers_at_the_bound::<ImpatientDirect>);
}

/// Two waiters come while the main thread holds the lock in spin mode, and each counts as past the
/// starvation bound at its first yield: it stops yielding and asks to be handed the lock (`HEIR`)
/// beside a sleeper (the entry cap parks the second waiter, and a yielder that set `AWAKE` for it gives
/// the bit up before asking). Two heirs asking at once are modelled with sleepers (`Impatient` above);
/// with two starving yielders the second heir's spin-and-yield loop took over 4 minutes at two
/// preemptions, so that case runs on real threads (`locks/tests/starvation.rs`). A lost request shows as
/// a deadlock, two holders as a concurrent access.
fn yielder_past_the_bound_beside_a_sleeper<P: abslock::AbsProfile>() {
    two_waiters_while_held::<P>(Mode::Spin);
}

#[test]
fn a_yielder_past_the_bound_asks_beside_a_sleeper() {
    loom::model(yielder_past_the_bound_beside_a_sleeper::<Starving>);
}

/// A timed lock that turns starving beside a sleeper: it asks as an heir and is handed or takes the
/// lock, or, its yields spent, withdraws and parks, where it may give up (under loom a timed lock gives
/// up only in the park); either way nobody is stranded.
#[test]
fn a_starving_timed_lock_strands_nobody() {
    loom::model(|| timed_lock_beside_a_sleeper::<Starving>(false));
}

/// A sleeper woken as the heir while another thread takes the freed lock: the heir asks (`HEIR`) and
/// the other thread's release, plain or fair, hands the lock over (`GIVEN`) instead of freeing it; a
/// lost request shows as a deadlock, two holders as a concurrent access.
fn heir_asks_while_another_holds(fair: bool) {
    let g = Guarded::<Impatient>::new();
    g.lock.set_mode(Mode::Park);
    g.lock.acquire();
    let sleeper = {
        let g = Arc::clone(&g);
        thread::spawn(move || increment(&g))
    };
    let other = {
        let g = Arc::clone(&g);
        thread::spawn(move || {
            g.lock.acquire();
            g.bump();
            // SAFETY: acquired above.
            unsafe {
                if fair {
                    g.lock.model_unlock_fair();
                } else {
                    g.lock.release();
                }
            }
        })
    };
    g.bump();
    // SAFETY: acquired above.
    unsafe { g.lock.release() };
    sleeper.join().unwrap();
    other.join().unwrap();
    assert_eq!(g.total(), 3);
    assert!(!g.lock.is_held());
}

#[test]
fn heir_is_handed_the_lock_by_a_plain_release() {
    loom::model(|| heir_asks_while_another_holds(false));
}

#[test]
fn heir_is_handed_the_lock_by_a_fair_release() {
    loom::model(|| heir_asks_while_another_holds(true));
}

/// `unlock_fair` hands the lock to a sleeper (the bound never comes due here), racing a newcomer.
fn fair_release_beside_a_sleeper<P: abslock::AbsProfile>() {
    let g = Guarded::<P>::new();
    g.lock.set_mode(Mode::Park);
    g.lock.acquire();
    assert_quiet_if_due(&g.lock);
    let sleeper = {
        let g = Arc::clone(&g);
        thread::spawn(move || increment(&g))
    };
    let newcomer = {
        let g = Arc::clone(&g);
        thread::spawn(move || increment(&g))
    };
    g.bump();
    // SAFETY: acquired above.
    unsafe { g.lock.model_unlock_fair() };
    sleeper.join().unwrap();
    newcomer.join().unwrap();
    assert_eq!(g.total(), 3);
    assert!(!g.lock.is_held());
}

#[test]
fn unlock_fair_hands_over_or_frees() {
    loom::model(fair_release_beside_a_sleeper::<Adaptive>);
}

/// The main thread holds the lock while a timed lock and a plain one wait on it, then releases once:
/// the timed lock either takes the lock or gives up, and nobody is stranded.
fn timed_lock_beside_a_sleeper<P: abslock::AbsProfile>(park_mode: bool) {
    let g = Guarded::<P>::new();
    if park_mode {
        g.lock.set_mode(Mode::Park);
    }
    g.lock.acquire();
    let timed = {
        let g = Arc::clone(&g);
        thread::spawn(move || {
            let got = g.lock.model_lock_timed();
            if got {
                g.bump();
                // SAFETY: the timed lock succeeded.
                unsafe { g.lock.release() };
            }
            u32::from(got)
        })
    };
    let sleeper = {
        let g = Arc::clone(&g);
        thread::spawn(move || increment(&g))
    };
    g.bump();
    // SAFETY: acquired above.
    unsafe { g.lock.release() };
    let timed_got = timed.join().unwrap();
    sleeper.join().unwrap();
    assert_eq!(g.total(), 2 + timed_got);
    assert!(!g.lock.is_held());
}

/// A timed lock gives up (its deadline passes as soon as it would sleep) while another thread sleeps:
/// the sleeper is still woken, and a timed lock that succeeds holds the lock exclusively.
#[test]
fn timed_lock_giving_up_strands_nobody() {
    loom::model(|| timed_lock_beside_a_sleeper::<Adaptive>(true));
}

/// Under the solo restriction a timed lock's sleep ends at its re-check or its deadline (both modelled
/// as passed at once): it either takes the lock on a re-check or gives up, and strands nobody. At one
/// preemption, as the other 3-thread solo models (`ModelLock::BUSY_WAITS`): the sleepers' re-checks loop.
#[test]
fn solo_timed_lock_gives_up_or_takes_it_and_strands_nobody() {
    busy_waiting(|| timed_lock_beside_a_sleeper::<Solo>(false));
}

/// The same under the quiet regime (`Quiet`: the main thread's first acquisition starts it): waiters out
/// of spins sleep with a re-check instead of setting `PARKED`, and the holder's release, a plain store
/// while nobody is registered, must still leave nobody stranded. At one preemption, as above.
#[test]
fn quiet_timed_lock_gives_up_or_takes_it_and_strands_nobody() {
    busy_waiting(|| timed_lock_beside_a_sleeper::<Quiet>(false));
}

/// Two waiters come while a quiet holder works (`Quiet`: its first acquisition started the regime); its
/// release, a plain store while nobody is registered, races their registration. At one preemption.
#[test]
fn quiet_release_racing_two_waiters_keeps_exclusion_and_strands_nobody() {
    busy_waiting(sleepers_at_the_bound::<Quiet>);
}

/// `unlock_fair` from a quiet holder ends the regime and hands over through the queue (quiet sleepers set
/// no `PARKED`) or frees the lock. At one preemption.
#[test]
fn quiet_fair_release_hands_over_or_frees() {
    busy_waiting(fair_release_beside_a_sleeper::<Quiet>);
}

/// A profile that ends a window at every acquisition (`Quiet`) starts the quiet regime at its first,
/// idle one, so the quiet models do run under the regime.
fn assert_quiet_if_due<P: abslock::AbsProfile>(lock: &RawAbsLock<P>) {
    if P::QUIET && P::CHECK_INTERVAL == 1 {
        assert!(lock.stats().quiet, "the first window had no waiter");
    }
}

/// Checks a model whose sleepers re-check in a loop (solo and quiet sleepers: `ModelLock::BUSY_WAITS`) at
/// one preemption, with room for the loop's branches.
fn busy_waiting(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(1);
    b.max_branches = 100_000;
    b.check(f);
}
