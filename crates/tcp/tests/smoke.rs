mod common;
use common::*;
use dcsim_tcp::cca::{CcaConfig, CubicConfig, NewRenoConfig};
use dcsim_tcp::TcpConfig;
use dcsim_types::BitsPerSec;

#[test]
fn smoke() {
    for (name, cfg) in [("linux", TcpConfig::linux()), ("dc", TcpConfig::dc_newreno())] {
        for loss in [0.0, 0.01, 0.05] {
            let mut path = Path::new(BitsPerSec::mbps(100), ms(10), 100_000);
            path.loss = loss;
            let o = Opts::new(cfg.clone(), CcaConfig::Cubic(CubicConfig::default()), 2_000_000, path);
            let r = run(o);
            eprintln!(
                "{name} loss {loss}: complete {:?} end {:?} stats {:?} rx {:?} drops {}",
                r.complete_at, r.end, r.tx.stats(), r.rx.stats(), r.drops
            );
            assert!(r.tx.is_complete() && r.rx.is_complete());
        }
    }
    let _ = NewRenoConfig::default();
}
