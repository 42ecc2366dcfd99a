//! A linear-time rendering of nested `TensorSpec` / `ObjectSpec` /
//! `DictSpec` / `SeqSpec` reprs. PyTorch builds each child's repr and then
//! re-indents it with `str.splitlines`, which costs depth × size; when every
//! line boundary in the tree is one the reprs put there themselves (no raw
//! `\r`, `\x0b`, `\u2028`, ... and no `\n` inside a name or leaf), indenting
//! while writing gives the same text. Anything else bails out to the
//! faithful path in `containers.rs`.

use std::any::{Any, TypeId};

use super::{DictSpec, IntVar, ObjectSpec, ParamsSpec, SeqSpec, ShapesSpec, TensorSpec};
use torchspec_pyval::{Int, Raise, Value};

pub(super) enum Fast {
    /// The tree has a line boundary the fast path does not model.
    Bail,
    Raise(Raise),
}

impl From<Raise> for Fast {
    fn from(r: Raise) -> Fast {
        Fast::Raise(r)
    }
}

pub(super) enum Node<'a> {
    Tensor(&'a TensorSpec),
    Object(&'a ObjectSpec),
    Dict(&'a DictSpec),
    Seq(&'a SeqSpec),
    /// Only at the top of a repr (as a child it takes the faithful path).
    Params(&'a ParamsSpec),
    Shapes(&'a ShapesSpec),
    /// A leaf `IntVar` / `ShapeVar` (its repr is kept, one line).
    Var(&'a IntVar),
}

impl Node<'_> {
    /// The node `v` is, with one virtual call for its type (a leaf such
    /// as an `IntVar` is none of the four).
    fn of(v: &Value) -> Option<Node<'_>> {
        let Value::Object(o) = v else { return None };
        let any: &dyn Any = &**o;
        let tid = any.type_id();
        if tid == TypeId::of::<TensorSpec>() {
            any.downcast_ref().map(Node::Tensor)
        } else if tid == TypeId::of::<ObjectSpec>() {
            any.downcast_ref().map(Node::Object)
        } else if tid == TypeId::of::<DictSpec>() {
            any.downcast_ref().map(Node::Dict)
        } else if tid == TypeId::of::<SeqSpec>() {
            any.downcast_ref().map(Node::Seq)
        } else if tid == TypeId::of::<IntVar>() {
            any.downcast_ref().map(Node::Var)
        } else {
            None
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            Node::Tensor(t) => t.dims.is_empty(),
            Node::Object(o) => o.fields.is_empty(),
            Node::Dict(d) => d.entries.is_empty(),
            Node::Seq(s) => s.entries.is_empty(),
            Node::Params(_) | Node::Shapes(_) | Node::Var(_) => false,
        }
    }
}

/// The text being written, and whether its first line has begun (the first
/// line has no line break before it).
struct Out<'a> {
    text: &'a mut String,
    started: bool,
}

impl std::ops::Deref for Out<'_> {
    type Target = String;
    fn deref(&self) -> &String {
        self.text
    }
}

impl std::ops::DerefMut for Out<'_> {
    fn deref_mut(&mut self) -> &mut String {
        self.text
    }
}

/// Write the whole repr of `node` at `out`'s end, or leave `out` as it was
/// and say `Bail`.
pub(super) fn write(node: Node<'_>, out: &mut String) -> Result<(), Fast> {
    let start = out.len();
    let mut lines_out = Out {
        text: out,
        started: false,
    };
    lines(&node, &mut lines_out, 0).inspect_err(|_| out.truncate(start))
}

/// A line break and up to 64 columns of indentation, written in one copy.
const NEWLINE_SPACES: &str = "\n                                                                ";

/// The start of a line indented by `pad` (the first line: no break).
fn newline(out: &mut Out, pad: usize) {
    let from = usize::from(!out.started);
    out.started = true;
    if pad < NEWLINE_SPACES.len() {
        out.push_str(&NEWLINE_SPACES[from..pad + 1]);
        return;
    }
    if from == 0 {
        out.push('\n');
    }
    out.extend(std::iter::repeat_n(' ', pad));
}

/// Bail unless what was written since `start` is printable ASCII.
fn check_plain(out: &str, start: usize) -> Result<(), Fast> {
    let bad = out.as_bytes()[start..]
        .iter()
        .fold(false, |acc, &b| acc | !(0x20..0x80).contains(&b));
    if bad {
        Err(Fast::Bail)
    } else {
        Ok(())
    }
}

/// `repr(v)` on one line: `None`, an `int` and a var's kept repr need no
/// check.
fn inline(v: &Value, out: &mut Out) -> Result<(), Fast> {
    match v {
        Value::None => out.push_str("None"),
        Value::Int(Int::Small(i)) => out.push_str(itoa::Buffer::new().format(*i)),
        _ => match v.downcast::<IntVar>() {
            Some(var) => var_line(var, out)?,
            None => {
                let start = out.len();
                v.write_repr(out)?;
                check_plain(out, start)?;
            }
        },
    }
    Ok(())
}

/// A var's kept repr, or `Bail` if it is not one plain line.
fn var_line(var: &IntVar, out: &mut Out) -> Result<(), Fast> {
    match var.printed_and_plain()? {
        (text, true) => {
            out.push_str(text);
            Ok(())
        }
        _ => Err(Fast::Bail),
    }
}

/// `header:` then the child, on this line or, indented to `child_pad`,
/// below it.
fn entry(child: &Value, out: &mut Out, child_pad: usize) -> Result<(), Fast> {
    match Node::of(child) {
        Some(Node::Var(var)) => {
            out.push_str(": ");
            var_line(var, out)
        }
        Some(node) if !node.is_empty() => {
            out.push(':');
            lines(&node, out, child_pad)
        }
        _ => {
            out.push_str(": ");
            inline(child, out)
        }
    }
}

/// Each line of `node`'s repr as `"\n" + pad spaces + line`.
fn lines(node: &Node<'_>, out: &mut Out, pad: usize) -> Result<(), Fast> {
    match node {
        Node::Tensor(t) => {
            newline(out, pad);
            out.push_str("Tensor:");
            for (i, d) in t.dims.iter().enumerate() {
                newline(out, pad + 2);
                out.push_str(itoa::Buffer::new().format(i));
                out.push_str(": ");
                inline(d, out)?;
            }
        }
        Node::Object(o) => {
            newline(out, pad);
            out.push_str("object_spec:");
            for (name, child) in o.fields.iter() {
                newline(out, pad + 2);
                out.push('.');
                let start = out.len();
                name.write_str(out)?;
                check_plain(out, start)?;
                entry(child, out, pad + 4)?;
            }
        }
        Node::Dict(d) => {
            newline(out, pad);
            out.push_str("dict_spec:");
            for (key, child) in d.entries.iter() {
                newline(out, pad + 2);
                out.push('[');
                inline(key, out)?;
                out.push(']');
                entry(child, out, pad + 4)?;
            }
        }
        Node::Params(p) => params_lines(p, out, pad)?,
        Node::Var(var) => {
            newline(out, pad);
            var_line(var, out)?;
        }
        Node::Shapes(s) => {
            newline(out, pad);
            out.push_str("shapes_spec:");
            if let Some(params) = &s.params {
                newline(out, pad + 2);
                out.push_str("params:");
                let p = params.downcast::<ParamsSpec>().ok_or(Fast::Bail)?;
                params_lines(p, out, pad + 4)?;
            }
            for (i, a) in s.assumptions.iter().enumerate() {
                if i == 0 {
                    newline(out, pad + 2);
                    out.push_str("assumptions:");
                }
                newline(out, pad + 4);
                inline(a, out)?;
            }
        }
        Node::Seq(s) => {
            newline(out, pad);
            out.push_str("seq_spec:");
            for (i, child) in s.entries.iter().enumerate() {
                newline(out, pad + 2);
                out.push('[');
                out.push_str(itoa::Buffer::new().format(i));
                out.push(']');
                entry(child, out, pad + 4)?;
            }
        }
    }
    Ok(())
}

/// `ParamsSpec.__repr__`'s lines: `key: repr`, or `key:` with the repr two
/// columns in; `*args:` / `**kwargs:` with their entries two columns in.
/// An empty ParamsSpec or variadic leaves empty lines behind, which
/// `splitlines` treats specially: those bail.
fn params_lines(p: &ParamsSpec, out: &mut Out, pad: usize) -> Result<(), Fast> {
    if p.named_args.is_empty() && p.varargs.is_none() && p.varkw.is_none() {
        return Err(Fast::Bail);
    }
    let param_entry = |key: &Value, v: &Value, out: &mut Out, pad: usize| -> Result<(), Fast> {
        newline(out, pad);
        let start = out.len();
        key.write_str(out)?;
        check_plain(out, start)?;
        entry(v, out, pad + 2)
    };
    for (k, v) in p.named_args.iter() {
        param_entry(k, v, out, pad)?;
    }
    if let Some(varargs) = &p.varargs {
        if varargs.is_empty() {
            return Err(Fast::Bail);
        }
        newline(out, pad);
        out.push_str("*args:");
        for (i, v) in varargs.iter().enumerate() {
            param_entry(&Value::int(i as i64), v, out, pad + 2)?;
        }
    }
    if let Some(varkw) = &p.varkw {
        if varkw.is_empty() {
            return Err(Fast::Bail);
        }
        newline(out, pad);
        out.push_str("**kwargs:");
        for (k, v) in varkw.iter() {
            param_entry(k, v, out, pad + 2)?;
        }
    }
    Ok(())
}
