//! The multi-threaded window loop: threads that share out the shards window by window.
//!
//! Step `k`: every thread reads the same window end (`min + lookahead`, from the next event
//! times the shards published in step `k - 1`), then claims shards one at a time until each
//! has been claimed once in this step: its own shards first (shard `i` belongs to thread
//! `i % threads`, so a shard usually stays in one core's caches), then any other not yet
//! claimed, so that a thread whose shards were light this window takes work from one whose
//! shards were heavy. For a claimed shard the thread takes in the packets other shards sent it
//! in step `k - 1`, processes its events before the window end, hands the packets it sent over,
//! and publishes the time of its next event (the earlier of its queue's head and the packets it
//! just sent). One barrier ends the step.
//!
//! With rebalancing on ([`crate::Simulation::set_rebalance`]), a shard's owner is not fixed at
//! `i % threads`: every claimer times the shard's window and publishes it, every thread keeps
//! the same decaying average of each shard's time from those figures, and every `R` windows
//! each thread deals the shards out again (longest first, each to the least-loaded thread) and
//! keeps the new owners only if they lower the busiest thread's load by at least
//! [`REBALANCE_GAIN_PERCENT`]: a moved shard's state has to come to a new core's caches, so
//! owners should change only for a clear gain. All threads compute the same owners from the
//! same published figures; even if they did not, each shard would still run once per window.
//!
//! What a shard does in a window depends only on its own state and the packets sent to it, not
//! on which thread runs it or when, so the results are byte-identical whatever the claiming.
//! The published times, the per-shard event counts and the mailboxes are double-buffered by the
//! step's parity: what step `k` writes, step `k + 1` reads while writing the other half, and
//! step `k + 2` may overwrite it only after the barrier that every reader of step `k + 1` has
//! passed. Packets travel through one mailbox per (sender, receiver) pair and parity without
//! being copied: the sender swaps its full outbox for the mailbox's empty vector (a bit per
//! sender tells the receiver which mailboxes to look at), and the receiver drains the mailbox
//! in place, so both vectors keep their capacity. The barrier spins briefly (windows are
//! short) and then yields. Scoped OS threads rather than a work-stealing pool: the threads
//! must all be running at once to meet at the barrier.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use std::time::Instant;

use crate::affinity::{self, Pins};
use crate::cc::CcFactory;
use crate::engine::{Crossing, Shard, Shared};
use crate::partition::longest_first;
use crate::results::{ParallelStats, WindowTrace};
use crate::units::{Duration, Time};
use crossbeam_utils::CachePadded;

/// A reusable barrier for a fixed number of threads that spins, then yields.
///
/// The arrival count and the generation sit on cache lines of their own (`CachePadded`: a
/// 128-byte pair on x86-64, as Intel's spatial prefetcher fetches lines in pairs): each arriving
/// thread writes the count, while the threads already waiting spin reading the generation,
/// which then stays in their caches until the last arrival moves it on.
///
/// A thread that panics poisons the barrier ([`PoisonOnPanic`]): the threads waiting at it,
/// or arriving later, then panic too instead of waiting for it forever, so that a bug in a
/// shard ends the run with its message rather than hanging it.
struct Barrier {
    n: usize,
    count: CachePadded<AtomicUsize>,
    generation: CachePadded<AtomicUsize>,
    poisoned: AtomicBool,
}

/// Poisons `Barrier` when dropped while its thread unwinds from a panic.
struct PoisonOnPanic<'a>(&'a Barrier);

impl Drop for PoisonOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.poisoned.store(true, Ordering::Release);
        }
    }
}

impl Barrier {
    fn new(n: usize) -> Barrier {
        Barrier {
            n,
            count: CachePadded::new(AtomicUsize::new(0)),
            generation: CachePadded::new(AtomicUsize::new(0)),
            poisoned: AtomicBool::new(false),
        }
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
            if self.poisoned.load(Ordering::Acquire) {
                panic!("another shard thread panicked");
            }
            if spins < 20_000 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// What the threads share, each vector double-buffered by the step's parity (`[parity]`).
struct Exchange {
    n: usize,
    /// `next[parity][s]`: the time of shard `s`'s next event after its window, counting the
    /// packets it sent to other shards (`u64::MAX` for none).
    next: [Vec<AtomicU64>; 2],
    /// `events[parity][s]`: the events shard `s` processed in its window.
    events: [Vec<AtomicU64>; 2],
    /// `mail[parity][from * n + to]`: the packets shard `from` sent shard `to`.
    mail: [Vec<Mutex<Vec<Crossing>>>; 2],
    /// `senders[parity][to * words + from / 64]`, bit `from % 64`: mailbox `(from, to)` holds
    /// packets.
    senders: [Vec<AtomicU64>; 2],
    words: usize,
    /// The last step in which each shard was claimed.
    claimed: Vec<AtomicU64>,
    /// `took[parity][s]`: the wall-clock nanoseconds shard `s`'s window took (written only
    /// when rebalancing).
    took: [Vec<AtomicU64>; 2],
}

impl Exchange {
    fn new(n: usize) -> Exchange {
        let atomics = |len: usize, v: u64| (0..len).map(|_| AtomicU64::new(v)).collect::<Vec<_>>();
        let mail = || (0..n * n).map(|_| Mutex::new(Vec::new())).collect::<Vec<_>>();
        let words = n.div_ceil(64);
        Exchange {
            n,
            next: [atomics(n, u64::MAX), atomics(n, u64::MAX)],
            events: [atomics(n, 0), atomics(n, 0)],
            mail: [mail(), mail()],
            senders: [atomics(n * words, 0), atomics(n * words, 0)],
            words,
            claimed: atomics(n, u64::MAX),
            took: [atomics(n, 0), atomics(n, 0)],
        }
    }

    /// Runs shard `s`'s window of step `step` (ending at `end`): takes in what other shards
    /// sent it in the previous step, processes its events, hands over what it sent, and
    /// publishes its next event time and event count. Returns the packets it sent.
    fn run_shard<F: CcFactory>(
        &self,
        shard: &mut Shard<F>,
        sh: &Shared<F>,
        step: u64,
        end: Time,
        stop: Time,
    ) -> (u64, u64) {
        let (n, s) = (self.n, shard.id as usize);
        let mut taken_in = 0u64;
        let (cur, prev) = ((step & 1) as usize, ((step & 1) ^ 1) as usize);
        for w in 0..self.words {
            let mut bits = self.senders[prev][s * self.words + w].swap(0, Ordering::AcqRel);
            while bits != 0 {
                let from = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let mut mailbox = self.mail[prev][from * n + s].lock().expect("mailbox");
                taken_in += mailbox.len() as u64;
                for c in mailbox.iter() {
                    shard.ingest(c);
                }
                mailbox.clear();
            }
        }
        let before = shard.counters.events;
        shard.run_window(sh, end, stop);
        self.events[cur][s].store(shard.counters.events - before, Ordering::Release);
        let mut earliest = shard.queue.peek_time().map_or(u64::MAX, |t| t.0);
        let mut sent = 0u64;
        for (to, out) in shard.outbox.iter_mut().enumerate() {
            if out.is_empty() {
                continue;
            }
            sent += out.len() as u64;
            earliest = out.iter().map(|c| c.at.0).fold(earliest, u64::min);
            // The receiver emptied this mailbox in the previous step, before the barrier.
            let mut mailbox = self.mail[cur][s * n + to].lock().expect("mailbox");
            debug_assert!(mailbox.is_empty());
            std::mem::swap(&mut *mailbox, out);
            self.senders[cur][to * self.words + s / 64].fetch_or(1 << (s % 64), Ordering::AcqRel);
        }
        self.next[cur][s].store(earliest, Ordering::Release);
        (sent, taken_in)
    }
}

/// The least gain in the busiest thread's load, in per cent of it, for which rebalancing gives
/// shards new owners.
pub const REBALANCE_GAIN_PERCENT: u64 = 10;

/// The shards' owners when rebalancing (the module's comment): the same on every thread.
///
/// Kept by the [`crate::Simulation`] from one [`run`] to the next, so that a run stepped with
/// `run_until` (as `dcsim run` steps one to report its progress) deals every `every` windows
/// of the whole run, from averages that span the steps, as an unstepped run does (whose
/// windows are the same but for those cut at the steps' ends).
#[derive(Clone, Debug)]
pub(crate) struct Owners {
    /// Windows between deals (> 0); also the average's decay, `1 / every` per window.
    every: u64,
    /// The threads the shards are dealt to.
    threads: usize,
    /// `owner[s]`: the thread that claims shard `s` first.
    owner: Vec<usize>,
    /// A decaying sum of each shard's window times, ns (about `every` windows' worth).
    avg: Vec<u64>,
    /// The windows whose times have been added, over every run.
    pub(crate) seen: u64,
}

impl Owners {
    pub(crate) fn new(n: usize, threads: usize, every: u64) -> Owners {
        let owner = (0..n).map(|s| s % threads).collect();
        Owners { every, threads, owner, avg: vec![0; n], seen: 0 }
    }

    /// Whether these owners are for `n` shards on `threads` threads, dealt every `every`
    /// windows.
    pub(crate) fn fits(&self, n: usize, threads: usize, every: u64) -> bool {
        (self.owner.len(), self.threads, self.every) == (n, threads, every)
    }

    /// Adds one window's times; every `every` windows, if `deal` (no deal after a run's last
    /// window: nothing would run on the new owners), deals the shards out again if that gains
    /// enough. Returns the number of shards that changed owner.
    fn window(&mut self, took: impl Iterator<Item = u64>, deal: bool) -> usize {
        for (a, t) in self.avg.iter_mut().zip(took) {
            *a = *a - *a / self.every + t;
        }
        self.seen += 1;
        if !deal || !self.seen.is_multiple_of(self.every) {
            return 0;
        }
        let threads = self.threads;
        let dealt = longest_first(&self.avg, threads, Some(&self.owner));
        let (now, then) =
            (busiest(&self.owner, &self.avg, threads), busiest(&dealt, &self.avg, threads));
        if u128::from(then) * 100 > u128::from(now) * u128::from(100 - REBALANCE_GAIN_PERCENT) {
            return 0;
        }
        let moved = self.owner.iter().zip(&dealt).filter(|(a, b)| a != b).count();
        self.owner = dealt;
        moved
    }

    /// Thread `t`'s claiming order: its own shards, then the others from the shard after `t` on.
    fn order(&self, t: usize) -> Vec<usize> {
        let n = self.owner.len();
        let own = (0..n).filter(|&s| self.owner[s] == t);
        own.chain((1..=n).map(|i| (t + i) % n).filter(|&s| self.owner[s] != t)).collect()
    }
}

/// The largest load of a thread under `owner`.
fn busiest(owner: &[usize], load: &[u64], threads: usize) -> u64 {
    let mut total = vec![0u64; threads];
    for (&t, &l) in owner.iter().zip(load) {
        total[t] += l;
    }
    total.into_iter().max().unwrap_or(0)
}

/// Runs `shards` to `stop` on `threads` threads that share the shards out window by window
/// (see the module's comment), adding the windows' events and the threads' barrier waits to
/// `stats`. `rebalance` > 0 deals the owners out by measured time every that many windows,
/// carrying on from `owners` (the previous run's, if it was of these shards, threads and
/// `rebalance`) and leaving them there for the next. `pins`, if on, binds each thread to a
/// CPU of its own for the run ([`crate::affinity`]), the calling thread's CPUs given back
/// after it (also if a thread panics).
///
/// Where the system refuses to start a thread, the run goes on with those that started (and
/// the calling thread), and `stats.refused` says so: the threads wait at a gate until all have
/// started, so none has touched a shard when the others are called off.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run<F: CcFactory>(
    shards: &mut [Shard<F>],
    sh: &Shared<F>,
    threads: usize,
    lookahead: Duration,
    stop: Time,
    rebalance: u64,
    pins: &mut Pins,
    owners: &mut Option<Owners>,
    stats: &mut ParallelStats,
    mut refuse: Option<usize>,
) {
    let asked = threads.min(shards.len()).max(1);
    let mut threads = asked;
    stats.refused = None;
    while let Err((started, e)) =
        run_on(shards, sh, threads, lookahead, stop, rebalance, pins, owners, stats, refuse.take())
    {
        // `started` threads began before the refusal; with the calling thread they run it.
        threads = started + 1;
        stats.refused = Some((asked, threads, e.to_string()));
    }
}

/// [`run`] on exactly `threads` threads, or `Err` with the threads that had started and the
/// system's error when it refused to start another (nothing run then). `refuse`: a thread
/// whose start fails as if the system had refused it (for tests).
#[allow(clippy::too_many_arguments)]
fn run_on<F: CcFactory>(
    shards: &mut [Shard<F>],
    sh: &Shared<F>,
    threads: usize,
    lookahead: Duration,
    stop: Time,
    rebalance: u64,
    pins: &mut Pins,
    owners: &mut Option<Owners>,
    stats: &mut ParallelStats,
    refuse: Option<usize>,
) -> Result<(), (usize, std::io::Error)> {
    // The calling thread's CPUs, given back when `saved` drops (at the end, or as a panic
    // unwinds this frame), and each thread's CPU.
    let (saved, cpus) = pins.plan(threads).unzip();
    // The threads the system let bind themselves (all of them, or the CPUs go unreported).
    let bound = AtomicUsize::new(0);
    let n = shards.len();
    if rebalance == 0 {
        *owners = None; // a record of an earlier setting is not carried past a run without
    }
    let start = match owners {
        Some(o) if o.fits(n, threads, rebalance) => o.clone(),
        _ => Owners::new(n, threads, rebalance.max(1)),
    };
    let ex = Exchange::new(n);
    // Step 0 reads what "step -1" (parity 1) published: the queues as they are.
    for (s, shard) in shards.iter_mut().enumerate() {
        debug_assert!(shard.outbox.iter().all(Vec::is_empty));
        ex.next[1][s].store(shard.queue.peek_time().map_or(u64::MAX, |t| t.0), Ordering::Relaxed);
    }
    // The trace's time origin, if the windows are traced.
    let origin = stats.trace.as_mut().map(|t| t.origin());
    let cells: Vec<Mutex<&mut Shard<F>>> = shards.iter_mut().map(Mutex::new).collect();
    let barrier = Barrier::new(threads);
    // 0 while threads are being started, then 1 (go) or 2 (a thread was refused: stop).
    let gate = AtomicUsize::new(0);
    let mut refused = None;
    std::thread::scope(|scope| {
        let (ex, cells, barrier, start, cpus, bound, gate) =
            (&ex, &cells, &barrier, &start, &cpus, &bound, &gate);
        let mut handles = Vec::new();
        for t in 0..threads {
            let work = move || {
                loop {
                    match gate.load(Ordering::Acquire) {
                        0 => std::thread::yield_now(),
                        1 => break,
                        _ => return None,
                    }
                }
                let _poison = PoisonOnPanic(barrier);
                if cpus.as_ref().is_some_and(|cpus| affinity::pin(cpus[t])) {
                    bound.fetch_add(1, Ordering::Relaxed);
                }
                // What this thread counts (thread 0 also the windows), and its time at the
                // barrier.
                let mut acc = ParallelStats::default();
                acc.trace = origin.map(WindowTrace::from);
                let mut counts = vec![0u64; if t == 0 { n } else { 0 }];
                let mut wait = std::time::Duration::ZERO;
                let mut sent = 0u64;
                // Own shards first, then the others from the next thread's on.
                let mut owners = start.clone();
                let mut order = owners.order(t);
                let mut step = 0u64;
                loop {
                    let prev = ((step & 1) ^ 1) as usize;
                    let min = ex.next[prev].iter().map(|a| a.load(Ordering::Acquire)).min();
                    let min = min.expect("shards");
                    if t == 0 && step > 0 {
                        for (c, e) in counts.iter_mut().zip(&ex.events[prev]) {
                            *c = e.load(Ordering::Acquire);
                        }
                        acc.window(&counts, threads);
                    }
                    let over = min == u64::MAX || Time(min) > stop;
                    // Every window's times count, the last one's too (as in `acc`, and for the
                    // next run of a stepped one), but no deal follows the last.
                    if rebalance > 0 && step > 0 {
                        let took = ex.took[prev].iter().map(|a| a.load(Ordering::Acquire));
                        let moved = owners.window(took, !over);
                        if moved > 0 {
                            order = owners.order(t);
                            if t == 0 {
                                acc.redeals += 1;
                                acc.moves += moved as u64;
                            }
                        }
                    }
                    if over {
                        break;
                    }
                    let end = Time(min) + lookahead;
                    for &s in &order {
                        // Taken already (read first: a thread that finds every shard taken
                        // then writes none of the flags, which all threads share).
                        if ex.claimed[s].load(Ordering::Relaxed) == step
                            || ex.claimed[s].swap(step, Ordering::AcqRel) == step
                        {
                            continue; // another thread has it
                        }
                        let began = (origin.is_some() || rebalance > 0).then(Instant::now);
                        let mut shard = cells[s].lock().expect("shard");
                        let events = shard.counters.events;
                        let (out, taken_in) = ex.run_shard(&mut shard, sh, step, end, stop);
                        sent += out;
                        if let (Some(began), true) = (began, rebalance > 0) {
                            let took = began.elapsed().as_nanos().min(u128::from(u32::MAX));
                            let cur = (step & 1) as usize;
                            ex.took[cur][s].store(took as u64, Ordering::Release);
                        }
                        if let (Some(began), Some(trace)) = (began, acc.trace.as_mut()) {
                            let events = shard.counters.events - events;
                            trace.shard_ran(end, s, t, began, events, taken_in);
                        }
                    }
                    let w = Instant::now();
                    barrier.wait();
                    let waited = w.elapsed();
                    wait += waited;
                    if let Some(trace) = acc.trace.as_mut() {
                        trace.barrier_passed(end, t, w, waited);
                    }
                    step += 1;
                }
                acc.crossings = sent;
                Some((acc, wait, owners))
            };
            if t + 1 == threads {
                gate.store(1, Ordering::Release);
                let (acc, wait, last) = work().expect("the gate is open");
                handles_done(stats, (acc, wait), &mut handles);
                if rebalance > 0 {
                    *owners = Some(last);
                }
            } else {
                let spawned = if refuse == Some(t) {
                    Err(std::io::Error::other("refused for a test"))
                } else {
                    std::thread::Builder::new().spawn_scoped(scope, work)
                };
                match spawned {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        // The started threads leave at the gate, and the scope joins them.
                        gate.store(2, Ordering::Release);
                        refused = Some((t, e));
                        break;
                    }
                }
            }
        }
    });
    if let Some(r) = refused {
        return Err(r);
    }
    drop(saved);
    stats.pinned = cpus.filter(|_| bound.into_inner() == threads).unwrap_or_default();
    // The last step's packets (due after `stop`, or the run is over) wait in the mailboxes of
    // one parity: hand them to their shards, as the next step would have.
    let mut shards: Vec<&mut Shard<F>> =
        cells.into_iter().map(|c| c.into_inner().expect("shard")).collect();
    for mail in ex.mail {
        for (i, mailbox) in mail.into_iter().enumerate() {
            for c in &mailbox.into_inner().expect("mailbox") {
                shards[i % n].ingest(c);
            }
        }
    }
    Ok(())
}

/// What a thread measured, its barrier wait and its view of the owners at the end.
type ThreadResult = (ParallelStats, std::time::Duration, Owners);

/// Joins the spawned threads and adds what every thread measured to `stats`: `last` is the
/// calling thread's (the last thread's) result, the handles are those of threads `0..`.
fn handles_done(
    stats: &mut ParallelStats,
    last: (ParallelStats, std::time::Duration),
    handles: &mut Vec<std::thread::ScopedJoinHandle<'_, Option<ThreadResult>>>,
) {
    let mut results: Vec<(ParallelStats, std::time::Duration)> = handles
        .drain(..)
        .map(|h| h.join().expect("shard thread panicked").expect("the gate was open"))
        .map(|(acc, wait, _)| (acc, wait))
        .collect();
    results.push(last);
    if stats.wait.len() < results.len() {
        stats.wait.resize(results.len(), std::time::Duration::ZERO);
    }
    for (t, (acc, wait)) in results.into_iter().enumerate() {
        stats.wait[t] += wait;
        stats.merge(&acc);
    }
}

#[cfg(test)]
mod tests {
    use super::{busiest, Barrier, Owners, PoisonOnPanic, REBALANCE_GAIN_PERCENT};
    use crate::partition::longest_first;

    fn deal(load: &[u64], threads: usize, now: &[usize]) -> Vec<usize> {
        longest_first(load, threads, Some(now))
    }

    /// Longest first, each to the least-loaded thread (ties to the lower index): 5 and 4 go
    /// to threads 0 and 1, 3 to thread 1 (4 < 5), 2 to thread 0 (5 < 7), 1 to thread 0 (7 = 7).
    #[test]
    fn deal_gives_the_longest_shard_to_the_least_loaded_thread() {
        let load = [5, 1, 4, 2, 3];
        let owner = deal(&load, 2, &[0; 5]);
        assert_eq!(owner, [0, 0, 1, 0, 1]);
        assert_eq!(busiest(&owner, &load, 2), 8);
        // A tie goes to the shard's owner: 1 stays on thread 1 (7 = 7 after 5, 4, 3 and 2).
        assert_eq!(deal(&load, 2, &[0, 1, 1, 0, 1]), [0, 1, 1, 0, 1]);
        // More threads than shards: one each (on its owner), the rest idle.
        assert_eq!(deal(&[7, 9], 4, &[0, 1]), [0, 1]);
        assert_eq!(deal(&[7, 9], 4, &[2, 2]), [0, 2]);
    }

    /// Owners change only on a deal window (every `every`th window seen), and only when the
    /// deal lowers the busiest thread's load by at least `REBALANCE_GAIN_PERCENT`; the
    /// claiming order is own shards first (by index), then the others from the next shard on.
    #[test]
    fn owners_change_on_deal_steps_for_a_clear_gain_only() {
        // Four shards on two threads, dealt every second window, i % 2 at first.
        let mut o = Owners::new(4, 2, 2);
        assert_eq!(o.order(0), [0, 2, 1, 3]);
        assert_eq!(o.order(1), [1, 3, 2, 0]);
        // The first window is no deal window, even with a lopsided load.
        assert_eq!(o.window([100, 0, 100, 0].into_iter(), true), 0);
        assert_eq!(o.owner, [0, 1, 0, 1]);
        // The second: averages [150, 0, 150, 0] (halved, then this window's 100 and 0 added);
        // i % 2 puts 300 on thread 0, a deal 150 on each: shard 2 moves to thread 1, and the
        // idle shards 1 and 3 stay where they were.
        assert_eq!(o.window([100, 0, 100, 0].into_iter(), true), 1);
        assert_eq!(o.avg, [150, 0, 150, 0]);
        assert_eq!(o.owner, [0, 1, 1, 1]);
        assert_eq!(o.order(1), [1, 2, 3, 0]);
        // A gain below the threshold: 1200 + 1000 against 1000 + 900, which a deal would
        // split 2100 / 2000 (4.5% off the busiest thread: no gain worth a move).
        const { assert!(2100 * 100 > 2200 * (100 - REBALANCE_GAIN_PERCENT)) };
        let mut o = Owners::new(4, 2, 1);
        o.owner = vec![0, 0, 1, 1];
        assert_eq!(o.window([1200, 1000, 1000, 900].into_iter(), true), 0);
        assert_eq!(o.owner, [0, 0, 1, 1]);
        // 3000 against 1000 is: the deal moves shard 1, for 2000 on each thread.
        assert_eq!(o.window([2000, 1000, 500, 500].into_iter(), true), 1);
        assert_eq!(o.owner, [0, 1, 1, 1]);
        assert_eq!(busiest(&o.owner, &o.avg, 2), 2000);
        // No deal after a run's last window, though its times count.
        let mut o = Owners::new(4, 2, 1);
        o.owner = vec![0, 0, 1, 1];
        assert_eq!(o.window([2000, 1000, 500, 500].into_iter(), false), 0);
        assert_eq!((o.owner.as_slice(), o.seen, o.avg[0]), (&[0, 0, 1, 1][..], 1, 2000));
    }

    /// Three threads pass the barrier together many times; when one of them then panics, the
    /// other two, waiting for it, panic too instead of waiting forever, and the scope ends.
    #[test]
    fn a_panicking_thread_releases_the_others_by_panicking_them() {
        let barrier = Barrier::new(3);
        let passed = std::sync::atomic::AtomicUsize::new(0);
        let outcomes: Vec<bool> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..3)
                .map(|t| {
                    let (barrier, passed) = (&barrier, &passed);
                    scope.spawn(move || {
                        let _poison = PoisonOnPanic(barrier);
                        for _ in 0..1000 {
                            barrier.wait();
                            passed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                        if t == 1 {
                            panic!("a bug in shard thread 1");
                        }
                        barrier.wait();
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().is_err()).collect()
        });
        assert_eq!(passed.into_inner(), 3000);
        assert_eq!(outcomes, [true, true, true], "every thread ended by a panic");
    }
}
