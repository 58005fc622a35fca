//! This example demonstrates the two PINT experiments of the paper, printed as CSV:
//!
//! ```text
//!   path tracing:  src ── s1 ── s2 ── … ── sk ── sink     (each packet: a b-bit digest;
//!                                                        sink: packets until the path is known)
//!   latency:       src ── h1 ── … ── h5 ── sink           (each packet: one hop's latency in
//!                                                        b bits; sink: per-hop p50/p99)
//! ```
//!
//! `cargo run -p dcsim-pint --release --example pint_tables -- [path-trials] [latency-flows]`
//! (defaults 1000 and 20).

fn main() -> Result<(), dcsim_pint::PintError> {
    let mut args = std::env::args().skip(1);
    let trials: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let flows: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(20);

    let ks = [5, 10, 20, 36, 64];
    let budgets = [(4, 1), (8, 1), (8, 2), (16, 1), (16, 2)];
    println!("{}", dcsim_pint::PathRow::CSV_HEADER);
    for r in dcsim_pint::path_tracing_table(&ks, &budgets, trials, 2020)? {
        println!("{r}");
    }

    println!();
    let checkpoints = [50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000];
    let storages = [dcsim_pint::Storage::All, dcsim_pint::Storage::Kll(100)];
    println!("{}", dcsim_pint::LatencyRow::CSV_HEADER);
    for r in dcsim_pint::latency_table(&[4, 8], &storages, &checkpoints, flows, 2020)? {
        println!("{r}");
    }
    Ok(())
}
