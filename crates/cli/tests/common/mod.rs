//! Test support shared by the end-to-end test files: a temporary working directory and helpers
//! that run the `dcsim` binary in it.
#![allow(dead_code)] // each test file uses a different subset

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};

use tempfile::TempDir;

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
