//! The multi-threaded window loop: one scoped thread per group of shards, in lockstep.
//!
//! Each step: every thread ingests the packets other shards sent it, publishes the time of its
//! next event, and waits at a barrier; all threads then compute the same window end
//! (`min + lookahead`) and process their shards' events before it, hand packets for other
//! shards over, and wait at the barrier again. Packets travel through one mailbox per
//! (sender, receiver) pair of shards without being copied: the sender swaps its full outbox
//! for the mailbox's empty vector, and the receiver drains the mailbox in place, so both
//! vectors keep their capacity from window to window. The barrier spins briefly
//! (windows are short) and then yields. Scoped OS threads rather than a work-stealing pool:
//! the threads must all be running at once to meet at the barrier.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use std::time::Instant;

use crate::cc::CcFactory;
use crate::engine::{Crossing, Shard, Shared};
use crate::event::EventQueue;
use crate::results::ParallelStats;
use crate::units::{Duration, Time};

/// A reusable barrier for a fixed number of threads that spins, then yields.
struct Barrier {
    n: usize,
    count: AtomicUsize,
    generation: AtomicUsize,
}

impl Barrier {
    fn new(n: usize) -> Barrier {
        Barrier { n, count: AtomicUsize::new(0), generation: AtomicUsize::new(0) }
    }

    fn wait(&self) {
        let gen = self.generation.load(Ordering::Acquire);
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.count.store(0, Ordering::Relaxed);
            self.generation.store(gen.wrapping_add(1), Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == gen {
            if spins < 20_000 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// Runs `shards` to `stop` on `threads` threads (shard `i` on thread `i % threads`), adding
/// the windows' events and the threads' barrier waits to `stats`.
pub(crate) fn run<F: CcFactory>(
    shards: &mut [Shard<F>],
    sh: &Shared<F>,
    threads: usize,
    lookahead: Duration,
    stop: Time,
    stats: &mut ParallelStats,
) {
    let threads = threads.min(shards.len()).max(1);
    let n = shards.len();
    // Each shard's events in the last window: written after a window, read by thread 0
    // between the next step's two barriers (no thread writes them then).
    let window: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    // mailboxes[from * n + to]: packets shard `from` sent to shard `to` in the last window.
    let mailboxes: Vec<Mutex<Vec<Crossing>>> = (0..n * n).map(|_| Mutex::new(Vec::new())).collect();
    let next: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(u64::MAX)).collect();
    let barrier = Barrier::new(threads);
    let mut groups: Vec<Vec<&mut Shard<F>>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, s) in shards.iter_mut().enumerate() {
        groups[i % threads].push(s);
    }
    std::thread::scope(|scope| {
        let (mailboxes, next, barrier, window) = (&mailboxes, &next, &barrier, &window);
        let mut handles = Vec::new();
        for (t, mut group) in groups.into_iter().enumerate() {
            let mut work = move || {
                // What this thread counts (thread 0 also the windows), and its time at the
                // barriers.
                let mut acc = ParallelStats::default();
                let mut ran = false;
                let mut events = vec![0u64; if t == 0 { n } else { 0 }];
                let mut wait = std::time::Duration::ZERO;
                let mut sent = 0u64;
                let mut meet = || {
                    let w = Instant::now();
                    barrier.wait();
                    wait += w.elapsed();
                };
                loop {
                    // Take in what other shards sent during the previous window.
                    let mut earliest = u64::MAX;
                    for s in group.iter_mut() {
                        let to = s.id as usize;
                        for from in (0..n).filter(|&from| from != to) {
                            let mut mailbox = mailboxes[from * n + to].lock().expect("mailbox");
                            for c in mailbox.drain(..) {
                                s.ingest(c);
                            }
                        }
                        if let Some(at) = s.queue.peek_time() {
                            earliest = earliest.min(at.0);
                        }
                    }
                    next[t].store(earliest, Ordering::Release);
                    meet();
                    let min =
                        next.iter().map(|a| a.load(Ordering::Acquire)).min().expect("threads");
                    if t == 0 && ran {
                        for (e, w) in events.iter_mut().zip(window) {
                            *e = w.load(Ordering::Acquire);
                        }
                        acc.window(&events, threads);
                    }
                    // Everyone has read `next` (and thread 0 `window`) before anyone overwrites
                    // it in the next step.
                    meet();
                    if min == u64::MAX || Time(min) > stop {
                        break;
                    }
                    ran = true;
                    let end = Time(min) + lookahead;
                    for s in group.iter_mut() {
                        let before = s.counters.events;
                        s.run_window(sh, end, stop);
                        window[s.id as usize].store(s.counters.events - before, Ordering::Release);
                        let from = s.id as usize;
                        for (to, out) in s.outbox.iter_mut().enumerate() {
                            if !out.is_empty() {
                                sent += out.len() as u64;
                                // The receiver emptied the mailbox before this window began.
                                let mut mailbox = mailboxes[from * n + to].lock().expect("mailbox");
                                debug_assert!(mailbox.is_empty());
                                std::mem::swap(&mut *mailbox, out);
                            }
                        }
                    }
                    meet();
                }
                acc.crossings = sent;
                (acc, wait)
            };
            if t + 1 == threads {
                let last = work();
                handles_done(stats, last, &mut handles);
            } else {
                handles.push(scope.spawn(work));
            }
        }
    });
    // The loop ends only right after every thread took in its mailboxes, so none is left.
    debug_assert!(mailboxes.into_iter().all(|m| m.into_inner().expect("mailbox").is_empty()));
}

/// Joins the spawned threads and adds what every thread measured to `stats`: `last` is the
/// calling thread's (the last thread's) result, the handles are those of threads `0..`.
fn handles_done(
    stats: &mut ParallelStats,
    last: (ParallelStats, std::time::Duration),
    handles: &mut Vec<std::thread::ScopedJoinHandle<'_, (ParallelStats, std::time::Duration)>>,
) {
    let mut results: Vec<(ParallelStats, std::time::Duration)> =
        handles.drain(..).map(|h| h.join().expect("shard thread panicked")).collect();
    results.push(last);
    if stats.wait.len() < results.len() {
        stats.wait.resize(results.len(), std::time::Duration::ZERO);
    }
    for (t, (acc, wait)) in results.into_iter().enumerate() {
        stats.wait[t] += wait;
        stats.merge(&acc);
    }
}
