//! Test support shared by the end-to-end test files: a temporary working directory and helpers
//! that run the `dcsim` binary in it.
#![allow(dead_code)] // each test file uses a different subset

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};

use tempfile::TempDir;

pub mod cpus;

/// A temporary directory to run `dcsim` in.
pub struct Case {
    dir: TempDir,
}

impl Case {
    pub fn new() -> Case {
        Case { dir: tempfile::tempdir().expect("tempdir") }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        if let Some(d) = p.parent() {
            fs::create_dir_all(d).expect("mkdir");
        }
        fs::write(&p, text).expect("write test file");
        p
    }

    pub fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_dcsim"))
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .expect("run dcsim")
    }

    pub fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "dcsim {args:?}: {stderr}");
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Runs a command that must fail with status 2 and leave `outputs` absent; returns stderr.
    pub fn fails(&self, args: &[&str], outputs: &[&str]) -> String {
        let o = self.run(args);
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "dcsim {args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{stderr}");
        assert!(o.stdout.is_empty(), "dcsim {args:?} printed {:?}", o.stdout);
        for out in outputs {
            assert!(!self.path(out).exists(), "{out} was written despite the error: {stderr}");
        }
        stderr
    }
}

/// A reference-style config next to its topology and flow files.
pub const NS3_CONFIG: &str = "ENABLE_QCN 1
USE_DYNAMIC_PFC_THRESHOLD 1
PACKET_PAYLOAD_SIZE 1000
TOPOLOGY_FILE topo.txt
FLOW_FILE flow.txt
TRACE_FILE trace.txt
TRACE_OUTPUT_FILE mix.tr
FCT_OUTPUT_FILE fct.txt
PFC_OUTPUT_FILE pfc.txt
SIMULATOR_STOP_TIME 2.01
CC_MODE 1
ALPHA_RESUME_INTERVAL 1
RATE_DECREASE_INTERVAL 4
CLAMP_TARGET_RATE 0
RP_TIMER 300.7
EWMA_GAIN 0.00390625
FAST_RECOVERY_TIMES 1
RATE_AI 20Mb/s
RATE_HAI 200Mb/s
MIN_RATE 1000Mb/s
DCTCP_RATE_AI 1000Mb/s
ERROR_RATE_PER_LINK 0.0000
L2_CHUNK_SIZE 4000
L2_ACK_INTERVAL 1
L2_BACK_TO_ZERO 0
HAS_WIN 0
GLOBAL_T 1
VAR_WIN 0
FAST_REACT 0
U_TARGET 0.95
MI_THRESH 0
INT_MULTI 1
MULTI_RATE 0
SAMPLE_FEEDBACK 0
PINT_LOG_BASE 1.05
PINT_PROB 1.0
RATE_BOUND 1
ACK_HIGH_PRIO 1
LINK_DOWN 0 0 0
ENABLE_TRACE 0
KMAX_MAP 1 100000000000 1600
KMIN_MAP 1 100000000000 400
PMAX_MAP 1 100000000000 0.20
BUFFER_SIZE 32
QLEN_MON_FILE qlen.txt
QLEN_MON_START 2000000000
QLEN_MON_END 3000000000
";

/// Resets this process's peak resident memory to its current size (Linux: "5" into
/// `/proc/self/clear_refs`), so that [`peak_memory_mib`] tells what one case took, and a case
/// that fails on memory shrinks to its cause: without it the peak stays at its highest over all
/// earlier cases, and a CI run failed with "peak memory 8866 MiB" and a shrunk input of "".
/// Best effort: where the file is absent or not writable the peak is the process's.
pub fn reset_peak_memory() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident memory of this process (Linux `VmHWM`), MiB.
pub fn peak_memory_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<f64>().ok()? / 1024.0)
}

/// The property tests' configuration: `cases` cases unless `PROPTEST_CASES=N` asks for a longer
/// search, at most `shrink` shrinking steps, and no failure files (a failing case is printed).
pub fn proptest_config(cases: u32, shrink: u32) -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(cases),
        max_shrink_iters: shrink,
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    }
}
