//! Strategies for `build` cases: vars with valid and invalid ranges, and
//! spec trees that mostly construct, with controlled shares of constructor
//! errors, Python quirks (equal dict keys, odd iterables) and derived ops.

use num_bigint::BigInt;
use proptest::prelude::*;

use crate::case::wire::{Case, CaseBody, Expr, SpecCtor, VarDecl};
use crate::pyval::ops::Op;
use crate::spec::VarKind;

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => "[a-z][a-z0-9_]{0,6}",
        1 => Just("anon".to_string()),
        1 => prop::sample::select(vec!["", "a b", "x\ny", "q'uote", "d\"q", "tab\t", "é", "中文", "a\rb", "\u{2028}"])
            .prop_map(str::to_string),
    ]
}

fn big_int() -> impl Strategy<Value = BigInt> {
    prop_oneof![
        6 => (-5i64..=70).prop_map(BigInt::from),
        1 => any::<i64>().prop_map(BigInt::from),
        1 => (64u32..=100, any::<bool>()).prop_map(|(bits, neg)| {
            let v = BigInt::from(1) << bits as usize;
            if neg { -v } else { v }
        }),
    ]
}

fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        prop::sample::select(vec![
            0.0,
            -0.0,
            1.0,
            0.5,
            -2.5,
            1e-5,
            1e16,
            1e15,
            0.1,
            1.5e300,
            123456789.123,
            f64::INFINITY
        ]),
        (-1000i32..1000).prop_map(|i| i as f64 / 8.0),
        any::<f64>().prop_filter("finite", |f| f.is_finite()),
    ]
}

fn var_decl() -> impl Strategy<Value = VarDecl> {
    // Mostly valid ranges (max >= min); a few of each constructor error.
    let range = prop_oneof![
        30 => Just((None, None)),
        20 => (0i64..64).prop_map(|lo| (Some(Expr::Int(lo.into())), None)),
        15 => (0i64..64).prop_map(|hi| (None, Some(Expr::Int(hi.into())))),
        20 => (0i64..32, 0i64..64).prop_map(|(lo, d)| (Some(Expr::Int(lo.into())), Some(Expr::Int((lo + d).into())))),
        2 => (-64i64..0).prop_map(|lo| (Some(Expr::Int(lo.into())), None)),
        2 => (big_int(), big_int()).prop_map(|(a, b)| {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            (Some(Expr::Int(lo)), Some(Expr::Int(hi)))
        }),
        1 => (1i64..64).prop_map(|d| (Some(Expr::Int(d.into())), Some(Expr::Int(0.into())))),
        1 => Just((Some(Expr::None), None)),
        1 => Just((Some(Expr::Str("x".into())), None)),
        1 => Just((Some(Expr::Int(1.into())), Some(Expr::Str("y".into())))),
    ];
    (
        prop_oneof![Just(VarKind::IntVar), Just(VarKind::ShapeVar)],
        prop::option::weighted(0.9, name().prop_map(Expr::Str)),
        range,
        prop::option::weighted(0.2, (0i64..100).prop_map(|i| Expr::Int(i.into()))),
    )
        .prop_map(|(kind, name, (min, max), optimization_hint)| VarDecl {
            kind,
            name,
            min,
            max,
            optimization_hint,
        })
}

/// A plain Python value leaf.
fn scalar() -> impl Strategy<Value = Expr> {
    prop_oneof![
        2 => Just(Expr::None),
        1 => any::<bool>().prop_map(Expr::Bool),
        4 => big_int().prop_map(Expr::Int),
        1 => float().prop_map(Expr::Float),
        2 => name().prop_map(Expr::Str),
    ]
}

/// A leaf that fits a tensor dim (mostly) or a spec slot.
fn leaf(nvars: usize) -> BoxedStrategy<Expr> {
    if nvars == 0 {
        return scalar().boxed();
    }
    prop_oneof![
        4 => (0..nvars).prop_map(Expr::Var),
        3 => scalar(),
        1 => derived(nvars),
    ]
    .boxed()
}

/// A var op int (or int op var): a derived expression.
fn derived(nvars: usize) -> impl Strategy<Value = Expr> {
    (
        prop::sample::select(vec![
            Op::Add,
            Op::Mul,
            Op::Sub,
            Op::FloorDiv,
            Op::Mod,
            Op::Eq,
            Op::Gt,
        ]),
        0..nvars,
        -3i64..5,
        any::<bool>(),
    )
        .prop_map(|(op, v, c, flip)| {
            let (a, b) = (Expr::Var(v), Expr::Int(c.into()));
            Expr::Op(op, if flip { vec![b, a] } else { vec![a, b] })
        })
}

/// Plain-value arithmetic (Python semantics, no vars).
fn plain_op() -> impl Strategy<Value = Expr> {
    (prop::sample::select(Op::ALL.to_vec()), scalar(), scalar()).prop_map(|(op, a, b)| {
        if op.arity() == 1 {
            Expr::Op(op, vec![a])
        } else {
            Expr::Op(op, vec![a, b])
        }
    })
}

fn key() -> impl Strategy<Value = Expr> {
    prop_oneof![
        8 => name().prop_map(Expr::Str),
        2 => (-2i64..5).prop_map(|i| Expr::Int(i.into())),
        1 => any::<bool>().prop_map(Expr::Bool),
        1 => Just(Expr::None),
        1 => Just(Expr::Float(1.0)),
    ]
}

fn str_dict(inner: BoxedStrategy<Expr>, max: usize) -> impl Strategy<Value = Expr> {
    prop::collection::vec((key(), inner), 0..max).prop_map(Expr::Dict)
}

fn spec_tree(nvars: usize) -> BoxedStrategy<Expr> {
    let leaf = leaf(nvars);
    leaf.prop_recursive(4, 48, 5, move |inner| {
        let dims = prop::collection::vec(
            prop_oneof![8 => leaf_dim(nvars), 1 => inner.clone()],
            0..4,
        );
        prop_oneof![
            4 => dims.prop_map(|d| Expr::Spec(SpecCtor::TensorSpec, Box::new(Expr::List(d)))),
            3 => str_dict(inner.clone(), 4).prop_map(|d| Expr::Spec(SpecCtor::ObjectSpec, Box::new(d))),
            2 => str_dict(inner.clone(), 4).prop_map(|d| Expr::Spec(SpecCtor::DictSpec, Box::new(d))),
            2 => prop::collection::vec(inner.clone(), 0..4)
                .prop_map(|v| Expr::Spec(SpecCtor::SeqSpec, Box::new(Expr::List(v)))),
            2 => params(inner.clone()).prop_map(|p| Expr::Spec(SpecCtor::ParamsSpec, Box::new(p))),
            1 => prop::collection::vec(inner.clone(), 0..3).prop_map(Expr::List),
            1 => prop::collection::vec(inner.clone(), 0..3).prop_map(Expr::Tuple),
            1 => (inner.clone(), prop::sample::select(SpecCtor::ALL.to_vec()))
                .prop_map(|(e, c)| Expr::Spec(c, Box::new(e))),
        ]
    })
    .boxed()
}

fn leaf_dim(nvars: usize) -> BoxedStrategy<Expr> {
    if nvars == 0 {
        return prop_oneof![
            Just(Expr::None),
            (0i64..16).prop_map(|i| Expr::Int(i.into()))
        ]
        .boxed();
    }
    prop_oneof![
        5 => (0..nvars).prop_map(Expr::Var),
        2 => Just(Expr::None),
        2 => (0i64..16).prop_map(|i| Expr::Int(i.into())),
        1 => derived(nvars),
    ]
    .boxed()
}

/// A ParamsSpec argument: named args, sometimes `*args` / `**kwargs`.
fn params(inner: BoxedStrategy<Expr>) -> impl Strategy<Value = Expr> {
    (
        prop::collection::vec(
            ("[a-z][a-z0-9_]{0,5}".prop_map(Expr::Str), inner.clone()),
            0..4,
        ),
        prop::option::weighted(0.3, prop::collection::vec(inner.clone(), 0..3)),
        prop::option::weighted(
            0.3,
            prop::collection::vec(("[a-z]{1,4}".prop_map(Expr::Str), inner), 0..3),
        ),
        prop_oneof![
            20 => Just(None),
            1 => Just(Some(("*foo", Expr::List(vec![])))),
            1 => Just(Some(("*args", Expr::Tuple(vec![])))),
            1 => Just(Some(("**kwargs", Expr::List(vec![])))),
        ],
    )
        .prop_map(|(mut named, varargs, varkw, odd)| {
            if let Some(v) = varargs {
                named.push((Expr::Str("*args".into()), Expr::List(v)));
            }
            if let Some(kw) = varkw {
                named.push((Expr::Str("**kwargs".into()), Expr::Dict(kw)));
            }
            if let Some((k, v)) = odd {
                named.push((Expr::Str(k.into()), v));
            }
            Expr::Dict(named)
        })
}

fn shapes_spec(nvars: usize) -> impl Strategy<Value = Expr> {
    let tree = spec_tree(nvars);
    (
        params(tree),
        prop_oneof![
            6 => Just(0u8), // params as a dict
            3 => Just(1u8), // params as a ParamsSpec
            1 => Just(2u8), // params absent
            1 => Just(3u8), // params of a bad type
        ],
        prop_oneof![
            8 => Just(None),
            2 => Just(Some(Expr::List(vec![]))),
            1 => Just(Some(Expr::List(vec![Expr::Bool(true)]))),
        ],
        prop::option::weighted(0.05, Just(Expr::Int(1.into()))),
    )
        .prop_map(|(p, how, assumptions, globals)| {
            let params = match how {
                0 => Some(Box::new(p)),
                1 => Some(Box::new(Expr::Spec(SpecCtor::ParamsSpec, Box::new(p)))),
                2 => None,
                _ => Some(Box::new(Expr::List(vec![]))),
            };
            Expr::ShapesSpec {
                params,
                assumptions: assumptions.map(Box::new),
                globals: globals.map(Box::new),
            }
        })
}

/// A `build` case.
pub fn build_case() -> impl Strategy<Value = Case> {
    prop::collection::vec(var_decl(), 0..4)
        .prop_flat_map(|vars| {
            let n = vars.len();
            let value = prop_oneof![
                5 => shapes_spec(n).boxed(),
                5 => spec_tree(n),
                1 => plain_op().boxed(),
            ];
            (Just(vars), value)
        })
        .prop_map(|(vars, value)| Case {
            id: String::new(),
            vars,
            body: CaseBody::Build { value },
        })
}
