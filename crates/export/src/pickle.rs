//! A bounded reader of the pickles `torch.save` writes (protocol 2, as in
//! `data/sample_inputs/model.pt`): a stack machine over the opcodes that
//! format uses, which builds values and never runs anything. A `GLOBAL`
//! is a name, resolved only against a fixed list (`torch._utils
//! ._rebuild_tensor_v2`, the typed storages, `collections.OrderedDict`);
//! a persistent id (`BINPERSID`) is kept as data for the caller.
//!
//! Every allocation is bounded by the input: a string or an integer is
//! read only when its bytes are there, containers grow one opcode at a
//! time, the memo is a map (a `BINPUT` index allocates nothing), and the
//! mark stack and nesting depth are capped.
//!
//! ```
//! use torchspec_export::pickle::{loads, Pickled};
//! // pickle.dumps((1, "a", None), protocol=2)
//! let v = loads(b"\x80\x02K\x01X\x01\x00\x00\x00aN\x87q\x00.").unwrap();
//! assert_eq!(v, Pickled::Tuple(vec![Pickled::Int(1), Pickled::Str("a".into()), Pickled::None]));
//! ```

use std::collections::HashMap;

use num_bigint::BigInt;

use torchspec_pyval::{Error, Result};

/// A value a pickle built.
#[derive(Clone, Debug, PartialEq)]
pub enum Pickled {
    /// `None` (`NONE`).
    None,
    /// `True` / `False` (`NEWTRUE` / `NEWFALSE`).
    Bool(bool),
    /// An `int` that fits in 64 bits.
    Int(i64),
    /// An `int` past 64 bits (`LONG1`).
    BigInt(BigInt),
    /// A `float` (`BINFLOAT`).
    Float(f64),
    /// A `str` (`BINUNICODE`, `SHORT_BINUNICODE`).
    Str(String),
    /// `bytes` (`BINBYTES`, `SHORT_BINBYTES`).
    Bytes(Vec<u8>),
    /// A `tuple`.
    Tuple(Vec<Pickled>),
    /// A `list`.
    List(Vec<Pickled>),
    /// Items in insertion order (a dict or an `OrderedDict`).
    Dict(Vec<(Pickled, Pickled)>),
    /// `module.name`, as `GLOBAL` names it (only the allowed ones).
    Global(String, String),
    /// `callable(*args)` (`REDUCE`), left for the caller to interpret.
    Call(Box<Pickled>, Vec<Pickled>),
    /// A persistent id (`BINPERSID`): torch's storage records.
    PersistentId(Box<Pickled>),
}

/// The globals a pickle of tensors and containers may name.
const ALLOWED_GLOBALS: &[(&str, &str)] = &[
    ("torch._utils", "_rebuild_tensor_v2"),
    ("torch._tensor", "_rebuild_from_type_v2"),
    ("torch", "Tensor"),
    ("collections", "OrderedDict"),
    ("torch", "FloatStorage"),
    ("torch", "DoubleStorage"),
    ("torch", "HalfStorage"),
    ("torch", "BFloat16Storage"),
    ("torch", "LongStorage"),
    ("torch", "IntStorage"),
    ("torch", "ShortStorage"),
    ("torch", "CharStorage"),
    ("torch", "ByteStorage"),
    ("torch", "BoolStorage"),
    ("torch", "ComplexFloatStorage"),
    ("torch", "ComplexDoubleStorage"),
];

/// Items a dict may hold (keys are compared one by one).
const MAX_DICT: usize = 4096;

fn items_len(d: &Pickled) -> usize {
    match d {
        Pickled::Dict(items) => items.len(),
        _ => 0,
    }
}

/// Nesting (marks open at once) a pickle may have.
const MAX_MARKS: usize = 256;

/// How deep values may nest (each level is a container).
const MAX_DEPTH: u32 = 100;

/// A value on the stack, with its nesting depth and its size in nodes.
#[derive(Clone)]
struct Slot {
    v: Pickled,
    depth: u32,
    nodes: usize,
}

struct Machine<'a> {
    s: &'a [u8],
    i: usize,
    stack: Vec<Slot>,
    marks: Vec<usize>,
    memo: HashMap<u32, Slot>,
    /// Nodes memo hits may still copy (bounded by the pickle's size).
    budget: usize,
}

fn err(at: usize, what: impl std::fmt::Display) -> Error {
    Error::new(format!("pickle: at byte {at}: {what}"))
}

impl<'a> Machine<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .i
            .checked_add(n)
            .filter(|&e| e <= self.s.len())
            .ok_or_else(|| err(self.i, format!("{n} bytes wanted, the pickle ends")))?;
        let out = &self.s[self.i..end];
        self.i = end;
        Ok(out)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn line(&mut self) -> Result<&'a str> {
        let rest = &self.s[self.i..];
        let n = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| err(self.i, "a GLOBAL name without its newline"))?;
        let text =
            std::str::from_utf8(&rest[..n]).map_err(|_| err(self.i, "a name not in UTF-8"))?;
        self.i += n + 1;
        Ok(text)
    }
    fn pop_slot(&mut self) -> Result<Slot> {
        if self.marks.last().is_some_and(|&m| m >= self.stack.len()) {
            return Err(err(self.i, "the stack is empty above the mark"));
        }
        self.stack
            .pop()
            .ok_or_else(|| err(self.i, "the stack is empty"))
    }
    fn pop(&mut self) -> Result<Pickled> {
        Ok(self.pop_slot()?.v)
    }
    fn pop_mark(&mut self) -> Result<Vec<Slot>> {
        let m = self
            .marks
            .pop()
            .ok_or_else(|| err(self.i, "no MARK to pop to"))?;
        Ok(self.stack.split_off(m.min(self.stack.len())))
    }
    fn push(&mut self, v: Pickled) {
        self.stack.push(Slot {
            v,
            depth: 0,
            nodes: 1,
        });
    }
    /// Push a container of `items` (its depth one more than theirs).
    fn push_of(&mut self, items: &[Slot], make: impl FnOnce() -> Pickled) -> Result<()> {
        let depth = 1 + items.iter().map(|s| s.depth).max().unwrap_or(0);
        if depth > MAX_DEPTH {
            return Err(err(self.i, "values nested too deeply"));
        }
        let nodes = 1 + items.iter().map(|s| s.nodes).sum::<usize>();
        self.stack.push(Slot {
            v: make(),
            depth,
            nodes,
        });
        Ok(())
    }
    /// Add `items` to the container on top (`add` does the adding).
    fn extend_top(
        &mut self,
        items: Vec<Slot>,
        at: usize,
        add: impl FnOnce(&mut Pickled, Vec<Pickled>) -> std::result::Result<(), String>,
    ) -> Result<()> {
        let top = self
            .stack
            .last_mut()
            .ok_or_else(|| err(at, "the stack is empty"))?;
        let depth = 1 + items.iter().map(|s| s.depth).max().unwrap_or(0);
        if depth > MAX_DEPTH {
            return Err(err(at, "values nested too deeply"));
        }
        top.depth = top.depth.max(depth);
        top.nodes += items.iter().map(|s| s.nodes).sum::<usize>();
        add(&mut top.v, items.into_iter().map(|s| s.v).collect()).map_err(|w| err(at, w))
    }

    fn run(mut self) -> Result<Pickled> {
        loop {
            let at = self.i;
            let op = self.u8()?;
            if op == b'.' {
                return self.pop();
            }
            let known = self.protocol_ops(op, at)?
                || self.constant_ops(op, at)?
                || self.container_ops(op, at)?
                || self.memo_ops(op, at)?
                || self.object_ops(op, at)?;
            if !known {
                return Err(err(at, format!("unsupported opcode 0x{op:02x}")));
            }
        }
    }

    /// PROTO, FRAME and MARK: the stream's framing, no value. Whether `op` is one of them.
    fn protocol_ops(&mut self, op: u8, at: usize) -> Result<bool> {
        match op {
            b'\x80' => {
                let proto = self.u8()?;
                if proto > 5 {
                    return Err(err(at, format!("unsupported pickle protocol: {proto}")));
                }
            }
            b'\x95' => {
                self.take(8)?; // FRAME: a length hint only
            }
            b'(' => {
                if self.marks.len() >= MAX_MARKS {
                    return Err(err(at, "too deeply nested"));
                }
                self.marks.push(self.stack.len());
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The opcodes that push a constant: None, bools, ints, a float, strings, bytes. Whether `op` is one of them.
    fn constant_ops(&mut self, op: u8, at: usize) -> Result<bool> {
        match op {
            b'N' => self.push(Pickled::None),
            b'\x88' => self.push(Pickled::Bool(true)),
            b'\x89' => self.push(Pickled::Bool(false)),
            b'K' => {
                let v = self.u8()?;
                self.push(Pickled::Int(v.into()))
            }
            b'M' => {
                let v = self.u16()?;
                self.push(Pickled::Int(v.into()))
            }
            b'J' => {
                let v = self.u32()? as i32;
                self.push(Pickled::Int(v.into()))
            }
            b'\x8a' => {
                let n = self.u8()? as usize;
                let bytes = self.take(n)?;
                self.push(long(bytes));
            }
            b'G' => {
                let b = self.take(8)?;
                let bits = u64::from_be_bytes(b.try_into().unwrap_or([0; 8]));
                self.push(Pickled::Float(f64::from_bits(bits)));
            }
            b'X' | b'\x8c' => {
                let n = if op == b'X' {
                    self.u32()? as usize
                } else {
                    self.u8()? as usize
                };
                let bytes = self.take(n)?;
                let s = std::str::from_utf8(bytes).map_err(|_| err(at, "a string not in UTF-8"))?;
                self.push(Pickled::Str(s.to_string()));
            }
            b'B' | b'C' => {
                let n = if op == b'B' {
                    self.u32()? as usize
                } else {
                    self.u8()? as usize
                };
                let bytes = self.take(n)?.to_vec();
                self.push(Pickled::Bytes(bytes));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The opcodes that build tuples, lists and dicts. Whether `op` is one of them.
    fn container_ops(&mut self, op: u8, at: usize) -> Result<bool> {
        match op {
            b')' => self.push(Pickled::Tuple(Vec::new())),
            b't' => {
                let items = self.pop_mark()?;
                self.push_tuple(items)?;
            }
            b'\x85' | b'\x86' | b'\x87' => {
                let n = (op - b'\x84') as usize;
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.pop_slot()?);
                }
                items.reverse();
                self.push_tuple(items)?;
            }
            b']' => self.push(Pickled::List(Vec::new())),
            b'}' => self.push(Pickled::Dict(Vec::new())),
            b'a' | b'e' => {
                let vs = if op == b'a' {
                    vec![self.pop_slot()?]
                } else {
                    self.pop_mark()?
                };
                self.extend_top(vs, at, list_extend)?;
            }
            b's' => {
                let v = self.pop_slot()?;
                let k = self.pop_slot()?;
                self.extend_top(vec![k, v], at, dict_set)?;
            }
            b'u' => {
                let kvs = self.pop_mark()?;
                self.extend_top(kvs, at, dict_set)?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The memo opcodes: PUT, BINPUT, LONG_BINPUT, MEMOIZE and the GETs. Whether `op` is one of them.
    fn memo_ops(&mut self, op: u8, at: usize) -> Result<bool> {
        match op {
            b'q' => {
                let k = self.u8()?.into();
                self.put(k)?
            }
            b'r' => {
                let k = self.u32()?;
                self.put(k)?
            }
            b'h' => {
                let k = self.u8()?.into();
                self.get(k, at)?
            }
            b'j' => {
                let k = self.u32()?;
                self.get(k, at)?
            }
            b'\x94' => {
                let k = self.memo.len() as u32;
                self.put(k)?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// GLOBAL (of the allowed names), BINPERSID and REDUCE. Whether `op` is one of them.
    fn object_ops(&mut self, op: u8, at: usize) -> Result<bool> {
        match op {
            b'c' => {
                let module = self.line()?.to_string();
                let name = self.line()?.to_string();
                if !ALLOWED_GLOBALS.contains(&(module.as_str(), name.as_str())) {
                    return Err(err(
                        at,
                        format!("refusing to load the global `{module}.{name}`"),
                    ));
                }
                self.push(Pickled::Global(module, name));
            }
            b'Q' => {
                let pid = self.pop_slot()?;
                self.push_of(std::slice::from_ref(&pid), || {
                    Pickled::PersistentId(Box::new(pid.v.clone()))
                })?;
            }
            b'R' => {
                let args = self.pop_slot()?;
                let f = self.pop()?;
                let Pickled::Tuple(items) = args.v.clone() else {
                    return Err(err(at, "REDUCE arguments are not a tuple"));
                };
                self.push_of(std::slice::from_ref(&args), || {
                    Pickled::Call(Box::new(f), items)
                })?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn put(&mut self, k: u32) -> Result<()> {
        let v = self
            .stack
            .last()
            .cloned()
            .ok_or_else(|| err(self.i, "PUT on an empty stack"))?;
        self.memo.insert(k, v);
        Ok(())
    }

    fn get(&mut self, k: u32, at: usize) -> Result<()> {
        let slot = self
            .memo
            .get(&k)
            .ok_or_else(|| err(at, format!("memo key {k} was never stored")))?;
        // A memo hit copies: what all hits copy is bounded.
        self.budget = self.budget.checked_sub(slot.nodes).ok_or_else(|| {
            err(
                at,
                "memo references copy more than the pickle's size allows",
            )
        })?;
        let slot = slot.clone();
        self.stack.push(slot);
        Ok(())
    }

    fn push_tuple(&mut self, items: Vec<Slot>) -> Result<()> {
        let values: Vec<Pickled> = items.iter().map(|s| s.v.clone()).collect();
        self.push_of(&items, || Pickled::Tuple(values))
    }
}

fn list_extend(l: &mut Pickled, vs: Vec<Pickled>) -> std::result::Result<(), String> {
    match l {
        Pickled::List(items) => {
            items.extend(vs);
            Ok(())
        }
        _ => Err("APPEND to a non-list".into()),
    }
}

fn long(bytes: &[u8]) -> Pickled {
    let v = BigInt::from_signed_bytes_le(bytes);
    match i64::try_from(&v) {
        Ok(i) => Pickled::Int(i),
        Err(_) => Pickled::BigInt(v),
    }
}

fn dict_set(d: &mut Pickled, kvs: Vec<Pickled>) -> std::result::Result<(), String> {
    // Keys are compared one by one: a dict is kept to a size where that is cheap.
    if items_len(d) + kvs.len() / 2 > MAX_DICT {
        return Err(format!("a dict of more than {MAX_DICT} items"));
    }
    let Pickled::Dict(items) = d else {
        return Err("SETITEM on a non-dict".into());
    };
    if !kvs.len().is_multiple_of(2) {
        return Err("SETITEMS with an odd number of items".into());
    }
    let mut it = kvs.into_iter();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        match items.iter_mut().find(|(old, _)| *old == k) {
            Some(slot) => slot.1 = v,
            None => items.push((k, v)),
        }
    }
    Ok(())
}

/// The value pickle `bytes` builds (a memo copies values: a memo hit of a
/// large container costs what the container costs, still bounded by the
/// pickle's own size times its memo hits).
pub fn loads(bytes: &[u8]) -> Result<Pickled> {
    Machine {
        s: bytes,
        i: 0,
        stack: Vec::new(),
        marks: Vec::new(),
        memo: HashMap::new(),
        budget: bytes.len().saturating_mul(8).saturating_add(4096),
    }
    .run()
}
