//! Criterion benchmark of `torchspec eval` on a large generated case file:
//! 10,000 cases, 2,500 each of `build`, `derived`, `lookup` and
//! `source_name` (`torchspec gen --kind K --seed 7 --count 2500`,
//! concatenated), read from memory, results written to memory: everything
//! but process start-up. `oracle/eval_timing.py` times the same file in
//! PyTorch (`capture.py`'s reading and per-case loop, its start-up and the
//! torch import excluded); `oracle/bench-ratio.sh eval` prints the ratio.
//!
//! Times are CPU time of the thread (Python's side: of the process), not
//! wall time: the ratio holds on a loaded machine.
//! `TORCHSPEC_EVAL_FILE=PATH` benchmarks that file instead.

// The CLI's allocator, so the benches time what `torchspec` runs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};

use torchspec::case::file::eval_cases;
use torchspec::testing::{derived, lookup, sample, strategies};

/// The bench file, as `oracle/bench-ratio.sh` writes it with `torchspec gen`.
fn generated() -> String {
    let seed = 7;
    let n = 2500;
    let cases = [
        sample(strategies::build_case(), seed, n, "gen-build-s7"),
        sample(derived::derived_case(), seed, n, "derived-gen-s7"),
        sample(lookup::lookup_case(), seed, n, "gen-lookup-s7"),
        sample(lookup::source_name_case(), seed, n, "gen-source-name-s7"),
    ];
    let mut text = String::new();
    for case in cases.iter().flatten() {
        text.push_str(&case.to_json().to_string());
        text.push('\n');
    }
    text
}

#[path = "common/cpu.rs"]
mod cpu;
use cpu::thread_cpu;

fn bench(c: &mut Criterion) {
    let (name, text) = match std::env::var_os("TORCHSPEC_EVAL_FILE") {
        Some(path) => {
            let path = std::path::PathBuf::from(path);
            let name = path
                .file_stem()
                .expect("a file name")
                .to_string_lossy()
                .into_owned();
            (
                name,
                std::fs::read_to_string(&path).expect("the bench file reads"),
            )
        }
        None => ("mixed10k".to_string(), generated()),
    };
    let mut out = Vec::with_capacity(text.len() * 2);
    let mut group = c.benchmark_group("eval");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function(name.as_str(), |b| {
        b.iter_custom(|iters| {
            let start = thread_cpu();
            for _ in 0..iters {
                out.clear();
                eval_cases(|| Ok(text.as_bytes()), &mut out).expect("the bench file evaluates");
            }
            thread_cpu() - start
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
