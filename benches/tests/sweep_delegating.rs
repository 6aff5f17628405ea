//! The delegating put paths as sweep strategies: a tiny run with `--strategies
//! sequencer,combining` on both targets puts messages under each in every round and gives
//! each a verdict against `parking_lot` (which verdict is timing, so not checked). A window
//! the machine starves of CPU is recorded as stalled rather than failed, so a round may
//! stall; none may fail, and every round that ran put messages.

use std::collections::HashMap;
use std::process::Command;

/// The rows of a CSV file as maps from column name to value.
fn rows(text: &str) -> Vec<HashMap<String, String>> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    lines
        .map(|l| header.iter().map(|h| h.to_string()).zip(l.split(',').map(str::to_string)).collect())
        .collect()
}

#[test]
fn sequencer_and_combining_put_messages_and_get_verdicts_on_both_targets() {
    let out = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_sweep"))
        .args(["--strategies", "sequencer,combining", "--threads", "1,2", "--sizes", "128", "--rounds", "2"])
        .args(["--cell-ms", "50", "--warmup-ms", "5", "--segment-mib", "4", "--seed", "7"])
        .arg("--out")
        .arg(out.path())
        .arg("--store-dir")
        .arg(store.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let results = rows(&std::fs::read_to_string(out.path().join("results.csv")).unwrap());
    // 2 targets x 2 thread counts x (sequencer, combining, parking_lot).
    assert_eq!(results.len(), 12);
    for target in ["lock-bound", "store"] {
        for strategy in ["sequencer", "combining"] {
            let mine: Vec<_> =
                results.iter().filter(|r| r["target"] == target && r["strategy"] == strategy).collect();
            assert_eq!(mine.len(), 2, "{target} {strategy}");
            for r in mine {
                assert_eq!(r["failed"], "0", "{target} {strategy}: {r:?}");
                assert!(["faster", "tie", "slower"].contains(&r["verdict_pl"].as_str()), "{r:?}");
                assert!(r["ratio_pl"].parse::<f64>().unwrap() > 0.0, "{r:?}");
                assert!(r["cpu_ns_per_msg"].parse::<f64>().unwrap() > 0.0, "{r:?}");
            }
        }
    }

    let rounds = rows(&std::fs::read_to_string(out.path().join("rounds.csv")).unwrap());
    let delegated: Vec<_> = rounds.iter().filter(|r| r["strategy"] != "parking_lot").collect();
    // 2 targets x 2 thread counts x 2 strategies x 2 rounds.
    assert_eq!(delegated.len(), 16);
    for r in &delegated {
        assert!(["ok", "stalled"].contains(&r["status"].as_str()), "{r:?}");
        if r["status"] == "ok" {
            assert!(r["messages"].parse::<u64>().unwrap() > 0, "{r:?}");
        }
    }
    for target in ["lock-bound", "store"] {
        for strategy in ["sequencer", "combining"] {
            let ok = delegated
                .iter()
                .filter(|r| r["target"] == target && r["strategy"] == strategy && r["status"] == "ok")
                .count();
            assert!(ok > 0, "{target} {strategy}: no round put a message");
        }
    }
    assert_eq!(std::fs::read_dir(store.path()).unwrap().count(), 0, "stores were left behind");
}
