//! Prints this machine's measured costs and the bounds `AbsConfig::calibrated()` derives from them, so
//! runs can be compared (`cargo run --release -p abslock --example calibration`).

fn main() {
    #[cfg(not(abslock_loom))]
    print_calibration();
}

#[cfg(not(abslock_loom))]
fn print_calibration() {
    use abslock::{AbsConfig, MeasuredCosts};

    let costs = MeasuredCosts::measure();
    let derived = AbsConfig::from_costs(&costs);
    let calibrated = AbsConfig::calibrated();
    println!(
        "costs: spin {:.1} ns, yield {:.0} ns, hand-off {:.0} ns",
        costs.spin_ns, costs.yield_ns, costs.handoff_ns
    );
    println!(
        "calibrated: k_min {} k_max {} max_yields {} park_spins {} (same measurement repeated: k_min {} k_max {} max_yields {})",
        calibrated.k_min,
        calibrated.k_max,
        calibrated.max_yields,
        calibrated.park_spins,
        derived.k_min,
        derived.k_max,
        derived.max_yields
    );
}
