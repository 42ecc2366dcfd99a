//! Reading a program out of a large `.pt2` (`torchspec program`'s work:
//! load + report), on the archives `oracle/big_archive.py` writes into
//! `target/bench/` (0.5 GB and 4 GB of `nn.Linear(4096, 4096)` weights);
//! `oracle/archive_timing.py` times `torch.export.load` + report on the
//! same files (`oracle/bench-ratio.sh archive` writes them first). The
//! report needs only `models/model.json` and the configs of the mapped
//! archive, so its time does not grow with the weights.

// The CLI's allocator, so the benches time what `torchspec` runs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{criterion_group, criterion_main, Criterion};
use std::path::PathBuf;
use torchspec::export::ExportedProgram;

/// Keep in step with oracle/archive_timing.py and oracle/bench-ratio.sh.
const ARCHIVES: &[&str] = &["big-0.5g", "big-4g"];

fn bench(c: &mut Criterion) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench");
    for name in ARCHIVES {
        let path = dir.join(format!("{name}.pt2"));
        assert!(
            path.exists(),
            "{} is missing: run `.oracle/bin/python oracle/big_archive.py {}` \
             (or oracle/bench-ratio.sh archive, which writes it)",
            path.display(),
            path.display()
        );
        c.bench_function(&format!("archive/report/{name}"), |b| {
            b.iter(|| {
                let ep = ExportedProgram::load_path(&path).expect("the archive loads");
                ep.report()
            })
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
