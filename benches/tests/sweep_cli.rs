//! The `sweep` binary end to end: bad input is a clear error with exit code 2 that writes
//! nothing; a tiny run writes both CSVs, the report and the plots, removes its stores and
//! clears an earlier run's plots; `compare` agrees with itself and rejects other grids and
//! foreign files.

use std::path::Path;
use std::process::{Command, Output};

fn sweep() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sweep"))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn bad_values_exit_2_naming_the_value_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let cases: &[(&[&str], &str)] = &[
        (&["--strategies", "abs,mcs"], "unknown strategy `mcs`"),
        (&["--strategies", "backoff-kx"], "bad k in `backoff-kx`"),
        (&["--threads", "0"], "--threads"),
        (&["--threads", "1,,2"], "--threads"),
        (&["--threads", "5000"], "--threads"),
        (&["--sizes", "1k"], "--sizes"),
        (&["--sizes", "0"], "--sizes"),
        (&["--rounds", "0"], "--rounds"),
        (&["--rounds", "1"], "--rounds"),
        (&["--targets", "emulated"], "emulated"),
        (&["--layout", "sharded"], "single or per-topic"),
        (&["--flush", "never"], "async or sync"),
        (&["--segment-mib", "0"], "--segment-mib"),
        (&["--threads", "1024", "--sizes", "4194304"], "--segment-mib"),
        (&["--store-dir", "/nonexistent/abslock-sweep"], "never creates it"),
    ];
    for (args, expected) in cases {
        let o = sweep().args(*args).arg("--out").arg(&out).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(expected), "{args:?}: {}", stderr(&o));
        assert!(!out.exists(), "{args:?} created its output directory");
    }
    assert!(!Path::new("/nonexistent/abslock-sweep").exists());
}

#[test]
fn an_unwritable_out_fails_before_the_first_cell() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let store = tempfile::tempdir().unwrap();
    let o = sweep()
        .arg("--smoke")
        .arg("--out")
        .arg(file.join("sub"))
        .arg("--store-dir")
        .arg(store.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--out"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("[1/"), "a cell ran: {}", stderr(&o));
    assert_eq!(std::fs::read_dir(store.path()).unwrap().count(), 0, "a run directory was left");
}

fn tiny_run(out: &Path, store: &Path, threads: &str) -> Output {
    sweep()
        .args(["--strategies", "abs,parking_lot", "--threads", threads, "--sizes", "128", "--rounds", "2"])
        .args(["--cell-ms", "5", "--warmup-ms", "1", "--segment-mib", "4", "--seed", "7"])
        .arg("--out")
        .arg(out)
        .arg("--store-dir")
        .arg(store)
        .output()
        .unwrap()
}

#[test]
fn a_tiny_run_writes_everything_cleans_up_and_compares() {
    let out = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    std::fs::write(out.path().join("throughput_4096.svg"), "stale").unwrap();
    let o = tiny_run(out.path(), store.path(), "1,2");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("estimated"), "no time estimate: {}", stderr(&o));
    let err = stderr(&o);
    // Rounds are the outer loop: both rounds visit all 4 cells before any cell is judged.
    let round =
        |r: &str| err.find(&format!("sweep: round {r}/2 of 4 cells")).unwrap_or_else(|| panic!("{err}"));
    let judged = err.find("[1/4]").unwrap_or_else(|| panic!("no progress line without a terminal: {err}"));
    assert!(round("1") < round("2") && round("2") < judged, "{err}");
    let results = std::fs::read_to_string(out.path().join("results.csv")).unwrap();
    let header = results.lines().next().unwrap();
    for col in [
        "target",
        "strategy",
        "ratio_pl",
        "verdict_pl",
        "verdict_best",
        "cpu_ns_per_msg",
        "background_ns_per_msg",
    ] {
        assert!(header.split(',').any(|c| c == col), "results.csv lacks {col}: {header}");
    }
    // 2 targets x 2 thread counts x 2 strategies.
    assert_eq!(results.lines().count(), 1 + 8);
    let rounds = std::fs::read_to_string(out.path().join("rounds.csv")).unwrap();
    assert_eq!(rounds.lines().count(), 1 + 8 * 2);
    let report = std::fs::read_to_string(out.path().join("report.md")).unwrap();
    for needle in [
        "Target `lock-bound`",
        "Target `store`",
        "ABS calibrated bounds",
        "ABS summary",
        "Stalls and failures",
    ] {
        assert!(report.contains(needle), "report lacks {needle}");
    }
    assert!(out.path().join("lock-bound-ratio-128.svg").exists());
    assert!(!out.path().join("throughput_4096.svg").exists(), "a stale plot of an earlier run stayed");
    assert_eq!(std::fs::read_dir(store.path()).unwrap().count(), 0, "stores were left behind");

    let a = out.path().join("results.csv");
    let o = sweep().arg("compare").arg(&a).arg(&a).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("agreement overall:        12/12 (100.0%)"), "{text}");

    let narrower = tempfile::tempdir().unwrap();
    assert!(tiny_run(narrower.path(), store.path(), "1").status.success());
    let o = sweep().arg("compare").arg(&a).arg(narrower.path().join("results.csv")).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("different grids"), "{}", stderr(&o));
    let foreign = out.path().join("foreign.csv");
    std::fs::write(&foreign, "name,value\nx,1\n").unwrap();
    let o = sweep().arg("compare").arg(&a).arg(&foreign).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a sweep results.csv"), "{}", stderr(&o));
}

#[test]
fn sigterm_ends_the_run_and_removes_its_stores() {
    use std::io::{BufRead, BufReader};
    let out = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    let mut child = sweep()
        .args(["--targets", "lock-bound", "--strategies", "parking_lot", "--threads", "1", "--sizes", "128"])
        .args(["--rounds", "1000", "--cell-ms", "1000", "--segment-mib", "4"])
        .arg("--out")
        .arg(out.path())
        .arg("--store-dir")
        .arg(store.path())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    // The estimate is printed once the run directory exists, before the first cell.
    let first = lines.next().unwrap().unwrap();
    assert!(first.contains("estimated"), "{first}");
    assert_eq!(std::fs::read_dir(store.path()).unwrap().count(), 1, "the run directory exists");
    // SAFETY: kill only sends a signal to the child we spawned (its pid is live until waited for).
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) }, 0);
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{rest:?}");
    assert_eq!(std::fs::read_dir(store.path()).unwrap().count(), 0, "stores were left after SIGTERM");
    let report = std::fs::read_to_string(out.path().join("report.md")).unwrap();
    assert!(report.contains("Interrupted"));
}
