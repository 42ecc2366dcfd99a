//! Mirrors torch/export/graph_signature.py: `InputSpec`, `OutputSpec`,
//! `ExportGraphSignature` with every derived property of 2.15.0, its
//! `__str__`, and `replace_all_uses`.

use std::fmt::{self, Write};

use torchspec_pyval::pyjson::PyJson;
use torchspec_pyval::repr::float_repr;
use torchspec_pyval::PyException;

/// A Python constant a signature can carry (`ConstantArgument.value`).
#[derive(Clone, Debug, PartialEq)]
pub enum Constant {
    /// Python `None`.
    None,
    /// A `bool`, shown as `True` / `False`.
    Bool(bool),
    /// An `int` that fits in 64 bits.
    Int(i64),
    /// An `int` past 64 bits, as its decimal digits.
    BigInt(String),
    /// A `float`, shown by `float.__repr__`.
    Float(f64),
    /// A `str`.
    Str(String),
    /// A `list` (`deserialize_input` of `as_floats`, `as_sym_bools`, ...
    /// in a signature: `list(value)`).
    List(Vec<Constant>),
    /// A `tuple` (the items of `as_int_lists`: `tuple(dims)`).
    Tuple(Vec<Constant>),
    /// A `dict` with str keys (`as_string_to_argument`).
    Dict(Vec<(String, Constant)>),
    /// A torch object by its repr (`torch.float32`, `torch.strided`).
    Torch(String),
    /// A `complex` (`as_complex`): real and imaginary parts.
    Complex(f64, f64),
}

impl Constant {
    /// `repr(value)`.
    pub fn repr(&self) -> String {
        match self {
            Constant::Str(s) => torchspec_pyval::repr::str_repr(s),
            other => other.to_string(),
        }
    }
}

impl fmt::Display for Constant {
    /// `str(value)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Constant::None => f.write_str("None"),
            Constant::Bool(b) => f.write_str(if *b { "True" } else { "False" }),
            Constant::Int(i) => write!(f, "{i}"),
            Constant::BigInt(i) => f.write_str(i),
            Constant::Float(x) => f.write_str(&float_repr(*x)),
            Constant::Str(s) => f.write_str(s),
            Constant::List(items) => {
                let items: Vec<String> = items.iter().map(Constant::repr).collect();
                write!(f, "[{}]", items.join(", "))
            }
            Constant::Tuple(items) => {
                let items: Vec<String> = items.iter().map(Constant::repr).collect();
                match items.len() {
                    1 => write!(f, "({},)", items[0]),
                    _ => write!(f, "({})", items.join(", ")),
                }
            }
            Constant::Dict(items) => {
                let items: Vec<String> = items
                    .iter()
                    .map(|(k, v)| format!("{}: {}", torchspec_pyval::repr::str_repr(k), v.repr()))
                    .collect();
                write!(f, "{{{}}}", items.join(", "))
            }
            Constant::Torch(repr) => f.write_str(repr),
            Constant::Complex(re, im) => f.write_str(&crate::fx::print::complex_repr(*re, *im)),
        }
    }
}

/// `ArgumentSpec`: which kind of value a signature entry names.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgumentSpec {
    /// `TensorArgument`: a tensor.
    Tensor {
        /// The node's name.
        name: String,
    },
    /// `SymIntArgument`: a symbolic int.
    SymInt {
        /// The node's name.
        name: String,
    },
    /// `SymFloatArgument`: a symbolic float.
    SymFloat {
        /// The node's name.
        name: String,
    },
    /// `SymBoolArgument`: a symbolic bool.
    SymBool {
        /// The node's name.
        name: String,
    },
    /// `ConstantArgument`: a Python constant.
    Constant {
        /// The name it is bound to.
        name: String,
        /// `ConstantArgument.value`.
        value: Constant,
    },
    /// `CustomObjArgument`: a script object.
    CustomObj {
        /// The node's name.
        name: String,
        /// `CustomObjArgument.class_fqn`: the object's class, fully qualified.
        class_fqn: String,
    },
    /// `TokenArgument`: an effect token.
    Token {
        /// The node's name: `str(name)` when `_dict_to_dataclass` passed a
        /// value of another JSON type through (`kept`).
        name: String,
        /// The name's JSON value when it was not a str
        /// (`TokenArgument(name=None)`), as the signature holds it.
        kept: Option<PyJson>,
    },
}

/// Python's `str()` of a value `json.loads` made.
pub(crate) fn py_str(v: &PyJson) -> String {
    match v {
        PyJson::Str(s) => s.clone(),
        other => {
            let mut out = String::new();
            crate::schema::load::repr_raw(other, &mut out);
            out
        }
    }
}

impl ArgumentSpec {
    /// The `name` field, whatever the argument kind.
    pub fn name(&self) -> &str {
        match self {
            ArgumentSpec::Tensor { name }
            | ArgumentSpec::SymInt { name }
            | ArgumentSpec::SymFloat { name }
            | ArgumentSpec::SymBool { name }
            | ArgumentSpec::Constant { name, .. }
            | ArgumentSpec::CustomObj { name, .. }
            | ArgumentSpec::Token { name, .. } => name,
        }
    }

    /// The `name` field, whatever the argument kind (`ModuleCallSignature`
    /// renames constants too; `ExportGraphSignature.replace_all_uses` does not).
    pub fn name_mut(&mut self) -> &mut String {
        match self {
            ArgumentSpec::Tensor { name }
            | ArgumentSpec::SymInt { name }
            | ArgumentSpec::SymFloat { name }
            | ArgumentSpec::SymBool { name }
            | ArgumentSpec::Constant { name, .. }
            | ArgumentSpec::CustomObj { name, .. }
            | ArgumentSpec::Token { name, .. } => name,
        }
    }

    /// The `name` field as the signature holds it: a str, or the JSON value
    /// a token's name was kept as.
    pub fn name_value(&self) -> PyJson {
        match self {
            ArgumentSpec::Token { kept: Some(v), .. } => v.clone(),
            other => PyJson::Str(other.name().to_string()),
        }
    }

    /// Whether the name is a str (Python's `==` with a str is then false).
    fn name_is_str(&self) -> bool {
        !matches!(self, ArgumentSpec::Token { kept: Some(_), .. })
    }

    /// The Python class name, as `type(arg)` shows in messages.
    pub fn class_name(&self) -> &'static str {
        match self {
            ArgumentSpec::Tensor { .. } => "TensorArgument",
            ArgumentSpec::SymInt { .. } => "SymIntArgument",
            ArgumentSpec::SymFloat { .. } => "SymFloatArgument",
            ArgumentSpec::SymBool { .. } => "SymBoolArgument",
            ArgumentSpec::Constant { .. } => "ConstantArgument",
            ArgumentSpec::CustomObj { .. } => "CustomObjArgument",
            ArgumentSpec::Token { .. } => "TokenArgument",
        }
    }
}

/// `torch.export.graph_signature.InputKind`: what a placeholder of the graph stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// `InputKind.USER_INPUT`: an argument the caller passes.
    UserInput,
    /// `InputKind.PARAMETER`: a lifted parameter, `target` its FQN.
    Parameter,
    /// `InputKind.BUFFER`: a lifted buffer, `target` its FQN.
    Buffer,
    /// `InputKind.CONSTANT_TENSOR`: a lifted tensor constant, `target` its FQN.
    ConstantTensor,
    /// `InputKind.CUSTOM_OBJ`: a lifted script object, `target` its FQN.
    CustomObj,
    /// `InputKind.TOKEN`: an effect token threaded through side-effecting ops.
    Token,
}

impl InputKind {
    /// The member name, as `InputKind.name` spells it (`"USER_INPUT"`).
    pub fn name(self) -> &'static str {
        match self {
            InputKind::UserInput => "USER_INPUT",
            InputKind::Parameter => "PARAMETER",
            InputKind::Buffer => "BUFFER",
            InputKind::ConstantTensor => "CONSTANT_TENSOR",
            InputKind::CustomObj => "CUSTOM_OBJ",
            InputKind::Token => "TOKEN",
        }
    }
}

/// `torch.export.graph_signature.OutputKind`: what an output of the graph stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputKind {
    /// `OutputKind.USER_OUTPUT`: a value returned to the caller.
    UserOutput,
    /// `OutputKind.LOSS_OUTPUT`: the loss of a joint graph, returned to the caller.
    LossOutput,
    /// `OutputKind.BUFFER_MUTATION`: the new value of the buffer `target`.
    BufferMutation,
    /// `OutputKind.PARAMETER_MUTATION`: the new value of the parameter `target`.
    ParameterMutation,
    /// `OutputKind.GRADIENT_TO_PARAMETER`: the gradient of the parameter `target`.
    GradientToParameter,
    /// `OutputKind.GRADIENT_TO_USER_INPUT`: the gradient of the user input `target`.
    GradientToUserInput,
    /// `OutputKind.USER_INPUT_MUTATION`: the new value of the user input `target`.
    UserInputMutation,
    /// `OutputKind.TOKEN`: an effect token returned by side-effecting ops.
    Token,
}

impl OutputKind {
    /// The member name, as `OutputKind.name` spells it (`"USER_OUTPUT"`).
    pub fn name(self) -> &'static str {
        match self {
            OutputKind::UserOutput => "USER_OUTPUT",
            OutputKind::LossOutput => "LOSS_OUTPUT",
            OutputKind::BufferMutation => "BUFFER_MUTATION",
            OutputKind::ParameterMutation => "PARAMETER_MUTATION",
            OutputKind::GradientToParameter => "GRADIENT_TO_PARAMETER",
            OutputKind::GradientToUserInput => "GRADIENT_TO_USER_INPUT",
            OutputKind::UserInputMutation => "USER_INPUT_MUTATION",
            OutputKind::Token => "TOKEN",
        }
    }
}

/// `torch.export.graph_signature.InputSpec`: one per placeholder, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct InputSpec {
    /// `InputSpec.kind`: what the placeholder stands for.
    pub kind: InputKind,
    /// `InputSpec.arg`: the placeholder's argument.
    pub arg: ArgumentSpec,
    /// `InputSpec.target`: the FQN of the lifted parameter, buffer, constant or object, if any.
    pub target: Option<String>,
    /// `InputSpec.persistent`: for a buffer, whether it is in the state
    /// dict: `True` / `False`, or the JSON value `_dict_to_dataclass`
    /// passed through in their place (never `None` for a buffer).
    pub persistent: Option<PyJson>,
}

impl fmt::Display for InputSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.arg.name(), self.kind.name())?;
        if let Some(t) = &self.target {
            write!(f, " target='{t}'")?;
        }
        if let Some(p) = &self.persistent {
            write!(f, " persistent={}", py_str(p))?;
        }
        Ok(())
    }
}

/// `torch.export.graph_signature.OutputSpec`: one per output of the graph, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputSpec {
    /// `OutputSpec.kind`: what the output stands for.
    pub kind: OutputKind,
    /// `OutputSpec.arg`: the output's argument.
    pub arg: ArgumentSpec,
    /// `OutputSpec.target`: the FQN or user input the output mutates or is the gradient of, if any.
    pub target: Option<String>,
}

impl fmt::Display for OutputSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.arg.name(), self.kind.name())?;
        if let Some(t) = &self.target {
            write!(f, " target='{t}'")?;
        }
        Ok(())
    }
}

/// `ExportBackwardSignature`.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportBackwardSignature {
    /// `gradients_to_parameters`: gradient output name to parameter FQN.
    pub gradients_to_parameters: Vec<(String, String)>,
    /// `gradients_to_user_inputs`: gradient output name to user input name.
    pub gradients_to_user_inputs: Vec<(String, String)>,
    /// `loss_output`: the name of the `LOSS_OUTPUT` output.
    pub loss_output: String,
}

/// `ExportGraphSignature`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExportGraphSignature {
    /// `ExportGraphSignature.input_specs`: one per placeholder, in order.
    pub input_specs: Vec<InputSpec>,
    /// `ExportGraphSignature.output_specs`: one per output of the graph, in order.
    pub output_specs: Vec<OutputSpec>,
}

fn assertion(message: String) -> PyException {
    PyException {
        type_name: "AssertionError".into(),
        message,
    }
}

/// What `user_inputs` / `user_outputs` list: a node name or a constant.
#[derive(Clone, Debug, PartialEq)]
pub enum UserValue {
    /// A node's name.
    Name(String),
    /// A constant passed or returned as is.
    Constant(Constant),
}

impl ExportGraphSignature {
    fn input_targets(&self, kind: InputKind) -> Vec<String> {
        self.input_specs
            .iter()
            .filter(|s| s.kind == kind)
            .filter_map(|s| s.target.clone())
            .collect()
    }

    /// `ExportGraphSignature.parameters`: the FQNs of the lifted parameters, in input order.
    pub fn parameters(&self) -> Vec<String> {
        self.input_targets(InputKind::Parameter)
    }

    /// `ExportGraphSignature.buffers`: the FQNs of the lifted buffers, in input order.
    pub fn buffers(&self) -> Vec<String> {
        self.input_targets(InputKind::Buffer)
    }

    /// `ExportGraphSignature.non_persistent_buffers`: the FQNs of the buffers
    /// with `persistent=False`.
    pub fn non_persistent_buffers(&self) -> Vec<String> {
        self.input_specs
            .iter()
            .filter(|s| s.kind == InputKind::Buffer && s.persistent == Some(PyJson::Bool(false)))
            .filter_map(|s| s.target.clone())
            .collect()
    }

    /// `ExportGraphSignature.lifted_tensor_constants`: the FQNs of the lifted tensor constants.
    pub fn lifted_tensor_constants(&self) -> Vec<String> {
        self.input_targets(InputKind::ConstantTensor)
    }

    /// `ExportGraphSignature.lifted_custom_objs`: the FQNs of the lifted script objects.
    pub fn lifted_custom_objs(&self) -> Vec<String> {
        self.input_targets(InputKind::CustomObj)
    }

    /// `ExportGraphSignature.user_inputs`: each `USER_INPUT` spec's name, or
    /// its value for a constant.
    pub fn user_inputs(&self) -> Vec<UserValue> {
        self.input_specs
            .iter()
            .filter(|s| s.kind == InputKind::UserInput)
            .map(|s| match &s.arg {
                ArgumentSpec::Constant { value, .. } => UserValue::Constant(value.clone()),
                other => UserValue::Name(other.name().to_string()),
            })
            .collect()
    }

    /// Raises where PyTorch does: a token argument among user outputs.
    pub fn user_outputs(&self) -> Result<Vec<UserValue>, PyException> {
        let mut out = Vec::new();
        for s in &self.output_specs {
            if !matches!(s.kind, OutputKind::UserOutput | OutputKind::LossOutput) {
                continue;
            }
            out.push(match &s.arg {
                ArgumentSpec::Constant { value, .. } => UserValue::Constant(value.clone()),
                ArgumentSpec::Token { .. } => {
                    let mut name = String::new();
                    crate::schema::load::repr_raw(&s.arg.name_value(), &mut name);
                    return Err(PyException {
                        type_name: "RuntimeError".into(),
                        message: format!("TokenArgument(name={name}) is not a valid user output"),
                    });
                }
                other => UserValue::Name(other.name().to_string()),
            });
        }
        Ok(out)
    }

    fn input_map(&self, kind: InputKind, custom_obj: bool) -> Vec<(String, String)> {
        self.input_specs
            .iter()
            .filter(|s| s.kind == kind)
            .filter(|s| {
                if custom_obj {
                    matches!(s.arg, ArgumentSpec::CustomObj { .. })
                } else {
                    matches!(s.arg, ArgumentSpec::Tensor { .. })
                }
            })
            .filter_map(|s| Some((s.arg.name().to_string(), s.target.clone()?)))
            .fold(Vec::new(), dict_collect)
    }

    fn output_map(&self, kind: OutputKind) -> Vec<(String, String)> {
        self.output_specs
            .iter()
            .filter(|s| s.kind == kind && matches!(s.arg, ArgumentSpec::Tensor { .. }))
            .filter_map(|s| Some((s.arg.name().to_string(), s.target.clone()?)))
            .fold(Vec::new(), dict_collect)
    }

    /// `ExportGraphSignature.inputs_to_parameters`: placeholder name to parameter FQN.
    pub fn inputs_to_parameters(&self) -> Vec<(String, String)> {
        self.input_map(InputKind::Parameter, false)
    }

    /// `ExportGraphSignature.inputs_to_buffers`: placeholder name to buffer FQN.
    pub fn inputs_to_buffers(&self) -> Vec<(String, String)> {
        self.input_map(InputKind::Buffer, false)
    }

    /// `ExportGraphSignature.buffers_to_mutate`: output name to the FQN of the buffer it mutates.
    pub fn buffers_to_mutate(&self) -> Vec<(String, String)> {
        self.output_map(OutputKind::BufferMutation)
    }

    /// `ExportGraphSignature.parameters_to_mutate`: output name to the FQN of
    /// the parameter it mutates.
    pub fn parameters_to_mutate(&self) -> Vec<(String, String)> {
        self.output_map(OutputKind::ParameterMutation)
    }

    /// `ExportGraphSignature.user_inputs_to_mutate`: output name to the user input it mutates.
    pub fn user_inputs_to_mutate(&self) -> Vec<(String, String)> {
        self.output_map(OutputKind::UserInputMutation)
    }

    /// `ExportGraphSignature.inputs_to_lifted_tensor_constants`: placeholder name to constant FQN.
    pub fn inputs_to_lifted_tensor_constants(&self) -> Vec<(String, String)> {
        self.input_map(InputKind::ConstantTensor, false)
    }

    /// `ExportGraphSignature.inputs_to_lifted_custom_objs`: placeholder name to script object FQN.
    pub fn inputs_to_lifted_custom_objs(&self) -> Vec<(String, String)> {
        self.input_map(InputKind::CustomObj, true)
    }

    /// `ExportGraphSignature.backward_signature`: the gradients and loss of a
    /// joint graph, `None` without a `LOSS_OUTPUT`; raises the `AssertionError`s
    /// PyTorch does on malformed specs.
    pub fn backward_signature(&self) -> Result<Option<ExportBackwardSignature>, PyException> {
        let mut loss_output: Option<String> = None;
        let mut to_params = Vec::new();
        let mut to_inputs = Vec::new();
        for spec in &self.output_specs {
            let tensor = matches!(spec.arg, ArgumentSpec::Tensor { .. });
            let class = spec.arg.class_name();
            match spec.kind {
                OutputKind::LossOutput => {
                    if loss_output.is_some() {
                        return Err(assertion("multiple LOSS_OUTPUT specs found".into()));
                    }
                    if !tensor {
                        return Err(assertion(format!(
                            "expected TensorArgument for LOSS_OUTPUT, got <class 'torch.export.graph_signature.{class}'>"
                        )));
                    }
                    loss_output = Some(spec.arg.name().to_string());
                }
                OutputKind::GradientToParameter | OutputKind::GradientToUserInput => {
                    let what = spec.kind.name();
                    let Some(target) = &spec.target else {
                        return Err(assertion(format!(
                            "expected str target for {what}, got <class 'NoneType'>"
                        )));
                    };
                    if !tensor {
                        return Err(assertion(format!(
                            "expected TensorArgument for {what}, got <class 'torch.export.graph_signature.{class}'>"
                        )));
                    }
                    let entry = (spec.arg.name().to_string(), target.clone());
                    let map = if spec.kind == OutputKind::GradientToParameter {
                        &mut to_params
                    } else {
                        &mut to_inputs
                    };
                    dict_insert(map, entry);
                }
                _ => {}
            }
        }
        Ok(loss_output.map(|loss_output| ExportBackwardSignature {
            gradients_to_parameters: to_params,
            gradients_to_user_inputs: to_inputs,
            loss_output,
        }))
    }

    /// `ExportGraphSignature.input_tokens`: the names of the `TOKEN` inputs
    /// (a str, or the value a name was kept as).
    pub fn input_tokens(&self) -> Result<Vec<PyJson>, PyException> {
        token_names(
            self.input_specs
                .iter()
                .filter(|s| s.kind == InputKind::Token)
                .map(|s| &s.arg),
        )
    }

    /// `ExportGraphSignature.output_tokens`: the names of the `TOKEN` outputs
    /// (a str, or the value a name was kept as).
    pub fn output_tokens(&self) -> Result<Vec<PyJson>, PyException> {
        token_names(
            self.output_specs
                .iter()
                .filter(|s| s.kind == OutputKind::Token)
                .map(|s| &s.arg),
        )
    }

    /// `replace_all_uses(old, new)`: renames every non-constant argument
    /// named `old`, outputs first.
    pub fn replace_all_uses(&mut self, old: &str, new: &str) {
        let outputs = self.output_specs.iter_mut().map(|o| &mut o.arg);
        let inputs = self.input_specs.iter_mut().map(|i| &mut i.arg);
        for arg in outputs.chain(inputs) {
            if !matches!(arg, ArgumentSpec::Constant { .. })
                && arg.name_is_str()
                && arg.name_mut() == old
            {
                *arg.name_mut() = new.to_string();
            }
        }
    }
}

fn dict_collect(mut map: Vec<(String, String)>, entry: (String, String)) -> Vec<(String, String)> {
    dict_insert(&mut map, entry);
    map
}

/// `input_tokens` / `output_tokens`: every TOKEN spec must carry a `TokenArgument`.
fn token_names<'a>(
    args: impl Iterator<Item = &'a ArgumentSpec>,
) -> Result<Vec<PyJson>, PyException> {
    args.map(|arg| match arg {
        ArgumentSpec::Token { .. } => Ok(arg.name_value()),
        other => Err(assertion(format!(
            "expected TokenArgument for TOKEN kind, got <class 'torch.export.graph_signature.{}'>",
            other.class_name()
        ))),
    })
    .collect()
}

/// A Python dict insert: an existing key keeps its place, takes the value.
pub(crate) fn dict_insert(map: &mut Vec<(String, String)>, (k, v): (String, String)) {
    match map.iter_mut().find(|(key, _)| *key == k) {
        Some(slot) => slot.1 = v,
        None => map.push((k, v)),
    }
}

impl fmt::Display for ExportGraphSignature {
    /// `str(signature)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::from("\n# inputs\n");
        for (i, spec) in self.input_specs.iter().enumerate() {
            if i > 0 {
                s.push('\n');
            }
            let _ = write!(s, "{spec}");
        }
        s.push_str("\n\n# outputs\n");
        for (i, spec) in self.output_specs.iter().enumerate() {
            if i > 0 {
                s.push('\n');
            }
            let _ = write!(s, "{spec}");
        }
        s.push('\n');
        f.write_str(&s)
    }
}
