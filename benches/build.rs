//! Records the commit the benches are built from (`ABSLOCK_BUILD_COMMIT`), so that a report names the
//! code that ran even when the binary runs from a checkout at another commit. Ours.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    // Rebuild when the checked-out commit or the index changes (a commit, a checkout, `git add`).
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        let dir = Path::new(&dir);
        for f in ["HEAD", "index", "refs", "packed-refs"] {
            println!("cargo:rerun-if-changed={}", dir.join(f).display());
        }
    }
    let commit = match git(&["rev-parse", "--short", "HEAD"]) {
        Some(c) if !c.is_empty() => {
            let dirty =
                git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
            if dirty { format!("{c} (with uncommitted changes)") } else { c }
        }
        _ => "unknown".to_string(),
    };
    println!("cargo:rustc-env=ABSLOCK_BUILD_COMMIT={commit}");
}
