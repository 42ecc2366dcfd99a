//! Strategies for derived-expression `build` cases: random int and bool
//! expressions over IntVar / ShapeVar (with and without ranges) and
//! constants (0, 1, -1, small ints, ints past 2**63), used raw, as
//! TensorSpec dims and as ShapesSpec assumptions.

use num_bigint::BigInt;
use proptest::prelude::*;

use crate::case::wire::{Case, CaseBody, Expr, SpecCtor, VarDecl};
use crate::pyval::ops::Op;
use crate::spec::VarKind;

fn int(i: i64) -> Expr {
    Expr::Int(BigInt::from(i))
}

/// A constant operand: the identities, small ints, and big ones.
fn constant() -> impl Strategy<Value = Expr> {
    prop_oneof![
        3 => prop::sample::select(vec![0i64, 1, -1, 2]).prop_map(int),
        6 => (-6i64..=12).prop_map(int),
        1 => (63u32..=80, any::<bool>()).prop_map(|(bits, neg)| {
            let v = (BigInt::from(1) << bits as usize) + BigInt::from(3);
            Expr::Int(if neg { -v } else { v })
        }),
    ]
}

/// A var: IntVar or ShapeVar, with no range, a lower bound (possibly
/// negative for IntVar), an upper bound, or both.
fn var_decl(i: usize) -> impl Strategy<Value = VarDecl> {
    (
        prop_oneof![Just(VarKind::IntVar), Just(VarKind::ShapeVar)],
        prop_oneof![
            4 => Just((None, None)),
            2 => (-4i64..8).prop_map(|lo| (Some(lo), None)),
            1 => (-4i64..8).prop_map(|hi| (None, Some(hi))),
            2 => (-4i64..8, 0i64..16).prop_map(|(lo, d)| (Some(lo), Some(lo + d))),
        ],
        prop::sample::select(vec!["a", "b", "c", "x", "n", "batch", "s_1", "U"]),
    )
        .prop_map(move |(kind, (lo, hi), name)| {
            // ShapeVar needs min >= 0; keep the generated ones valid.
            let lo = match (kind, lo) {
                (VarKind::ShapeVar, Some(l)) if l < 0 => Some(-l),
                (_, l) => l,
            };
            let hi = match (lo, hi) {
                (Some(l), Some(h)) if h < l => Some(l),
                (None, Some(h)) if kind == VarKind::ShapeVar && h < 0 => Some(0),
                (_, h) => h,
            };
            VarDecl {
                kind,
                name: Some(Expr::Str(if i < 3 {
                    name.to_string()
                } else {
                    format!("{name}{i}")
                })),
                min: lo.map(int),
                max: hi.map(int),
                optimization_hint: None,
            }
        })
}

/// An int-valued expression of bounded depth.
pub fn int_expr(nvars: usize, depth: u32) -> BoxedStrategy<Expr> {
    let leaf = prop_oneof![
        3 => (0..nvars).prop_map(Expr::Var),
        2 => constant(),
    ];
    leaf.prop_recursive(depth, 24, 2, move |inner| {
        prop_oneof![
            6 => (prop::sample::select(vec![Op::Add, Op::Sub, Op::Mul]), inner.clone(), inner.clone())
                .prop_map(|(op, a, b)| Expr::Op(op, vec![a, b])),
            2 => (prop::sample::select(vec![Op::FloorDiv, Op::Mod]), inner.clone(), divisor(nvars))
                .prop_map(|(op, a, b)| Expr::Op(op, vec![a, b])),
            1 => (prop::sample::select(vec![Op::FloorDiv, Op::Mod]), inner.clone(), inner.clone())
                .prop_map(|(op, a, b)| Expr::Op(op, vec![a, b])),
            1 => (inner.clone(), prop::sample::select(vec![0i64, 1, 2, 2, 3]))
                .prop_map(|(a, n)| Expr::Op(Op::Pow, vec![a, int(n)])),
            1 => inner.clone().prop_map(|a| Expr::Op(Op::Neg, vec![a])),
        ]
    })
    .boxed()
}

/// Mostly small non-zero divisors, sometimes 0, -1 or a var.
fn divisor(nvars: usize) -> impl Strategy<Value = Expr> {
    prop_oneof![
        6 => (2i64..=8).prop_map(int),
        1 => prop::sample::select(vec![0i64, 1, -1, -3]).prop_map(int),
        1 => (0..nvars).prop_map(Expr::Var),
    ]
}

/// A bool-valued expression: comparisons of int expressions, combined with
/// `&`, `|` and `sym_not`.
pub fn bool_expr(nvars: usize) -> BoxedStrategy<Expr> {
    let cmp = (
        prop::sample::select(vec![Op::Eq, Op::Ne, Op::Lt, Op::Le, Op::Gt, Op::Ge]),
        int_expr(nvars, 2),
        prop_oneof![2 => int_expr(nvars, 1), 1 => constant()],
        any::<bool>(),
    )
        .prop_map(|(op, a, b, flip)| Expr::Op(op, if flip { vec![b, a] } else { vec![a, b] }));
    cmp.prop_recursive(2, 8, 2, |inner| {
        prop_oneof![
            2 => (prop::sample::select(vec![Op::And, Op::Or]), inner.clone(), inner.clone())
                .prop_map(|(op, a, b)| Expr::Op(op, vec![a, b])),
            1 => (prop::sample::select(vec![Op::And, Op::Or]), inner.clone(), any::<bool>())
                .prop_map(|(op, a, b)| Expr::Op(op, vec![a, Expr::Bool(b)])),
            1 => inner.clone().prop_map(|a| Expr::Op(Op::Not, vec![a])),
        ]
    })
    .boxed()
}

/// Every binary operator of the case format.
const BINARY: [Op; 15] = [
    Op::Add,
    Op::Sub,
    Op::Mul,
    Op::FloorDiv,
    Op::Mod,
    Op::Pow,
    Op::TrueDiv,
    Op::Eq,
    Op::Ne,
    Op::Lt,
    Op::Le,
    Op::Gt,
    Op::Ge,
    Op::And,
    Op::Or,
];

/// A float constant: zeros, integral floats, fractions, negatives.
fn float_constant() -> impl Strategy<Value = Expr> {
    prop_oneof![
        2 => prop::sample::select(vec![0.0f64, 1.0, 2.0, -1.0, -2.0, 0.5, 1.5, 2.5, -0.5, -2.5]).prop_map(Expr::Float),
        1 => (-40i32..=40).prop_map(|k| Expr::Float(k as f64 / 4.0)),
    ]
}

/// A symbolic value that folds to a constant (`a*0 + k`): the way a SymInt
/// or SymFloat whose expression is a number arises, which is what reaches
/// the number paths of torch's functions (and `int_oo` through
/// PowByNatural's overflow).
fn folded(nvars: usize) -> impl Strategy<Value = Expr> {
    (
        0..nvars,
        prop_oneof![constant(), float_constant()],
        any::<bool>(),
    )
        .prop_map(|(v, k, pow)| {
            let zero = Expr::Op(Op::Mul, vec![Expr::Var(v), int(0)]);
            let e = Expr::Op(Op::Add, vec![zero, k]);
            if pow {
                // 2**64 and up overflow to int_oo; -2 to an odd power to -int_oo.
                Expr::Op(
                    Op::Pow,
                    vec![
                        Expr::Op(
                            Op::Add,
                            vec![Expr::Op(Op::Mul, vec![Expr::Var(v), int(0)]), int(2)],
                        ),
                        int(64),
                    ],
                )
            } else {
                e
            }
        })
}

/// A mixed expression: ints, floats and bools, symbolic or plain, under
/// every operator (the promotion and dispatch rules of `_make_user_magic`).
pub fn mixed_expr(nvars: usize, depth: u32) -> BoxedStrategy<Expr> {
    let leaf = prop_oneof![
        4 => (0..nvars).prop_map(Expr::Var),
        2 => constant(),
        2 => float_constant(),
        1 => any::<bool>().prop_map(Expr::Bool),
        1 => folded(nvars),
    ];
    leaf.prop_recursive(depth, 16, 2, move |inner| {
        prop_oneof![
            4 => (prop::sample::select(vec![Op::Add, Op::Sub, Op::Mul]), inner.clone(), inner.clone())
                .prop_map(|(op, a, b)| Expr::Op(op, vec![a, b])),
            2 => (inner.clone(), float_constant()).prop_map(|(a, f)| Expr::Op(Op::Mul, vec![a, f])),
            2 => (prop::sample::select(BINARY.to_vec()), inner.clone(), inner.clone())
                .prop_map(|(op, a, b)| Expr::Op(op, vec![a, b])),
            1 => inner.clone().prop_map(|a| Expr::Op(Op::Neg, vec![a])),
        ]
    })
    .boxed()
}

/// A float-valued symbolic expression: an int expression promoted by a
/// float operand (`a*1.5`, `a + 0.5`, `a / 2`), combined further.
pub fn float_expr(nvars: usize) -> BoxedStrategy<Expr> {
    let base = (
        int_expr(nvars, 2),
        prop::sample::select(vec![Op::Add, Op::Sub, Op::Mul, Op::TrueDiv]),
        float_constant(),
        any::<bool>(),
    )
        .prop_map(|(a, op, f, flip)| Expr::Op(op, if flip { vec![f, a] } else { vec![a, f] }));
    base.prop_recursive(2, 8, 2, move |inner| {
        prop_oneof![
            3 => (prop::sample::select(vec![Op::Add, Op::Sub, Op::Mul]), inner.clone(), prop_oneof![inner.clone(), int_expr(nvars, 1), float_constant().boxed()])
                .prop_map(|(op, a, b)| Expr::Op(op, vec![a, b])),
            1 => inner.clone().prop_map(|a| Expr::Op(Op::Neg, vec![a])),
        ]
    })
    .boxed()
}

/// The op families `gen --kind derived-FAMILY` draws from, by the
/// outermost operation: `arith` (+ - * ** neg), `div` (// % /), `cmp`
/// (comparisons), `logic` (& | sym_not), `spec` (inside TensorSpec dims and
/// ShapesSpec assumptions); and by operand type: `bool` (a `True`/`False`
/// operand on either side of any operator), `float` (SymFloat arithmetic,
/// `%`, `/`, `//` and comparisons with float operands), `pow` (`**` with
/// float, int, bool and folded-constant operands, and `int_oo` arithmetic).
pub const FAMILIES: [&str; 8] = [
    "arith", "div", "cmp", "logic", "spec", "bool", "float", "pow",
];

/// A case whose outermost operation is of `family` (see [`FAMILIES`]).
pub fn family_case(family: &str) -> Option<BoxedStrategy<Case>> {
    let family = family.to_string();
    if !FAMILIES.contains(&family.as_str()) {
        return None;
    }
    Some(
        (1usize..=3)
            .prop_flat_map(move |n| {
                let vars: Vec<_> = (0..n).map(var_decl).collect();
                let value: BoxedStrategy<Expr> = match family.as_str() {
                    "arith" => arith_value(n),
                    "div" => div_value(n),
                    "cmp" => cmp_value(n),
                    "bool" => bool_value(n),
                    "float" => float_value(n),
                    "pow" => pow_value(n),
                    "logic" => logic_value(n),
                    _ => spec_value(n),
                };
                (vars, value)
            })
            .prop_map(|(vars, value)| Case {
                id: String::new(),
                vars,
                body: CaseBody::Build { value },
            })
            .boxed(),
    )
}

/// `+ - *` of two ints, `**` by a small constant, or negation.
fn arith_value(n: usize) -> BoxedStrategy<Expr> {
    prop_oneof![
        3 => (prop::sample::select(vec![Op::Add, Op::Sub, Op::Mul]), int_expr(n, 3), int_expr(n, 3))
            .prop_map(|(op, a, b)| Expr::Op(op, vec![a, b])),
        1 => (int_expr(n, 3), prop::sample::select(vec![0i64, 1, 2, 3, -1]))
            .prop_map(|(a, k)| Expr::Op(Op::Pow, vec![a, int(k)])),
        1 => int_expr(n, 3).prop_map(|a| Expr::Op(Op::Neg, vec![a])),
    ]
    .boxed()
}

/// `// % /` with a divisor or an int on either side.
fn div_value(n: usize) -> BoxedStrategy<Expr> {
    (
        prop::sample::select(vec![Op::FloorDiv, Op::Mod, Op::TrueDiv]),
        int_expr(n, 3),
        prop_oneof![2 => divisor(n).boxed(), 1 => int_expr(n, 2)],
        any::<bool>(),
    )
        .prop_map(|(op, a, b, flip)| Expr::Op(op, if flip { vec![b, a] } else { vec![a, b] }))
        .boxed()
}

/// A comparison of an int with an int or a constant, either way round.
fn cmp_value(n: usize) -> BoxedStrategy<Expr> {
    (
        prop::sample::select(vec![Op::Eq, Op::Ne, Op::Lt, Op::Le, Op::Gt, Op::Ge]),
        int_expr(n, 3),
        prop_oneof![int_expr(n, 2), constant().boxed()],
        any::<bool>(),
    )
        .prop_map(|(op, a, b, flip)| Expr::Op(op, if flip { vec![b, a] } else { vec![a, b] }))
        .boxed()
}

/// A binary operator with a `True`/`False` operand on either side.
fn bool_value(n: usize) -> BoxedStrategy<Expr> {
    (
        prop::sample::select(BINARY.to_vec()),
        prop_oneof![
            3 => int_expr(n, 2),
            2 => float_expr(n),
            2 => bool_expr(n),
            2 => mixed_expr(n, 2),
            1 => folded(n).boxed(),
        ],
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(op, a, b, flip)| {
            let b = Expr::Bool(b);
            Expr::Op(op, if flip { vec![b, a] } else { vec![a, b] })
        })
        .boxed()
}

/// SymFloat arithmetic, `%`, `/`, `//` and comparisons with a float operand.
fn float_value(n: usize) -> BoxedStrategy<Expr> {
    (
        prop::sample::select(vec![
            Op::Add,
            Op::Sub,
            Op::Mul,
            Op::TrueDiv,
            Op::FloorDiv,
            Op::Mod,
            Op::Mod,
            Op::Mod,
            Op::Eq,
            Op::Ne,
            Op::Lt,
            Op::Le,
            Op::Gt,
            Op::Ge,
        ]),
        float_expr(n),
        prop_oneof![
            3 => float_constant().boxed(),
            2 => int_expr(n, 1),
            2 => float_expr(n),
            1 => constant().boxed(),
            1 => folded(n).boxed(),
        ],
        any::<bool>(),
    )
        .prop_map(|(op, a, b, flip)| Expr::Op(op, if flip { vec![b, a] } else { vec![a, b] }))
        .boxed()
}

/// `**` of float, int, bool and folded-constant operands, and `int_oo` arithmetic.
fn pow_value(n: usize) -> BoxedStrategy<Expr> {
    prop_oneof![
        3 => (
            prop_oneof![
                2 => float_constant().boxed(),
                2 => int_expr(n, 1),
                2 => float_expr(n),
                1 => constant().boxed(),
                1 => folded(n).boxed(),
                1 => any::<bool>().prop_map(Expr::Bool).boxed(),
            ],
            prop_oneof![
                2 => float_constant().boxed(),
                2 => int_expr(n, 1),
                1 => float_expr(n),
                2 => prop::sample::select(vec![0i64, 1, 2, 3, 63, 64, 100, -1]).prop_map(int).boxed(),
                1 => any::<bool>().prop_map(Expr::Bool).boxed(),
            ],
        )
            .prop_filter("a symbolic operand", |(a, b)| has_var(a) || has_var(b))
            .prop_map(|(a, b)| Expr::Op(Op::Pow, vec![a, b])),
        2 => (
            prop::sample::select(BINARY.to_vec()),
            folded(n),
            prop_oneof![int_expr(n, 2), float_expr(n), constant().boxed(), float_constant().boxed(), folded(n).boxed()],
            any::<bool>(),
        )
            .prop_map(|(op, a, b, flip)| {
                Expr::Op(op, if flip { vec![b, a] } else { vec![a, b] })
            }),
        1 => mixed_expr(n, 3).prop_map(|a| Expr::Op(Op::Pow, vec![a, int(2)])),
    ]
    .boxed()
}

/// A `&`, `|` or `sym_not` outermost.
fn logic_value(n: usize) -> BoxedStrategy<Expr> {
    bool_expr(n)
        .prop_filter("a logic op outermost", |e| {
            matches!(e, Expr::Op(Op::And | Op::Or | Op::Not, _))
        })
        .boxed()
}

/// Int exprs inside TensorSpec dims, bool exprs as ShapesSpec assumptions.
fn spec_value(n: usize) -> BoxedStrategy<Expr> {
    prop_oneof![
        prop::collection::vec(
            prop_oneof![3 => int_expr(n, 3), 1 => Just(Expr::None)],
            1..3
        )
        .prop_map(|d| Expr::Spec(SpecCtor::TensorSpec, Box::new(Expr::List(d)))),
        prop::collection::vec(bool_expr(n), 1..3).prop_map(|a| Expr::ShapesSpec {
            params: None,
            assumptions: Some(Box::new(Expr::List(a))),
            globals: None,
        }),
    ]
    .boxed()
}

fn has_var(e: &Expr) -> bool {
    match e {
        Expr::Var(_) => true,
        Expr::Op(_, args) | Expr::List(args) | Expr::Tuple(args) => args.iter().any(has_var),
        _ => false,
    }
}

/// One to three vars, as derived cases declare them.
pub fn var_decls() -> impl Strategy<Value = Vec<VarDecl>> {
    (1usize..=3).prop_flat_map(|n| (0..n).map(var_decl).collect::<Vec<_>>())
}

/// A derived-expression `build` case of any family.
pub fn derived_case() -> impl Strategy<Value = Case> {
    (1usize..=3)
        .prop_flat_map(|n| {
            let vars: Vec<_> = (0..n).map(var_decl).collect();
            let value = prop_oneof![
                6 => int_expr(n, 4),
                4 => bool_expr(n),
                1 => (int_expr(n, 2), int_expr(n, 2))
                    .prop_map(|(a, b)| Expr::Op(Op::TrueDiv, vec![a, b])),
                2 => prop::collection::vec(prop_oneof![3 => int_expr(n, 3), 1 => Just(Expr::None)], 1..3)
                    .prop_map(|d| Expr::Spec(SpecCtor::TensorSpec, Box::new(Expr::List(d)))),
                2 => prop::collection::vec(bool_expr(n), 1..3).prop_map(|a| Expr::ShapesSpec {
                    params: None,
                    assumptions: Some(Box::new(Expr::List(a))),
                    globals: None,
                }),
            ];
            (vars, value)
        })
        .prop_map(|(vars, value)| Case {
            id: String::new(),
            vars,
            body: CaseBody::Build { value },
        })
}
