//! Mirrors the part of `torch.fx.GraphModule(root, graph)`'s code
//! generation (torch/fx/graph.py's `magic_methods`) a loaded graph can
//! fail, which `_create_graph_module_for_export` meets for each subgraph
//! and for the root.

use crate::failure::LoadFailure;
use crate::fx::{Graph, Op};
use crate::model::{LoadedGraphModule, SubGraph};
use torchspec_pyval::Raise;

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
                return Err(Raise::new(
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

/// Python's keywords: a name `CodeGen` writes as a variable cannot be one.
const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// `str.isidentifier()` of a name that is not a keyword: what a
/// placeholder's target must be for `def forward(self, ...)` to compile.
fn python_variable(name: &str) -> bool {
    torchspec_pyval::is_identifier(name) && !KEYWORDS.contains(&name)
}

/// Whether `CodeGen`'s source for `g` is a `SyntaxError`: it writes each
/// node under a name `_Namespace` makes legal, but a placeholder as its
/// target, which the deserializer sets to the serialized input name
/// (`self.graph.placeholder(name)`), so one that is no Python identifier
/// (`😀_x`) or is a keyword does not compile.
fn code_fails(g: &Graph) -> bool {
    g.nodes()
        .any(|(_, n)| n.op == Op::Placeholder && !python_variable(&n.target))
}

/// `ExportedProgram.__init__`'s `_create_graph_module_for_export(root,
/// graph)` after a root whose module did not compile.
///
/// `_create_graph_module_for_export` catches a `SyntaxError` and returns
/// `GraphModule(root, Graph())` with the graph swapped in: a module that
/// copied no attribute. A module's `recompile()` also recompiles its
/// children (`_recompile_submodules`), so the root fails when its own code
/// or a direct subgraph's does. The constructor then builds a module from
/// the root's, and `_copy_attr` of its first `get_attr` target is
/// `AttributeError: 'GraphModule' object has no attribute '...'`. With no
/// `get_attr` node the program loads (with the code of an empty graph).
/// A deeper subgraph that fails leaves its parent without attributes,
/// which is not modelled.
pub fn lost_attribute(gm: &LoadedGraphModule) -> Option<LoadFailure> {
    let fails = code_fails(&gm.graph) || gm.submodules.iter().any(|s| code_fails(&s.graph));
    if !fails {
        let deeper = |s: &SubGraph| s.submodules.iter().any(subtree_fails);
        return gm.submodules.iter().any(deeper).then(|| {
            Raise::unsupported(
                "a subgraph of a subgraph whose code does not compile (a placeholder that is \
                 no Python identifier): its parent loses its attributes",
            )
        });
    }
    let (_, first) = gm.graph.nodes().find(|(_, n)| n.op == Op::GetAttr)?;
    let attr = first.target.split('.').next().unwrap_or_default();
    Some(Raise::new(
        "AttributeError",
        format!("'GraphModule' object has no attribute '{attr}'"),
    ))
}

/// Whether `s` or any subgraph under it does not compile.
fn subtree_fails(s: &SubGraph) -> bool {
    code_fails(&s.graph) || s.submodules.iter().any(subtree_fails)
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
            Err(Raise::Exception(e)) => Some((e.type_name, e.message)),
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
