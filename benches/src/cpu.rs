//! CPU clocks: the calling thread's (`CLOCK_THREAD_CPUTIME_ID`), another thread's
//! ([`ThreadClock`], from `pthread_getcpuclockid`: a put path with a thread of its own, such
//! as a sequencer, reports that thread's CPU with it) and the process's.

/// A thread's CPU clock, readable from any thread while that thread lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadClock(libc::clockid_t);

fn read(clock: libc::clockid_t) -> Option<u64> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; clock_gettime writes only it.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

impl ThreadClock {
    /// The calling thread's CPU clock.
    ///
    /// # Errors
    /// The OS error if `pthread_getcpuclockid` fails (it does not for the calling thread).
    pub fn current() -> std::io::Result<ThreadClock> {
        let mut id: libc::clockid_t = 0;
        // SAFETY: `pthread_self()` is the calling, live thread and `id` is writable.
        let rc = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut id) };
        if rc != 0 {
            return Err(std::io::Error::from_raw_os_error(rc));
        }
        Ok(ThreadClock(id))
    }

    /// CPU time the thread has used, ns; `None` if the thread has exited.
    pub fn ns(&self) -> Option<u64> {
        read(self.0)
    }
}

/// CPU time the calling thread has used so far, ns (`CLOCK_THREAD_CPUTIME_ID`; 0 if unreadable).
pub fn thread_ns() -> u64 {
    read(libc::CLOCK_THREAD_CPUTIME_ID).unwrap_or(0)
}

/// CPU time every thread of this process has used so far, ns (0 if unreadable, which
/// `CLOCK_PROCESS_CPUTIME_ID` never is on Linux).
pub fn process_ns() -> u64 {
    read(libc::CLOCK_PROCESS_CPUTIME_ID).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_clock_counts_its_own_work_and_another_thread_can_read_it() {
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let h = std::thread::spawn(move || {
            let clock = ThreadClock::current().unwrap();
            let mut x = 0u64;
            for i in 0..2_000_000u64 {
                x = x.wrapping_mul(31).wrapping_add(std::hint::black_box(i));
            }
            std::hint::black_box(x);
            tx.send(clock).unwrap();
            done_rx.recv().unwrap();
        });
        let clock = rx.recv().unwrap();
        let ns = clock.ns().expect("the thread is alive");
        assert!(ns > 0);
        assert!(process_ns() >= ns);
        done_tx.send(()).unwrap();
        h.join().unwrap();
    }
}
