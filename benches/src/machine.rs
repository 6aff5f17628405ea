//! The machine a run happened on: CPU model, core count, kernel.

use std::fmt;

/// What the report says about the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// CPU model name from `/proc/cpuinfo` (`model name`), or "unknown".
    pub cpu_model: String,
    /// Cores available to this process (`std::thread::available_parallelism`).
    pub cores: usize,
    /// `uname -srm`: kernel name, release and machine.
    pub kernel: String,
}

/// Reads the machine description; never fails (missing parts read "unknown").
pub fn detect() -> Machine {
    let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| cpu_model_from_cpuinfo(&s))
        .unwrap_or_else(|| "unknown".to_string());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    Machine { cpu_model, cores, kernel: kernel().unwrap_or_else(|| "unknown".to_string()) }
}

/// The first `model name` value in a `/proc/cpuinfo` text.
pub fn cpu_model_from_cpuinfo(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == "model name").then(|| v.trim().to_string())
    })
}

fn kernel() -> Option<String> {
    let mut u = std::mem::MaybeUninit::<libc::utsname>::zeroed();
    // SAFETY: `u` points to writable memory the size of `utsname`; uname only writes it.
    if unsafe { libc::uname(u.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: uname returned 0, so every field holds a NUL-terminated string
    // (and the struct was zeroed beforehand).
    let u = unsafe { u.assume_init() };
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Some(format!("{} {} {}", field(&u.sysname), field(&u.release), field(&u.machine)))
}

impl fmt::Display for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, {} cores, {}", self.cpu_model, self.cores, self.kernel)
    }
}

/// The 1, 5 and 15 minute load averages from `/proc/loadavg` ("0.42 0.15 0.05"), if readable.
/// The report states them at the start and end of a run: on a shared machine other
/// work competes with the workers, which the figures cannot separate out.
pub fn load_average() -> Option<String> {
    let s = std::fs::read_to_string("/proc/loadavg").ok()?;
    let parts: Vec<&str> = s.split_whitespace().take(3).collect();
    (parts.len() == 3).then(|| parts.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_name_is_the_first_one() {
        let text = "processor\t: 0\nmodel name\t: AMD EPYC 9B14\nflags\t: x\n\nmodel name\t: other\n";
        assert_eq!(cpu_model_from_cpuinfo(text).as_deref(), Some("AMD EPYC 9B14"));
        assert_eq!(cpu_model_from_cpuinfo("processor: 0\n"), None);
    }

    #[test]
    fn detect_reports_at_least_one_core() {
        assert!(detect().cores >= 1);
    }
}
