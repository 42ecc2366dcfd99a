//! Strategies for `export_spec` cases (`torchspec gen --kind export_spec`):
//! inputs of a few shapes and containers, and a spec that mostly fits them
//! (vars with bounds, repeated vars, derived dims `k*V + c`, `V1*V2`,
//! `V // k`, `V % k`, assumptions `V op c`, `V1 op V2`, `Mod(V, k) == 0`,
//! `V == k*W`), with some misfits (rank, static dims, containers, unbound
//! vars) so every error path is reached.

use proptest::prelude::*;

use crate::case::export_spec::{ExportSpecCase, LaterCallExpr, SigParam};
use crate::case::wire::{Case, CaseBody, Expr, SpecCtor, TensorExpr, VarDecl};
use crate::pyval::ops::Op;
use crate::spec::VarKind;
use torchspec_spec_export::{Api, ParamKind};

/// An input: a tensor of a given shape, an int, or a list of tensors.
#[derive(Clone, Debug)]
enum Input {
    Tensor(Vec<i64>),
    Int(i64),
    List(Vec<Vec<i64>>),
}

fn shape() -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(prop_oneof![6 => 2i64..10, 1 => 0i64..2], 0..=3)
}

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![
        6 => shape().prop_map(Input::Tensor),
        2 => (-4i64..12).prop_map(Input::Int),
        1 => prop::collection::vec(shape(), 1..=2).prop_map(Input::List),
    ]
}

fn var_decl() -> impl Strategy<Value = VarDecl> {
    let bound =
        |lo: i64, hi: i64| prop::option::weighted(0.4, (lo..hi).prop_map(|v| Expr::Int(v.into())));
    (
        prop_oneof![3 => Just(VarKind::ShapeVar), 1 => Just(VarKind::IntVar)],
        prop::sample::select(vec!["a", "b", "c", "n", "batch"]),
        bound(0, 6),
        bound(4, 70),
    )
        .prop_map(|(kind, name, min, max)| VarDecl {
            kind,
            name: Some(Expr::Str(name.into())),
            min,
            max,
            optimization_hint: None,
        })
}

fn int(v: i64) -> Expr {
    Expr::Int(v.into())
}

fn op(o: Op, a: Expr, b: Expr) -> Expr {
    Expr::Op(o, vec![a, b])
}

/// A dim spec over `nvars` vars: a var, a derived expression, a static
/// int (mostly the actual size) or None.
fn dim_spec(nvars: usize, actual: i64) -> BoxedStrategy<Expr> {
    let v = 0..nvars;
    prop_oneof![
        6 => v.clone().prop_map(Expr::Var),
        1 => (v.clone(), 1i64..4, -2i64..3).prop_map(|(i, k, c)| op(Op::Add, op(Op::Mul, Expr::Var(i), int(k)), int(c))),
        1 => (v.clone(), v.clone()).prop_map(|(i, j)| op(Op::Mul, Expr::Var(i), Expr::Var(j))),
        1 => (v.clone(), 2i64..4).prop_map(|(i, k)| op(Op::FloorDiv, Expr::Var(i), int(k))),
        1 => (v, 2i64..4).prop_map(|(i, k)| op(Op::Mod, Expr::Var(i), int(k))),
        2 => prop_oneof![4 => Just(actual), 1 => 0i64..10].prop_map(int),
        2 => Just(Expr::None),
    ]
    .boxed()
}

fn tensor_spec(nvars: usize, shape: &[i64]) -> BoxedStrategy<Expr> {
    let dims: Vec<BoxedStrategy<Expr>> = shape.iter().map(|d| dim_spec(nvars, *d)).collect();
    prop_oneof![
        12 => dims.prop_map(|d| Expr::Spec(SpecCtor::TensorSpec, Box::new(Expr::List(d)))),
        1 => Just(Expr::Spec(SpecCtor::TensorSpec, Box::new(Expr::List(vec![Expr::Var(0)])))),
        1 => Just(Expr::None),
    ]
    .boxed()
}

fn input_spec(nvars: usize, i: &Input) -> BoxedStrategy<Expr> {
    match i {
        Input::Tensor(s) => tensor_spec(nvars, s),
        Input::Int(v) => prop_oneof![
            4 => (0..nvars).prop_map(Expr::Var),
            1 => Just(int(*v)),
            1 => Just(Expr::None),
        ]
        .boxed(),
        Input::List(shapes) => {
            let items: Vec<BoxedStrategy<Expr>> =
                shapes.iter().map(|s| tensor_spec(nvars, s)).collect();
            items
                .prop_map(|v| Expr::Spec(SpecCtor::SeqSpec, Box::new(Expr::List(v))))
                .boxed()
        }
    }
}

fn assumption(nvars: usize) -> BoxedStrategy<Expr> {
    let v = 0..nvars;
    prop_oneof![
        (
            v.clone(),
            prop::sample::select(vec![Op::Gt, Op::Ge, Op::Lt, Op::Le]),
            0i64..9
        )
            .prop_map(|(i, o, c)| op(o, Expr::Var(i), int(c))),
        (
            v.clone(),
            v.clone(),
            prop::sample::select(vec![Op::Gt, Op::Le])
        )
            .prop_map(|(i, j, o)| op(o, Expr::Var(i), Expr::Var(j))),
        (v.clone(), 2i64..5).prop_map(|(i, k)| op(
            Op::Eq,
            op(Op::Mod, Expr::Var(i), int(k)),
            int(0)
        )),
        (v.clone(), v, 2i64..4).prop_map(|(i, j, k)| op(
            Op::Eq,
            Expr::Var(i),
            op(Op::Mul, Expr::Var(j), int(k))
        )),
    ]
    .boxed()
}

fn value_of(i: &Input) -> Expr {
    let t = |s: &Vec<i64>| {
        Expr::Tensor(Box::new(TensorExpr {
            shape: s.clone(),
            dtype: "float32".into(),
            data: None,
        }))
    };
    match i {
        Input::Tensor(s) => t(s),
        Input::Int(v) => int(*v),
        Input::List(shapes) => Expr::List(shapes.iter().map(t).collect()),
    }
}

/// A later call's input: the first one's, a size or value moved or not.
fn moved(i: &Input) -> BoxedStrategy<Input> {
    match i {
        Input::Tensor(s) => {
            let dims: Vec<BoxedStrategy<i64>> = s
                .iter()
                .map(|d| prop_oneof![3 => Just(*d), 1 => 0i64..10].boxed())
                .collect();
            dims.prop_map(Input::Tensor).boxed()
        }
        Input::Int(v) => prop_oneof![2 => Just(*v), 1 => -2i64..12]
            .prop_map(Input::Int)
            .boxed(),
        other => Just(other.clone()).boxed(),
    }
}

const NAMES: [&str; 3] = ["x", "y", "z"];

/// One `export_spec` case.
pub fn export_spec_case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(var_decl(), 1..=3),
        prop::collection::vec(input(), 1..=3),
        prop::sample::select(vec![
            Api::Export,
            Api::ExportStrict,
            Api::MakeFx,
            Api::Compile,
        ]),
    )
        .prop_flat_map(|(vars, inputs, api)| {
            let n = vars.len();
            let specs: Vec<BoxedStrategy<Expr>> = inputs.iter().map(|i| input_spec(n, i)).collect();
            let one: Vec<BoxedStrategy<Input>> = inputs.iter().map(moved).collect();
            let later = prop::collection::vec(one, 0..=2);
            (
                Just(vars),
                Just(inputs),
                Just(api),
                specs,
                prop::collection::vec(assumption(n), 0..=2),
                later,
            )
        })
        .prop_map(|(vars, inputs, api, specs, assumptions, later)| {
            let params: Vec<(Expr, Expr)> = specs
                .into_iter()
                .enumerate()
                .map(|(i, s)| (Expr::Str(NAMES[i].into()), s))
                .collect();
            let spec = Expr::ShapesSpec {
                params: Some(Box::new(Expr::Dict(params))),
                assumptions: (!assumptions.is_empty()).then(|| Box::new(Expr::List(assumptions))),
                globals: None,
            };
            let signature = (0..inputs.len())
                .map(|i| SigParam {
                    name: NAMES[i].into(),
                    kind: ParamKind::PositionalOrKeyword,
                    default: None,
                })
                .collect();
            let calls = (api == Api::Compile && !later.is_empty()).then(|| {
                later
                    .iter()
                    .map(|l| LaterCallExpr {
                        args: Expr::Tuple(l.iter().map(value_of).collect()),
                        kwargs: None,
                    })
                    .collect()
            });
            let es = ExportSpecCase {
                api,
                signature,
                args: Expr::Tuple(inputs.iter().map(value_of).collect()),
                kwargs: None,
                spec: Some(spec),
                decorator: None,
                module: None,
                body: None,
                options: None,
                calls,
            };
            Case {
                id: String::new(),
                vars,
                body: CaseBody::ExportSpec(Box::new(es)),
            }
        })
}
