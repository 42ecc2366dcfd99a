//! Criterion benchmarks of the model.json layer: `pyjson::loads`,
//! `load_program` and `dump_program` on `tests/data/programs/*.json` and on
//! a ~10 MB program made by repeating the nodes of `cond.json`.

// The CLI's allocator, so the benches time what `torchspec` runs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

use torchspec::export::schema::{dump_program, load_program, Mode};
use torchspec::pyjson::{self, PyJson};

/// `cond.json` with its nodes and tensor values repeated (renamed) until
/// the document passes 10 MB.
fn big_program() -> String {
    let text = include_str!("../tests/data/programs/cond.json");
    let mut doc = pyjson::loads(text).expect("cond.json reads");
    let PyJson::Object(top) = &mut doc else {
        panic!("an object")
    };
    let PyJson::Object(gm) = &mut top[0].1 else {
        panic!("graph_module")
    };
    let PyJson::Object(graph) = &mut gm[0].1 else {
        panic!("graph")
    };
    let find = |g: &Vec<(String, PyJson)>, k: &str| g.iter().position(|(n, _)| n == k).unwrap();
    let (ni, ti) = (find(graph, "nodes"), find(graph, "tensor_values"));
    let PyJson::List(nodes) = graph[ni].1.clone() else {
        panic!("nodes")
    };
    let PyJson::Object(values) = graph[ti].1.clone() else {
        panic!("tensor_values")
    };
    let (mut all_nodes, mut all_values) = (Vec::new(), Vec::new());
    let mut i = 0;
    while all_nodes.len() * 1200 < 10_000_000 {
        all_nodes.extend(nodes.iter().cloned());
        all_values.extend(values.iter().map(|(k, v)| (format!("{k}_{i}"), v.clone())));
        i += 1;
    }
    graph[ni].1 = PyJson::List(all_nodes);
    graph[ti].1 = PyJson::Object(all_values);
    pyjson::dumps(&doc).expect("dumps")
}

fn bench(c: &mut Criterion) {
    let mut inputs = vec![(
        "linear",
        include_str!("../tests/data/programs/linear.json").to_string(),
    )];
    inputs.push(("big", big_program()));
    for (name, text) in &inputs {
        let bytes = text.as_bytes();
        let program = load_program(bytes, Mode::Default).expect("loads").program;
        let mut g = c.benchmark_group(format!("schema/{name}"));
        if *name == "big" {
            g.sample_size(10);
        }
        g.bench_function("pyjson_loads", |b| {
            b.iter(|| pyjson::loads(black_box(text)).expect("loads"))
        });
        g.bench_function("load_program", |b| {
            b.iter(|| load_program(black_box(bytes), Mode::Default).expect("loads"))
        });
        g.bench_function("dump_program", |b| {
            b.iter(|| dump_program(black_box(&program)))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
