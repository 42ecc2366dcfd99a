//! Loading exported programs and running passes, on the zoo archives
//! `oracle/program_timing.py` times in PyTorch (`oracle/bench-ratio.sh program`).

// The CLI's allocator, so the benches time what `torchspec` runs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{criterion_group, criterion_main, Criterion};
use std::path::PathBuf;
use torchspec::export::ExportedProgram;

fn bench(c: &mut Criterion) {
    // The pipeline oracle/program_timing.py runs too (oracle/names.json).
    let passes: Vec<String> = torchspec::names::BENCH_PIPELINE
        .iter()
        .map(|p| p.name().to_string())
        .collect();
    for name in ["large-mlp", "attention", "decoder-5k"] {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("corpus/programs")
            .join(format!("{name}.pt2"));
        c.bench_function(&format!("program/report/{name}"), |b| {
            b.iter(|| {
                let ep = ExportedProgram::load_path(&path).expect("zoo program loads");
                ep.report()
            })
        });
        c.bench_function(&format!("program/passes/{name}"), |b| {
            b.iter(|| {
                let ep = ExportedProgram::load_path(&path).expect("zoo program loads");
                let t = torchspec::export::passes::transform(&ep, &passes).expect("passes run");
                t.report()
            })
        });
    }
}

/// `check-inputs` on the probes of the large programs: the checker built
/// once (as the module is in PyTorch's side), every probe checked per
/// iteration. Keep in step with oracle/program_timing.py's `CHECK_INPUTS`.
fn bench_check_inputs(c: &mut Criterion) {
    use torchspec::export::inputs::probe::{all_readable, read_probes};
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/programs");
    for name in ["large-mlp", "decoder-5k"] {
        let ep =
            ExportedProgram::load_path(dir.join(format!("{name}.pt2"))).expect("zoo program loads");
        let probes = all_readable(
            read_probes(dir.join(format!("{name}.probes.jsonl"))).expect("file reads"),
        )
        .expect("probes read");
        let checker = torchspec::export::inputs::InputChecker::new(&ep).expect("checker builds");
        c.bench_function(&format!("program/check-inputs/{name}"), |b| {
            b.iter(|| probes.iter().map(|p| checker.check(p)).collect::<Vec<_>>())
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench, bench_check_inputs
}
criterion_main!(benches);
