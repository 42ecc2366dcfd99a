//! Mirrors serialize.py's `deserialize_node`: `deserialize_operator` of the
//! target, the dispatch on what it resolved to (symbolic ops, higher-order
//! ops, OpOverloads, other callables), and "handle ShapeEnv asserts".

use super::metadata::check_metadata;
use super::outputs::hop_single_tensor_return;
use super::outputs::sym_output_name;
use super::raw::{
    key_error, name_regex_error, no_attribute, raw_list_use, tensor_name, truthy, Use,
};
use super::state::{Deserializer, R};
use super::symbols::{lambda_key_error, unbacked_int};
use crate::fx::{Arg, NodeId, Op};
use crate::ops::{self, Resolved};
use crate::ranges::Bound;
use crate::schema as wire;
use num_bigint::BigInt;
use torchspec_pyval::pyjson::PyJson;
use torchspec_pyval::Raise;

/// `torch.ops.aten._assert_scalar.default` and friends are recognised by
/// their serialized target string.
pub(super) const SYM_OPS: &[&str] = &[
    "math.trunc",
    "_operator.floordiv",
    "_operator.lt",
    "_operator.eq",
    "_operator.sub",
    "_operator.ne",
    "_operator.mul",
    "_operator.pow",
    "torch.sym_max",
    "_operator.add",
    "torch.sym_not",
    "torch.sym_float",
    "torch.sym_min",
    "_operator.truediv",
    "torch.sym_ite",
    "_operator.or_",
    "_operator.and_",
    "torch._sym_sqrt",
    "_operator.gt",
    "_operator.rshift",
    "torch.sym_int",
    "_operator.ge",
    "_operator.lshift",
    "_operator.le",
    "_operator.pos",
    "_operator.neg",
    "_operator.mod",
    "torch.ops.aten.item.default",
];

/// The higher-order operator `deserialize_node` refuses before any other.
pub(super) const TRITON_FUNCTIONAL: &str =
    "torch.ops.higher_order.triton_kernel_wrapper_functional";

/// What `deserialize_node` says of a target `deserialize_operator` could
/// not resolve, after `We failed to resolve {target} to an operator. `.
pub(super) const UNRESOLVED_HINT: &str =
    "If it's a custom op/custom triton op, this is usually because \
    the custom op is not registered when deserializing. Please import the custom op to \
    register it before deserializing. Otherwise, please file an issue on github.";

/// How a call_function target prints (`_pretty_print_target`): things in
/// `_operator` print as `operator.x`; the rest by their qualified name,
/// which is the serialized string.
pub fn printed_target(serialized: &str) -> String {
    match serialized.strip_prefix("_operator.") {
        Some(rest) => format!("operator.{rest}"),
        None => serialized.to_string(),
    }
}

/// A node name as `deserialize_node` hands it to `create_node`: a str, or
/// a value `_dict_to_dataclass` passed through where the schema has one.
type Candidate<'w> = Result<String, &'w PyJson>;

/// `serialized_node.name` where it is truthy (`if serialized_node.name`).
fn given_name(n: &wire::Node) -> Option<Candidate<'_>> {
    match n.raw_field("name") {
        Some(v) if truthy(v) => Some(Err(v)),
        Some(_) => None,
        None => n.name.clone().filter(|s| !s.is_empty()).map(Ok),
    }
}

/// The name `Graph.create_node` is given: `None` (a value that came as
/// null too) lets fx pick one; any other value that is no str fails
/// `_Namespace.create_name`'s `_name_regex.match`.
fn fx_name(name: Option<Candidate<'_>>) -> R<Option<String>> {
    match name {
        None | Some(Err(PyJson::Null)) => Ok(None),
        Some(Ok(s)) => Ok(Some(s)),
        Some(Err(v)) => Err(name_regex_error(v)),
    }
}

/// What `deserialize_node` makes of a resolved target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TargetKind {
    /// An `OpOverload` (or one of the loader's `_SYM_OPS`, which the
    /// caller tells apart by name).
    OpOverload,
    HigherOrder,
    /// Any other callable (`elif callable(target)`): one of the verifier's
    /// `_allowed_torch_functions` (vmap's `_add_batch_dim`, ...), or an
    /// `OpOverloadPacket`, which the verifier refuses.
    Callable,
}

impl<'w> Deserializer<'w> {
    /// `deserialize_operator(n.target)` and `deserialize_node`'s dispatch on
    /// the result: the canonical target and its kind, or PyTorch's refusal
    /// of a target it cannot resolve.
    pub(super) fn node_target(&self, n: &wire::Node) -> R<(String, TargetKind)> {
        let unsupported_type = |prefix: String, ty: &str| {
            let mut node = String::new();
            n.py_repr(&mut node);
            Raise::new(
                "SerializeError",
                format!("{prefix} Unsupported target type for node {node}: {ty}."),
            )
        };
        // `serialized_target.startswith("_operator")` of a target that is no str.
        if let Some(v) = n.raw_field("target") {
            return Err(no_attribute(v, "startswith"));
        }
        match ops::resolve(&n.target, self.registrations) {
            Resolved::OpOverload(t) => Ok((t, TargetKind::OpOverload)),
            Resolved::HigherOrder(t) if t == TRITON_FUNCTIONAL => Err(Raise::new(
                "SerializeError",
                "deserialize nyi for torch._higher_order_ops.triton_kernel_wrap.triton_kernel_wrapper_functional",
            )),
            Resolved::HigherOrder(t) => Ok((t, TargetKind::HigherOrder)),
            Resolved::Packet(t) => Ok((t, TargetKind::Callable)),
            Resolved::Callable(t) | Resolved::TorchAttr(t) | Resolved::Function(t)
                if SYM_OPS.contains(&t.as_str()) =>
            {
                Ok((t, TargetKind::OpOverload))
            }
            Resolved::Function(t) => Ok((t, TargetKind::Callable)),
            Resolved::Callable(t) | Resolved::TorchAttr(t) => Err(Raise::unsupported(
                format!("call target `{t}` (a Python callable, not an operator)"),
            )),
            Resolved::Str(s) => Err(unsupported_type(
                format!("We failed to resolve {s} to an operator. {UNRESOLVED_HINT}"),
                "<class 'str'>",
            )),
            Resolved::NotCallable(ty) => Err(unsupported_type(String::new(), ty)),
            Resolved::Raises(exception, message) => Err(Raise::new(exception, message)),
            Resolved::Unmodeled(what) => Err(Raise::unsupported(format!(
                "call target `{}` ({what})",
                n.target
            ))),
        }
    }

    pub(super) fn deserialize_node(&mut self, n: &'w wire::Node, origin: u32) -> R<()> {
        let (target, kind) = self.node_target(n)?;
        let printed = printed_target(&target);
        let given_name = given_name(n);
        if SYM_OPS.contains(&target.as_str()) {
            let name = match given_name {
                Some(s) => s,
                None => sym_output_name(n)?.map(str::to_string),
            };
            raw_list_use(n.raw_field("inputs"), Use::Iter("arg"))?;
            let args = n
                .inputs
                .iter()
                .map(|i| self.deserialize_input(&i.arg))
                .collect::<R<Vec<_>>>()?;
            let name = fx_name(Some(name))?;
            let id = self.cx.graph.create_node(
                Op::CallFunction,
                &printed,
                args,
                vec![],
                name.as_deref(),
            );
            self.cx.graph.node_mut(id).meta.origin = Some(origin);
            raw_list_use(n.raw_field("outputs"), Use::Index("value"))?;
            self.sync_name(sym_output_name(n)?, id)?;
            return check_metadata(&n.metadata, self.registrations);
        }
        let (args, kwargs, name) = if kind == TargetKind::Callable {
            // "Handle predispatch wrapper functions": the inputs as a
            // higher-order op's, the name only when given.
            raw_list_use(n.raw_field("inputs"), Use::Iter("kind"))?;
            let (args, kwargs) = self.hoo_inputs(&n.inputs)?;
            (args, kwargs, given_name)
        } else if kind == TargetKind::HigherOrder {
            raw_list_use(n.raw_field("inputs"), Use::Iter("kind"))?;
            let (args, kwargs) = self.hoo_inputs(&n.inputs)?;
            check_metadata(&n.metadata, self.registrations)?;
            let name = given_name.or_else(|| match n.outputs.as_slice() {
                [wire::Argument::AsTensor(t)] if hop_single_tensor_return(n) => {
                    Some(tensor_name(t).map(str::to_string))
                }
                _ => None,
            });
            (args, kwargs, name)
        } else {
            let schema = self.schema_of(&target)?;
            let name = match given_name {
                Some(s) => Some(s),
                // `serialized_node.outputs[0].as_tensor.name if
                // _is_single_tensor_return(target) else None`.
                None if schema.is_single_tensor_return() => match n.outputs.first() {
                    Some(wire::Argument::AsTensor(t)) => Some(tensor_name(t).map(str::to_string)),
                    Some(_) => {
                        // `_Union.__getattr__`: `f"Field {name} is not set."`.
                        return Err(Raise::new(
                            "AttributeError",
                            format!("Field {} is not set.", "as_tensor"),
                        ));
                    }
                    None => return Err(Raise::new("IndexError", "list index out of range")),
                },
                None => None,
            };
            raw_list_use(n.raw_field("inputs"), Use::Iter("name"))?;
            let (args, kwargs) = self.op_inputs(&schema, &n.inputs)?;
            (args, kwargs, name)
        };
        let name = fx_name(name)?;
        let id =
            self.cx
                .graph
                .create_node(Op::CallFunction, &printed, args, kwargs, name.as_deref());
        self.cx.graph.node_mut(id).meta.origin = Some(origin);
        self.deserialize_outputs(n, id, &printed)?;
        // `fx_node.meta.update(self.deserialize_metadata(...))`
        check_metadata(&n.metadata, self.registrations)?;
        self.shape_env_assert(&target, id)
    }

    /// "handle ShapeEnv asserts": `fx_node.args[0].meta["val"]` of an
    /// `_assert_scalar` whose first argument is not a bool, and of every
    /// `sym_constrain_range_for_size`. (What the ShapeEnv then does with
    /// a SymBool or SymInt is not modelled.)
    pub(super) fn shape_env_assert(&self, target: &str, id: NodeId) -> R<()> {
        let bool_skips = match target {
            "torch.ops.aten._assert_scalar.default" => true,
            "torch.ops.aten.sym_constrain_range_for_size.default" => false,
            _ => return Ok(()),
        };
        let node = self.cx.graph.node(id);
        let no_meta = |ty: &str| {
            Raise::new(
                "AttributeError",
                format!("'{ty}' object has no attribute 'meta'"),
            )
        };
        match node.args.first() {
            None => Err(Raise::new("IndexError", "tuple index out of range")),
            Some(Arg::Bool(_)) if bool_skips => Ok(()),
            Some(Arg::Node(arg)) if bool_skips && !self.cx.valueless.contains(arg) => {
                self.runtime_assert(*arg)
            }
            // A subgraph's get_attr node has no `val` either.
            Some(Arg::Node(arg))
                if self.cx.valueless.contains(arg)
                    || self.cx.graph.node(*arg).op == Op::GetAttr =>
            {
                Err(key_error("val"))
            }
            Some(Arg::Node(_)) => Ok(()),
            Some(Arg::Bool(_)) => Err(no_meta("bool")),
            Some(Arg::None) => Err(no_meta("NoneType")),
            Some(Arg::Int(_) | Arg::BigInt(_)) => Err(no_meta("int")),
            Some(Arg::Float(_)) => Err(no_meta("float")),
            Some(Arg::Str(_)) => Err(no_meta("str")),
            Some(Arg::Complex(..)) => Err(no_meta("complex")),
            // FX keeps a node's list and dict arguments as immutable ones.
            Some(Arg::List(_)) => Err(no_meta("immutable_list")),
            Some(Arg::Tuple(_)) => Err(no_meta("tuple")),
            Some(Arg::Dict(_)) => Err(no_meta("immutable_dict")),
            Some(Arg::Torch(_) | Arg::Device(_)) => Err(Raise::unsupported(
                "`.meta` of a torch object as a ShapeEnv assert's argument",
            )),
        }
    }

    /// `shape_env.guard_or_defer_runtime_assert(expr)` of an `_assert_scalar`
    /// on a SymBool, as far as its fast paths go: `_maybe_fast_eval_comparison`
    /// (a sum of terms with non-negative ranges `>= 0` is true), then
    /// `_should_skip_static_eval`'s `var_to_range[u]` of an unbacked symbol
    /// `u` compared with zero (`KeyError` when no range constraint gave it
    /// one). What `_maybe_evaluate_static` decides after is not modelled.
    pub(super) fn runtime_assert(&self, arg: NodeId) -> R<()> {
        use crate::srepr::SumTerm;
        let node = self.cx.graph.node(arg);
        if node.op == Op::GetAttr {
            return Err(key_error("val"));
        }
        let Some(name) = node.meta.val.as_deref() else {
            return Ok(());
        };
        let Some(wire::SymBool::AsExpr(e)) = self.sym_bool_values.get(name).copied() else {
            return Ok(());
        };
        let (terms, bare) =
            crate::srepr::comparison_with_zero(&e.expr_text()).unwrap_or((Vec::new(), false));
        let nonneg = |t: &SumTerm| match t {
            SumTerm::Symbol(s) => self
                .ranges
                .get(s.as_str())
                .is_some_and(|vr| matches!(&vr.lower, Bound::Int(lo) if *lo >= BigInt::from(0))),
            SumTerm::Number(n) => *n,
            SumTerm::Other => false,
        };
        if !terms.is_empty() && terms.iter().all(nonneg) {
            return Ok(());
        }
        if let (true, [SumTerm::Symbol(s)]) = (bare, terms.as_slice()) {
            if unbacked_int(s) {
                // With a range (unbounded or not), what `_maybe_evaluate_static`
                // then decides is not modelled.
                return match self.ranges.contains_key(s.as_str()) {
                    false => Err(Raise::new("KeyError", s.clone())),
                    true => Ok(()),
                };
            }
        }
        // `_maybe_evaluate_static`: each free symbol (`sorted(key=str)`)
        // needs a range (`_maybe_evaluate_static_worker`); a backed hint
        // gives none (unlike `compute_hint`, this substitutes no hints).
        let symbols = &self.symbols;
        let Ok(parsed) = crate::sympify::sympify_in(&e.expr_text(), &|n| symbols.contains(n))
        else {
            return Ok(());
        };
        if parsed.value == crate::sympify::Parsed::Lambda {
            return Err(lambda_key_error());
        }
        let mut free = parsed.free_symbols.unwrap_or_default();
        free.sort();
        match free.iter().find(|n| !self.ranges.contains_key(n.as_str())) {
            Some(k) => Err(Raise::new(
                "AssertionError",
                format!("vr must not be None for symbol {k}"),
            )),
            None => Ok(()),
        }
    }

    /// `_get_schema_from_target(target)` of an OpOverload: the built-in
    /// table's schema or the registered op's.
    pub(super) fn schema_of(&self, target: &str) -> R<ops::schema::Schema> {
        let text = ops::op_schema(target)
            .or_else(|| self.registrations.op(target).map(|op| op.schema.as_str()))
            .ok_or_else(|| Raise::unsupported(format!("the schema of `{target}`")))?;
        ops::schema::parse(text)
            .ok_or_else(|| Raise::unsupported(format!("the schema text `{text}`")))
    }
}
