//! Process CPU time from `getrusage(RUSAGE_SELF)`: user + system seconds of every
//! thread of the process, including the store's background threads.

/// User + system CPU seconds consumed by this process so far.
///
/// Returns 0.0 if `getrusage` fails (it cannot for `RUSAGE_SELF` with a valid
/// pointer; the fallback keeps the sweep going rather than panicking).
pub fn process_cpu_seconds() -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` points to writable memory the size of `rusage`, and
    // RUSAGE_SELF is a valid `who`; getrusage writes nothing else.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    if rc != 0 {
        return 0.0;
    }
    // SAFETY: getrusage returned 0, so it filled the struct (and it was zeroed anyway).
    let usage = unsafe { usage.assume_init() };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_never_decreases() {
        let a = process_cpu_seconds();
        let mut x = 0u64;
        for i in 0..1_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(std::hint::black_box(i));
        }
        std::hint::black_box(x);
        let b = process_cpu_seconds();
        assert!(b >= a, "{b} < {a}");
    }
}
