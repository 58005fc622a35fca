//! Event-queue micro-benchmark: the "hold" model (pop the earliest event, push one a random
//! delay later) at steady-state queue sizes typical of fabric runs. Reports events/s.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use dcsim::core::event::{
    BinaryHeapQueue, CalendarQueue, EventQueue, QuadHeapQueue, RadixQueue, TwoHeapQueue, WheelQueue,
};
use dcsim::core::units::Time;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// 16-byte payload like the simulator's events.
#[derive(Clone, Copy)]
struct Ev([u32; 4]);

fn hold<Q: EventQueue<Ev> + Default>(size: usize, ops: usize) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut q = Q::default();
    let mut seq = 0u64;
    for _ in 0..size {
        q.push(Time(rng.gen_range(0..1_000_000)), seq, Ev([0; 4]));
        seq += 1;
    }
    let mut acc = 0u64;
    for _ in 0..ops {
        let (t, _, e) = q.pop().expect("non-empty");
        acc = acc.wrapping_add(e.0[0] as u64);
        q.push(Time(t.0 + rng.gen_range(1..200_000)), seq, Ev([seq as u32; 4]));
        seq += 1;
    }
    acc
}

fn bench(c: &mut Criterion) {
    let ops = 200_000;
    let mut g = c.benchmark_group("event_queue_hold");
    g.throughput(Throughput::Elements(ops as u64));
    for size in [64usize, 1024, 16_384] {
        g.bench_with_input(BenchmarkId::new("binary_heap", size), &size, |b, &s| {
            b.iter(|| hold::<BinaryHeapQueue<Ev>>(s, ops))
        });
        // The simulator's queue (2^16 buckets of 64 ps, its shape for 1 µs links, doubling as
        // it fills).
        g.bench_with_input(BenchmarkId::new("calendar", size), &size, |b, &s| {
            b.iter(|| hold::<CalendarQueue<Ev>>(s, ops))
        });
        // The simulator's queue until 2026-11-25 (every event in its main heap here).
        g.bench_with_input(BenchmarkId::new("two_heap", size), &size, |b, &s| {
            b.iter(|| hold::<TwoHeapQueue<Ev>>(s, ops))
        });
        g.bench_with_input(BenchmarkId::new("quad_heap", size), &size, |b, &s| {
            b.iter(|| hold::<QuadHeapQueue<Ev>>(s, ops))
        });
        g.bench_with_input(BenchmarkId::new("radix", size), &size, |b, &s| {
            b.iter(|| hold::<RadixQueue<Ev>>(s, ops))
        });
        g.bench_with_input(BenchmarkId::new("wheel", size), &size, |b, &s| {
            b.iter(|| hold::<WheelQueue<Ev>>(s, ops))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
