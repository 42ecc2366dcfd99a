//! Mirrors the part of `torch.fx.GraphModule(root, graph)`'s code
//! generation (torch/fx/graph.py's `magic_methods`) a loaded graph can
//! fail, which `_create_graph_module_for_export` meets for each subgraph
//! and for the root.

use crate::failure::LoadFailure;
use crate::fx::{Graph, Op};

/// `magic_methods` of torch/fx/graph.py: the `_operator` functions
/// `CodeGen` prints as Python operators, with one `{}` per operand.
pub(super) const MAGIC_METHODS: &[(&str, usize)] = &[
    ("eq", 2),
    ("ne", 2),
    ("lt", 2),
    ("gt", 2),
    ("le", 2),
    ("ge", 2),
    ("pos", 1),
    ("neg", 1),
    ("invert", 1),
    ("add", 2),
    ("sub", 2),
    ("mul", 2),
    ("floordiv", 2),
    ("truediv", 2),
    ("div", 2),
    ("mod", 2),
    ("pow", 2),
    ("lshift", 2),
    ("rshift", 2),
    ("and_", 2),
    ("or_", 2),
    ("xor", 2),
    ("getitem", 2),
    ("matmul", 2),
];

/// The part of `torch.fx.GraphModule(root, graph)`'s `recompile()` a
/// loaded graph can fail: an `_operator` call is printed as
/// `magic_methods[name].format(*args)`, and too few arguments for its
/// operands is `str.format`'s `IndexError`. (`_create_graph_module_for_export`
/// builds each subgraph's module when the subgraph is read, the root's
/// after the module call graph.)
pub fn check_codegen(g: &Graph) -> Result<(), LoadFailure> {
    for (_, n) in g.nodes() {
        if n.op != Op::CallFunction {
            continue;
        }
        let Some(name) = n.target.strip_prefix("operator.") else {
            continue;
        };
        let operands = MAGIC_METHODS.iter().find(|(m, _)| *m == name);
        if let Some(&(_, operands)) = operands {
            if n.args.len() < operands {
                return Err(LoadFailure::py(
                    "IndexError",
                    format!(
                        "Replacement index {} out of range for positional args tuple",
                        n.args.len()
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fx::Arg;

    fn call(target: &str, nargs: usize) -> Graph {
        let mut g = Graph::new();
        let x = g.create_node(Op::Placeholder, "x", vec![], vec![], None);
        let args = vec![Arg::Node(x); nargs];
        g.create_node(Op::CallFunction, target, args, vec![], None);
        g
    }

    #[test]
    fn codegen_needs_an_operand_per_placeholder() {
        let err = |g: &Graph| match check_codegen(g) {
            Err(LoadFailure::Python { exception, message }) => Some((exception, message)),
            _ => None,
        };
        assert_eq!(
            err(&call("operator.mul", 1)),
            Some((
                "IndexError".into(),
                "Replacement index 1 out of range for positional args tuple".into()
            ))
        );
        assert!(err(&call("operator.neg", 0)).is_some_and(|(_, m)| m.contains("index 0")));
        assert_eq!(err(&call("operator.neg", 1)), None);
        // Extra arguments are ignored by `str.format`.
        assert_eq!(err(&call("operator.add", 3)), None);
        assert_eq!(err(&call("torch.ops.aten.add.Tensor", 0)), None);
    }
}
