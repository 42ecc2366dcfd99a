//! Strategies for `lookup` and `source_name` cases. A lookup case is built
//! from a spec tree and a walk down it *together*, so most source chains
//! reach a leaf; controlled shares end on a container, step past a leaf,
//! miss a key, use the wrong access kind, or start at a non-input root.
//! Everything is a plain value tree, so proptest shrinks a failure to a
//! short chain and a small tree.

use arbitrary::Arbitrary;
use num_bigint::BigInt;
use proptest::prelude::*;

use crate::case::wire::{Case, CaseBody, Expr, SourceExpr, SourceField, SpecCtor, VarDecl};
use crate::source::SourceClass;
use crate::spec::VarKind;

/// A spec tree as the generator sees it.
#[derive(Clone, Debug)]
pub enum Tree {
    /// `TensorSpec` with dims: `Some(var)` or `None` (static).
    Tensor(Vec<Option<usize>>),
    Var(usize),
    Int(i64),
    None,
    /// A value that is not a spec at all (a str), to reach "the spec is str".
    Str(String),
    Object(Vec<(String, Tree)>),
    Dict(Vec<(Key, Tree)>),
    Seq(Vec<Tree>),
}

#[derive(Clone, Debug, PartialEq, Arbitrary)]
pub enum Key {
    Str(String),
    Int(i64),
}

/// How the walk's source chain is spelled and bent. Choices are plain
/// integers taken modulo what they choose from, so `arbitrary` can build
/// plans from fuzzer bytes too.
#[derive(Clone, Debug, Arbitrary)]
pub struct Plan {
    pub root: Root,
    /// The child picked at each container on the way down.
    pub steps: Vec<u16>,
    pub twist: Twist,
    /// NNModuleSource wrappers: (position in the chain, which class).
    pub wrappers: Vec<(u16, u8)>,
    /// Spell attribute steps as the `_parameters` collapse where possible.
    pub collapse: Vec<bool>,
    /// Which GetItemSource class spells each int subscript.
    pub getitems: Vec<u8>,
}

const NN_CLASSES: [SourceClass; 4] = [
    SourceClass::NNModuleSource,
    SourceClass::UnspecializedNNModuleSource,
    SourceClass::UnspecializedBuiltinNNModuleSource,
    SourceClass::FSDPNNModuleSource,
];
const GETITEM_CLASSES: [SourceClass; 3] = [
    SourceClass::GetItemSource,
    SourceClass::ListGetItemSource,
    SourceClass::TupleIteratorGetItemSource,
];

fn pick(i: u16, len: usize) -> usize {
    i as usize % len
}

#[derive(Clone, Copy, Debug, PartialEq, Arbitrary)]
pub enum Root {
    Named,
    NonInput,
    Varargs,
    Varkw,
}

#[derive(Clone, Copy, Debug, PartialEq, Arbitrary)]
pub enum Twist {
    None,
    /// One more attribute step after the walk ends.
    Overshoot,
    /// The last step names a key that is not there.
    Miss,
    /// A subscript where an attribute is expected, or the reverse.
    WrongAccess,
    /// A negative index into a SeqSpec.
    Negative,
    /// An index past the end of a SeqSpec.
    PastEnd,
}

fn ident() -> impl Strategy<Value = String> {
    prop_oneof![
        10 => "[a-z][a-z0-9_]{0,5}",
        1 => prop::sample::select(vec!["not id", "q'x", "é", "0a", "class", "a{b}"]).prop_map(str::to_string),
    ]
}

fn key() -> impl Strategy<Value = Key> {
    prop_oneof![3 => ident().prop_map(Key::Str), 1 => (-1i64..4).prop_map(Key::Int)]
}

fn tree(nvars: usize) -> impl Strategy<Value = Tree> {
    let leaf = prop_oneof![
        6 => prop::collection::vec(prop::option::of(0..nvars), 0..4).prop_map(Tree::Tensor),
        2 => (0..nvars).prop_map(Tree::Var),
        1 => (0i64..8).prop_map(Tree::Int),
        1 => Just(Tree::None),
        1 => Just(Tree::Str("s".into())),
    ];
    leaf.prop_recursive(5, 40, 4, |inner| {
        prop_oneof![
            3 => prop::collection::vec((ident(), inner.clone()), 1..4).prop_map(Tree::Object),
            2 => prop::collection::vec((key(), inner.clone()), 1..4).prop_map(Tree::Dict),
            2 => prop::collection::vec(inner, 1..4).prop_map(Tree::Seq),
        ]
    })
}

fn plan() -> impl Strategy<Value = Plan> {
    (
        prop_oneof![12 => Just(Root::Named), 1 => Just(Root::NonInput), 3 => Just(Root::Varargs), 3 => Just(Root::Varkw)],
        prop::collection::vec(any::<u16>(), 0..7),
        prop_oneof![
            14 => Just(Twist::None),
            2 => Just(Twist::Overshoot),
            2 => Just(Twist::Miss),
            1 => Just(Twist::WrongAccess),
            1 => Just(Twist::Negative),
            1 => Just(Twist::PastEnd),
        ],
        prop::collection::vec((any::<u16>(), any::<u8>()), 0..3),
        prop::collection::vec(prop::bool::weighted(0.3), 0..7),
        prop::collection::vec(any::<u8>(), 0..7),
    )
        .prop_map(|(root, steps, twist, wrappers, collapse, getitems)| Plan {
            root,
            steps,
            twist,
            wrappers,
            collapse,
            getitems,
        })
}

/// One access step of the planned chain.
#[derive(Clone, Debug)]
enum Step {
    Attr(String),
    Dict(Key),
    Item(i64),
}

fn str_field(s: &str) -> SourceField {
    SourceField::Str(s.to_string())
}

fn chained(
    class: SourceClass,
    base: SourceExpr,
    rest: Vec<(&'static str, SourceField)>,
) -> SourceExpr {
    let mut fields = vec![("base", SourceField::Source(base))];
    fields.extend(rest);
    SourceExpr { class, fields }
}

fn key_expr(k: &Key) -> Expr {
    match k {
        Key::Str(s) => Expr::Str(s.clone()),
        Key::Int(i) => Expr::Int(BigInt::from(*i)),
    }
}

/// Fuzzer bytes as a tree: at most 3 children a node, leaves only from
/// depth 5 on, so decoding stays cheap whatever the input.
impl<'a> Arbitrary<'a> for Tree {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Tree> {
        Tree::arbitrary_at(u, 0)
    }
}

impl Tree {
    fn arbitrary_at(u: &mut arbitrary::Unstructured<'_>, depth: usize) -> arbitrary::Result<Tree> {
        let kinds = if depth >= 5 { 4 } else { 7 };
        let width = |u: &mut arbitrary::Unstructured<'_>| u.int_in_range(1..=3u8);
        Ok(match u.int_in_range(0..=kinds)? {
            0 => {
                let n = u.int_in_range(0..=3u8)?;
                Tree::Tensor(
                    (0..n)
                        .map(|_| u.arbitrary::<Option<u8>>().map(|d| d.map(usize::from)))
                        .collect::<arbitrary::Result<_>>()?,
                )
            }
            1 => Tree::Var(u.arbitrary::<u8>()?.into()),
            2 => Tree::Int(u.int_in_range(0..=7)?),
            3 => Tree::None,
            4 => Tree::Str("s".into()),
            5 => Tree::Object(
                (0..width(u)?)
                    .map(|_| Ok((u.arbitrary::<String>()?, Tree::arbitrary_at(u, depth + 1)?)))
                    .collect::<arbitrary::Result<_>>()?,
            ),
            6 => Tree::Dict(
                (0..width(u)?)
                    .map(|_| Ok((u.arbitrary::<Key>()?, Tree::arbitrary_at(u, depth + 1)?)))
                    .collect::<arbitrary::Result<_>>()?,
            ),
            _ => Tree::Seq(
                (0..width(u)?)
                    .map(|_| Tree::arbitrary_at(u, depth + 1))
                    .collect::<arbitrary::Result<_>>()?,
            ),
        })
    }
}

impl Tree {
    /// What [`Tree::arbitrary_at`] decodes, reading the same bytes, pruned
    /// to `budget` nodes in preorder as [`Tree::pruned`] would: the nodes
    /// past the budget are read but never built (no allocation).
    fn arbitrary_pruned(
        u: &mut arbitrary::Unstructured<'_>,
        depth: usize,
        budget: &mut usize,
    ) -> arbitrary::Result<Tree> {
        let keep = *budget > 0;
        if keep {
            *budget -= 1;
        }
        let kinds = if depth >= 5 { 4 } else { 7 };
        let width = |u: &mut arbitrary::Unstructured<'_>| u.int_in_range(1..=3u8);
        let tree = match u.int_in_range(0..=kinds)? {
            0 => {
                let n = u.int_in_range(0..=3u8)?;
                let mut dims = Vec::new();
                for _ in 0..n {
                    let d = u.arbitrary::<Option<u8>>()?.map(usize::from);
                    if keep {
                        dims.push(d);
                    }
                }
                Tree::Tensor(dims)
            }
            1 => Tree::Var(u.arbitrary::<u8>()?.into()),
            2 => Tree::Int(u.int_in_range(0..=7)?),
            3 => Tree::None,
            4 if keep => Tree::Str("s".into()),
            4 => Tree::None,
            5 => {
                let mut fields = Vec::new();
                for _ in 0..width(u)? {
                    let k = u.arbitrary::<&str>()?;
                    let v = Tree::arbitrary_pruned(u, depth + 1, budget)?;
                    if keep {
                        fields.push((k.to_string(), v));
                    }
                }
                Tree::Object(fields)
            }
            6 => {
                let mut entries = Vec::new();
                for _ in 0..width(u)? {
                    let k = u.arbitrary::<Key>()?;
                    let v = Tree::arbitrary_pruned(u, depth + 1, budget)?;
                    if keep {
                        entries.push((k, v));
                    }
                }
                Tree::Dict(entries)
            }
            _ => {
                let mut items = Vec::new();
                for _ in 0..width(u)? {
                    let v = Tree::arbitrary_pruned(u, depth + 1, budget)?;
                    if keep {
                        items.push(v);
                    }
                }
                Tree::Seq(items)
            }
        };
        Ok(if keep { tree } else { Tree::None })
    }
}

/// Deeper trees are cut to `None` (fuzzer input can nest arbitrarily).
const MAX_DEPTH: usize = 16;

impl Tree {
    /// Var indices below `nvars`, no duplicate keys (a later duplicate
    /// would replace the value the walk chose), depth at most `MAX_DEPTH`.
    pub fn normalized(&self, nvars: usize, depth: usize) -> Tree {
        if depth >= MAX_DEPTH {
            return Tree::None;
        }
        let sub = |t: &Tree| t.normalized(nvars, depth + 1);
        match self {
            Tree::Tensor(dims) => Tree::Tensor(dims.iter().map(|d| d.map(|v| v % nvars)).collect()),
            Tree::Var(v) => Tree::Var(v % nvars),
            Tree::Object(fields) => {
                let mut out: Vec<(String, Tree)> = Vec::new();
                for (k, v) in fields {
                    if !out.iter().any(|(q, _)| q == k) {
                        out.push((k.clone(), sub(v)));
                    }
                }
                Tree::Object(out)
            }
            Tree::Dict(entries) => {
                let mut out: Vec<(Key, Tree)> = Vec::new();
                for (k, v) in entries {
                    if !out.iter().any(|(q, _)| q == k) {
                        out.push((k.clone(), sub(v)));
                    }
                }
                Tree::Dict(out)
            }
            Tree::Seq(items) => Tree::Seq(items.iter().map(sub).collect()),
            other => other.clone(),
        }
    }

    pub fn to_expr(&self) -> Expr {
        match self {
            Tree::Tensor(dims) => Expr::Spec(
                SpecCtor::TensorSpec,
                Box::new(Expr::List(
                    dims.iter()
                        .map(|d| d.map_or(Expr::None, Expr::Var))
                        .collect(),
                )),
            ),
            Tree::Var(i) => Expr::Var(*i),
            Tree::Int(i) => Expr::Int((*i).into()),
            Tree::None => Expr::None,
            Tree::Str(s) => Expr::Str(s.clone()),
            Tree::Object(fields) => Expr::Spec(
                SpecCtor::ObjectSpec,
                Box::new(Expr::Dict(
                    fields
                        .iter()
                        .map(|(k, v)| (Expr::Str(k.clone()), v.to_expr()))
                        .collect(),
                )),
            ),
            Tree::Dict(entries) => Expr::Spec(
                SpecCtor::DictSpec,
                Box::new(Expr::Dict(
                    entries
                        .iter()
                        .map(|(k, v)| (key_expr(k), v.to_expr()))
                        .collect(),
                )),
            ),
            Tree::Seq(items) => Expr::Spec(
                SpecCtor::SeqSpec,
                Box::new(Expr::List(items.iter().map(Tree::to_expr).collect())),
            ),
        }
    }
}

/// Walk down `tree` by `plan.steps`, returning the access steps taken.
fn walk(tree: &Tree, plan: &Plan) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut cur = tree;
    for &p in &plan.steps {
        match cur {
            Tree::Object(fields) if !fields.is_empty() => {
                let (k, v) = &fields[pick(p, fields.len())];
                steps.push(Step::Attr(k.clone()));
                cur = v;
            }
            Tree::Dict(entries) if !entries.is_empty() => {
                let (k, v) = &entries[pick(p, entries.len())];
                steps.push(Step::Dict(k.clone()));
                cur = v;
            }
            Tree::Seq(items) if !items.is_empty() => {
                let i = pick(p, items.len());
                steps.push(Step::Item(i as i64));
                cur = &items[i];
            }
            _ => break,
        }
    }
    match plan.twist {
        Twist::None => {}
        Twist::Overshoot => steps.push(Step::Attr("extra".into())),
        Twist::Miss => match steps.pop() {
            Some(Step::Attr(_)) | None => steps.push(Step::Attr("missing".into())),
            Some(Step::Dict(_)) => steps.push(Step::Dict(Key::Str("missing".into()))),
            Some(Step::Item(_)) => steps.push(Step::Item(99)),
        },
        Twist::WrongAccess => match steps.pop() {
            Some(Step::Attr(a)) => steps.push(Step::Dict(Key::Str(a))),
            Some(Step::Dict(Key::Str(k))) => steps.push(Step::Attr(k)),
            Some(Step::Dict(Key::Int(i))) | Some(Step::Item(i)) => {
                steps.push(Step::Attr(format!("i{i}")))
            }
            None => steps.push(Step::Item(0)),
        },
        Twist::Negative => steps.push(Step::Item(-1)),
        Twist::PastEnd => steps.push(Step::Item(1000)),
    }
    steps
}

/// The node the plan's picks reach in `tree` (the twist aside).
pub fn reached<'t>(tree: &'t Tree, plan: &Plan) -> &'t Tree {
    let mut cur = tree;
    for &p in &plan.steps {
        cur = match cur {
            Tree::Object(fields) if !fields.is_empty() => &fields[pick(p, fields.len())].1,
            Tree::Dict(entries) if !entries.is_empty() => &entries[pick(p, entries.len())].1,
            Tree::Seq(items) if !items.is_empty() => &items[pick(p, items.len())],
            _ => break,
        };
    }
    cur
}

/// A tree, siblings, a plan and a root name: the parts of a lookup case.
pub fn lookup_parts() -> impl Strategy<Value = (usize, Tree, Vec<Tree>, Plan, String)> {
    (1usize..4).prop_flat_map(|nvars| {
        (
            Just(nvars),
            tree(nvars),
            prop::collection::vec(tree(nvars), 0..3),
            plan(),
            ident(),
        )
    })
}

/// Spell the steps as a source chain from `root`.
fn chain(root: SourceExpr, steps: &[Step], plan: &Plan) -> SourceExpr {
    let mut src = root;
    for (i, step) in steps.iter().enumerate() {
        for &(at, class) in &plan.wrappers {
            if pick(at, steps.len() + 1) == i {
                src = chained(NN_CLASSES[class as usize % NN_CLASSES.len()], src, vec![]);
            }
        }
        src = match step {
            Step::Attr(name) if plan.collapse.get(i).copied().unwrap_or(false) => {
                let params = chained(
                    SourceClass::UnspecializedParamBufferSource,
                    src,
                    vec![("member", str_field("_parameters"))],
                );
                chained(
                    SourceClass::DictGetItemSource,
                    params,
                    vec![("index", SourceField::Value(Expr::Str(name.clone())))],
                )
            }
            Step::Attr(name) => chained(
                SourceClass::AttrSource,
                src,
                vec![("member", str_field(name))],
            ),
            Step::Dict(k) => chained(
                SourceClass::DictGetItemSource,
                src,
                vec![("index", SourceField::Value(key_expr(k)))],
            ),
            Step::Item(n) => {
                let class = GETITEM_CLASSES
                    [plan.getitems.get(i).copied().unwrap_or(0) as usize % GETITEM_CLASSES.len()];
                chained(
                    class,
                    src,
                    vec![("index", SourceField::Value(Expr::Int((*n).into())))],
                )
            }
        };
    }
    if plan
        .wrappers
        .iter()
        .any(|&(at, _)| pick(at, steps.len() + 1) == steps.len())
    {
        src = chained(SourceClass::NNModuleSource, src, vec![]);
    }
    src
}

fn local(name: &str, is_input: bool, flag: Option<&'static str>) -> SourceExpr {
    let mut fields = vec![
        ("local_name", str_field(name)),
        ("is_input", SourceField::Bool(is_input)),
    ];
    if let Some(f) = flag {
        fields.push((f, SourceField::Bool(true)));
    }
    SourceExpr {
        class: SourceClass::LocalSource,
        fields,
    }
}

fn vars(n: usize) -> Vec<VarDecl> {
    (0..n)
        .map(|i| VarDecl {
            kind: if i % 2 == 0 {
                VarKind::ShapeVar
            } else {
                VarKind::IntVar
            },
            name: Some(Expr::Str(["h", "w", "n"][i % 3].into())),
            min: None,
            max: None,
            optimization_hint: None,
        })
        .collect()
}

/// A `lookup` case: a spec tree and a source chain walking into it.
pub fn lookup_case() -> impl Strategy<Value = Case> {
    lookup_parts().prop_map(|(nvars, target, others, plan, name)| {
        lookup_from(nvars, &target, &others, &plan, &name)
    })
}

/// The `lookup` case for a tree, its siblings, a plan and the root's name.
pub fn lookup_from(nvars: usize, target: &Tree, others: &[Tree], plan: &Plan, name: &str) -> Case {
    let nvars = nvars.clamp(1, 3);
    let target = target.normalized(nvars, 0);
    let others: Vec<Tree> = others.iter().map(|t| t.normalized(nvars, 0)).collect();
    lookup_normalized(nvars, &target, &others, plan, name)
}

/// [`lookup_from`] for trees already normalized for `nvars` (1 to 3) vars.
fn lookup_normalized(
    nvars: usize,
    target: &Tree,
    others: &[Tree],
    plan: &Plan,
    name: &str,
) -> Case {
    let mut steps = walk(target, plan);
    let mut params: Vec<(Expr, Expr)> = others
        .iter()
        .enumerate()
        .map(|(i, t)| (Expr::Str(format!("p{i}")), t.to_expr()))
        .collect();
    let root = match plan.root {
        Root::Named | Root::NonInput => {
            params.push((Expr::Str(name.to_string()), target.to_expr()));
            local(name, plan.root == Root::Named, None)
        }
        Root::Varargs => {
            params.push((
                Expr::Str("*args".into()),
                Expr::List(vec![Tree::None.to_expr(), target.to_expr()]),
            ));
            steps.insert(0, Step::Item(1));
            local("args", true, Some("is_varargs"))
        }
        Root::Varkw => {
            params.push((
                Expr::Str("**kwargs".into()),
                Expr::Dict(vec![(Expr::Str(name.to_string()), target.to_expr())]),
            ));
            steps.insert(0, Step::Dict(Key::Str(name.to_string())));
            local("kwargs", true, Some("is_varkw"))
        }
    };
    // The leading subscript of a variadic root is spelled plainly.
    let source = chain(root, &steps, plan);
    let spec = Expr::ShapesSpec {
        params: Some(Box::new(Expr::Dict(params))),
        assumptions: None,
        globals: None,
    };
    Case {
        id: String::new(),
        vars: vars(nvars),
        body: CaseBody::Lookup { spec, source },
    }
}

/// A `source_name` case: a random chain over every source class.
pub fn source_name_case() -> impl Strategy<Value = Case> {
    let index = prop_oneof![
        4 => (-2i64..5).prop_map(|i| Expr::Int(i.into())),
        2 => ident().prop_map(Expr::Str),
        1 => Just(Expr::None),
        1 => Just(Expr::Bool(true)),
        1 => Just(Expr::Float(1.5)),
        1 => Just(Expr::Tuple(vec![Expr::Int(1.into()), Expr::Str("a".into())])),
        1 => Just(Expr::Slice(Box::new([Expr::Int(1.into()), Expr::None, Expr::Int(2.into())]))),
    ];
    let step = (
        prop::sample::select(SourceClass::ALL[2..].to_vec()),
        ident(),
        index,
        any::<bool>(),
    );
    (
        prop_oneof![3 => ident().prop_map(|n| (n, true)), 1 => ident().prop_map(|n| (n, false))],
        prop::collection::vec(step, 0..6),
    )
        .prop_map(|((root_name, local), steps)| {
            let mut src = if local {
                local_source(&root_name)
            } else {
                SourceExpr {
                    class: SourceClass::GlobalSource,
                    fields: vec![("global_name", str_field(&root_name))],
                }
            };
            for (class, member, index, flag) in steps {
                let rest = match class {
                    c if c.is_attr() && c != SourceClass::CellContentsSource => {
                        vec![("member", str_field(&member))]
                    }
                    SourceClass::CellContentsSource => vec![("member", str_field("cell_contents"))],
                    SourceClass::GradSource if flag => vec![("member", str_field(&member))],
                    SourceClass::DictGetItemSource | SourceClass::DictSubclassGetItemSource
                        if flag =>
                    {
                        let key = chained(
                            SourceClass::ConstDictKeySource,
                            local_source("d"),
                            vec![("index", SourceField::Int(0.into()))],
                        );
                        vec![("index", SourceField::Source(key))]
                    }
                    SourceClass::DictGetItemSource | SourceClass::DictSubclassGetItemSource => {
                        vec![("index", SourceField::Value(index))]
                    }
                    c if c.is_getitem() => vec![("index", SourceField::Value(index))],
                    SourceClass::ConstDictKeySource => vec![("index", SourceField::Int(0.into()))],
                    _ => vec![],
                };
                src = chained(class, src, rest);
            }
            Case {
                id: String::new(),
                vars: vec![],
                body: CaseBody::SourceName { source: src },
            }
        })
}

fn local_source(name: &str) -> SourceExpr {
    SourceExpr {
        class: SourceClass::LocalSource,
        fields: vec![("local_name", str_field(name))],
    }
}

/// `src` with an `NNModuleSource` wrapped around the source `depth` bases
/// down (clamped to the root). `None` where PyTorch's result may change: just
/// below a `DictGetItemSource` on an `UnspecializedParamBufferSource`, a
/// wrapper there breaks the `_parameters` collapse (a quirk we reproduce).
pub fn with_wrapper(src: &SourceExpr, depth: usize) -> Option<SourceExpr> {
    let base = src.fields.iter().position(|(k, _)| *k == "base");
    match (depth, base) {
        (0, _) | (_, None) => Some(chained(SourceClass::NNModuleSource, src.clone(), vec![])),
        (_, Some(i)) => {
            let SourceField::Source(b) = &src.fields[i].1 else {
                return None;
            };
            if depth == 1
                && src.class == SourceClass::DictGetItemSource
                && b.class == SourceClass::UnspecializedParamBufferSource
            {
                return None;
            }
            let mut out = src.clone();
            out.fields[i].1 = SourceField::Source(with_wrapper(b, depth - 1)?);
            Some(out)
        }
    }
}

/// Nodes of the fuzzer's target tree and of each sibling that a case keeps
/// (preorder; the rest are `None`), and how many siblings it keeps.
const TARGET_NODES: usize = 32;
const SIBLING_NODES: usize = 8;
const SIBLINGS: usize = 2;

/// Fuzzer input for the `lookup` target. Read from the same bytes as a
/// derived `Arbitrary` would read them, but already cut to what a case
/// keeps: the trees pruned, at most [`SIBLINGS`] siblings (the others are
/// read and dropped), so decoding allocates only what the case uses.
#[derive(Debug)]
pub struct LookupInput {
    pub nvars: u8,
    pub target: Tree,
    pub others: Vec<Tree>,
    pub plan: Plan,
    pub name: String,
    pub wrap_depth: u8,
}

impl<'a> Arbitrary<'a> for LookupInput {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<LookupInput> {
        let nvars = u.arbitrary()?;
        let mut budget = TARGET_NODES;
        let target = Tree::arbitrary_pruned(u, 0, &mut budget)?;
        // `Vec::arbitrary`: each element follows a byte whose low bit is 1.
        let mut others = Vec::new();
        let mut n = 0;
        while u.arbitrary::<bool>().unwrap_or(false) {
            let mut budget = if n < SIBLINGS { SIBLING_NODES } else { 0 };
            let t = Tree::arbitrary_pruned(u, 0, &mut budget)?;
            if n < SIBLINGS {
                others.push(t);
            }
            n += 1;
        }
        Ok(LookupInput {
            nvars,
            target,
            others,
            plan: u.arbitrary()?,
            name: u.arbitrary()?,
            wrap_depth: u.arbitrary()?,
        })
    }
}

impl LookupInput {
    /// The case, with fuzzer-sized parts cut to what a chain and a tree
    /// need (a few siblings and wrappers, a bounded walk and tree), so a
    /// case line stays within the 128 levels of JSON nesting the reader takes.
    pub fn case(&self) -> Case {
        self.prepare().0
    }

    /// For a plain walk from a named root that ends on a leaf: that leaf,
    /// which the lookup must find.
    pub fn expected_leaf(&self) -> Option<Expr> {
        self.prepare().1
    }

    /// [`LookupInput::case`] and [`LookupInput::expected_leaf`] from one
    /// pruning and one normalization of the fuzzer's tree (the fuzz target's
    /// per-input cost).
    pub fn prepare(&self) -> (Case, Option<Expr>) {
        let nvars = (self.nvars as usize).clamp(1, 3);
        let mut budget = TARGET_NODES;
        let target = self.target.pruned_normalized(&mut budget, nvars, 0);
        let others: Vec<Tree> = self
            .others
            .iter()
            .take(SIBLINGS)
            .map(|t| {
                let mut budget = SIBLING_NODES;
                t.pruned_normalized(&mut budget, nvars, 0)
            })
            .collect();
        let plan = Plan {
            root: self.plan.root,
            steps: bounded(&self.plan.steps, 12),
            twist: self.plan.twist,
            wrappers: bounded(&self.plan.wrappers, 4),
            collapse: bounded(&self.plan.collapse, 12),
            getitems: bounded(&self.plan.getitems, 12),
        };
        let name: String = self.name.chars().take(16).collect();
        let leaf = expected_leaf(&target, &plan, &name);
        (
            lookup_normalized(nvars, &target, &others, &plan, &name),
            leaf,
        )
    }
}

/// The first `n` items of `v`, copied.
fn bounded<T: Clone>(v: &[T], n: usize) -> Vec<T> {
    v[..v.len().min(n)].to_vec()
}

/// The leaf a plain walk from a named root reaches in a normalized tree.
fn expected_leaf(target: &Tree, plan: &Plan, name: &str) -> Option<Expr> {
    // A root name starting with `*` is a ParamsSpec sentinel error.
    if plan.root != Root::Named || plan.twist != Twist::None || name.starts_with('*') {
        return None;
    }
    // An attribute name with a `.` is an AttrSource error, not a walk.
    let mut cur = target;
    for &p in &plan.steps {
        cur = match cur {
            Tree::Object(fields) if !fields.is_empty() => {
                let (name, next) = &fields[pick(p, fields.len())];
                if name.contains('.') {
                    return None;
                }
                next
            }
            Tree::Dict(entries) if !entries.is_empty() => &entries[pick(p, entries.len())].1,
            Tree::Seq(items) if !items.is_empty() => &items[pick(p, items.len())],
            _ => break,
        };
    }
    match reached(target, plan) {
        leaf @ (Tree::Tensor(_) | Tree::Var(_) | Tree::Int(_) | Tree::None) => Some(leaf.to_expr()),
        _ => None,
    }
}

impl Tree {
    /// `self.pruned(budget).normalized(nvars, depth)` in one pass, with no
    /// copy of what either step drops: the fuzz target's per-input tree.
    fn pruned_normalized(&self, budget: &mut usize, nvars: usize, depth: usize) -> Tree {
        if *budget == 0 {
            return Tree::None;
        }
        if depth >= MAX_DEPTH {
            // Cut to `None` after pruning, which still spends the budget.
            let _ = self.pruned(budget);
            return Tree::None;
        }
        *budget -= 1;
        let sub = |t: &Tree, budget: &mut usize| t.pruned_normalized(budget, nvars, depth + 1);
        match self {
            Tree::Object(fields) => Tree::Object(first_keys(fields, |v| sub(v, budget))),
            Tree::Dict(entries) => Tree::Dict(first_keys(entries, |v| sub(v, budget))),
            Tree::Seq(items) => Tree::Seq(items.iter().map(|v| sub(v, budget)).collect()),
            Tree::Tensor(dims) => {
                Tree::Tensor(dims.iter().take(8).map(|d| d.map(|v| v % nvars)).collect())
            }
            Tree::Var(v) => Tree::Var(v % nvars),
            other => other.clone(),
        }
    }

    /// At most `budget` nodes, in preorder; the rest become `None`.
    fn pruned(&self, budget: &mut usize) -> Tree {
        if *budget == 0 {
            return Tree::None;
        }
        *budget -= 1;
        match self {
            Tree::Object(fields) => Tree::Object(
                fields
                    .iter()
                    .map(|(k, v)| (k.clone(), v.pruned(budget)))
                    .collect(),
            ),
            Tree::Dict(entries) => Tree::Dict(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.pruned(budget)))
                    .collect(),
            ),
            Tree::Seq(items) => Tree::Seq(items.iter().map(|v| v.pruned(budget)).collect()),
            Tree::Tensor(dims) => Tree::Tensor(dims.iter().take(8).copied().collect()),
            other => other.clone(),
        }
    }
}

/// Each entry's value mapped in order (every value spends its budget), the
/// first entry of each key kept.
fn first_keys<K: PartialEq + Clone>(
    entries: &[(K, Tree)],
    mut map: impl FnMut(&Tree) -> Tree,
) -> Vec<(K, Tree)> {
    let mut out: Vec<(K, Tree)> = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        let v = map(v);
        if !out.iter().any(|(q, _)| q == k) {
            out.push((k.clone(), v));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `LookupInput` as it was read before its decoding pruned: the derived
    /// reading of the same fields.
    #[derive(Arbitrary)]
    struct Derived {
        nvars: u8,
        target: Tree,
        others: Vec<Tree>,
        plan: Plan,
        name: String,
        wrap_depth: u8,
    }

    /// The case and leaf the derived reading gives, pruned and normalized
    /// in separate passes.
    fn derived_case(d: &Derived) -> (String, Option<String>) {
        let others: Vec<Tree> = d.others.iter().take(2).map(|t| t.pruned(&mut 8)).collect();
        let mut plan = d.plan.clone();
        plan.steps.truncate(12);
        plan.wrappers.truncate(4);
        plan.collapse.truncate(12);
        plan.getitems.truncate(12);
        let name: String = d.name.chars().take(16).collect();
        let nvars = (d.nvars as usize).clamp(1, 3);
        let target = d.target.pruned(&mut 32).normalized(nvars, 0);
        let case = lookup_from(nvars, &target, &others, &plan, &name);
        let leaf = expected_leaf(&target, &plan, &name);
        (case.to_json().to_string(), leaf.map(|l| format!("{l:?}")))
    }

    fn same_reading(data: &[u8]) {
        let old = arbitrary::Unstructured::new(data).arbitrary::<Derived>();
        let new = arbitrary::Unstructured::new(data).arbitrary::<LookupInput>();
        match (old, new) {
            (Ok(old), Ok(new)) => {
                assert_eq!(old.wrap_depth, new.wrap_depth);
                let (case, leaf) = new.prepare();
                let new = (case.to_json().to_string(), leaf.map(|l| format!("{l:?}")));
                assert_eq!(derived_case(&old), new);
            }
            (Err(_), Err(_)) => {}
            (old, new) => panic!("one reading failed: {:?} vs {:?}", old.is_ok(), new),
        }
    }

    /// The committed fuzz corpus means what it meant when it was found.
    #[test]
    fn pruned_reading_is_the_derived_reading() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/lookup");
        for entry in std::fs::read_dir(dir).expect("fuzz corpus dir") {
            same_reading(&std::fs::read(entry.expect("dir entry").path()).expect("corpus file"));
        }
    }

    proptest! {
        #[test]
        fn pruned_reading_is_the_derived_reading_on_any_bytes(
            data in prop::collection::vec(any::<u8>(), 0..2048),
        ) {
            same_reading(&data);
        }
    }

    proptest! {
        /// The fuzz target's one-pass tree is the two-pass one.
        #[test]
        fn pruned_normalized_is_pruned_then_normalized(
            t in tree(3), budget in 0usize..40, nvars in 1usize..4,
        ) {
            let one = t.pruned_normalized(&mut budget.clone(), nvars, 0);
            let two = t.pruned(&mut budget.clone()).normalized(nvars, 0);
            prop_assert_eq!(format!("{one:?}"), format!("{two:?}"));
        }
    }
}
