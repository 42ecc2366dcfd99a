//! Criterion benchmark of derived expressions: building and printing the
//! few hundred random expressions of `benches/derived-inputs.jsonl`
//! (`torchspec gen --kind derived --seed 7 --count 300`). The same work is
//! timed in PyTorch by `oracle/derived_timing.py`;
//! `oracle/bench-ratio.sh derived` prints the ratio.

// The CLI's allocator, so the benches time what `torchspec` runs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

use torchspec::case::eval::Env;
use torchspec::case::file::parse_cases;
use torchspec::case::CaseBody;

fn bench(c: &mut Criterion) {
    let cases = parse_cases(include_str!("derived-inputs.jsonl")).expect("bench inputs parse");
    let bodies: Vec<_> = cases
        .iter()
        .filter_map(|(_, case)| match &case.body {
            CaseBody::Build { value } => Some((case.vars.clone(), value.clone())),
            _ => None,
        })
        .collect();
    c.bench_function("derived/build_print_300", |b| {
        b.iter(|| {
            let mut printed = 0usize;
            for (vars, value) in &bodies {
                // A fresh env per case, as the oracle resets the spec state.
                let Ok(env) = Env::new(vars) else { continue };
                if let Ok(v) = env.eval(black_box(value)) {
                    if let Ok(r) = v.repr() {
                        printed += r.len();
                    }
                }
            }
            black_box(printed)
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
