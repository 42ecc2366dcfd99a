//! `reader-inspect FILE.pt2`: a program's inputs, ranges, operators and parameters.
use std::collections::BTreeMap;

fn main() -> Result<(), torchspec_export::Error> {
    let program = torchspec_export::open(std::env::args().nth(1).unwrap_or_default())?;
    for input in program.inputs() {
        println!("input {}: {}", input.name, input.ty);
    }
    for (symbol, range) in program.ranges() {
        println!("range {symbol}: {range}");
    }
    let mut histogram = BTreeMap::new();
    for node in program.graphs().flat_map(|g| g.nodes()) {
        if node.op() == torchspec_export::Op::CallFunction {
            *histogram.entry(node.target()).or_insert(0) += 1;
        }
    }
    for (target, count) in histogram {
        println!("op {target}: {count}");
    }
    for t in program.tensors()?.filter(|t| t.is_param()) {
        let first: Vec<String> = t.values().take(4).map(|v| v.to_string()).collect();
        let (name, dtype, shape) = (t.name(), t.dtype(), t.shape());
        println!("param {name} {dtype} {shape:?}: {}", first.join(", "));
    }
    Ok(())
}
