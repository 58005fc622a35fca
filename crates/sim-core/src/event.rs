//! The event queue: a priority queue of events ordered by `(time, seq)`.
//!
//! `seq` breaks ties between events at the same time. The simulator builds it from the
//! scheduling node's own counter and the node id (see `sim.rs`), so that the order of
//! simultaneous events never depends on how nodes are grouped into partitions, and events a
//! node schedules for the same instant run in the order it scheduled them (FIFO).
//!
//! The structure sits behind [`EventQueue`] so it can be swapped by benchmark.

use crate::units::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A priority queue of `E` keyed by `(time, seq)`, smallest first. `(time, seq)` pairs pushed
/// must be unique.
pub trait EventQueue<E> {
    /// Inserts an event.
    fn push(&mut self, time: Time, seq: u64, ev: E);
    /// Removes and returns the smallest `(time, seq)` event.
    fn pop(&mut self) -> Option<(Time, u64, E)>;
    /// The time of the next event. (Takes `&mut self` so that lazily organised queues can
    /// settle their minimum.)
    fn peek_time(&mut self) -> Option<Time>;
    /// Number of queued events.
    fn len(&self) -> usize;
    /// Whether no event is queued.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

struct Entry<E> {
    key: u128,
    ev: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, o: &Self) -> Ordering {
        // BinaryHeap is a max-heap: invert.
        o.key.cmp(&self.key)
    }
}

#[inline]
fn key(time: Time, seq: u64) -> u128 {
    ((time.0 as u128) << 64) | seq as u128
}

/// The time part of a key.
#[inline]
fn time_of(key: u128) -> Time {
    Time((key >> 64) as u64)
}

impl<E: Copy> Clone for Entry<E> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<E: Copy> Copy for Entry<E> {}

impl<E> Entry<E> {
    /// `(time, seq, event)`, as `EventQueue::pop` returns it.
    #[inline]
    fn split(self) -> (Time, u64, E) {
        (time_of(self.key), self.key as u64, self.ev)
    }
}

/// [`EventQueue`] on the standard library's binary heap, with a single `u128` key compare.
pub struct BinaryHeapQueue<E> {
    heap: BinaryHeap<Entry<E>>,
}

impl<E> Default for BinaryHeapQueue<E> {
    fn default() -> Self {
        BinaryHeapQueue { heap: BinaryHeap::new() }
    }
}

impl<E> BinaryHeapQueue<E> {
    /// An empty queue with room for `n` events.
    pub fn with_capacity(n: usize) -> Self {
        BinaryHeapQueue { heap: BinaryHeap::with_capacity(n) }
    }

    /// The next event, without removing it.
    #[inline]
    pub fn peek_event(&self) -> Option<&E> {
        self.heap.peek().map(|e| &e.ev)
    }
}

impl<E> EventQueue<E> for BinaryHeapQueue<E> {
    #[inline]
    fn push(&mut self, time: Time, seq: u64, ev: E) {
        self.heap.push(Entry { key: key(time, seq), ev });
    }
    #[inline]
    fn pop(&mut self) -> Option<(Time, u64, E)> {
        self.heap.pop().map(Entry::split)
    }
    #[inline]
    fn peek_time(&mut self) -> Option<Time> {
        self.heap.peek().map(|e| time_of(e.key))
    }
    fn len(&self) -> usize {
        self.heap.len()
    }
}

/// A binary min-heap of entries by key, for [`TwoHeapQueue`] and the far events of
/// [`CalendarQueue`].
///
/// The standard library's `BinaryHeap::push` appends the entry and then reads it back whole
/// to sift it up. An event just built field by field in a handler is still in the store
/// buffer then, and a wider load cannot be forwarded from several narrower stores: every push
/// waited for its stores to reach the cache (about a tenth of the event loop's samples). This
/// heap's `push` compares the new key with its ancestors, moves them down, and writes the
/// entry once, where it belongs. The root is taken out by [`MinHeap::remove_root`] (the hole
/// the root leaves goes down to the bottom along the smaller children, then the last entry
/// goes up from there: Floyd's method, as the standard library's `pop`) or replaced by
/// [`MinHeap::replace_root`] (the new entry goes down from the root to where it belongs; see
/// [`TwoHeapQueue`] for why), with unchecked moves as the standard library's.
struct MinHeap<E> {
    v: Vec<Entry<E>>,
}

impl<E: Copy> MinHeap<E> {
    fn with_capacity(n: usize) -> Self {
        MinHeap { v: Vec::with_capacity(n) }
    }

    #[inline]
    fn len(&self) -> usize {
        self.v.len()
    }

    #[inline]
    fn peek(&self) -> Option<&Entry<E>> {
        self.v.first()
    }

    /// The smallest entry after the root, if `skip_root`, else the root.
    #[inline]
    fn peek_after(&self, skip_root: bool) -> Option<&Entry<E>> {
        if !skip_root {
            return self.v.first();
        }
        match (self.v.get(1), self.v.get(2)) {
            (Some(a), Some(b)) => Some(if b.key < a.key { b } else { a }),
            (a, _) => a,
        }
    }

    #[inline]
    fn push(&mut self, e: Entry<E>) {
        self.v.reserve(1);
        let len = self.v.len();
        let base = self.v.as_mut_ptr();
        // SAFETY: there is room for `len + 1` entries and slots `0..len` hold entries; slot
        // `len` is the hole. The length is set once the hole is filled.
        unsafe {
            Self::sift_up(base, len, e);
            self.v.set_len(len + 1);
        }
    }

    /// Fills the hole at `pos` with `e` or with the ancestors larger than `e`, moving the hole
    /// up to where `e` belongs and writing `e` there.
    ///
    /// # Safety
    /// `base..base + pos` hold entries and slot `pos` is a hole (its entry copied elsewhere or
    /// never written), within the allocation.
    #[inline(always)]
    unsafe fn sift_up(base: *mut Entry<E>, mut pos: usize, e: Entry<E>) {
        while pos > 0 {
            let parent = (pos - 1) / 2;
            if (*base.add(parent)).key <= e.key {
                break;
            }
            std::ptr::copy_nonoverlapping(base.add(parent), base.add(pos), 1);
            pos = parent;
        }
        std::ptr::write(base.add(pos), e);
    }

    /// Fills the hole at the root of the `end` slots at `base` with `e`: the hole goes down
    /// along the smaller children to the bottom, then `e` goes up from there.
    ///
    /// # Safety
    /// `end >= 1`, slots `1..end` hold entries and slot 0 is a hole.
    #[inline(always)]
    unsafe fn fill_root(base: *mut Entry<E>, end: usize, e: Entry<E>) {
        let mut pos = 0;
        let mut child = 1;
        while child + 1 < end {
            child += ((*base.add(child + 1)).key < (*base.add(child)).key) as usize;
            std::ptr::copy_nonoverlapping(base.add(child), base.add(pos), 1);
            pos = child;
            child = 2 * pos + 1;
        }
        if child + 1 == end {
            std::ptr::copy_nonoverlapping(base.add(child), base.add(pos), 1);
            pos = child;
        }
        Self::sift_up(base, pos, e);
    }

    /// Removes the root (the heap is not empty).
    #[inline]
    fn remove_root(&mut self) {
        let last = self.v.pop().expect("a root to remove");
        let end = self.v.len();
        if end > 0 {
            // SAFETY: `end` slots hold entries; the root's is given up (entries are `Copy`),
            // leaving a hole that `last`, now outside the vector, fills.
            unsafe { Self::fill_root(self.v.as_mut_ptr(), end, last) }
        }
    }

    /// Replaces the root (the heap is not empty) by `e`, wherever `e` belongs.
    #[inline]
    fn replace_root(&mut self, e: Entry<E>) {
        let end = self.v.len();
        debug_assert!(end > 0);
        // SAFETY: `end >= 1` slots hold entries; the root's is given up (entries are `Copy`).
        unsafe {
            let base = self.v.as_mut_ptr();
            let mut pos = 0;
            let mut child = 1;
            while child < end {
                if child + 1 < end {
                    child += ((*base.add(child + 1)).key < (*base.add(child)).key) as usize;
                }
                if e.key <= (*base.add(child)).key {
                    break;
                }
                std::ptr::copy_nonoverlapping(base.add(child), base.add(pos), 1);
                pos = child;
                child = 2 * pos + 1;
            }
            std::ptr::write(base.add(pos), e);
        }
    }
}

/// Which heap of a [`TwoHeapQueue`] still holds, at its root, the event last popped.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Taken {
    None,
    Main,
    Aside,
}

/// [`EventQueue`] as two binary heaps: one for events that always run, and one, filled by
/// [`TwoHeapQueue::push_aside`], for events that are often superseded before they are due
/// (versioned timers that are re-armed or cancelled by leaving their old entry to lapse). The
/// lapsed entries sit in the second heap until their time, so they no longer deepen the heap
/// that every packet event goes through. `pop` takes the smaller `(time, seq)` of the two heads:
/// the order is exactly that of one heap.
///
/// A pop copies the head out and leaves its entry in place, marked as taken. Most events
/// schedule another (a link's next arrival, a port's next `TxDone`): the first push into the
/// heap that holds the taken entry replaces it, one pass from the root down to where the new
/// entry belongs, where a removal followed by an insertion makes two. Otherwise the next pop (or `peek_time`)
/// removes it first. Every method answers as if the taken entry were gone.
pub struct TwoHeapQueue<E> {
    main: MinHeap<E>,
    aside: MinHeap<E>,
    taken: Taken,
}

impl<E: Copy> Default for TwoHeapQueue<E> {
    fn default() -> Self {
        TwoHeapQueue::with_capacity(0)
    }
}

impl<E: Copy> TwoHeapQueue<E> {
    /// An empty queue with room for `n` events in each heap.
    pub fn with_capacity(n: usize) -> Self {
        TwoHeapQueue {
            main: MinHeap::with_capacity(n),
            aside: MinHeap::with_capacity(n),
            taken: Taken::None,
        }
    }

    /// Inserts an event that is likely to be superseded before it is due (into the second
    /// heap). Ordering is unaffected: `(time, seq)` decides, whichever heap holds the event.
    #[inline]
    pub fn push_aside(&mut self, time: Time, seq: u64, ev: E) {
        self.insert(Taken::Aside, Entry { key: key(time, seq), ev });
    }

    /// Inserts `e` into the heap `into` (`Main` or `Aside`): in place of the entry the last
    /// pop took from it, if that is still there.
    #[inline(always)]
    fn insert(&mut self, into: Taken, e: Entry<E>) {
        let heap = if into == Taken::Aside { &mut self.aside } else { &mut self.main };
        if self.taken == into {
            self.taken = Taken::None;
            heap.replace_root(e);
        } else {
            heap.push(e);
        }
    }

    /// Removes the entry taken by the last pop, if it is still there.
    #[inline(always)]
    fn settle(&mut self) {
        match std::mem::replace(&mut self.taken, Taken::None) {
            Taken::None => {}
            Taken::Main => self.main.remove_root(),
            Taken::Aside => self.aside.remove_root(),
        }
    }

    /// Whether the next event is in the second heap (no entry taken).
    #[inline]
    fn aside_first(&self) -> bool {
        match (self.main.peek(), self.aside.peek()) {
            (Some(m), Some(a)) => a.key < m.key,
            (None, Some(_)) => true,
            _ => false,
        }
    }

    /// Removes and returns the next event if its time is at most `last`.
    #[inline(always)]
    pub fn pop_until(&mut self, last: Time) -> Option<(Time, u64, E)> {
        self.settle();
        let (heap, taken) = if self.aside_first() {
            (&self.aside, Taken::Aside)
        } else {
            (&self.main, Taken::Main)
        };
        let head = *heap.peek()?;
        if head.key > key(last, u64::MAX) {
            return None;
        }
        self.taken = taken;
        Some(head.split())
    }

    /// The next event, without removing it.
    #[inline]
    pub fn peek_event(&self) -> Option<&E> {
        let m = self.main.peek_after(self.taken == Taken::Main);
        let a = self.aside.peek_after(self.taken == Taken::Aside);
        match (m, a) {
            (Some(m), Some(a)) => Some(if a.key < m.key { &a.ev } else { &m.ev }),
            (Some(e), None) | (None, Some(e)) => Some(&e.ev),
            (None, None) => None,
        }
    }
}

impl<E: Copy> EventQueue<E> for TwoHeapQueue<E> {
    #[inline]
    fn push(&mut self, time: Time, seq: u64, ev: E) {
        self.insert(Taken::Main, Entry { key: key(time, seq), ev });
    }
    #[inline]
    fn pop(&mut self) -> Option<(Time, u64, E)> {
        self.pop_until(Time::MAX)
    }
    #[inline]
    fn peek_time(&mut self) -> Option<Time> {
        self.settle();
        let heap = if self.aside_first() { &self.aside } else { &self.main };
        heap.peek().map(|e| time_of(e.key))
    }
    fn len(&self) -> usize {
        self.main.len() + self.aside.len() - (self.taken != Taken::None) as usize
    }
}

/// [`EventQueue`] as a calendar of time buckets over the near future, with a heap for the far
/// future: the queue the simulator runs on.
///
/// A *monotone* queue: no event may be pushed earlier than the last event popped (a
/// discrete-event simulation never schedules into the past). Time is cut into buckets of
/// `2^shift` picoseconds, and the `N` buckets from that of the last event popped form a ring.
/// Each bucket is a list of its events sorted by `(time, seq)`, in one slab of nodes; a bitmap
/// marks the buckets that hold events. An event within the ring's horizon is linked into its
/// bucket, usually empty or holding one or two (a push walks them); a pop takes the head of
/// the first non-empty bucket, found in the bitmap. Events beyond the horizon wait in a binary
/// heap and move into the ring when it reaches them. The order is exactly `(time, seq)`,
/// whatever the shape: buckets are ordered by time and each is sorted.
///
/// The buckets double, halving their width, while more than a quarter as many events are
/// queued as there are buckets (so a fabric with more links in flight gets finer buckets; the
/// horizon stays).
///
/// The width also follows the time between events, as in Brown's calendar queue: every
/// [`REVIEW_POPS`] pops the queue takes the mean gap between them. Where that gap spans more
/// than 512 buckets in two reviews in a row (eight bitmap words of empty buckets to search
/// past per pop, and most pushes land beyond the horizon, in the heap), the queue is rebuilt
/// with buckets a 64th of the gap wide, as many as it has. When the gap falls below 64
/// buckets again, it is rebuilt narrower, down to its first width. A run on a 50 Mb/s
/// bottleneck with a 40 ms RTT pops an event every ~70 µs, against the 64 ps of the buckets
/// its 10 Gb/s host links give (docs/performance.md, "Thirty-fourth session"); a fabric's
/// busy events come a few buckets apart, and its shape stays. The order is the same whatever
/// the shape.
///
/// A binary heap pays a walk from its root to a leaf on every pop (seven to ten levels at the
/// 150–650 events a fabric run keeps pending); here an event due a link delay or a frame's
/// serialization ahead costs a bucket's short list on push and an unlink on pop.
pub struct CalendarQueue<E> {
    shift: u32,
    mask: u64,
    /// Absolute index (`time >> shift`) of the bucket of the last event popped: the ring's
    /// events lie in buckets `base .. base + N`, the far heap's at or beyond `base + N`.
    base: u64,
    /// No event lies in buckets `base .. cursor` (a lower bound of the first non-empty one,
    /// which [`CalendarQueue::peek_event`] moves up to it, so that the pop after does not
    /// search again).
    cursor: u64,
    /// By ring slot: the first node of the bucket's sorted list, meaningful only while the
    /// bucket's bit in `bits` is set (so that a push into an empty bucket, nearly every push,
    /// writes its head without first loading the line, and a pop that empties a bucket leaves
    /// it as it is).
    heads: Box<[u32]>,
    /// By ring slot: bit set while the bucket holds events.
    bits: Box<[u64]>,
    /// By word of `bits`: bit set while the word is not zero (so that a search past empty
    /// buckets skips 4096 of them per word read).
    summary: Box<[u64]>,
    nodes: Vec<Node<E>>,
    /// The first unused node, or [`NIL`].
    free: u32,
    far: MinHeap<E>,
    /// The absolute bucket index of the far heap's head (meaningless while it is empty), so
    /// that a pop moving the ring need not look at the heap until the ring reaches it.
    far_abs: u64,
    len: usize,
    /// The length beyond which the buckets double ([`GROW_SHIFT`]; `usize::MAX` once they
    /// no longer can).
    grow_at: usize,
    /// Pops until the next review of the width ([`CalendarQueue::review`]).
    review_in: u32,
    /// What the reviews keep; out of line, as only they touch it.
    review: Box<Review>,
}

/// The state of a [`CalendarQueue`]'s reviews of its width.
#[derive(Clone, Copy, Default)]
struct Review {
    /// The time of the last review (0 before the first).
    from: u64,
    /// Whether the last review found the buckets too narrow (a widening needs two in a row).
    widen_vote: bool,
    /// The width (`shift`) the queue was made with: a review never makes the buckets
    /// narrower than this, nor asks for buckets wider only than a grown queue's.
    first_shift: u32,
    /// How many times the queue was rebuilt.
    reshapes: u64,
    /// Pops between two reviews (log 2): [`LOG_REVIEW_POPS`], fewer in tests.
    log_pops: u32,
}

/// How many pops a [`CalendarQueue`] makes between two reviews of its width (2^14).
pub const REVIEW_POPS: u32 = 1 << LOG_REVIEW_POPS;
const LOG_REVIEW_POPS: u32 = 14;

/// A review asks for buckets a 64th of the mean gap between pops wide (log 2): a bitmap word
/// of them between two events.
const GAP_LOG_BUCKETS: u32 = 6;

/// A review widens the buckets when it asks for this factor (log 2) or more: 8.
const WIDEN_LOG_FACTOR: u32 = 3;

/// The widest buckets a review makes (2^40 ps, about a second).
const MAX_SHIFT: u32 = 40;

/// No node.
const NIL: u32 = u32::MAX;

/// A [`CalendarQueue`] doubles its buckets while it holds more than `N >> GROW_SHIFT` events.
const GROW_SHIFT: u32 = 2;

/// The most buckets a [`CalendarQueue`] grows to (2^22: 20 MiB of heads and bits).
const MAX_BUCKETS: usize = 1 << 22;

#[derive(Clone, Copy)]
struct Node<E> {
    time: u64,
    seq: u64,
    /// The next node of the bucket (or of the free list), or [`NIL`].
    next: u32,
    ev: E,
}

impl<E: Copy> Default for CalendarQueue<E> {
    /// 2^16 buckets of 64 ps: a 4.2 µs horizon, the shape [`CalendarQueue::covering`] gives a
    /// fabric of 1 µs links carrying ~1 kB frames at 100 Gb/s.
    fn default() -> Self {
        CalendarQueue::new(6, 16)
    }
}

impl<E: Copy> CalendarQueue<E> {
    /// A calendar of `2^log_buckets` buckets (6 ≤ `log_buckets` ≤ 22) of `2^shift`
    /// picoseconds each (`shift` < 48).
    pub fn new(shift: u32, log_buckets: u32) -> Self {
        assert!((6..=22).contains(&log_buckets) && shift < 48, "calendar shape");
        let n = 1usize << log_buckets;
        CalendarQueue {
            shift,
            mask: n as u64 - 1,
            base: 0,
            cursor: 0,
            heads: vec![NIL; n].into_boxed_slice(),
            bits: vec![0; n / 64].into_boxed_slice(),
            summary: vec![0; n.div_ceil(64 * 64)].into_boxed_slice(),
            nodes: Vec::new(),
            free: NIL,
            far: MinHeap::with_capacity(0),
            far_abs: 0,
            len: 0,
            grow_at: Self::grow_at(shift, n),
            review_in: REVIEW_POPS,
            review: Box::new(Review {
                from: 0,
                widen_vote: false,
                first_shift: shift,
                reshapes: 0,
                log_pops: LOG_REVIEW_POPS,
            }),
        }
    }

    /// How many times the queue rebuilt itself to follow the gap between events.
    pub fn reshapes(&self) -> u64 {
        self.review.reshapes
    }

    /// The bucket width (log 2 of picoseconds) and the number of buckets: the queue's shape
    /// now.
    pub fn shape(&self) -> (u32, usize) {
        (self.shift, self.buckets())
    }

    /// [`CalendarQueue::new`] reviewing its width every `2^log_pops` pops instead of
    /// [`REVIEW_POPS`] (for tests that reshape it often).
    #[cfg(test)]
    fn with_review(shift: u32, log_buckets: u32, log_pops: u32) -> Self {
        let mut q = CalendarQueue::new(shift, log_buckets);
        q.review.log_pops = log_pops;
        q.review_in = 1 << log_pops;
        q
    }

    /// Counts a pop of an event at time `t`, reviewing the width every [`REVIEW_POPS`] pops.
    #[inline(always)]
    fn count_pop(&mut self, t: u64) {
        self.review_in -= 1;
        if self.review_in == 0 {
            self.review(t);
        }
    }

    /// Compares the width with the mean gap between the pops since the last review, and
    /// rebuilds the calendar when they are far apart (see the type's documentation). `now` is
    /// the time of the pop just made, so no queued event is earlier.
    #[cold]
    #[inline(never)]
    fn review(&mut self, now: u64) {
        let log_pops = self.review.log_pops;
        self.review_in = 1 << log_pops;
        let gap = now.saturating_sub(self.review.from) >> log_pops;
        self.review.from = now;
        let first_shift = self.review.first_shift;
        // The width asked for: a 64th of the gap (a bitmap word of buckets between two pops),
        // rounded down to a power of two, at most `MAX_SHIFT` and not below the first width.
        let want = (63 - gap.max(1).leading_zeros())
            .saturating_sub(GAP_LOG_BUCKETS)
            .min(MAX_SHIFT)
            .max(first_shift);
        // Measured from the first width when the buckets have grown narrower than it (a
        // queue holding many events): a rebuild would only grow them back.
        if want >= self.shift.max(first_shift) + WIDEN_LOG_FACTOR {
            if self.review.widen_vote {
                self.review.widen_vote = false;
                self.reshape(want, now);
            } else {
                self.review.widen_vote = true;
            }
        } else {
            self.review.widen_vote = false;
            if want < self.shift && self.shift > first_shift {
                self.reshape(want, now);
            }
        }
    }

    /// Rebuilds the calendar with as many buckets, each `2^shift` ps wide; every queued
    /// event moves over (none is before `now`, the time of the last pop).
    #[cold]
    #[inline(never)]
    fn reshape(&mut self, shift: u32, now: u64) {
        self.review.reshapes += 1;
        let mut fresh = CalendarQueue::new(shift, self.buckets().trailing_zeros());
        fresh.nodes.reserve(self.nodes.len());
        fresh.base = now >> shift;
        fresh.cursor = fresh.base;
        let len = self.len;
        for slot in 0..self.buckets() {
            if !self.occupied(slot) {
                continue;
            }
            let mut at = self.head(slot);
            while at != NIL {
                let n = *self.nd(at);
                fresh.push(Time(n.time), n.seq, n.ev);
                at = n.next;
            }
        }
        while let Some(e) = self.far.peek() {
            let (t, seq, ev) = e.split();
            self.far.remove_root();
            fresh.push(t, seq, ev);
        }
        debug_assert_eq!(fresh.len, len, "a reshape keeps every event");
        fresh.review_in = self.review_in;
        fresh.review = std::mem::take(&mut self.review);
        *self = fresh;
    }

    /// The length beyond which a calendar of `n` buckets of `2^shift` ps doubles them.
    fn grow_at(shift: u32, n: usize) -> usize {
        if shift > 0 && n < MAX_BUCKETS {
            n >> GROW_SHIFT
        } else {
            usize::MAX
        }
    }

    /// A calendar for a run whose events are mostly due within `span` (a link's delay plus a
    /// frame's serialization): 2^16 buckets over at least twice the span.
    ///
    /// Buckets this narrow (64 ps for a 1 µs link) hold one event each, nearly always: the
    /// events of a fabric are due mostly within a frame's serialization (a link's next frame
    /// is queued when the one before it arrives), so with 1024 buckets over the same horizon
    /// a push walked past three events on average, a chain of dependent loads that cost more
    /// than scanning the bitmap past empty buckets (docs/performance.md).
    pub fn covering(span: crate::units::Duration) -> Self {
        CalendarQueue::covering_share(span, 1)
    }

    /// [`CalendarQueue::covering`] for a queue expected to hold a `1 / parts` share of a
    /// run's events (one of `parts` shards of similar load): the same horizon in
    /// `2^16 / parts` buckets (rounded to a power of two, at least 2^10), each as many times
    /// wider, so that the buckets hold about as many events each as one queue of the whole
    /// run's. A shard's calendar of the full 2^16 buckets held an event in about one bucket in
    /// 150 at sixteen threads: every pop searched the bitmap past empty words, and each of 32
    /// shards kept 256 KiB of bucket heads (docs/performance.md). The buckets still double as
    /// the queue fills.
    pub fn covering_share(span: crate::units::Duration, parts: usize) -> Self {
        const LOG_BUCKETS: u32 = 16;
        const MIN_LOG_BUCKETS: u32 = 10;
        let log_parts = parts.max(1).next_power_of_two().trailing_zeros();
        let log_buckets = LOG_BUCKETS.saturating_sub(log_parts).max(MIN_LOG_BUCKETS);
        let width = (span.0.saturating_mul(2) >> log_buckets).max(1);
        // The width rounded up to a power of two picoseconds.
        let shift = (64 - (width - 1).leading_zeros()).min(40);
        CalendarQueue::new(shift, log_buckets)
    }

    /// The number of buckets.
    #[inline(always)]
    fn buckets(&self) -> usize {
        self.mask as usize + 1
    }

    #[inline(always)]
    fn slot(&self, abs: u64) -> usize {
        (abs & self.mask) as usize
    }

    #[inline(always)]
    fn key_of(&self, node: u32) -> (u64, u64) {
        let n = self.nd(node);
        (n.time, n.seq)
    }

    // The accessors below skip the bounds checks (a fifth of the loop's instructions were
    // checks). Their indices are valid by the queue's own invariants, checked in debug builds:
    // `heads` has `mask + 1` entries (a multiple of 64, `bits` one bit each) and every slot is
    // an absolute index masked by `mask`; every node index stored in `heads`, in a node's
    // `next` or in `free` names a node of `nodes`, which never shrinks.

    /// The node at index `i` (one stored in the ring or the free list).
    #[inline(always)]
    fn nd(&self, i: u32) -> &Node<E> {
        debug_assert!((i as usize) < self.nodes.len());
        // SAFETY: `i` names a node of `nodes` (the invariant above).
        unsafe { self.nodes.get_unchecked(i as usize) }
    }

    /// [`CalendarQueue::nd`], mutable.
    #[inline(always)]
    fn nd_mut(&mut self, i: u32) -> &mut Node<E> {
        debug_assert!((i as usize) < self.nodes.len());
        // SAFETY: as in `nd`.
        unsafe { self.nodes.get_unchecked_mut(i as usize) }
    }

    /// The head of ring slot `slot` (`< N`: a masked index).
    #[inline(always)]
    fn head(&self, slot: usize) -> u32 {
        debug_assert!(slot < self.heads.len());
        // SAFETY: `slot` is masked by `mask`, and `heads` has `mask + 1` entries.
        unsafe { *self.heads.get_unchecked(slot) }
    }

    /// [`CalendarQueue::head`], mutable.
    #[inline(always)]
    fn head_mut(&mut self, slot: usize) -> &mut u32 {
        debug_assert!(slot < self.heads.len());
        // SAFETY: as in `head`.
        unsafe { self.heads.get_unchecked_mut(slot) }
    }

    /// Notes in the summary that bitmap word `w` (`< N / 64`) is not zero.
    #[inline(always)]
    fn mark_word(&mut self, w: usize) {
        debug_assert!(w / 64 < self.summary.len());
        // SAFETY: `summary` has one bit for each word of `bits`.
        unsafe { *self.summary.get_unchecked_mut(w / 64) |= 1 << (w % 64) };
    }

    /// Notes in the summary that bitmap word `w` (`< N / 64`) is zero.
    #[inline(always)]
    fn unmark_word(&mut self, w: usize) {
        debug_assert!(w / 64 < self.summary.len());
        // SAFETY: as in `mark_word`.
        unsafe { *self.summary.get_unchecked_mut(w / 64) &= !(1 << (w % 64)) };
    }

    /// Whether ring slot `slot` (`< N`) holds events (its head is meaningful).
    #[inline(always)]
    fn occupied(&self, slot: usize) -> bool {
        debug_assert!(slot / 64 < self.bits.len());
        // SAFETY: `bits` has one bit for each of the `mask + 1` slots.
        unsafe { *self.bits.get_unchecked(slot / 64) & (1 << (slot % 64)) != 0 }
    }

    /// The bitmap word of ring slot `slot` (`< N`).
    #[inline(always)]
    fn word_mut(&mut self, slot: usize) -> &mut u64 {
        debug_assert!(slot / 64 < self.bits.len());
        // SAFETY: `bits` has one bit for each of the `mask + 1` slots.
        unsafe { self.bits.get_unchecked_mut(slot / 64) }
    }

    /// Links `node` (with its key set) into the ring bucket of absolute index `abs` (within
    /// the horizon), after the events with smaller keys.
    #[inline(always)]
    fn link(&mut self, abs: u64, node: u32) {
        let i = self.slot(abs);
        if !self.occupied(i) {
            self.nd_mut(node).next = NIL;
            *self.head_mut(i) = node;
            *self.word_mut(i) |= 1 << (i % 64);
            self.mark_word(i / 64);
            return;
        }
        let key = self.key_of(node);
        let mut at = self.head(i);
        if key < self.key_of(at) {
            self.nd_mut(node).next = at;
            *self.head_mut(i) = node;
            return;
        }
        loop {
            let next = self.nd(at).next;
            if next == NIL || key < self.key_of(next) {
                self.nd_mut(node).next = next;
                self.nd_mut(at).next = node;
                return;
            }
            at = next;
        }
    }

    /// A node holding the event (not linked).
    #[inline(always)]
    fn node(&mut self, time: u64, seq: u64, ev: E) -> u32 {
        let n = Node { time, seq, next: NIL, ev };
        if self.free != NIL {
            let i = self.free;
            self.free = self.nd(i).next;
            *self.nd_mut(i) = n;
            i
        } else {
            self.nodes.push(n);
            (self.nodes.len() - 1) as u32
        }
    }

    /// The absolute index of the first non-empty ring bucket, if any.
    #[inline(always)]
    fn first_in_ring(&self) -> Option<u64> {
        let start = self.slot(self.cursor);
        let (w0, b0) = (start / 64, start % 64);
        let bits = self.bits[w0] & (!0u64 << b0);
        if bits != 0 {
            let i = w0 * 64 + bits.trailing_zeros() as usize;
            return Some(self.cursor + (i - start) as u64);
        }
        self.first_in_ring_after(start)
    }

    /// The rest of [`CalendarQueue::first_in_ring`]: the words after the cursor's, round to
    /// its own again (its bits below the cursor: buckets one turn ahead), found through the
    /// summary.
    #[inline(never)]
    fn first_in_ring_after(&self, start: usize) -> Option<u64> {
        let n = self.buckets();
        let w0 = start / 64;
        let at = |w: usize, bits: u64| {
            let i = w * 64 + bits.trailing_zeros() as usize;
            Some(self.cursor + ((i + n - start) % n) as u64)
        };
        let found = self
            .next_word(w0 + 1, self.bits.len())
            .or_else(|| self.next_word(0, w0))
            .map(|w| (w, self.bits[w]));
        if let Some((w, bits)) = found {
            return at(w, bits);
        }
        let bits = self.bits[w0] & (1u64 << (start % 64)).wrapping_sub(1);
        if bits != 0 {
            return at(w0, bits);
        }
        None
    }

    /// The first non-zero word of `bits` in `from..to`, if any, by the summary.
    #[inline]
    fn next_word(&self, from: usize, to: usize) -> Option<usize> {
        if from >= to {
            return None;
        }
        let (mut k, last) = (from / 64, (to - 1) / 64);
        let mut word = self.summary[k] & (!0u64 << (from % 64));
        loop {
            if k == last {
                word &= !0u64 >> (63 - (to - 1) % 64);
            }
            if word != 0 {
                return Some(k * 64 + word.trailing_zeros() as usize);
            }
            if k == last {
                return None;
            }
            k += 1;
            word = self.summary[k];
        }
    }

    /// Where the next event is: the absolute index of its ring bucket, or `None` if the
    /// ring is empty (the next event, if any, is the far heap's head). Moves the cursor to it.
    #[inline(always)]
    fn find_next(&mut self) -> Option<u64> {
        if self.occupied(self.slot(self.cursor)) {
            return Some(self.cursor);
        }
        let r = self.first_in_ring()?;
        self.cursor = r;
        Some(r)
    }

    /// Makes bucket `abs` (that of the next event, about to be popped) the ring's first,
    /// moving the far events the ring then reaches into it.
    #[inline(always)]
    fn start_at(&mut self, abs: u64) {
        self.cursor = abs;
        if abs == self.base {
            return;
        }
        self.base = abs;
        // The far head is never before the next event (`abs`): no overflow.
        if self.far.len() > 0 && self.far_abs - abs <= self.mask {
            self.migrate();
        }
    }

    /// Moves the far events within the ring's horizon into the ring.
    #[inline(never)]
    fn migrate(&mut self) {
        while let Some(top) = self.far.peek() {
            let (t, seq, ev) = top.split();
            let abs = t.0 >> self.shift;
            // Beyond the horizon (`base + N`, written so that it cannot overflow).
            if abs - self.base > self.mask {
                self.far_abs = abs;
                break;
            }
            self.far.remove_root();
            let node = self.node(t.0, seq, ev);
            self.link(abs, node);
        }
    }

    /// Doubles the buckets, halving their width: the horizon stays, each bucket's events
    /// split between two (in order, so each list stays sorted).
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let n = self.buckets();
        let old = std::mem::replace(&mut self.heads, vec![NIL; 2 * n].into_boxed_slice());
        let old_bits = std::mem::replace(&mut self.bits, vec![0; 2 * n / 64].into_boxed_slice());
        self.summary = vec![0; (2 * n).div_ceil(64 * 64)].into_boxed_slice();
        let old_base = self.base;
        // Ring events lay in old buckets `base .. base + n`, now within `2 base .. 2 base +
        // 2n`; far events at or beyond old `base + n`, now `2 (base + n)`.
        self.shift -= 1;
        self.mask = 2 * n as u64 - 1;
        self.grow_at = Self::grow_at(self.shift, 2 * n);
        self.base = old_base << 1;
        self.cursor = self.base;
        for k in 0..n as u64 {
            let i = ((old_base + k) & (n as u64 - 1)) as usize;
            let mut at = if old_bits[i / 64] & (1 << (i % 64)) != 0 { old[i] } else { NIL };
            while at != NIL {
                let next = self.nd(at).next;
                let abs = self.nd(at).time >> self.shift;
                self.link(abs, at);
                at = next;
            }
        }
        if let Some(top) = self.far.peek() {
            self.far_abs = time_of(top.key).0 >> self.shift;
        }
    }

    /// Inserts an event (as [`EventQueue::push`]).
    #[inline(always)]
    pub fn push(&mut self, time: Time, seq: u64, ev: E) {
        self.len += 1;
        if self.len > self.grow_at {
            self.grow();
        }
        let abs = time.0 >> self.shift;
        debug_assert!(abs >= self.base, "calendar queue: event pushed into the past");
        // Beyond the horizon (`base + N`, written so that it cannot overflow).
        if abs - self.base > self.mask {
            self.far_abs = if self.far.len() == 0 { abs } else { self.far_abs.min(abs) };
            self.far.push(Entry { key: key(time, seq), ev });
        } else {
            self.cursor = self.cursor.min(abs);
            let node = self.node(time.0, seq, ev);
            self.link(abs, node);
        }
    }

    /// Removes and returns the next event if its time is at most `last`.
    #[inline(always)]
    pub fn pop_until(&mut self, last: Time) -> Option<(Time, u64, E)> {
        let slot = self.take_until(last)?;
        let n = self.unlink_head(slot);
        self.count_pop(n.time);
        Some((Time(n.time), n.seq, n.ev))
    }

    /// [`CalendarQueue::pop_until`], and a copy of the event that is then next (`None` if
    /// the queue is then empty), as [`CalendarQueue::peek_event`] would then give it: for a
    /// loop that prefetches for the next event while it handles this one. The pop knows
    /// where to look for it (behind the popped event in its bucket, or past that bucket,
    /// which the pop has just emptied), so no bucket is tested twice.
    #[inline(always)]
    pub fn pop_until_peek(&mut self, last: Time) -> Option<((Time, u64, E), Option<E>)> {
        let slot = self.take_until(last)?;
        let n = self.unlink_head(slot);
        let next = if n.next != NIL {
            // Its successor, now the bucket's head (the popped node's `next` is kept).
            Some(self.nd(n.next).ev)
        } else {
            // The cursor's bucket, just emptied, is the first the search looks at.
            match self.first_in_ring() {
                Some(r) => {
                    self.cursor = r;
                    Some(self.nd(self.head(self.slot(r))).ev)
                }
                None => self.far.peek().map(|e| e.ev),
            }
        };
        self.count_pop(n.time);
        Some(((Time(n.time), n.seq, n.ev), next))
    }

    /// Finds the next event if its time is at most `last`, and makes its bucket the ring's
    /// first (moving far events into the ring as it reaches them): its ring slot, occupied.
    #[inline(always)]
    fn take_until(&mut self, last: Time) -> Option<usize> {
        let abs = match self.find_next() {
            // `find_next` found the bucket occupied: its head is the next event.
            Some(abs) => {
                if self.nd(self.head(self.slot(abs))).time > last.0 {
                    return None;
                }
                abs
            }
            None => {
                // The ring is empty: start it at the far heap's head.
                let t = time_of(self.far.peek()?.key);
                if t > last {
                    return None;
                }
                t.0 >> self.shift
            }
        };
        self.start_at(abs);
        Some(self.slot(abs))
    }

    /// Removes the head of the occupied ring slot `slot`, returning its node as it was (its
    /// `next` the bucket's new head, or [`NIL`] if the bucket is now empty).
    #[inline(always)]
    fn unlink_head(&mut self, slot: usize) -> Node<E> {
        let h = self.head(slot);
        let n = *self.nd(h);
        if n.next != NIL {
            *self.head_mut(slot) = n.next;
        } else {
            let word = self.word_mut(slot);
            *word &= !(1 << (slot % 64));
            if *word == 0 {
                self.unmark_word(slot / 64);
            }
        }
        self.nd_mut(h).next = self.free;
        self.free = h;
        self.len -= 1;
        n
    }

    /// The next event, without removing it.
    #[inline(always)]
    pub fn peek_event(&mut self) -> Option<&E> {
        match self.find_next() {
            Some(abs) => Some(&self.nd(self.head(self.slot(abs))).ev),
            None => self.far.peek().map(|e| &e.ev),
        }
    }

    /// The time of the next event.
    #[inline]
    pub fn peek_time(&mut self) -> Option<Time> {
        match self.find_next() {
            Some(abs) => Some(Time(self.nd(self.head(self.slot(abs))).time)),
            None => self.far.peek().map(|e| time_of(e.key)),
        }
    }
}

impl<E: Copy> EventQueue<E> for CalendarQueue<E> {
    #[inline]
    fn push(&mut self, time: Time, seq: u64, ev: E) {
        CalendarQueue::push(self, time, seq, ev)
    }
    #[inline]
    fn pop(&mut self) -> Option<(Time, u64, E)> {
        self.pop_until(Time::MAX)
    }
    #[inline]
    fn peek_time(&mut self) -> Option<Time> {
        CalendarQueue::peek_time(self)
    }
    fn len(&self) -> usize {
        self.len
    }
}

/// [`EventQueue`] as an implicit 4-ary min-heap (shallower than a binary heap; children of a
/// node share a cache line more often).
pub struct QuadHeapQueue<E> {
    v: Vec<Entry<E>>,
}

impl<E> Default for QuadHeapQueue<E> {
    fn default() -> Self {
        QuadHeapQueue { v: Vec::new() }
    }
}

impl<E> EventQueue<E> for QuadHeapQueue<E> {
    fn push(&mut self, time: Time, seq: u64, ev: E) {
        let k = key(time, seq);
        self.v.push(Entry { key: k, ev });
        let mut i = self.v.len() - 1;
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.v[parent].key <= k {
                break;
            }
            self.v.swap(i, parent);
            i = parent;
        }
    }
    fn pop(&mut self) -> Option<(Time, u64, E)> {
        let n = self.v.len();
        if n == 0 {
            return None;
        }
        let top = self.v.swap_remove(0);
        let n = n - 1;
        if n > 1 {
            let mut i = 0;
            let k = self.v[0].key;
            loop {
                let first = 4 * i + 1;
                if first >= n {
                    break;
                }
                let last = (first + 4).min(n);
                let mut best = first;
                for c in first + 1..last {
                    if self.v[c].key < self.v[best].key {
                        best = c;
                    }
                }
                if self.v[best].key >= k {
                    break;
                }
                self.v.swap(i, best);
                i = best;
            }
        }
        Some(top.split())
    }
    fn peek_time(&mut self) -> Option<Time> {
        self.v.first().map(|e| time_of(e.key))
    }
    fn len(&self) -> usize {
        self.v.len()
    }
}

/// [`EventQueue`] as a radix heap over event times: a *monotone* queue, valid when no event is
/// pushed earlier than the last time popped or peeked (true of a discrete-event simulation,
/// which never schedules into the past).
///
/// Events at the current minimum time sit in a small binary heap ordered by `seq`; every other
/// event sits in bucket `64 - lzcnt(time ^ current)` (unordered). When the current time is
/// exhausted, the lowest non-empty bucket is redistributed around its minimum. Each event moves
/// through at most 64 buckets and usually one or two, so pushes are O(1) and pops amortised
/// O(1) plus the small heap of simultaneous events.
pub struct RadixQueue<E> {
    last: u64,
    now: BinaryHeap<Entry<E>>,
    buckets: Vec<Vec<(u64, u64, E)>>,
    len: usize,
}

impl<E> Default for RadixQueue<E> {
    fn default() -> Self {
        RadixQueue {
            last: 0,
            now: BinaryHeap::new(),
            buckets: (0..65).map(|_| Vec::new()).collect(),
            len: 0,
        }
    }
}

impl<E> RadixQueue<E> {
    #[inline]
    fn bucket(&self, t: u64) -> usize {
        64 - (t ^ self.last).leading_zeros() as usize
    }

    /// Makes sure the heap of events at the current minimum time is non-empty (if any event is
    /// queued at all).
    fn settle(&mut self) {
        if !self.now.is_empty() || self.len == 0 {
            return;
        }
        let i = (1..65).find(|&i| !self.buckets[i].is_empty()).expect("len > 0");
        let items = std::mem::take(&mut self.buckets[i]);
        self.last = items.iter().map(|e| e.0).min().expect("non-empty");
        let mut items = items;
        for (t, seq, ev) in items.drain(..) {
            if t == self.last {
                self.now.push(Entry { key: key(Time(t), seq), ev });
            } else {
                let b = self.bucket(t);
                self.buckets[b].push((t, seq, ev));
            }
        }
        // Keep the drained bucket's allocation for reuse.
        self.buckets[i] = items;
    }
}

impl<E> EventQueue<E> for RadixQueue<E> {
    #[inline]
    fn push(&mut self, time: Time, seq: u64, ev: E) {
        debug_assert!(time.0 >= self.last, "radix queue: event pushed into the past");
        self.len += 1;
        if time.0 == self.last {
            self.now.push(Entry { key: key(time, seq), ev });
        } else {
            let b = self.bucket(time.0);
            self.buckets[b].push((time.0, seq, ev));
        }
    }
    #[inline]
    fn pop(&mut self) -> Option<(Time, u64, E)> {
        self.settle();
        let e = self.now.pop()?;
        self.len -= 1;
        Some(e.split())
    }
    #[inline]
    fn peek_time(&mut self) -> Option<Time> {
        self.settle();
        self.now.peek().map(|e| time_of(e.key))
    }
    fn len(&self) -> usize {
        self.len
    }
}

/// [`EventQueue`] as a timing wheel (a calendar queue with fixed-width buckets) backed by a
/// binary heap for far-future events: a *monotone* queue like [`RadixQueue`].
///
/// Time is cut into buckets of `2^shift` picoseconds; the next `buckets` of them form a ring.
/// An event within the ring's horizon is appended to its bucket (O(1)); the current bucket is
/// sorted once when it is reached and then popped from the end, and a bitmap finds the next
/// non-empty bucket. Events beyond the horizon wait in the heap and move into the ring as it
/// advances. In a packet simulation almost every event is a few link delays ahead, so nearly
/// all events take the O(1) path.
pub struct WheelQueue<E> {
    shift: u32,
    mask: u64,
    /// Absolute index (time >> shift) of the current bucket.
    base: u64,
    buckets: Vec<Vec<Entry<E>>>,
    bitmap: Vec<u64>,
    /// The current bucket is sorted (descending, so the minimum is last).
    sorted: bool,
    far: BinaryHeap<Entry<E>>,
    len: usize,
}

impl<E> Default for WheelQueue<E> {
    /// 4096 buckets of 2^13 ps (8.2 ns): a 33.6 us horizon.
    fn default() -> Self {
        WheelQueue::new(13, 12)
    }
}

impl<E> WheelQueue<E> {
    /// A wheel of `2^log_buckets` buckets of `2^shift` picoseconds each.
    pub fn new(shift: u32, log_buckets: u32) -> Self {
        let n = 1usize << log_buckets;
        WheelQueue {
            shift,
            mask: n as u64 - 1,
            base: 0,
            buckets: (0..n).map(|_| Vec::new()).collect(),
            bitmap: vec![0; n.div_ceil(64)],
            sorted: false,
            far: BinaryHeap::new(),
            len: 0,
        }
    }

    #[inline]
    fn slot(&self, abs: u64) -> usize {
        (abs & self.mask) as usize
    }

    #[inline]
    fn put(&mut self, abs: u64, e: Entry<E>) {
        let i = self.slot(abs);
        if abs == self.base && self.sorted {
            // Keep the current bucket sorted (descending): insert before the first smaller key.
            let b = &mut self.buckets[i];
            let pos = b.partition_point(|x| x.key > e.key);
            b.insert(pos, e);
        } else {
            self.buckets[i].push(e);
        }
        self.bitmap[i / 64] |= 1 << (i % 64);
    }

    /// Absolute index of the first non-empty ring bucket at or after `base`, if any.
    fn next_in_ring(&self) -> Option<u64> {
        let n = self.buckets.len();
        let start = self.slot(self.base);
        let words = self.bitmap.len();
        // Scan words starting at `start`, wrapping around once.
        for k in 0..=words {
            let w = (start / 64 + k) % words;
            let mut bits = self.bitmap[w];
            if k == 0 {
                bits &= !0u64 << (start % 64);
            } else if k == words {
                bits &= (1u64 << (start % 64)).wrapping_sub(1);
            }
            if bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                let off = (i + n - start) % n;
                return Some(self.base + off as u64);
            }
        }
        None
    }

    /// Moves far events that now fall within the ring's horizon into it.
    fn migrate(&mut self) {
        let horizon = self.base + self.mask + 1;
        while let Some(top) = self.far.peek() {
            let abs = ((top.key >> 64) as u64) >> self.shift;
            if abs >= horizon {
                break;
            }
            let e = self.far.pop().expect("peeked");
            self.put(abs, e);
        }
    }

    /// Makes the current bucket the first non-empty one, sorted; false if the queue is empty.
    fn settle(&mut self) -> bool {
        if self.len == 0 {
            return false;
        }
        let i = self.slot(self.base);
        if self.buckets[i].is_empty() {
            let ring = self.next_in_ring();
            let far = self.far.peek().map(|t| ((t.key >> 64) as u64) >> self.shift);
            let next = match (ring, far) {
                (Some(r), Some(f)) => r.min(f),
                (Some(r), None) => r,
                (None, Some(f)) => f,
                (None, None) => unreachable!("len > 0"),
            };
            self.base = next;
            self.sorted = false;
            self.migrate();
        }
        if !self.sorted {
            let i = self.slot(self.base);
            self.buckets[i].sort_unstable_by_key(|e| std::cmp::Reverse(e.key));
            self.sorted = true;
        }
        true
    }
}

impl<E> EventQueue<E> for WheelQueue<E> {
    #[inline]
    fn push(&mut self, time: Time, seq: u64, ev: E) {
        let abs = time.0 >> self.shift;
        debug_assert!(abs >= self.base, "wheel queue: event pushed into the past");
        self.len += 1;
        let e = Entry { key: key(time, seq), ev };
        // Beyond the horizon (`base + N`, written so that it cannot overflow).
        if abs - self.base > self.mask {
            self.far.push(e);
        } else {
            self.put(abs, e);
        }
    }
    #[inline]
    fn pop(&mut self) -> Option<(Time, u64, E)> {
        if !self.settle() {
            return None;
        }
        let i = self.slot(self.base);
        let e = self.buckets[i].pop().expect("settled");
        if self.buckets[i].is_empty() {
            self.bitmap[i / 64] &= !(1 << (i % 64));
        }
        self.len -= 1;
        Some(e.split())
    }
    #[inline]
    fn peek_time(&mut self) -> Option<Time> {
        if !self.settle() {
            return None;
        }
        let i = self.slot(self.base);
        self.buckets[i].last().map(|e| time_of(e.key))
    }
    fn len(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn drain<Q: EventQueue<u32>>(q: &mut Q) -> Vec<(Time, u64, u32)> {
        std::iter::from_fn(|| q.pop()).collect()
    }

    #[test]
    fn fifo_among_equal_times() {
        let mut q = BinaryHeapQueue::default();
        for s in 0..100u64 {
            q.push(Time(5), s, s as u32);
        }
        let order: Vec<u32> = drain(&mut q).into_iter().map(|e| e.2).collect();
        assert_eq!(order, (0..100).collect::<Vec<_>>());
    }

    /// A pop that finds nothing due by its bound leaves the queue where it was: an event
    /// pushed afterwards, earlier than every queued one but not before the last popped, comes
    /// out first (as it does when a window of the parallel engine ends, and crossings from
    /// other shards arrive before this shard's next event). Both from the ring and from the far
    /// heap.
    #[test]
    fn a_pop_past_its_bound_moves_nothing() {
        for later in [100u64, 1 << 30] {
            let mut q = CalendarQueue::<u32>::new(3, 6);
            q.push(Time(5), 0, 0);
            q.push(Time(later), 1, 1);
            assert_eq!(q.pop_until(Time(10)), Some((Time(5), 0, 0)));
            assert_eq!(q.pop_until(Time(10)), None);
            q.push(Time(12), 2, 2);
            q.push(Time(11), 3, 3);
            assert_eq!(q.peek_event(), Some(&3));
            let order: Vec<u32> = drain(&mut q).into_iter().map(|e| e.2).collect();
            assert_eq!(order, [3, 2, 1]);
        }
    }

    /// Times at the end of the range, in one-picosecond buckets: the horizon's arithmetic
    /// cannot overflow.
    #[test]
    fn the_calendar_takes_the_last_times() {
        let mut q = CalendarQueue::<u32>::new(0, 6);
        q.push(Time(u64::MAX - 1), 0, 0);
        q.push(Time(u64::MAX), 1, 1);
        q.push(Time(u64::MAX - 100), 2, 2);
        let order: Vec<u32> = drain(&mut q).into_iter().map(|e| e.2).collect();
        assert_eq!(order, [2, 0, 1]);
    }

    /// A shard's calendar covers the same horizon as the whole run's in fewer, wider
    /// buckets: 2^16 / parts, rounded up to a power of two, never under 2^10; one part is
    /// `covering`'s shape.
    #[test]
    fn a_share_of_the_events_gets_fewer_wider_buckets() {
        let span = crate::units::Duration::from_ns(1_100); // 1 µs link, a frame's 100 ns
        let shape = |parts| {
            let q = CalendarQueue::<u32>::covering_share(span, parts);
            (q.buckets(), q.shift)
        };
        let whole = CalendarQueue::<u32>::covering(span);
        assert_eq!((whole.buckets(), whole.shift), (1 << 16, 6));
        assert_eq!(shape(0), shape(1));
        assert_eq!(shape(1), (1 << 16, 6));
        assert_eq!(shape(2), (1 << 15, 7));
        assert_eq!(shape(3), (1 << 14, 8)); // three shards: a quarter each, rounded
        assert_eq!(shape(32), (1 << 11, 11));
        assert_eq!(shape(64), (1 << 10, 12));
        assert_eq!(shape(1 << 20), (1 << 10, 12));
        for parts in [1, 2, 3, 32, 64, 1000] {
            let (n, shift) = shape(parts);
            let horizon = (n as u64) << shift;
            assert!(horizon >= 2 * span.0 && horizon < 4 * span.0, "{parts}: {horizon}");
        }
    }

    /// The calendar's buckets double while it fills (from 64 to 4096 here, the width going
    /// from 2^20 ps down to 2^14) and its order stays `(time, seq)`, events at equal times in
    /// their `seq` order included; a long run of pops and pushes over many turns of the ring
    /// and far heap then drains in order too.
    #[test]
    fn the_calendar_grows_and_keeps_its_order() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut model = BinaryHeapQueue::default();
        let mut q = CalendarQueue::new(20, 6);
        let mut seq = 0u64;
        for _ in 0..1000 {
            let t = Time(rng.gen_range(0..1u64 << 26) & !0xfff);
            seq += 1;
            let s = seq * 7919 % 1_000_003;
            model.push(t, s, seq as u32);
            q.push(t, s, seq as u32);
        }
        assert_eq!(q.buckets(), 4096);
        assert_eq!(q.shift, 14);
        for _ in 0..100_000 {
            let e = q.pop();
            assert_eq!(e, model.pop());
            let now = e.expect("as many pushes as pops").0;
            seq += 1;
            let scale = rng.gen_range(0..30);
            let t = now + crate::units::Duration(rng.gen_range(0..1u64 << scale));
            model.push(t, seq, seq as u32);
            q.push(t, seq, seq as u32);
            assert_eq!(q.len(), model.len());
        }
        assert_eq!(drain(&mut q), drain(&mut model));
    }

    /// Events ~70 µs apart (a TCP run on a slow bottleneck) widen the buckets to a 64th of
    /// the gap after two reviews; events 100 ps apart narrow them back to the first width at
    /// the next review. Fifty events stay queued at random offsets throughout, and the order
    /// stays `(time, seq)`.
    #[test]
    fn the_calendar_follows_the_gap_between_events() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut model = BinaryHeapQueue::default();
        let mut q = CalendarQueue::new(6, 16);
        let mut seq = 0u64;
        let mut push = |q: &mut CalendarQueue<u32>, model: &mut BinaryHeapQueue<u32>, t: u64| {
            seq += 1;
            let s = seq * 7919 % 1_000_003;
            q.push(Time(t), s, seq as u32);
            model.push(Time(t), s, seq as u32);
        };
        for _ in 0..50 {
            let t = rng.gen_range(0..100_000_000u64);
            push(&mut q, &mut model, t);
        }
        let mut run = |q: &mut CalendarQueue<u32>, n: u32, mean_gap: u64| {
            for _ in 0..n {
                let e = q.pop();
                assert_eq!(e, model.pop());
                let now = e.expect("as many pushes as pops").0;
                // Each pop queues one event up to 100 gaps ahead: with 50 queued, one pops
                // about every `mean_gap`.
                push(q, &mut model, now.0 + rng.gen_range(0..100 * mean_gap));
            }
        };
        run(&mut q, REVIEW_POPS - 1, 70_000_000);
        assert_eq!(q.shape(), (6, 1 << 16), "no review yet");
        run(&mut q, REVIEW_POPS, 70_000_000);
        assert_eq!(q.shape(), (6, 1 << 16), "one review asks for wider buckets, a second must");
        run(&mut q, REVIEW_POPS, 70_000_000);
        // A gap of ~70 µs (2^26 ps): buckets of 2^20 ps, the count kept.
        assert_eq!((q.shape(), q.reshapes()), ((20, 1 << 16), 1));
        // The review at the first of these pops still covers sparse events; the next one
        // finds them dense.
        run(&mut q, REVIEW_POPS, 100);
        assert_eq!(q.shape(), (20, 1 << 16));
        run(&mut q, 1, 100);
        assert_eq!(q.shape(), (6, 1 << 16), "back to the first width");
        assert_eq!(q.reshapes(), 2);
        assert_eq!(q.len(), model.len());
        assert_eq!(drain(&mut q), drain(&mut model));
    }

    /// A queue whose buckets grew narrower than its first width (it holds many events) is not
    /// rebuilt by reviews of dense pops: it would only grow back. And a first width above the
    /// widest a review makes does not stop a review.
    #[test]
    fn reviews_leave_a_grown_queue_and_wide_first_buckets_alone() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for (shift, grown) in [(10, (6, 1 << 10)), (45, (41, 1 << 10))] {
            let mut model = BinaryHeapQueue::default();
            // 64 buckets, reviewed every 4 pops; 200 events queued double them four times.
            let mut q = CalendarQueue::with_review(shift, 6, 2);
            let mut seq = 0u64;
            for _ in 0..200 {
                seq += 1;
                let t = Time(rng.gen_range(0..1_000_000));
                q.push(t, seq, seq as u32);
                model.push(t, seq, seq as u32);
            }
            assert_eq!(q.shape(), grown);
            for _ in 0..10_000 {
                let e = q.pop();
                assert_eq!(e, model.pop());
                seq += 1;
                let t = e.expect("as many pushes as pops").0 + crate::units::Duration(1000);
                q.push(t, seq, seq as u32);
                model.push(t, seq, seq as u32);
            }
            assert_eq!((q.shape(), q.reshapes()), (grown, 0));
            assert_eq!(drain(&mut q), drain(&mut model));
        }
    }

    proptest! {
        /// Interleaved pushes (never earlier than the last pop) and pops give the same
        /// sequence from the radix queue and the timing wheel as from the binary heap.
        #[test]
        fn other_queues_match_binary_heap(ops in proptest::collection::vec((0u64..3, 0u64..40, proptest::bool::ANY), 1..400)) {
            let mut a = BinaryHeapQueue::default();
            let mut b = RadixQueue::default();
            let mut w = WheelQueue::new(3, 4);
            let mut h = TwoHeapQueue::default();
            // 64 buckets of 8 ps at first (a 512 ps horizon: the large steps go far), which
            // double from 17 events queued on.
            let mut c = CalendarQueue::new(3, 6);
            // 16,384 buckets of 1 ps: a ring of 256 bitmap words, 4 summary words, that the
            // medium steps leave sparse (searches skip words through the summary, and wrap).
            let mut c2 = CalendarQueue::new(0, 14);
            // Reviewing its width every 4 pops: the big steps widen its buckets, the small
            // ones narrow them again, and every reshape moves ring and far events.
            let mut c3 = CalendarQueue::with_review(0, 6, 2);
            let mut now = 0u64;
            let mut seq = 0u64;
            for (kind, dt, big) in ops {
                if kind == 0 && !a.is_empty() {
                    // Nothing is popped before the head's time.
                    let head = a.peek_time().expect("non-empty");
                    if head > Time::ZERO {
                        prop_assert!(h.pop_until(Time(head.0 - 1)).is_none());
                        prop_assert_eq!(h.len(), a.len());
                        prop_assert!(c.pop_until(Time(head.0 - 1)).is_none());
                        prop_assert_eq!(c.len(), a.len());
                        prop_assert!(c2.pop_until(Time(head.0 - 1)).is_none());
                        prop_assert!(c2.pop_until_peek(Time(head.0 - 1)).is_none());
                        prop_assert_eq!(c2.len(), a.len());
                    }
                    let x = a.pop();
                    let y = b.pop();
                    let z = w.pop();
                    let v = if kind == 0 && dt.is_multiple_of(2) { h.pop_until(Time(u64::MAX)) } else { h.pop() };
                    // The fused pop gives the event a pop gives, and the next one as a peek
                    // after the pop would.
                    let fused = |q: &mut CalendarQueue<u32>, next: Option<&u32>| {
                        let r = q.pop_until_peek(Time(u64::MAX));
                        if let Some((_, n)) = r {
                            assert_eq!(n.as_ref(), next, "the event after the pop");
                        }
                        r.map(|(e, _)| e)
                    };
                    let u = match dt % 3 {
                        0 => c.pop_until(Time(u64::MAX)),
                        1 => fused(&mut c, a.peek_event()),
                        _ => c.pop(),
                    };
                    let u2 = match dt % 5 {
                        0 => c2.pop_until(Time(u64::MAX)),
                        1 | 2 => fused(&mut c2, a.peek_event()),
                        _ => c2.pop(),
                    };
                    prop_assert_eq!(c2.peek_event(), a.peek_event());
                    let u3 = if dt % 2 == 0 { fused(&mut c3, a.peek_event()) } else { c3.pop() };
                    prop_assert_eq!(c3.peek_event(), a.peek_event());
                    prop_assert_eq!(x.map(|e| (e.0, e.1, e.2)), u3.map(|e| (e.0, e.1, e.2)));
                    prop_assert_eq!(x.map(|e| (e.0, e.1, e.2)), u2.map(|e| (e.0, e.1, e.2)));
                    prop_assert_eq!(h.peek_event(), a.peek_event());
                    prop_assert_eq!(c.peek_event(), a.peek_event());
                    prop_assert_eq!(x.map(|e| (e.0, e.1, e.2)), u.map(|e| (e.0, e.1, e.2)));
                    prop_assert_eq!(x.map(|e| (e.0, e.1, e.2)), y.map(|e| (e.0, e.1, e.2)));
                    prop_assert_eq!(x.map(|e| (e.0, e.1, e.2)), v.map(|e| (e.0, e.1, e.2)));
                    prop_assert_eq!(x.map(|e| (e.0, e.1, e.2)), z.map(|e| (e.0, e.1, e.2)));
                    now = x.unwrap().0 .0;
                } else {
                    // Small steps, medium ones (up to 20 ns: sparse in `c2`'s ring, some beyond
                    // it) and big ones (far beyond every ring).
                    let t = now + match (big, dt % 2) {
                        (false, _) => dt,
                        (true, 1) => dt << 9,
                        (true, _) => dt << 20,
                    };
                    // seq is unique but not monotone in time
                    let s = (seq * 7919) % 100_003 + seq * 100_003;
                    seq += 1;
                    a.push(Time(t), s, seq as u32);
                    b.push(Time(t), s, seq as u32);
                    w.push(Time(t), s, seq as u32);
                    c.push(Time(t), s, seq as u32);
                    c2.push(Time(t), s, seq as u32);
                    c3.push(Time(t), s, seq as u32);
                    // Every third event goes to the second heap.
                    if seq.is_multiple_of(3) {
                        h.push_aside(Time(t), s, seq as u32);
                    } else {
                        h.push(Time(t), s, seq as u32);
                    }
                }
                prop_assert_eq!(a.len(), b.len());
                prop_assert_eq!(a.len(), w.len());
                prop_assert_eq!(a.len(), h.len());
                prop_assert_eq!(a.len(), c.len());
                prop_assert_eq!(a.len(), c2.len());
                prop_assert_eq!(a.len(), c3.len());
                prop_assert_eq!(a.peek_time(), EventQueue::peek_time(&mut c3));
                prop_assert_eq!(a.peek_time(), h.peek_time());
                prop_assert_eq!(a.peek_time(), EventQueue::peek_time(&mut c2));
                prop_assert_eq!(a.peek_time(), EventQueue::peek_time(&mut c));
                let p = a.peek_time();
                prop_assert_eq!(p, b.peek_time());
                prop_assert_eq!(p, w.peek_time());
                // The contract: nothing is pushed before the minimum last seen.
                now = now.max(p.map_or(0, |t| t.0));
            }
            let da = drain(&mut a);
            prop_assert_eq!(&da, &drain(&mut b));
            prop_assert_eq!(&da, &drain(&mut w));
            prop_assert_eq!(&da, &drain(&mut h));
            prop_assert_eq!(&da, &drain(&mut c));
            prop_assert_eq!(&da, &drain(&mut c2));
            prop_assert_eq!(&da, &drain(&mut c3));
        }

        #[test]
        fn heaps_pop_in_key_order(items in proptest::collection::vec((0u64..50, 0u64..1_000_000), 0..300)) {
            let mut a = BinaryHeapQueue::default();
            let mut b = QuadHeapQueue::default();
            let mut c = TwoHeapQueue::default();
            let mut expect = Vec::new();
            for (i, (t, s)) in items.iter().enumerate() {
                let seq = s * 1000 + i as u64; // unique
                a.push(Time(*t), seq, i as u32);
                b.push(Time(*t), seq, i as u32);
                c.push(Time(*t), seq, i as u32);
                expect.push((Time(*t), seq, i as u32));
            }
            expect.sort_by_key(|e| (e.0, e.1));
            prop_assert_eq!(drain(&mut a), expect.clone());
            prop_assert_eq!(drain(&mut b), expect.clone());
            prop_assert_eq!(drain(&mut c), expect);
        }

        /// The heap's unchecked moves neither lose nor duplicate an entry, and an entry a pop
        /// took is replaced by the next push into its heap or removed by the next pop: any mix
        /// of pushes into either heap and pops gives every event once, in key order, as the
        /// standard library's heap does, with the same length and next event throughout.
        #[test]
        fn the_heap_gives_each_event_once(items in proptest::collection::vec((0u64..50, 0u64..1_000_000, 0u8..4), 0..300)) {
            let mut model = BinaryHeapQueue::default();
            let mut q = TwoHeapQueue::default();
            let mut now = 0;
            for (i, (t, s, op)) in items.iter().enumerate() {
                let (t, seq) = (now + t, s * 1000 + i as u64);
                match op {
                    0 => q.push(Time(t), seq, i as u32),
                    1 => q.push_aside(Time(t), seq, i as u32),
                    _ => {
                        let e = q.pop();
                        prop_assert_eq!(e, model.pop());
                        now = e.map_or(now, |e| e.0 .0);
                    }
                }
                if *op < 2 {
                    model.push(Time(t), seq, i as u32);
                }
                prop_assert_eq!(q.len(), model.len());
                prop_assert_eq!(q.peek_event(), model.peek_event());
            }
            prop_assert_eq!(drain(&mut q), drain(&mut model));
        }
    }
}
