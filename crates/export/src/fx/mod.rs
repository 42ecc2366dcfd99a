//! Mirrors torch/fx/graph.py and torch/fx/node.py as `torch.export.load`
//! uses them: a `Graph` of `Node`s (placeholder, call_function, get_attr,
//! output), the `_Namespace` that hands out node names, user tracking
//! (`num_users`), node erasure and use replacement for passes, and
//! `Graph.__str__` (`Node.format_node`, `_format_arg`).

mod illegal_names;
mod namespace;
pub(crate) mod print;

pub use namespace::Namespace;

use num_bigint::BigInt;

/// Index of a node in its graph's arena; stable across erasures.
pub type NodeId = usize;

/// `Node.op`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `"placeholder"`: a graph input.
    Placeholder,
    /// `"call_function"`: a call of an operator or Python function.
    CallFunction,
    /// `"get_attr"`: a fetch of a module attribute (a submodule or constant).
    GetAttr,
    /// `"output"`: the graph's return.
    Output,
}

impl Op {
    /// The string `Node.op` holds (`"call_function"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Placeholder => "placeholder",
            Op::CallFunction => "call_function",
            Op::GetAttr => "get_attr",
            Op::Output => "output",
        }
    }
}

/// A node argument: what `Node.args` / `Node.kwargs` hold after
/// `GraphModuleDeserializer.deserialize_input`.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// `None`.
    None,
    /// A `bool`.
    Bool(bool),
    /// An `int` that fits in 64 bits.
    Int(i64),
    /// A Python int past 64 bits.
    BigInt(Box<BigInt>),
    /// A `float`.
    Float(f64),
    /// A `str`.
    Str(String),
    /// `complex(real, imag)`.
    Complex(f64, f64),
    /// Another node of the graph (a `torch.fx.Node`).
    Node(NodeId),
    /// A `list`.
    List(Vec<Arg>),
    /// A `tuple`.
    Tuple(Vec<Arg>),
    /// A dict with string keys (`as_string_to_argument`).
    Dict(Vec<(String, Arg)>),
    /// A torch object printed by `str()` as is: a dtype (`torch.float32`), a
    /// layout (`torch.strided`), a memory format (`torch.contiguous_format`),
    /// an operator object (`aten.add.Tensor`).
    Torch(String),
    /// A `torch.device`, printed by FX's `_device_annotation` (`cpu`, `cuda:0`).
    Device(String),
}

impl Arg {
    /// Calls `f` on every node this argument mentions, in order.
    pub fn for_each_node(&self, f: &mut impl FnMut(NodeId)) {
        match self {
            Arg::Node(id) => f(*id),
            Arg::List(items) | Arg::Tuple(items) => items.iter().for_each(|a| a.for_each_node(f)),
            Arg::Dict(items) => items.iter().for_each(|(_, a)| a.for_each_node(f)),
            _ => {}
        }
    }

    /// Replaces every mention of `old` by `new`.
    pub fn replace_node(&mut self, old: NodeId, new: NodeId) {
        match self {
            Arg::Node(id) if *id == old => *id = new,
            Arg::List(items) | Arg::Tuple(items) => {
                items.iter_mut().for_each(|a| a.replace_node(old, new))
            }
            Arg::Dict(items) => items.iter_mut().for_each(|(_, a)| a.replace_node(old, new)),
            _ => {}
        }
    }
}

/// What the loader knows of a node's value (`node.meta["val"]`), by the
/// serialized name whose metadata it was given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Meta {
    /// The serialized value name (`tensor_values` / `sym_int_values` key)
    /// whose metadata is this node's `val`, when it has one.
    pub val: Option<String>,
    /// Whether the verifier's `_check_val` accepts the node: it has a
    /// `val` (everything the loader builds does), or it is an operator
    /// with no returns. Nodes a pass inserts start without one.
    pub has_val: bool,
    /// Where the loader read a call_function node from: its index in the
    /// serialized graph's `nodes`. `None` for the loader's getitems, for
    /// other ops and for nodes a pass inserts.
    pub origin: Option<u32>,
}

/// `torch.fx.Node`: one operation of a [`Graph`].
#[derive(Clone, Debug)]
pub struct Node {
    /// `Node.name`: unique within the graph.
    pub name: String,
    /// `Node.op`.
    pub op: Op,
    /// For placeholder and get_attr nodes the target string; for
    /// call_function nodes the qualified name `_pretty_print_target` prints
    /// (`torch.ops.aten.add.Tensor`, `operator.getitem`).
    pub target: String,
    /// `Node.args`.
    pub args: Vec<Arg>,
    /// `Node.kwargs`, in insertion order.
    pub kwargs: Vec<(String, Arg)>,
    /// What the loader knows of `node.meta`.
    pub meta: Meta,
    /// `Node.users`: distinct user nodes in insertion order.
    users: Vec<NodeId>,
    erased: bool,
    /// The node `replace_all_uses_with` moved this node's uses to.
    replaced_by: Option<NodeId>,
}

impl Node {
    /// `Node.users`: the distinct nodes that use this one, in insertion order.
    pub fn users(&self) -> &[NodeId] {
        &self.users
    }

    /// The nodes this node's args and kwargs mention, in order, repeated.
    pub fn inputs(&self) -> Vec<NodeId> {
        let mut out = Vec::new();
        let mut push = |id| out.push(id);
        self.args.iter().for_each(|a| a.for_each_node(&mut push));
        self.kwargs
            .iter()
            .for_each(|(_, a)| a.for_each_node(&mut push));
        out
    }

    /// Whether this is a call_function node of `target` (a qualified name as in
    /// [`Node::target`]).
    pub fn is_call_to(&self, target: &str) -> bool {
        self.op == Op::CallFunction && self.target == target
    }
}

/// `torch.fx.Graph`: nodes in program order with FX's naming and use lists.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    nodes: Vec<Node>,
    order: Vec<NodeId>,
    namespace: Namespace,
}

impl Graph {
    /// An empty graph.
    pub fn new() -> Graph {
        Graph::default()
    }

    /// `Graph.create_node`: the name is `name` or the target's
    /// `_target_to_str`, made unique by the graph's namespace.
    pub fn create_node(
        &mut self,
        op: Op,
        target: &str,
        args: Vec<Arg>,
        kwargs: Vec<(String, Arg)>,
        name: Option<&str>,
    ) -> NodeId {
        let candidate = match name {
            Some(n) => n.to_string(),
            None => target_to_str(op, target),
        };
        let name = self.namespace.create_name(&candidate);
        let id = self.nodes.len();
        let node = Node {
            name,
            op,
            target: target.to_string(),
            args,
            kwargs,
            meta: Meta::default(),
            users: Vec::new(),
            erased: false,
            replaced_by: None,
        };
        for input in node.inputs() {
            self.add_user(input, id);
        }
        self.nodes.push(node);
        self.order.push(id);
        id
    }

    /// `with graph.inserting_after(anchor): graph.create_node(...)`.
    pub fn create_node_after(
        &mut self,
        anchor: NodeId,
        op: Op,
        target: &str,
        args: Vec<Arg>,
        kwargs: Vec<(String, Arg)>,
        name: Option<&str>,
    ) -> NodeId {
        let id = self.create_node(op, target, args, kwargs, name);
        self.order.pop();
        let pos = self
            .order
            .iter()
            .position(|&n| n == anchor)
            .map_or(self.order.len(), |p| p + 1);
        self.order.insert(pos, id);
        id
    }

    fn add_user(&mut self, of: NodeId, user: NodeId) {
        let users = &mut self.nodes[of].users;
        if !users.contains(&user) {
            users.push(user);
        }
    }

    /// `Node._rename`: a fresh unique name from the namespace.
    pub fn rename(&mut self, id: NodeId, candidate: &str) {
        if self.nodes[id].name == candidate {
            return;
        }
        let name = self.namespace.create_name(candidate);
        self.nodes[id].name = name;
    }

    /// The node `id`, erased or not.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }

    /// The node `id` if the graph has it and it is not erased.
    pub fn get(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id).filter(|n| !n.erased)
    }

    /// The node `id`, mutably.
    pub fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id]
    }

    /// Live nodes in program order.
    pub fn node_ids(&self) -> &[NodeId] {
        &self.order
    }

    /// Live nodes in program order, with their ids.
    pub fn nodes(&self) -> impl DoubleEndedIterator<Item = (NodeId, &Node)> + '_ {
        self.order.iter().map(|&id| (id, &self.nodes[id]))
    }

    /// The number of live nodes (`len(graph.nodes)`).
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether the graph has no live nodes.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The `output` node, if the graph has one.
    pub fn output_node(&self) -> Option<NodeId> {
        self.order
            .iter()
            .rev()
            .copied()
            .find(|&id| self.nodes[id].op == Op::Output)
    }

    /// The live node named `name`, if any.
    pub fn find_by_name(&self, name: &str) -> Option<NodeId> {
        self.order
            .iter()
            .copied()
            .find(|&id| self.nodes[id].name == name)
    }

    /// `Node.replace_all_uses_with`: every user of `old` now uses `new`;
    /// returns the users changed, in `old.users` order.
    pub fn replace_all_uses_with(&mut self, old: NodeId, new: NodeId) -> Vec<NodeId> {
        let users = std::mem::take(&mut self.nodes[old].users);
        self.nodes[old].replaced_by = Some(new);
        for &user in &users {
            let node = &mut self.nodes[user];
            node.args.iter_mut().for_each(|a| a.replace_node(old, new));
            node.kwargs
                .iter_mut()
                .for_each(|(_, a)| a.replace_node(old, new));
            self.add_user(new, user);
        }
        users
    }

    /// `Graph.erase_node`: refuses a node that still has users, as FX does.
    pub fn erase_node(&mut self, id: NodeId) -> Result<(), String> {
        if !self.nodes[id].users.is_empty() {
            return Err(format!(
                "Tried to erase Node {} but it still had {} users in the graph: {}!",
                self.nodes[id].name,
                self.nodes[id].users.len(),
                print::users_dict(self, id)
            ));
        }
        for input in self.nodes[id].inputs() {
            self.nodes[input].users.retain(|&u| u != id);
        }
        self.nodes[id].erased = true;
        self.order.retain(|&n| n != id);
        Ok(())
    }

    /// Whether `Graph.erase_node` has removed node `id`.
    pub fn is_erased(&self, id: NodeId) -> bool {
        self.nodes[id].erased
    }

    /// Every node ever created, erased ones included, by id.
    pub fn arena(&self) -> impl Iterator<Item = (NodeId, &Node)> + '_ {
        self.nodes.iter().enumerate()
    }

    /// The live node that now stands for `id`: `id` itself, or, for a node
    /// erased after `replace_all_uses_with`, the node its uses went to.
    pub fn resolve(&self, mut id: NodeId) -> Option<NodeId> {
        for _ in 0..=self.nodes.len() {
            let n = &self.nodes[id];
            if !n.erased {
                return Some(id);
            }
            id = n.replaced_by?;
        }
        None
    }
}

/// `Graph._target_to_str`: the name FX derives from a target when none is
/// given (`operator.getitem` → `getitem`, `torch.ops.aten.add.Tensor` →
/// `add.Tensor` before sanitizing), snake-cased.
pub fn target_to_str(op: Op, target: &str) -> String {
    let raw = if op == Op::CallFunction {
        callable_name(target)
    } else if target.len() > 4 && target.starts_with("__") && target.ends_with("__") {
        &target[2..target.len() - 2]
    } else {
        target
    };
    snake_case(raw)
}

/// `target.__name__` of the callable printed as `target`: an OpOverload
/// `torch.ops.ns.op.overload` is named `op.overload`, anything else by its
/// last dotted component.
pub fn callable_name(target: &str) -> &str {
    if let Some(rest) = target.strip_prefix("torch.ops.") {
        let parts: Vec<&str> = rest.splitn(3, '.').collect();
        if parts.len() == 3 && parts[0] != "higher_order" {
            return &target[target.len() - parts[1].len() - 1 - parts[2].len()..];
        }
    }
    target.rsplit('.').next().unwrap_or(target)
}

/// `torch.fx.graph._snake_case`: `_` before an uppercase letter that follows
/// a lowercase one, then `lower()`.
pub fn snake_case(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    let mut prev_lower = false;
    for c in s.chars() {
        if c.is_ascii_uppercase() && prev_lower {
            out.push('_');
        }
        prev_lower = c.is_ascii_lowercase();
        out.extend(c.to_lowercase());
    }
    out
}
