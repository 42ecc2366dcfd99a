//! Mirrors `Graph.__str__`, `Node.format_node` and `_format_arg` in
//! torch/fx: how `print(ep.graph)` spells each node.

use std::fmt::Write;

use super::{Arg, Graph, NodeId, Op};
use torchspec_pyval::repr::{float_repr, str_repr};

impl Graph {
    /// `str(graph)`. FX passes an empty `placeholder_names` list, which is
    /// falsy, so placeholders print as nodes and the header stays `graph():`.
    pub fn to_python_string(&self) -> String {
        let mut s = String::from("graph():");
        for (id, node) in self.nodes() {
            s.push_str("\n    ");
            self.format_node(id, &mut s);
            let _ = node;
        }
        s
    }

    /// `Node.format_node()` for one node.
    pub fn format_node(&self, id: NodeId, out: &mut String) {
        let node = self.node(id);
        match node.op {
            Op::Placeholder => {
                let _ = write!(
                    out,
                    "%{} : [num_users={}] = placeholder[target={}]",
                    node.name,
                    node.users().len(),
                    node.target
                );
                if let Some(default) = node.args.first() {
                    out.push_str("(default=");
                    self.str_arg(default, out);
                    out.push(')');
                }
            }
            Op::GetAttr => {
                let _ = write!(
                    out,
                    "%{} : [num_users={}] = get_attr[target={}]",
                    node.name,
                    node.users().len(),
                    node.target
                );
            }
            Op::Output => {
                out.push_str("return ");
                match node.args.first() {
                    Some(a) => self.str_arg(a, out),
                    None => out.push_str("None"),
                }
            }
            Op::CallFunction => {
                let _ = write!(
                    out,
                    "%{} : [num_users={}] = call_function[target={}](args = ",
                    node.name,
                    node.users().len(),
                    node.target
                );
                self.format_seq(&node.args, true, out);
                out.push_str(", kwargs = ");
                self.format_dict(&node.kwargs, out);
                out.push(')');
            }
        }
    }

    /// `_format_arg`: containers recurse, a node is `%name`, anything else
    /// is `str()` (so strings print unquoted).
    pub fn format_arg(&self, arg: &Arg, out: &mut String) {
        match arg {
            Arg::List(items) => self.format_seq(items, false, out),
            Arg::Tuple(items) => self.format_seq(items, true, out),
            Arg::Dict(items) => self.format_dict(items, out),
            Arg::Node(id) => {
                out.push('%');
                out.push_str(&self.node(*id).name);
            }
            // `_device_annotation`: str(device).
            Arg::Device(d) => out.push_str(d),
            other => self.str_arg(other, out),
        }
    }

    fn format_seq(&self, items: &[Arg], tuple: bool, out: &mut String) {
        write_seq(items, tuple, out, |a, out| self.format_arg(a, out));
    }

    fn format_dict(&self, items: &[(String, Arg)], out: &mut String) {
        write_dict(
            items,
            out,
            |k, out| out.push_str(k),
            |v, out| self.format_arg(v, out),
        );
    }

    /// `str(arg)`: Python's `str`, whose containers show their items' `repr`
    /// (a node's repr is its name).
    pub fn str_arg(&self, arg: &Arg, out: &mut String) {
        match arg {
            Arg::Str(s) => out.push_str(s),
            other => self.repr_arg(other, out),
        }
    }

    /// `repr(arg)`.
    pub fn repr_arg(&self, arg: &Arg, out: &mut String) {
        match arg {
            Arg::None => out.push_str("None"),
            Arg::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
            Arg::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Arg::BigInt(i) => {
                let _ = write!(out, "{i}");
            }
            Arg::Float(f) => out.push_str(&float_repr(*f)),
            Arg::Str(s) => out.push_str(&str_repr(s)),
            Arg::Complex(re, im) => out.push_str(&complex_repr(*re, *im)),
            Arg::Node(id) => out.push_str(&self.node(*id).name),
            Arg::List(items) | Arg::Tuple(items) => {
                let tuple = matches!(arg, Arg::Tuple(_));
                write_seq(items, tuple, out, |a, out| self.repr_arg(a, out));
            }
            Arg::Dict(items) => write_dict(
                items,
                out,
                |k, out| out.push_str(&str_repr(k)),
                |v, out| self.repr_arg(v, out),
            ),
            Arg::Torch(s) => out.push_str(s),
            // repr(torch.device("cpu")) is device(type='cpu'); a negative
            // `DeviceIndex` shows as its 16-bit unsigned value
            // (`cpu:-128` is `device(type='cpu', index=65408)`).
            Arg::Device(s) => match s.split_once(':') {
                Some((t, i)) => {
                    let i = match i.parse::<i16>() {
                        Ok(n) if n < 0 => (n as u16).to_string(),
                        _ => i.to_string(),
                    };
                    let _ = write!(out, "device(type='{t}', index={i})");
                }
                None => {
                    let _ = write!(out, "device(type='{s}')");
                }
            },
        }
    }
}

/// A list `[a, b]` or tuple `(a, b)` / `(a,)`, items written by `item`.
fn write_seq(items: &[Arg], tuple: bool, out: &mut String, item: impl Fn(&Arg, &mut String)) {
    out.push(if tuple { '(' } else { '[' });
    for (i, a) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        item(a, out);
    }
    if tuple && items.len() == 1 {
        out.push(',');
    }
    out.push(if tuple { ')' } else { ']' });
}

/// A dict `{k: v, ...}`, keys and values written by the given functions.
fn write_dict(
    items: &[(String, Arg)],
    out: &mut String,
    key: impl Fn(&str, &mut String),
    value: impl Fn(&Arg, &mut String),
) {
    out.push('{');
    for (i, (k, v)) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        key(k, out);
        out.push_str(": ");
        value(v, out);
    }
    out.push('}');
}

/// `Node.users` as FX prints it in errors: `{add: None, mul: None}`.
pub(super) fn users_dict(graph: &Graph, id: NodeId) -> String {
    let mut s = String::from("{");
    for (i, u) in graph.node(id).users().iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&graph.node(*u).name);
        s.push_str(": None");
    }
    s.push('}');
    s
}

/// `repr(complex(re, im))`: components with `repr`'s digits but no forced
/// `.0`, the real part dropped when it is +0.0.
pub fn complex_repr(re: f64, im: f64) -> String {
    fn part(x: f64) -> String {
        if x.is_nan() {
            return "nan".into();
        }
        if x.is_infinite() {
            return if x > 0.0 { "inf".into() } else { "-inf".into() };
        }
        let r = float_repr(x);
        r.strip_suffix(".0").map(str::to_string).unwrap_or(r)
    }
    let imag = part(im);
    if re == 0.0 && re.is_sign_positive() {
        return format!("{imag}j");
    }
    let sign = if im.is_sign_negative() || (im.is_nan() && imag.starts_with('-')) {
        ""
    } else {
        "+"
    };
    format!("({}{sign}{imag}j)", part(re))
}
