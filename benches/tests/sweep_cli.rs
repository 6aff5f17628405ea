//! The `sweep` binary end to end: bad grid values are clear errors that write nothing,
//! and a tiny run writes the CSV (issue 4's columns first), the report and the plots.

use std::process::Command;

fn sweep() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sweep"))
}

#[test]
fn bad_values_are_errors_naming_the_value_and_write_nothing() {
    let out = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--strategies", "abs,mcs"], "unknown strategy `mcs`"),
        (&["--strategies", "backoff-kx"], "bad k in `backoff-kx`"),
        (&["--threads", "0"], "bad value `0` for --threads"),
        (&["--sizes", "1k"], "bad value `1k` for --sizes"),
        (&["--layout", "sharded"], "bad value `sharded` for --layout"),
        (&["--flush", "never"], "bad value `never` for --flush"),
        (&["--topics", ""], "--topics needs at least one value"),
    ];
    for (args, expected) in cases {
        let o = sweep().args(*args).arg("--out").arg(out.path().join("o")).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    assert!(!out.path().join("o").exists(), "a rejected command created its output directory");
}

#[test]
fn a_tiny_run_writes_csv_report_and_plots() {
    let out = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    let o = sweep()
        .args(["--strategies", "abs,parking_lot", "--threads", "1,2", "--sizes", "128", "--reps", "1"])
        .args(["--cell-ms", "20", "--warmup-ms", "5", "--segment-mib", "2", "--ring-mib", "4", "--quiet"])
        .arg("--out")
        .arg(out.path())
        .arg("--store-dir")
        .arg(store.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.path().join("results.csv")).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with(
        "strategy,threads,msg_size,layout,topics,flush,rep,messages,seconds,msgs_per_s,mb_per_s,\
         cpu_s_per_million,jain,p50_ns,p99_ns,p999_ns,abs_switches,abs_final_k"
    ));
    // memcpy-limit + 2 strategies x 2 thread counts.
    assert_eq!(lines.count(), 5);
    let report = std::fs::read_to_string(out.path().join("report.md")).unwrap();
    for needle in ["Machine:", "Command:", "pinned", "The limit", "ABS summary", "Fairness"] {
        assert!(report.contains(needle), "report lacks {needle}");
    }
    assert!(out.path().join("throughput_128.svg").exists());
    assert!(out.path().join("cpu_128.svg").exists());
    // The per-cell stores are removed; only the run directory's parent remains.
    let left: Vec<_> = std::fs::read_dir(store.path()).unwrap().collect();
    assert!(left.is_empty(), "store directory not cleaned: {left:?}");
}
