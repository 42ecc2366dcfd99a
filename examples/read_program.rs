//! Reads an exported program (`.pt2` from `torch.export.save`, or the
//! program JSON) and prints what `torch.export.load` would show: the graph,
//! the signature, the call spec and the range constraints.
//!
//! ```sh
//! cargo run --example read_program -- corpus/programs/multi-output.pt2
//! # a program whose custom ops / pytree types its library registers:
//! cargo run --example read_program -- corpus/programs/custom-op.pt2 corpus/programs/registrations.json
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use torchspec::export::registrations::Registrations;
use torchspec::export::schema::Mode;
use torchspec::export::ExportedProgram;

fn main() -> Result<(), torchspec::Error> {
    let path: PathBuf = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| "corpus/programs/multi-output.pt2".into());
    // What the loading process registered (custom ops, pytree types), if
    // given: `oracle/registrations.py` writes the file from a live process.
    let registrations = match std::env::args_os().nth(2) {
        Some(file) => Arc::new(Registrations::read(PathBuf::from(file))?),
        None => Registrations::plain().clone(),
    };
    let ep = ExportedProgram::load_path_in(&path, Mode::Default, &registrations)?;
    let gm = &ep.graph_module;
    println!("{}", gm.graph.to_python_string());
    println!("{}", gm.signature);
    println!("range constraints: {}", gm.range_constraints);
    println!("parameters: {:?}", gm.signature.parameters());
    if let Some(state_dict) = &ep.state_dict {
        for entry in state_dict {
            if let Ok(t) = &entry.meta {
                println!("{}: {:?} {}", entry.name, t.shape, t.dtype);
            }
        }
    }
    // Run a pass as `ep._transform_do_not_use` would and look again.
    let passes = ["remove-runtime-assertions".to_string(), "dce".to_string()];
    match torchspec::export::passes::transform(&ep, &passes) {
        Ok(t) => println!("after passes:\n{}", t.graph_module.graph.to_python_string()),
        Err(e) => println!("the passes raise: {e:?}"),
    }
    Ok(())
}
