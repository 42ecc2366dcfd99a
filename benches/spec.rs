//! Criterion benchmarks of `repr`, `to_jsonable` and lookups on the cases in
//! `benches/inputs.jsonl`; `oracle/timing.py` times the same inputs in
//! PyTorch and `oracle/bench-ratio.sh` prints the ratio.

// The CLI's allocator, so the benches time what `torchspec` runs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

use torchspec::case::eval::Env;
use torchspec::case::file::parse_cases;
use torchspec::case::CaseBody;
use torchspec::source::lookup::lookup_spec_from_dynamo_source;
use torchspec::spec::{jsonable_or_self, ShapesSpec};

fn bench(c: &mut Criterion) {
    let cases = parse_cases(include_str!("inputs.jsonl")).expect("bench inputs parse");
    for (_, case) in &cases {
        let env = Env::new(&case.vars).expect("bench vars construct");
        if let CaseBody::Lookup { spec, source } = &case.body {
            let source = env.source(source).expect("bench source constructs");
            let spec = env.eval(spec).expect("bench spec builds");
            let shapes = spec.downcast::<ShapesSpec>();
            c.bench_function(&format!("lookup/{}", case.id), |b| {
                b.iter(|| {
                    lookup_spec_from_dynamo_source(black_box(&source), black_box(shapes))
                        .expect("lookup")
                })
            });
            continue;
        }
        let CaseBody::Build { value } = &case.body else {
            continue;
        };
        let v = env.eval(value).expect("bench value builds");
        c.bench_function(&format!("repr/{}", case.id), |b| {
            b.iter(|| black_box(&v).repr().expect("repr"))
        });
        c.bench_function(&format!("to_jsonable/{}", case.id), |b| {
            b.iter(|| jsonable_or_self(black_box(&v)).expect("to_jsonable"))
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
