//! The operators `torch.export.load` can resolve, and how it resolves a
//! serialized node target (`GraphModuleDeserializer.deserialize_operator`
//! in torch/_export/serde/serialize.py).
//!
//! `table` is generated from PyTorch 2.15.0's live operator registry by
//! `oracle/gen_op_schemas.py`: every overload with its schema, the
//! higher-order operators, and the non-operator attributes the resolver's
//! `getattr` walk can meet. Lookups are binary searches.
//!
//! `deserialize_operator` picks a module by the target's *prefix*
//! (`startswith("_operator")`, `"torch"`, `"math"`; `#` for extension
//! operators), drops the first dot-separated component and walks the rest
//! with `hasattr`/`getattr`; the first missing attribute makes it return
//! the target string itself, which `deserialize_node` refuses
//! (`SerializeError: We failed to resolve ...`). So `torchx.ops.aten.add.Tensor`
//! resolves to `torch.ops.aten.add.Tensor`, and any other first component
//! (`aten.add.Tensor`, `operator.add`, `builtins.getattr`) never resolves.

pub mod schema;
mod table;

use crate::registrations::Registrations;

/// Every overload `torch.ops.NS.OP.OVERLOAD` resolves to in a plain
/// `import torch` (plus what `torch.export.load` imports), sorted by
/// serialized target, with `str(op._schema)`.
pub fn all_ops() -> &'static [(&'static str, &'static str)] {
    table::OPS
}

/// The sorted names of `torch._ops._higher_order_ops`.
pub fn higher_order_ops() -> &'static [&'static str] {
    table::HIGHER_ORDER_OPS
}

/// The schema (`str(op._schema)`) of a built-in overload, by its
/// serialized target (`torch.ops.aten.add.Tensor`).
pub fn op_schema(target: &str) -> Option<&'static str> {
    table::OPS
        .binary_search_by(|(t, _)| (*t).cmp(target))
        .ok()
        .map(|i| table::OPS[i].1)
}

/// One of `Verifier._check_valid_op`'s `_allowed_torch_functions`: the
/// Python functions a graph may call besides operators (the `torch.sym_*`
/// helpers and the predispatch wrappers of vmap, jvp, autocast and grad
/// mode).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllowedFunction {
    /// Its serialized target (`torch._functorch.predispatch._add_batch_dim`).
    pub target: &'static str,
    /// Its repr, the address written `0x<address>`.
    pub repr: &'static str,
    /// Whether `Node.is_impure` calls it impure (dead-code elimination keeps it).
    pub impure: bool,
}

/// `_allowed_torch_functions`, in the verifier's order.
pub fn allowed_torch_functions() -> impl Iterator<Item = AllowedFunction> {
    table::ALLOWED_TORCH_FUNCTIONS
        .iter()
        .map(|&(target, repr, impure)| AllowedFunction {
            target,
            repr,
            impure,
        })
}

/// The allowed torch function serialized as `target`.
pub fn allowed_torch_function(target: &str) -> Option<AllowedFunction> {
    allowed_torch_functions().find(|f| f.target == target)
}

/// Whether `torch.ops.higher_order.NAME` is a higher-order operator.
pub fn is_higher_order(name: &str) -> bool {
    table::HIGHER_ORDER_OPS.binary_search(&name).is_ok()
}

/// What `deserialize_operator` returns for a serialized target, as far as
/// `deserialize_node` cares. Canonical targets are the resolved object's
/// own path (`torch.ops.aten.add.Tensor`, `_operator.add`, `math.trunc`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// An `OpOverload` (built-in or registered).
    OpOverload(String),
    /// A `HigherOrderOperator` (`torch.ops.higher_order.NAME`).
    HigherOrder(String),
    /// An `OpOverloadPacket` (`torch.ops.NS.OP`): callable, so
    /// `deserialize_node` builds it as a predispatch wrapper function, and
    /// the verifier refuses it.
    Packet(String),
    /// A callable attribute of `operator` or `math`.
    Callable(String),
    /// A function of the verifier's `_allowed_torch_functions` reached from
    /// `torch` (`torch._functorch.predispatch._add_batch_dim`, the
    /// predispatch wrappers of vmap, jvp, autocast and grad mode).
    Function(String),
    /// A walk over `torch`'s other attributes (`torch.sym_max`): whether
    /// it resolves is not modelled, except for the loader's `_SYM_OPS`.
    TorchAttr(String),
    /// A str: the target string itself when the walk meets a missing
    /// attribute, or a str attribute (`torch.ops.aten.name` is `'aten'`);
    /// `deserialize_node` refuses it naming this string.
    Str(String),
    /// An object that is not callable; `str(type(obj))`.
    NotCallable(&'static str),
    /// PyTorch raises while resolving (`exception`, `message`).
    Raises(&'static str, String),
    /// A form PyTorch resolves to something the reference does not model.
    Unmodeled(String),
}

/// Resolves `target` as `deserialize_operator` does in a process with
/// `registrations`.
pub fn resolve(target: &str, registrations: &Registrations) -> Resolved {
    let names = || target.split('.').skip(1).collect::<Vec<_>>();
    let walked = if target.starts_with("_operator") {
        module_walk("_operator", &names(), table::OPERATOR_ATTRS)
    } else if target.starts_with("torch") {
        torch_walk(&names(), registrations)
    } else if target.starts_with("math") {
        module_walk("math", &names(), table::MATH_ATTRS)
    } else {
        target.strip_prefix('#').map(extension)
    };
    walked.unwrap_or_else(|| Resolved::Str(target.to_string()))
}

/// `getattr` walk over the `operator` or `math` module.
/// (Each walk is `None` where `hasattr` fails.)
fn module_walk(
    module: &str,
    names: &[&str],
    attrs: &[(&str, Option<&'static str>)],
) -> Option<Resolved> {
    let Some(first) = names.first() else {
        return Some(Resolved::NotCallable("<class 'module'>"));
    };
    let i = attrs.binary_search_by(|(n, _)| (*n).cmp(first)).ok()?;
    Some(match (names.len(), attrs[i].1) {
        (1, None) => Resolved::Callable(format!("{module}.{first}")),
        (1, Some(ty)) => Resolved::NotCallable(ty),
        _ => Resolved::Unmodeled(format!("an attribute of `{module}.{first}`")),
    })
}

/// `getattr` walk from the `torch` module.
fn torch_walk(names: &[&str], registrations: &Registrations) -> Option<Resolved> {
    match names {
        [] => Some(Resolved::NotCallable("<class 'module'>")),
        ["ops"] => Some(Resolved::NotCallable("<class 'torch._ops._Ops'>")),
        ["ops", "higher_order", rest @ ..] => higher_order_walk(rest),
        ["ops", ns, ..] if contains(table::OPS_ATTRS, ns) => Some(Resolved::Unmodeled(format!(
            "the attribute `torch.ops.{ns}`"
        ))),
        ["ops", ns, rest @ ..] => namespace_walk(ns, rest, registrations),
        _ => {
            let path = format!("torch.{}", names.join("."));
            if misses_allowed_module(&path) {
                return None;
            }
            Some(if allowed_torch_function(&path).is_some() {
                Resolved::Function(path)
            } else {
                Resolved::TorchAttr(path)
            })
        }
    }
}

/// Whether the `hasattr` walk of `path` passes through the module of an
/// allowed function and meets a name that module lacks
/// (`torch._functorch.predispatch._remove_batch_dimtorch`).
fn misses_allowed_module(path: &str) -> bool {
    table::ALLOWED_MODULE_ATTRS.iter().any(|(module, attrs)| {
        path.strip_prefix(module)
            .and_then(|rest| rest.strip_prefix('.'))
            .and_then(|rest| rest.split('.').next())
            .is_some_and(|first| !contains(attrs, first))
    })
}

/// `torch.ops.higher_order.NAME...`.
fn higher_order_walk(names: &[&str]) -> Option<Resolved> {
    let Some(name) = names.first() else {
        return Some(Resolved::NotCallable(
            "<class 'torch._ops._HigherOrderNamespace'>",
        ));
    };
    let known = is_higher_order(name);
    if !known && !contains(table::HIGHER_ORDER_ATTRS, name) {
        return None;
    }
    Some(match names.len() {
        1 if known => Resolved::HigherOrder(format!("torch.ops.higher_order.{name}")),
        _ => Resolved::Unmodeled(format!("an attribute of `torch.ops.higher_order.{name}`")),
    })
}

/// `torch.ops.NS.OP.OVERLOAD...` for an op namespace `NS`.
fn namespace_walk(ns: &str, names: &[&str], registrations: &Registrations) -> Option<Resolved> {
    let Some(op) = names.first() else {
        return Some(Resolved::NotCallable("<class 'torch._ops._OpNamespace'>"));
    };
    if *op == "name" {
        // `_OpNamespace.name`, the str `NS`.
        return Some(match names.len() {
            1 => Resolved::Str(ns.to_string()),
            _ => Resolved::Unmodeled(format!("an attribute of the str {ns:?}")),
        });
    }
    if contains(table::NAMESPACE_ATTRS, op) {
        return Some(Resolved::Unmodeled(format!(
            "the attribute `torch.ops.{ns}.{op}`"
        )));
    }
    let packet = format!("torch.ops.{ns}.{op}.");
    if !packet_exists(&packet, registrations) {
        return None;
    }
    let Some(overload) = names.get(1) else {
        return Some(Resolved::Packet(format!("torch.ops.{ns}.{op}")));
    };
    let target = format!("{packet}{overload}");
    if op_schema(&target).is_none() && registrations.op(&target).is_none() {
        return contains(table::PACKET_ATTRS, overload).then(|| {
            Resolved::Unmodeled(format!("the attribute `{target}` of an OpOverloadPacket"))
        });
    }
    match names.get(2) {
        None => Some(Resolved::OpOverload(target)),
        Some(attr) => contains(table::OVERLOAD_ATTRS, attr)
            .then(|| Resolved::Unmodeled(format!("an attribute of the OpOverload `{target}`"))),
    }
}

/// Whether some overload's target starts with `prefix` (`torch.ops.NS.OP.`):
/// `torch._C._jit_get_operation("NS::OP")` finds the op.
fn packet_exists(prefix: &str, registrations: &Registrations) -> bool {
    let i = table::OPS.partition_point(|(t, _)| *t < prefix);
    let built_in = table::OPS
        .get(i)
        .is_some_and(|(t, _)| t.starts_with(prefix));
    built_in
        || registrations
            .ops
            .range(prefix.to_string()..)
            .next()
            .is_some_and(|(t, _)| t.starts_with(prefix))
}

/// `deserialize_extension_operator("#" + rest)`: `namespace, op_name =
/// target.split(":")`, then `_deserialization_registry[namespace]`, which
/// a plain `import torch` leaves empty.
fn extension(rest: &str) -> Resolved {
    match rest.split(':').count() {
        1 => Resolved::Raises(
            "ValueError",
            "not enough values to unpack (expected 2, got 1)".into(),
        ),
        2 => {
            let ns = rest.split(':').next().unwrap_or_default();
            Resolved::Raises("KeyError", torchspec_pyval::repr::str_repr(ns))
        }
        _ => Resolved::Raises(
            "ValueError",
            "too many values to unpack (expected 2)".into(),
        ),
    }
}

fn contains(sorted: &[&str], name: &str) -> bool {
    sorted.binary_search(&name).is_ok()
}
