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
    /// The time of the next event.
    fn peek_time(&self) -> Option<Time>;
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
}

impl<E> EventQueue<E> for BinaryHeapQueue<E> {
    #[inline]
    fn push(&mut self, time: Time, seq: u64, ev: E) {
        self.heap.push(Entry { key: key(time, seq), ev });
    }
    #[inline]
    fn pop(&mut self) -> Option<(Time, u64, E)> {
        self.heap.pop().map(|e| (Time((e.key >> 64) as u64), e.key as u64, e.ev))
    }
    #[inline]
    fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| Time((e.key >> 64) as u64))
    }
    fn len(&self) -> usize {
        self.heap.len()
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
        Some((Time((top.key >> 64) as u64), top.key as u64, top.ev))
    }
    fn peek_time(&self) -> Option<Time> {
        self.v.first().map(|e| Time((e.key >> 64) as u64))
    }
    fn len(&self) -> usize {
        self.v.len()
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

    proptest! {
        #[test]
        fn heaps_pop_in_key_order(items in proptest::collection::vec((0u64..50, 0u64..1_000_000), 0..300)) {
            let mut a = BinaryHeapQueue::default();
            let mut b = QuadHeapQueue::default();
            let mut expect = Vec::new();
            for (i, (t, s)) in items.iter().enumerate() {
                let seq = s * 1000 + i as u64; // unique
                a.push(Time(*t), seq, i as u32);
                b.push(Time(*t), seq, i as u32);
                expect.push((Time(*t), seq, i as u32));
            }
            expect.sort_by_key(|e| (e.0, e.1));
            prop_assert_eq!(drain(&mut a), expect.clone());
            prop_assert_eq!(drain(&mut b), expect);
        }
    }
}
