mod common;
use common::*;
use dcsim_tcp::cca::{Cca, CcaConfig, DctcpConfig};
use dcsim_tcp::{EcnMode, TcpConfig};
use dcsim_types::BitsPerSec;
#[test]
fn dbg() {
    let cfg = TcpConfig { ecn: EcnMode::Accurate, ..TcpConfig::linux() };
    let frame = u64::from(cfg.mss + cfg.header_bytes);
    let mut path = Path::new(BitsPerSec::gbps(10), us(200), 0);
    path.buffer = 20 * path.bdp();
    let k = 30 * frame;
    path.mark_threshold = Some(k);
    let mut o = Opts::new(cfg, CcaConfig::Dctcp(DctcpConfig::default()), u64::MAX / 2, path);
    o.until = at_ms(150);
    let r = run(o);
    let Cca::Dctcp(d) = r.tx.cca() else { panic!() };
    let w = (r.tx.cwnd()) as f64/1448.0; eprintln!("w* {} expect {}", w, (2.0/(r.cfg.mss as f64 * 0.0 + 195.0)).sqrt());
    eprintln!("alpha {} marks {} segs {} frac {}", d.alpha(), r.marks, r.tx.stats().segments, r.marks as f64 / r.tx.stats().segments as f64);
    let mut last = dcsim_tcp::cca::CaState::Open;
    let mut n = 0;
    for a in r.acks.iter().filter(|a| a.t > at_ms(100)) {
        if a.state != last { n += 1; if n < 40 { eprint!("{:.3}:{}:{}:{:?} ", a.t.as_secs_f64()*1000.0, a.cwnd/1448, a.ssthresh/1448, a.state); } last = a.state; }
    }
    eprintln!();
}
