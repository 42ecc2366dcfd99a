//! Loads a program, walks its graph and signature, runs a pass pipeline
//! and writes the transformed program back as the `models/model.json`
//! `torch.export.save` would write after the same passes.
//!
//! ```sh
//! cargo run --example run_pass -- corpus/programs/runtime-asserts.pt2 remove-runtime-assertions dce
//! ```

use std::path::PathBuf;

use torchspec::export::passes::transform;
use torchspec::export::{ExportedProgram, LoadOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path: PathBuf = args
        .next()
        .unwrap_or_else(|| "corpus/programs/runtime-asserts.pt2".into())
        .into();
    let mut passes: Vec<String> = args.collect();
    if passes.is_empty() {
        passes = vec!["remove-runtime-assertions".into(), "dce".into()];
    }
    let ep = ExportedProgram::load(&path, &LoadOptions::new())?;
    println!("{}: {} nodes", path.display(), ep.graph_module.graph.len());
    for (_, node) in ep.graph_module.graph.nodes() {
        println!("  {} {}", node.op.as_str(), node.name);
    }
    // A pass PyTorch raises on is a value: `PassError` says what it raised.
    let after = transform(&ep, &passes)?;
    println!(
        "after {}: {} nodes",
        passes.join(" + "),
        after.graph_module.graph.len()
    );
    let json = after.to_json()?;
    println!("models/model.json: {} bytes", json.len());
    Ok(())
}
