//! Criterion benchmarks of `repr`, `to_jsonable` and lookups on the cases in
//! `benches/inputs.jsonl`; `oracle/timing.py` times the same inputs in
//! PyTorch and `oracle/bench-ratio.sh` prints the ratio.
//!
//! `to_jsonable` is timed as `eval` runs it: written straight to JSON text
//! (`case/text.rs`, `enc` included), where PyTorch's side builds the dict.
//!
//! Times are CPU time of the thread (Python's side: of the process), not
//! wall time, as in `benches/eval.rs`: the ratio holds on a loaded machine.

// The CLI's allocator, so the benches time what `torchspec` runs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Bencher, Criterion};

use torchspec::case::eval::Env;
use torchspec::case::file::parse_cases;
use torchspec::case::text::write_jsonable;
use torchspec::case::CaseBody;
use torchspec::source::lookup::lookup_spec_from_dynamo_source;
use torchspec::spec::ShapesSpec;

#[path = "common/cpu.rs"]
mod cpu;
use cpu::thread_cpu;

/// `b.iter(f)`, timed in thread CPU time.
fn iter_cpu<T>(b: &mut Bencher, mut f: impl FnMut() -> T) {
    b.iter_custom(|iters| {
        let start = thread_cpu();
        for _ in 0..iters {
            black_box(f());
        }
        thread_cpu() - start
    })
}

fn bench(c: &mut Criterion) {
    let cases = parse_cases(include_str!("inputs.jsonl")).expect("bench inputs parse");
    for (_, case) in &cases {
        let env = Env::new(&case.vars).expect("bench vars construct");
        if let CaseBody::Lookup { spec, source } = &case.body {
            let source = env.source(source).expect("bench source constructs");
            let spec = env.eval(spec).expect("bench spec builds");
            let shapes = spec.downcast::<ShapesSpec>();
            c.bench_function(&format!("lookup/{}", case.id), |b| {
                // The result is looked at in place and dropped, as `eval`
                // does; moving it out through `black_box` would time a
                // 40-byte copy (and its store-forwarding stall) as well.
                iter_cpu(b, || {
                    let found =
                        lookup_spec_from_dynamo_source(black_box(&source), black_box(shapes));
                    black_box(&found);
                    assert!(found.is_ok(), "lookup");
                })
            });
            continue;
        }
        let CaseBody::Build { value } = &case.body else {
            continue;
        };
        let v = env.eval(value).expect("bench value builds");
        c.bench_function(&format!("repr/{}", case.id), |b| {
            iter_cpu(b, || black_box(&v).repr().expect("repr"))
        });
        c.bench_function(&format!("to_jsonable/{}", case.id), |b| {
            // `to_jsonable` as `eval` runs it: straight to the result's
            // JSON text (`enc` included), into a buffer reused per call.
            let (mut out, mut scratch) = (Vec::new(), String::new());
            iter_cpu(b, || {
                out.clear();
                write_jsonable(&mut out, black_box(&v), &mut scratch).expect("to_jsonable");
                out.len()
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
