//! Repro one-liners: a case (`case::wire::Case`) as a self-contained Python
//! program, one line long, that evaluates it with stock PyTorch exactly as
//! `oracle/capture.py` does and prints what the golden holds for it: the
//! golden result line without its `id`, in the golden's own JSON layout
//! (`{"ok":{"repr":…,"jsonable":…}}`, `{"ok":{"name":…}}` or
//! `{"error":{"type":…,"message":…}}`). It needs only `torch`: no file of
//! this repository. Program reports are the exception: `program_one_liner`
//! loads a zoo `.pt2` by its repository path.
//!
//! Data flow: `Case` ──`Gen` (expressions, vars, sources)──▶ Python source
//! ──`shell_quote`──▶ `python -c '…'`.
//!
//! How the one-liner stays one line and stays faithful to the oracle:
//! - an uncaught exception is printed by `sys.excepthook` as the error
//!   object (type name and `str(e)`), so no `try:` block is needed;
//! - the modules are imported as the oracle imports them (`source`,
//!   `dynamic_spec`, then the dynamo `builder`), and every PyTorch name is
//!   an attribute access at its point of use, so a name missing in an older
//!   torch raises the same `AttributeError` as in the oracle, with no path
//!   in its message;
//! - the uid counter and the spec ShapeEnv are reset as the oracle resets
//!   them before each case; vars are built in order in one list;
//! - a `{"dict": …}` VALUE is built pair by pair (`d.__setitem__(k, v)`
//!   after evaluating `k` then `v`), as the oracle inserts them;
//! - every operator application and every negative literal is
//!   parenthesized, so Python's precedence never regroups a case.

use std::fmt::Write;

use crate::case::wire::{Case, CaseBody, Expr, SourceExpr, SourceField, VarDecl};
use crate::error::{Error, Result};
use crate::export::passes::Pass;
use crate::pyval::ops::Op;
use crate::pyval::{float_repr, str_repr};

/// Deepest VALUE/SOURCE nesting written out. CPython's parser refuses
/// more than 200 nested brackets (`too many nested parentheses`); each
/// level of a case can open two.
pub const MAX_NESTING: usize = 90;

/// The prelude every case one-liner starts with: the printer, the error
/// printer, the oracle's imports and its per-case reset.
const PRELUDE: &str = concat!(
    "import itertools,json,math,sys,torch;",
    "P=lambda o:print(json.dumps(o,ensure_ascii=False,separators=(\",\",\":\")));",
    "sys.excepthook=lambda t,e,b:P({\"error\":{\"type\":t.__name__,\"message\":str(e)}});",
    "import torch._dynamo.source as S,torch.fx.experimental.dynamic_spec as D,",
    "torch._dynamo.variables.builder as B;",
    "D.IntVar._uid_counter=itertools.count();D._SPEC_SHAPE_ENV=None;",
);

/// The case format's `enc` (`oracle/capture.py`), as one lambda.
const ENC: &str = concat!(
    "E=lambda x:x if x is None or isinstance(x,(str,int)) ",
    "else ({\"$float\":\"nan\"} if math.isnan(x) else {\"$float\":\"inf\" if x>0 else \"-inf\"} ",
    "if math.isinf(x) else x) if isinstance(x,float) ",
    "else [E(i) for i in x] if isinstance(x,list) ",
    "else {\"tuple\":[E(i) for i in x]} if isinstance(x,tuple) ",
    "else {k:E(w) for k,w in x.items()} if isinstance(x,dict) and all(isinstance(k,str) for k in x) ",
    "else {\"$object\":{\"type\":type(x).__name__,\"repr\":repr(x)}};",
);

/// The one-line Python program that evaluates `case` with stock PyTorch
/// and prints its golden result (without the `id`). Errs only for a case
/// nested deeper than `MAX_NESTING`, which `python -c` could not parse.
///
/// ```
/// use torchspec::case::file::parse_cases;
/// use torchspec::repro::{python_c, python_one_liner};
///
/// let line = r#"{"id":"a","kind":"build","vars":[{"kind":"IntVar","name":"n"}],"value":{"var":0}}"#;
/// let (_, case) = &parse_cases(line)?[0];
/// let program = python_one_liner(case)?;
/// assert!(!program.contains('\n') && program.contains("IntVar"));
/// assert!(python_c(case)?.starts_with("python -c '"));
/// # Ok::<(), torchspec::Error>(())
/// ```
pub fn python_one_liner(case: &Case) -> Result<String> {
    let mut g = Gen::default();
    let mut out = String::from(PRELUDE);
    if !case.vars.is_empty() {
        out.push_str("V=[");
        for (i, var) in case.vars.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            g.var(&mut out, var)?;
        }
        out.push_str("];");
    }
    match &case.body {
        CaseBody::SourceName { source } => {
            out.push_str("P({\"ok\":{\"name\":");
            g.source(&mut out, source, 0)?;
            out.push_str(".name}})");
        }
        CaseBody::Build { value } => {
            out.push_str("v=");
            g.expr(&mut out, value, 0)?;
            out.push(';');
            out.push_str(ENC);
            out.push_str(OK_LINE);
        }
        CaseBody::Lookup { spec, source } => {
            out.push_str("v=B.lookup_spec_from_dynamo_source(");
            g.source(&mut out, source, 0)?;
            out.push(',');
            g.expr(&mut out, spec, 0)?;
            out.push_str(");");
            out.push_str(ENC);
            out.push_str(OK_LINE);
        }
        CaseBody::ExportSpec(_) => {
            return Err(Error::new(
                "an export_spec case has no one-liner yet: run it with `oracle/capture.py`",
            ))
        }
    }
    Ok(out)
}

const OK_LINE: &str =
    "P({\"ok\":{\"repr\":repr(v),\"jsonable\":E(v.to_jsonable() if hasattr(v,\"to_jsonable\") else v)}})";

/// `python -c '…'` for `case`, quoted for a POSIX shell.
pub fn python_c(case: &Case) -> Result<String> {
    Ok(python_c_of(&python_one_liner(case)?))
}

/// `python -c '…'` for any Python source, quoted for a POSIX shell.
pub fn python_c_of(source: &str) -> String {
    format!("python -c {}", shell_quote(source))
}

/// `s` as one POSIX shell word: single-quoted, each `'` as `'\''`.
pub fn shell_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// A program golden line's report key (`shared/program-report.md`), as
/// `oracle/capture.py --program PATH [--pass …]` computes it, printed as
/// `{"KEY": value}` (or `{"KEY": {"error": …}}`) in the golden's JSON layout.
/// `pt2` is the archive's path relative to the repository root (run the
/// one-liner from there). `key` is one of the report keys; a key this
/// function does not know is an error.
pub fn program_one_liner(pt2: &str, passes: &[String], key: &str) -> Result<String> {
    let getter = match key {
        "schema_version" => {
            "(lambda j:[j[\"schema_version\"][\"major\"],j[\"schema_version\"][\"minor\"]])(json.loads(next(zipfile.ZipFile(F).read(n) for n in zipfile.ZipFile(F).namelist() if n.endswith(\"/models/model.json\"))))".to_string()
        }
        "graph_signature" => "str(ep.graph_signature)".to_string(),
        "parameters" | "buffers" | "non_persistent_buffers" | "lifted_tensor_constants"
        | "lifted_custom_objs" | "input_tokens" | "output_tokens" | "user_inputs"
        | "user_outputs" => format!(
            "[{{\"$float\":\"nan\"}} if isinstance(x,float) and math.isnan(x) else {{\"$float\":\"inf\" if x>0 else \"-inf\"}} if isinstance(x,float) and math.isinf(x) else x for x in ep.graph_signature.{key}]"
        ),
        "inputs_to_parameters" | "inputs_to_buffers" | "buffers_to_mutate"
        | "parameters_to_mutate" | "user_inputs_to_mutate"
        | "inputs_to_lifted_tensor_constants" | "inputs_to_lifted_custom_objs" => {
            format!("dict(ep.graph_signature.{key})")
        }
        "backward_signature" => "(lambda b:None if b is None else {\"gradients_to_parameters\":dict(b.gradients_to_parameters),\"gradients_to_user_inputs\":dict(b.gradients_to_user_inputs),\"loss_output\":b.loss_output})(ep.graph_signature.backward_signature)".to_string(),
        "in_spec" => "torch.utils._pytree.treespec_dumps(ep.call_spec.in_spec)".to_string(),
        "out_spec" => "torch.utils._pytree.treespec_dumps(ep.call_spec.out_spec)".to_string(),
        "in_spec_str" => "str(ep.call_spec.in_spec)".to_string(),
        "out_spec_str" => "str(ep.call_spec.out_spec)".to_string(),
        "range_constraints" => "str(ep.range_constraints)".to_string(),
        "graph" => "str(ep.graph)".to_string(),
        "state_dict" => "{k:{\"shape\":list(v.shape),\"dtype\":str(v.dtype),\"parameter\":isinstance(v,torch.nn.Parameter)} for k,v in ep.state_dict.items()}".to_string(),
        other => {
            return Err(Error::new(format!(
                "no one-liner for program report key {other:?}"
            )))
        }
    };
    let mut out = String::from(
        "import json,math,sys,zipfile,torch;P=lambda o:print(json.dumps(o,ensure_ascii=False,separators=(\",\",\":\")));",
    );
    write!(out, "F={};", str_repr(pt2)).ok();
    if key == "schema_version" {
        write!(out, "P({{{}:{getter}}})", str_repr(key)).ok();
        return Ok(out);
    }
    out.push_str(
        "sys.excepthook=lambda t,e,b:P({\"error\":{\"type\":t.__name__,\"message\":str(e)}});",
    );
    out.push_str("ep=torch.export.load(F);");
    for pass in passes {
        out.push_str("ep=ep._transform_do_not_use(");
        out.push_str(&pass_expr(pass)?);
        out.push_str(");");
    }
    // Errors of the key itself are the report's `{"KEY": {"error": …}}`.
    write!(
        out,
        "sys.excepthook=lambda t,e,b:P({{{k}:{{\"error\":{{\"type\":t.__name__,\"message\":str(e)}}}}}});P({{{k}:{getter}}})",
        k = str_repr(key)
    )
    .ok();
    Ok(out)
}

/// The one-liner of a `programs/NAME.serialized.jsonl` line: load `pt2`, run
/// `passes`, `torch.export.save` into memory and print
/// `{"serialized": {"sha256", "length", "equals_input"}}` of the saved
/// `models/model.json` (what `oracle/capture.py`'s `serialized_golden_lines`
/// records, without the kept text), or `{"error": …}` of a pass or the save.
pub fn serialized_one_liner(pt2: &str, passes: &[String]) -> Result<String> {
    let mut out = String::from(
        "import hashlib,io,json,sys,zipfile,torch;P=lambda o:print(json.dumps(o,ensure_ascii=False,separators=(\",\",\":\")));",
    );
    write!(out, "F={};", str_repr(pt2)).ok();
    out.push_str(
        "sys.excepthook=lambda t,e,b:P({\"error\":{\"type\":t.__name__,\"message\":str(e)}});",
    );
    out.push_str("M=lambda z:next(z.read(n) for n in z.namelist() if n.endswith(\"/models/model.json\") and n.count(\"/\")==2);");
    out.push_str("ep=torch.export.load(F);");
    for pass in passes {
        out.push_str("ep=ep._transform_do_not_use(");
        out.push_str(&pass_expr(pass)?);
        out.push_str(");");
    }
    out.push_str("B=io.BytesIO();torch.export.save(ep,B);d=M(zipfile.ZipFile(B));");
    out.push_str("P({\"serialized\":{\"sha256\":hashlib.sha256(d).hexdigest(),\"length\":len(d),\"equals_input\":d==M(zipfile.ZipFile(F))}})");
    Ok(out)
}

/// A pass of `shared/passes.md` as the oracle builds it (`make_pass`).
fn pass_expr(name: &str) -> Result<String> {
    let pass = Pass::from_name(name)
        .ok_or_else(|| Error::new(format!("no one-liner for pass {name:?}")))?;
    Ok(match pass {
        Pass::Dce => "(lambda gm:(lambda m:(gm.recompile(),__import__(\"torch.fx.passes.infra.pass_base\",fromlist=[\"PassResult\"]).PassResult(gm,m))[1])(gm.graph.eliminate_dead_code()))".into(),
        Pass::RemoveRuntimeAssertions => "__import__(\"torch._export.passes.remove_runtime_assertions\",fromlist=[\"_\"])._RemoveRuntimeAssertionsPass()".into(),
        Pass::AddInlineConstraintAssertions => "__import__(\"torch._export.passes.add_runtime_assertions_for_constraints_pass\",fromlist=[\"_\"])._AddRuntimeAssertionsForInlineConstraintsPass(ep.range_constraints)".into(),
        Pass::CommonGetitemElimination => "(lambda gm:(__import__(\"torch.export.exported_program\",fromlist=[\"_\"])._common_getitem_elimination_pass(gm,ep.graph_signature,ep.module_call_graph),__import__(\"torch.fx.passes.infra.pass_base\",fromlist=[\"PassResult\"]).PassResult(gm,True))[1])".into(),
        Pass::RemoveUnnecessaryCopy => "(lambda gm:(__import__(\"torch.export.exported_program\",fromlist=[\"_\"])._remove_unnecessary_copy_op_pass(gm,ep.graph_signature),__import__(\"torch.fx.passes.infra.pass_base\",fromlist=[\"PassResult\"]).PassResult(gm,True))[1])".into(),
    })
}

/// A pytree golden line's loaded spec (`oracle/pytree_cases.py`): what
/// `treespec_loads(input)` gives, printed as `{"str": …, "num_leaves": …,
/// "dumps": …}` or `{"error": …}`. Registered namedtuples of the golden's
/// first line are not re-registered: use it for lines that need none.
pub fn pytree_one_liner(input: &str) -> String {
    format!(
        concat!(
            "import json,sys,torch.utils._pytree as T;",
            "P=lambda o:print(json.dumps(o,ensure_ascii=False,separators=(\",\",\":\")));",
            "sys.excepthook=lambda t,e,b:P({{\"error\":{{\"type\":t.__name__,\"message\":str(e)}}}});",
            "s=T.treespec_loads({});",
            "P({{\"str\":str(s),\"num_leaves\":s.num_leaves,\"dumps\":T.treespec_dumps(s)}})"
        ),
        str_repr(input)
    )
}

/// A probe line of `corpus/programs/NAME.probes.jsonl` as a one-liner:
/// `ep.module()(*args, **kwargs)` on the program at `pt2` (a repository
/// path), printing `{"ok":true}` or `{"error":…}` as the probe golden has
/// it, without `pre_kernel` (which the oracle measures by instrumenting the
/// graph). Tensors are `torch.zeros(shape, dtype=…)` or `torch.tensor(data,
/// dtype=…)`; a namedtuple or dataclass input needs the zoo's types and is
/// an error.
pub fn probe_one_liner(pt2: &str, probe_line: &str) -> Result<String> {
    let probe: serde_json::Value = serde_json::from_str(probe_line)
        .map_err(|e| Error::new(format!("invalid probe JSON: {e}")))?;
    let mut args = String::new();
    let mut kwargs = String::new();
    probe_value(
        &mut args,
        probe.get("args").unwrap_or(&serde_json::Value::Null),
        "$.args",
        0,
    )?;
    probe_value(
        &mut kwargs,
        probe.get("kwargs").unwrap_or(&serde_json::Value::Null),
        "$.kwargs",
        0,
    )?;
    let mut out = String::from(
        "import json,sys,torch;P=lambda o:print(json.dumps(o,ensure_ascii=False,separators=(\",\",\":\")));",
    );
    write!(out, "ep=torch.export.load({});", str_repr(pt2)).ok();
    out.push_str(
        "sys.excepthook=lambda t,e,b:P({\"error\":{\"type\":t.__name__,\"message\":str(e)}});",
    );
    write!(out, "ep.module()(*{args},**{kwargs});P({{\"ok\":True}})").ok();
    Ok(out)
}

fn probe_value(out: &mut String, v: &serde_json::Value, at: &str, depth: usize) -> Result<()> {
    use serde_json::Value as J;
    if depth > MAX_NESTING {
        return Err(Error::at(at, "nested too deeply for `python -c`"));
    }
    match v {
        J::Null => out.push_str("None"),
        J::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
        J::Number(n) => {
            let t = n.to_string();
            if t.starts_with('-') {
                write!(out, "({t})").ok();
            } else {
                out.push_str(&t);
            }
        }
        J::String(s) => out.push_str(&str_repr(s)),
        J::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                probe_value(out, x, &format!("{at}[{i}]"), depth + 1)?;
            }
            out.push(']');
        }
        J::Object(m) if m.len() == 1 => {
            let (k, arg) = m.iter().next().expect("one key");
            let sub = format!("{at}.{k}");
            match (k.as_str(), arg) {
                ("tuple", J::Array(items)) => {
                    out.push('(');
                    for (i, x) in items.iter().enumerate() {
                        probe_value(out, x, &format!("{sub}[{i}]"), depth + 1)?;
                        out.push(',');
                    }
                    out.push(')');
                }
                ("dict", J::Array(pairs)) => {
                    out.push('{');
                    for (i, p) in pairs.iter().enumerate() {
                        let (Some(key), Some(val)) = (p.get(0), p.get(1)) else {
                            return Err(Error::at(&format!("{sub}[{i}]"), "a [key, value] pair"));
                        };
                        probe_value(out, key, &format!("{sub}[{i}][0]"), depth + 1)?;
                        out.push(':');
                        probe_value(out, val, &format!("{sub}[{i}][1]"), depth + 1)?;
                        out.push(',');
                    }
                    out.push('}');
                }
                ("tensor", J::Object(t)) => {
                    let dtype = t
                        .get("dtype")
                        .and_then(J::as_str)
                        .filter(|d| d.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
                        .ok_or_else(|| Error::at(&sub, "a tensor needs a dtype name"))?;
                    match t.get("data") {
                        Some(data) => {
                            out.push_str("torch.tensor(");
                            probe_value(out, data, &format!("{sub}.data"), depth + 1)?;
                        }
                        None => {
                            out.push_str("torch.zeros(");
                            probe_value(
                                out,
                                t.get("shape").unwrap_or(&J::Null),
                                &format!("{sub}.shape"),
                                depth + 1,
                            )?;
                        }
                    }
                    write!(out, ",dtype=torch.{dtype})").ok();
                }
                (other, _) => {
                    return Err(Error::at(
                        &sub,
                        format!("a `{other}` probe input needs the zoo's registered types"),
                    ))
                }
            }
        }
        J::Object(_) => return Err(Error::at(at, "a VALUE object has one key")),
    }
    Ok(())
}

/// Writes the Python expressions of one case.
#[derive(Default)]
struct Gen {
    /// Names of the dicts built pair by pair (`_d0`, `_d1`, ...).
    dicts: usize,
}

impl Gen {
    fn var(&mut self, out: &mut String, var: &VarDecl) -> Result<()> {
        write!(out, "D.{}(", var.kind.name()).ok();
        let mut first = true;
        for (k, v) in [
            ("name", &var.name),
            ("min", &var.min),
            ("max", &var.max),
            ("optimization_hint", &var.optimization_hint),
        ] {
            if let Some(v) = v {
                if !first {
                    out.push(',');
                }
                first = false;
                out.push_str(k);
                out.push('=');
                self.expr(out, v, 1)?;
            }
        }
        out.push(')');
        Ok(())
    }

    fn expr(&mut self, out: &mut String, e: &Expr, depth: usize) -> Result<()> {
        if depth > MAX_NESTING {
            return Err(Error::new(format!(
                "the case nests deeper than {MAX_NESTING} levels: `python -c` cannot parse its one-liner"
            )));
        }
        let d = depth + 1;
        match e {
            Expr::None => out.push_str("None"),
            Expr::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
            Expr::Int(i) => int_literal(out, i),
            Expr::Float(f) => float_literal(out, *f),
            Expr::Str(s) => out.push_str(&str_repr(s)),
            Expr::List(items) => {
                out.push('[');
                self.items(out, items, d)?;
                out.push(']');
            }
            Expr::Tuple(items) => {
                out.push('(');
                self.items(out, items, d)?;
                if items.len() == 1 {
                    out.push(',');
                }
                out.push(')');
            }
            Expr::Dict(pairs) if pairs.is_empty() => out.push_str("{}"),
            Expr::Dict(pairs) => self.dict(out, pairs, d)?,
            Expr::Slice(parts) => {
                out.push_str("slice(");
                self.items(out, parts.as_slice(), d)?;
                out.push(')');
            }
            Expr::Var(i) => write!(out, "V[{i}]").unwrap_or(()),
            Expr::Tensor(t) => {
                write!(out, "torch.zeros({:?},dtype=torch.{})", t.shape, t.dtype).ok();
            }
            Expr::Pytree(p) => {
                return Err(Error::new(format!(
                    "no one-liner for the pytree type `{}`",
                    p.type_name
                )))
            }
            Expr::Op(op, args) => self.op(out, *op, args, d)?,
            Expr::Spec(ctor, arg) => {
                write!(out, "D.{}(", ctor.name()).ok();
                self.expr(out, arg, d)?;
                out.push(')');
            }
            Expr::ShapesSpec {
                params,
                assumptions,
                globals,
            } => {
                let fields = [
                    ("params", params),
                    ("assumptions", assumptions),
                    ("globals", globals),
                ];
                self.shapes_spec(out, fields, d)?;
            }
        }
        Ok(())
    }

    /// A non-empty dict: a walrus-bound `{}` filled by `__setitem__` in the
    /// case's key order.
    fn dict(&mut self, out: &mut String, pairs: &[(Expr, Expr)], d: usize) -> Result<()> {
        let name = format!("_d{}", self.dicts);
        self.dicts += 1;
        write!(out, "({name}:={{}},").ok();
        for (k, v) in pairs {
            write!(out, "{name}.__setitem__(").ok();
            self.expr(out, k, d)?;
            out.push(',');
            self.expr(out, v, d)?;
            out.push_str("),");
        }
        write!(out, "{name})[-1]").ok();
        Ok(())
    }

    /// A symbolic operator: `torch.sym_not`, unary minus, or a parenthesized
    /// binary operator.
    fn op(&mut self, out: &mut String, op: Op, args: &[Expr], d: usize) -> Result<()> {
        match (op, args) {
            (Op::Not, [a]) => {
                out.push_str("torch.sym_not(");
                self.expr(out, a, d)?;
                out.push(')');
            }
            (Op::Neg, [a]) => {
                out.push_str("(-");
                self.expr(out, a, d)?;
                out.push(')');
            }
            (op, [a, b]) => {
                out.push('(');
                self.expr(out, a, d)?;
                out.push_str(binary_symbol(op));
                self.expr(out, b, d)?;
                out.push(')');
            }
            (op, args) => {
                return Err(Error::new(format!(
                    "op {:?} with {} argument(s)",
                    op.name(),
                    args.len()
                )))
            }
        }
        Ok(())
    }

    /// `D.ShapesSpec(...)` with the keyword arguments the case gives.
    fn shapes_spec(
        &mut self,
        out: &mut String,
        fields: [(&str, &Option<Box<Expr>>); 3],
        d: usize,
    ) -> Result<()> {
        out.push_str("D.ShapesSpec(");
        let mut first = true;
        for (k, v) in fields {
            if let Some(v) = v {
                if !first {
                    out.push(',');
                }
                first = false;
                write!(out, "{k}=").ok();
                self.expr(out, v, d)?;
            }
        }
        out.push(')');
        Ok(())
    }

    fn items(&mut self, out: &mut String, items: &[Expr], depth: usize) -> Result<()> {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            self.expr(out, item, depth)?;
        }
        Ok(())
    }

    fn source(&mut self, out: &mut String, s: &SourceExpr, depth: usize) -> Result<()> {
        if depth > MAX_NESTING {
            return Err(Error::new(format!(
                "the source chain is deeper than {MAX_NESTING} levels: `python -c` cannot parse its one-liner"
            )));
        }
        write!(out, "S.{}(", s.class.name()).ok();
        for (i, (k, f)) in s.fields.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write!(out, "{k}=").ok();
            match f {
                SourceField::Source(inner) => self.source(out, inner, depth + 1)?,
                SourceField::Value(e) => self.expr(out, e, depth + 1)?,
                SourceField::Str(s) => out.push_str(&str_repr(s)),
                SourceField::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
                SourceField::Int(i) if i.sign() == num_bigint::Sign::Minus => {
                    write!(out, "({i})").unwrap_or(())
                }
                SourceField::Int(i) => write!(out, "{i}").unwrap_or(()),
            }
        }
        out.push(')');
        Ok(())
    }
}

/// An int literal, parenthesized when negative so that an operator
/// around it binds to the whole number.
fn int_literal(out: &mut String, i: &num_bigint::BigInt) {
    if i.sign() == num_bigint::Sign::Minus {
        write!(out, "({i})").ok();
    } else {
        write!(out, "{i}").ok();
    }
}

/// A float literal: `float("nan")`/`float("inf")` for the non-finite ones,
/// the repr otherwise, parenthesized when negative.
fn float_literal(out: &mut String, f: f64) {
    if f.is_nan() {
        out.push_str("float(\"nan\")");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 {
            "float(\"inf\")"
        } else {
            "(-float(\"inf\"))"
        });
    } else if f.is_sign_negative() {
        write!(out, "({})", float_repr(f)).ok();
    } else {
        out.push_str(&float_repr(f));
    }
}

/// The Python infix operator of a binary case-format op.
fn binary_symbol(op: Op) -> &'static str {
    match op {
        Op::Pow => "**",
        Op::Not => "not ",
        other => other.symbol(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_keeps_single_quotes() {
        assert_eq!(shell_quote("a'b"), "'a'\\''b'");
        assert_eq!(python_c_of("print(1)"), "python -c 'print(1)'");
    }

    #[test]
    fn build_case_one_liner() {
        let case = Case::parse(
            r#"{"id":"x","kind":"build","vars":[{"kind":"ShapeVar","name":"h","min":-1}],"value":{"TensorSpec":[{"var":0},{"op":"pow","args":[-2,{"dict":[[1,2]]}]}]}}"#,
        )
        .expect("a valid case");
        let src = python_one_liner(&case).expect("a one-liner");
        assert!(!src.contains('\n'));
        assert!(src.contains("V=[D.ShapeVar(name='h',min=(-1))];"), "{src}");
        assert!(
            src.contains("v=D.TensorSpec([V[0],((-2)**(_d0:={},_d0.__setitem__(1,2),_d0)[-1])]);"),
            "{src}"
        );
    }

    #[test]
    fn deep_case_is_an_error_not_a_panic() {
        let mut value = String::from("1");
        for _ in 0..200 {
            value = format!("[{value}]");
        }
        let case = Case::parse(&format!(r#"{{"id":"d","kind":"build","value":{value}}}"#))
            .expect("a valid case");
        let err = python_one_liner(&case).expect_err("too deep");
        assert!(err.to_string().contains("deeper than"), "{err}");
    }
}
