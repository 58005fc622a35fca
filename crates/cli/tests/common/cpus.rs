//! The CPUs a test process may run on, read independently of the engine's own affinity code
//! (shared by `crates/cli/tests` through `common` and by the workspace's `tests/parallel.rs`
//! through a `#[path]` module).

/// How many CPUs this process's affinity allows (`Cpus_allowed_list` in /proc/self/status);
/// `None` off Linux or where it cannot be read.
pub fn allowed_cpus() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let list = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    let mut n = 0;
    for part in list.trim().split(',') {
        n += match part.split_once('-') {
            Some((a, b)) => (b.parse::<usize>().ok()? + 1).checked_sub(a.parse().ok()?)?,
            None => 1,
        };
    }
    Some(n)
}
