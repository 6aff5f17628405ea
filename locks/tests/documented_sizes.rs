//! Every raw lock's documented `size_of` is its real one (the docs state them so users can embed the
//! locks knowingly).
#![cfg(not(abslock_loom))]

use abslock::{RawAbsLock, RawBackoffLock, RawCasSpinLock, RawSpinLock, RocketMq};
use core::mem::size_of;

#[test]
fn sizes_match_the_docs() {
    assert_eq!(size_of::<RawSpinLock>(), 1);
    assert_eq!(size_of::<RawCasSpinLock>(), 1);
    assert_eq!(size_of::<RawBackoffLock>(), 40);
    assert_eq!(size_of::<RawAbsLock>(), 256);
    assert_eq!(size_of::<RawAbsLock<RocketMq>>(), 256);
    assert_eq!(size_of::<abslock::AbsMutex<()>>(), 256);
}
