//! Pinning the parallel engine's threads to CPUs ([`crate::Simulation::set_pin_threads`]).
//!
//! Each worker thread of a parallel run binds itself to one CPU of those the process may use,
//! so that the operating system neither moves a thread (and the shard state in its caches) to
//! another CPU nor stacks two spinning workers on one. The CPUs are taken distinct cores first:
//! a CPU that is the second (third, …) hardware thread of its core comes after every core's
//! first, so that `T` threads on a machine with simultaneous multithreading use `T` cores while
//! there are that many. Only on Linux (`sched_setaffinity`); elsewhere nothing is pinned.
//! Pinning never changes a run's results, only where its threads run.

/// The order in which to hand CPUs to threads: `cpus` (the CPUs the thread may run on)
/// sorted by each one's rank among the hardware threads of its core (its position in its
/// sibling list, as `siblings` returns it; 0 where unknown), then by number.
fn spread(cpus: &[usize], siblings: impl Fn(usize) -> Option<String>) -> Vec<usize> {
    let mut ranked: Vec<(usize, usize)> = cpus
        .iter()
        .map(|&cpu| {
            let rank = siblings(cpu)
                .and_then(|list| parse_cpu_list(&list))
                .and_then(|list| list.iter().position(|&c| c == cpu))
                .unwrap_or(0);
            (rank, cpu)
        })
        .collect();
    ranked.sort_unstable();
    ranked.into_iter().map(|(_, cpu)| cpu).collect()
}

/// A kernel CPU list (`0-3,8,10-11`) as the CPUs it names, in its order; `None` if malformed.
fn parse_cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (a.trim().parse::<usize>().ok()?, b.trim().parse::<usize>().ok()?);
                // A list names at most the machine's CPUs: refuse a range no kernel writes.
                if b < a || b - a > 1 << 16 {
                    return None;
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.trim().parse().ok()?),
        }
    }
    Some(cpus)
}

/// Whether to pin a simulation's threads, and the CPU order worked out for the CPUs the
/// process may use (kept from run to run: a run stepped with `run_until` plans once).
#[derive(Clone, Debug, Default)]
pub(crate) struct Pins {
    /// Pin the threads ([`crate::Simulation::set_pin_threads`]).
    pub(crate) on: bool,
    /// The calling thread's CPUs when last planned, and those CPUs in [`spread`]'s order.
    order: Option<(Vec<usize>, Vec<usize>)>,
}

impl Pins {
    /// For a run of `threads` threads, if pinned: the calling thread's CPUs (given back when
    /// the [`Saved`] is dropped, after the run or as a panic unwinds it) and thread `t`'s CPU
    /// at `t`, distinct cores first. `None` where pinning is off, not possible here (not
    /// Linux, the calling thread's CPUs unknown), or the calling thread may use fewer CPUs
    /// than `threads` (two spinning workers on one CPU would wait on each other).
    pub(crate) fn plan(&mut self, threads: usize) -> Option<(Saved, Vec<usize>)> {
        if !self.on {
            return None;
        }
        let saved = Saved::take()?;
        if saved.0.len() < threads {
            return None;
        }
        let fresh = !matches!(&self.order, Some((allowed, _)) if *allowed == saved.0);
        if fresh {
            let siblings = |cpu: usize| {
                std::fs::read_to_string(format!(
                    "/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"
                ))
                .ok()
            };
            self.order = Some((saved.0.clone(), spread(&saved.0, siblings)));
        }
        let (_, order) = self.order.as_ref()?;
        Some((saved, order[..threads].to_vec()))
    }
}

/// The CPUs a thread may run on, given back to it when dropped.
#[derive(Debug)]
pub(crate) struct Saved(Vec<usize>);

impl Saved {
    /// The calling thread's CPUs; `None` where they cannot be read (or off Linux).
    pub(crate) fn take() -> Option<Saved> {
        imp::allowed().map(Saved)
    }
}

impl Drop for Saved {
    fn drop(&mut self) {
        imp::set(&self.0);
    }
}

/// Binds the calling thread to `cpu`; false if the system refused.
pub(crate) fn pin(cpu: usize) -> bool {
    imp::set(&[cpu])
}

#[cfg(target_os = "linux")]
mod imp {
    use std::mem::{size_of, zeroed};

    /// The CPUs a `cpu_set_t` can name: its size in bits (`CPU_SETSIZE` is smaller than the
    /// set on some C libraries).
    const SET_BITS: usize = 8 * size_of::<libc::cpu_set_t>();

    /// The CPUs the calling thread may run on.
    pub(super) fn allowed() -> Option<Vec<usize>> {
        // SAFETY: `cpu_set_t` is plain bits (all-zero is the empty set), and the kernel writes
        // at most `size_of::<cpu_set_t>()` bytes into it.
        let set = unsafe {
            let mut set: libc::cpu_set_t = zeroed();
            if libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set) != 0 {
                return None;
            }
            set
        };
        let cpus: Vec<usize> = (0..SET_BITS)
            // SAFETY: `cpu` is below the set's size in bits.
            .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
            .collect();
        (!cpus.is_empty()).then_some(cpus)
    }

    /// Lets the calling thread run on `cpus` only (those the set can name); false if the
    /// kernel refused (or none was given).
    pub(super) fn set(cpus: &[usize]) -> bool {
        let cpus: Vec<usize> = cpus.iter().copied().filter(|&c| c < SET_BITS).collect();
        if cpus.is_empty() {
            return false;
        }
        // SAFETY: as in `allowed`; every CPU set is below the set's size in bits.
        unsafe {
            let mut set: libc::cpu_set_t = zeroed();
            for &cpu in &cpus {
                libc::CPU_SET(cpu, &mut set);
            }
            libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set) == 0
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub(super) fn allowed() -> Option<Vec<usize>> {
        None
    }

    pub(super) fn set(_cpus: &[usize]) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_as_the_kernel_writes_them() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), Some(vec![0, 1, 2, 3, 8, 10, 11]));
        assert_eq!(parse_cpu_list("5"), Some(vec![5]));
        assert_eq!(parse_cpu_list("0,8"), Some(vec![0, 8]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("x"), None);
        assert_eq!(parse_cpu_list("0-99999999"), None);
    }

    #[test]
    fn distinct_cores_come_before_second_hardware_threads() {
        // Eight CPUs, four cores: CPU c and c + 4 are the two threads of one core.
        let siblings = |cpu: usize| Some(format!("{},{}", cpu % 4, cpu % 4 + 4));
        let all: Vec<usize> = (0..8).collect();
        assert_eq!(spread(&all, siblings), vec![0, 1, 2, 3, 4, 5, 6, 7]);
        // Siblings listed as neighbours (0-1, 2-3, ...): the even CPUs first.
        let pairs = |cpu: usize| Some(format!("{}-{}", cpu & !1, cpu | 1));
        assert_eq!(spread(&all, pairs), vec![0, 2, 4, 6, 1, 3, 5, 7]);
        // A subset, and CPUs whose topology is unknown (rank 0).
        assert_eq!(spread(&[1, 2, 3], pairs), vec![2, 1, 3]);
        assert_eq!(spread(&[3, 1, 2], |_| None), vec![1, 2, 3]);
    }

    #[test]
    fn a_pinned_thread_runs_where_it_was_put_and_gets_its_cpus_back() {
        let Some(before) = imp::allowed() else {
            return; // not Linux: nothing is pinned (the run goes on unpinned)
        };
        let cpu = *before.last().expect("a CPU");
        let expect = before.clone();
        let (pinned, after, unwound) = std::thread::spawn(move || {
            let saved = Saved::take().expect("the thread's CPUs");
            assert!(pin(cpu));
            let pinned = imp::allowed();
            drop(saved);
            let after = imp::allowed();
            // Given back as a panic unwinds too.
            let unwound = std::panic::catch_unwind(|| {
                let _saved = Saved::take().expect("the thread's CPUs");
                assert!(pin(cpu));
                panic!("a worker failed");
            });
            assert!(unwound.is_err());
            (pinned, after, imp::allowed())
        })
        .join()
        .expect("thread");
        assert_eq!(pinned, Some(vec![cpu]));
        assert_eq!(after.as_ref(), Some(&expect));
        assert_eq!(unwound, Some(expect.clone()));
        // More threads than CPUs: no plan; off: no plan; one thread: one CPU, planned once.
        let mut pins = Pins { on: true, order: None };
        assert!(pins.plan(expect.len() + 1).is_none());
        assert_eq!(pins.plan(1).map(|(_, p)| p.len()), Some(1));
        assert!(pins.order.as_ref().is_some_and(|(allowed, _)| *allowed == expect));
        assert!(Pins::default().plan(1).is_none());
    }
}
