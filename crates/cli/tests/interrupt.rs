//! A command stopped by a signal leaves no unfinished output behind, and ends by that signal
//! (`dcsim_cli::interrupt`). The runs are the buffer study's storage traffic, whose queries
//! stream into a hidden `.qct.csv.tmp` from the run's start: each test waits until such a file
//! is there, so that it fails where the file would be left.
#![cfg(unix)]

use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn example(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(rel)
}

/// A running `dcsim`, killed outright if a test leaves it running.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `dcsim` with the three signals at their default actions, as a shell's foreground
/// command has them, whatever this test process inherited (a test run started in the
/// background of a script, or under `nohup`, has SIGINT or SIGHUP ignored, and so would
/// `dcsim`), and with `ignore` ignored.
fn start(args: &[&str], ignore: Option<libc::c_int>) -> Running {
    use std::os::unix::process::CommandExt as _;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dcsim"));
    cmd.args(args).stdout(Stdio::null()).stderr(Stdio::piped());
    // SAFETY: `signal` is async-signal-safe, as `pre_exec` requires.
    unsafe {
        cmd.pre_exec(move || {
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(sig, libc::SIG_DFL);
            }
            if let Some(sig) = ignore {
                libc::signal(sig, libc::SIG_IGN);
            }
            Ok(())
        });
    }
    Running(cmd.spawn().expect("dcsim starts"))
}

/// Every hidden file or folder under `dir`, at any depth.
fn hidden(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return found };
    for e in entries.flatten() {
        let p = e.path();
        if e.file_name().to_string_lossy().starts_with('.') {
            found.push(p.clone());
        }
        if p.is_dir() {
            found.extend(hidden(&p));
        }
    }
    found
}

/// Waits (up to two minutes) until `n` hidden temporary outputs are under `dir`.
fn wait_for_temporaries(run: &mut Running, dir: &Path, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while hidden(dir).len() < n {
        assert!(run.0.try_wait().unwrap().is_none(), "dcsim ended before writing anything");
        assert!(Instant::now() < deadline, "no temporary output under {}", dir.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts a `dcsim run` of the storage traffic into `out` (with `ignore` ignored) and waits
/// until its query file streams.
fn start_storage_run(out: &Path, ignore: Option<libc::c_int>) -> Running {
    let scenario = example("examples/buffer/storage80-base.toml");
    let args = ["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"];
    let mut run = start(&args, ignore);
    wait_for_temporaries(&mut run, out, 1);
    run
}

/// Sends `sig` and waits (up to a minute: a process the signal does not end fails the test,
/// and is killed) for the process to end; its exit status and standard error.
fn stop(mut run: Running, sig: libc::c_int) -> (std::process::ExitStatus, String) {
    // SAFETY: a plain system call on our own child's id.
    assert_eq!(unsafe { libc::kill(run.0.id() as libc::pid_t, sig) }, 0);
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = run.0.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "signal {sig} did not end the process");
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(run.0.stderr.as_mut().unwrap(), &mut err).unwrap();
    (status, err)
}

#[test]
fn a_run_stopped_by_a_signal_leaves_no_temporary_output_and_ends_by_it() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let run = start_storage_run(&out, None);
        let (status, err) = stop(run, sig);
        assert_eq!(status.signal(), Some(sig), "ended by the signal: {status:?} {err}");
        assert!(err.contains("removed 1 unfinished output"), "{err}");
        assert_eq!(hidden(&out), Vec::<PathBuf>::new(), "signal {sig}");
        // The output folder, made by the run and now empty, goes too.
        assert!(!out.exists(), "signal {sig}: {:?}", std::fs::read_dir(&out).map(Iterator::count));
        assert!(dir.path().exists());
    }
}

/// An output folder that was there before the run stays, empty or not.
#[test]
fn a_run_stopped_by_a_signal_keeps_an_output_folder_it_did_not_make() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let run = start_storage_run(&out, None);
    let (status, err) = stop(run, libc::SIGINT);
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?} {err}");
    assert!(out.is_dir());
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
}

/// A sweep runs its cells in threads: the streaming files of both running cells go.
#[test]
fn a_sweep_stopped_by_a_signal_leaves_no_temporary_output_in_any_cell() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let manifest = example("examples/buffer/storage80.toml");
    let mut run = start(
        &["sweep", manifest.to_str().unwrap(), "--out", out.to_str().unwrap(), "--jobs", "2"],
        None,
    );
    wait_for_temporaries(&mut run, &out, 2);
    let (status, err) = stop(run, libc::SIGTERM);
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?} {err}");
    assert!(err.contains("removed 2 unfinished outputs"), "{err}");
    assert_eq!(hidden(&out), Vec::<PathBuf>::new());
    // No cell had finished: the cells' folders, and the sweep's, made by it and now empty,
    // go too (a finished cell's folder would stay, for `--resume`).
    assert!(!out.exists());
}

/// A signal the command was started with ignored (`nohup`'s SIGHUP) stays ignored: the run
/// goes on, and another signal still stops it cleanly.
#[test]
fn a_signal_ignored_at_the_start_stays_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut run = start_storage_run(&out, Some(libc::SIGHUP));
    // SAFETY: as in `stop`.
    assert_eq!(unsafe { libc::kill(run.0.id() as libc::pid_t, libc::SIGHUP) }, 0);
    std::thread::sleep(Duration::from_millis(500));
    assert!(run.0.try_wait().unwrap().is_none(), "SIGHUP, ignored, ended the run");
    assert!(!hidden(&out).is_empty());
    let (status, _) = stop(run, libc::SIGINT);
    assert_eq!(status.signal(), Some(libc::SIGINT));
    assert_eq!(hidden(&out), Vec::<PathBuf>::new());
}
