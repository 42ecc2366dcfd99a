//! The oracle side of the live fuzzer: `oracle/capture.py --serve` child
//! processes, one per worker, each with a per-case timeout; a worker that
//! crashes, hangs or prints garbage is killed and restarted, and the case it
//! had is reported as an [`OracleFailure`], never lost.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

use serde_json::Value as Json;

use crate::case::{Case, ResultLine};

/// What the oracle answered for one case: its result line as written (the
/// golden, byte for byte) and parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    pub line: String,
    pub result: ResultLine,
}

/// Why the oracle gave no result for a case.
#[derive(Clone, Debug, PartialEq)]
pub enum OracleFailure {
    /// No answer within the per-case timeout (the worker was killed).
    Timeout(Duration),
    /// The worker exited (or its pipe broke) before answering.
    Crashed(String),
    /// A line that is not a result line for this case.
    Garbage(String),
    /// The oracle refused the case line as malformed (`{"invalid": ...}`).
    Invalid(String),
    /// The worker could not be started.
    Start(String),
}

impl OracleFailure {
    /// A short class for counting and signatures.
    pub fn class(&self) -> &'static str {
        match self {
            OracleFailure::Timeout(_) => "timeout",
            OracleFailure::Crashed(_) => "crashed",
            OracleFailure::Garbage(_) => "garbage",
            OracleFailure::Invalid(_) => "invalid",
            OracleFailure::Start(_) => "start",
        }
    }
}

impl std::fmt::Display for OracleFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OracleFailure::Timeout(d) => write!(f, "no answer within {:.1}s", d.as_secs_f64()),
            OracleFailure::Crashed(why) => write!(f, "oracle worker crashed: {why}"),
            OracleFailure::Garbage(line) => write!(f, "oracle printed garbage: {line}"),
            OracleFailure::Invalid(why) => write!(f, "oracle refused the case line: {why}"),
            OracleFailure::Start(why) => write!(f, "oracle worker did not start: {why}"),
        }
    }
}

/// Anything that answers cases as PyTorch would: the process pool's worker,
/// or a function in tests (`cargo test` never starts Python).
pub trait Oracle {
    fn eval(&mut self, case: &Case) -> Result<Reply, OracleFailure>;
}

impl<F: FnMut(&Case) -> Result<Reply, OracleFailure>> Oracle for F {
    fn eval(&mut self, case: &Case) -> Result<Reply, OracleFailure> {
        self(case)
    }
}

/// Anything that answers program requests as `capture.py --serve` does
/// (`ProcessOracle::request`), or a function in tests.
pub trait Requests {
    /// Send request `kind` with `id` and the fields of `body`; the reply.
    fn request(&mut self, kind: &str, id: &str, body: &Json) -> Result<Json, OracleFailure>;

    /// [`Requests::request`] with `scale` times the per-case timeout (the
    /// large lane of `--mutate`: programs PyTorch takes seconds to load).
    fn request_scaled(
        &mut self,
        kind: &str,
        id: &str,
        body: &Json,
        scale: u32,
    ) -> Result<Json, OracleFailure> {
        let _ = scale;
        self.request(kind, id, body)
    }
}

impl<F: FnMut(&str, &str, &Json) -> Result<Json, OracleFailure>> Requests for F {
    fn request(&mut self, kind: &str, id: &str, body: &Json) -> Result<Json, OracleFailure> {
        self(kind, id, body)
    }
}

impl Requests for ProcessOracle {
    fn request(&mut self, kind: &str, id: &str, body: &Json) -> Result<Json, OracleFailure> {
        ProcessOracle::request(self, kind, id, body)
    }

    fn request_scaled(
        &mut self,
        kind: &str,
        id: &str,
        body: &Json,
        scale: u32,
    ) -> Result<Json, OracleFailure> {
        let base = self.cmd.timeout;
        self.cmd.timeout = base.saturating_mul(scale.max(1));
        let reply = ProcessOracle::request(self, kind, id, body);
        self.cmd.timeout = base;
        reply
    }
}

/// Read the oracle's answer line for case `id`.
pub fn parse_reply(id: &str, line: &str) -> Result<Reply, OracleFailure> {
    let short = || {
        let mut s: String = line.chars().take(200).collect();
        if s.len() < line.len() {
            s.push('…');
        }
        s
    };
    let json: Json = serde_json::from_str(line).map_err(|_| OracleFailure::Garbage(short()))?;
    if let Some(why) = json.get("invalid") {
        return Err(OracleFailure::Invalid(
            why.as_str().unwrap_or_default().to_string(),
        ));
    }
    let result = ResultLine::from_json(&json).map_err(|_| OracleFailure::Garbage(short()))?;
    if result.id != id || matches!(result.outcome, crate::case::Outcome::Unsupported(_)) {
        return Err(OracleFailure::Garbage(short()));
    }
    Ok(Reply {
        line: line.to_string(),
        result,
    })
}

/// How to start one oracle worker.
#[derive(Clone, Debug)]
pub struct OracleCommand {
    pub python: PathBuf,
    pub capture: PathBuf,
    /// Where the worker's stderr (PyTorch's warnings) goes; none: discarded.
    pub log: Option<PathBuf>,
    /// Per-case timeout.
    pub timeout: Duration,
    /// How long `import torch` may take.
    pub startup_timeout: Duration,
}

struct Running {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<std::io::Result<String>>,
}

/// One `capture.py --serve` process, restarted when it fails.
pub struct ProcessOracle {
    cmd: OracleCommand,
    running: Option<Running>,
    /// How many times a worker was (re)started.
    pub starts: usize,
}

impl ProcessOracle {
    pub fn new(cmd: OracleCommand) -> ProcessOracle {
        ProcessOracle {
            cmd,
            running: None,
            starts: 0,
        }
    }

    /// Start the worker now (it answers `{"ready": ...}` once torch is imported).
    pub fn start(&mut self) -> Result<(), OracleFailure> {
        self.stop();
        let stderr = match &self.cmd.log {
            Some(p) => std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map(Stdio::from)
                .map_err(|e| OracleFailure::Start(format!("{}: {e}", p.display())))?,
            None => Stdio::null(),
        };
        let mut child = Command::new(&self.cmd.python)
            .arg(&self.cmd.capture)
            .arg("--serve")
            // One set order (mutant goldens print sets), as regen-goldens.sh.
            .env("PYTHONHASHSEED", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| OracleFailure::Start(format!("{}: {e}", self.cmd.python.display())))?;
        self.starts += 1;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut buf = Vec::new();
                match r.by_ref().read_until(b'\n', &mut buf) {
                    Ok(0) => break,
                    Ok(_) => {
                        if buf.last() == Some(&b'\n') {
                            buf.pop();
                        }
                        let line = String::from_utf8(buf)
                            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e));
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        break;
                    }
                }
            }
        });
        let mut running = Running {
            child,
            stdin,
            lines,
        };
        match running.lines.recv_timeout(self.cmd.startup_timeout) {
            Ok(Ok(line)) if line.starts_with("{\"ready\":true") => {
                self.running = Some(running);
                Ok(())
            }
            other => {
                let _ = running.child.kill();
                let status = running.child.wait();
                Err(OracleFailure::Start(match other {
                    Ok(Ok(line)) => format!("unexpected first line {line:?}"),
                    Ok(Err(e)) => e.to_string(),
                    Err(RecvTimeoutError::Timeout) => {
                        format!("not ready within {}s", self.cmd.startup_timeout.as_secs())
                    }
                    Err(RecvTimeoutError::Disconnected) => format!(
                        "exited before ready ({}){}",
                        status.map(|s| s.to_string()).unwrap_or_default(),
                        self.cmd
                            .log
                            .as_ref()
                            .map(|p| format!(", see {}", p.display()))
                            .unwrap_or_default()
                    ),
                }))
            }
        }
    }

    /// Kill the worker, if one runs.
    pub fn stop(&mut self) {
        if let Some(mut r) = self.running.take() {
            drop(r.stdin);
            let _ = r.child.kill();
            let _ = r.child.wait();
        }
    }

    /// Kill the worker after failure `f` (the exit status joins a crash).
    fn kill(&mut self, f: OracleFailure) -> OracleFailure {
        let f = match (f, self.running.as_mut().map(|r| r.child.try_wait())) {
            (OracleFailure::Crashed(why), Some(Ok(Some(status)))) => {
                OracleFailure::Crashed(format!("{why} ({status})"))
            }
            (f, _) => f,
        };
        self.stop();
        f
    }
}

impl Drop for ProcessOracle {
    fn drop(&mut self) {
        self.stop();
    }
}

impl ProcessOracle {
    /// Send one line and wait for one line back (the worker is started when
    /// none runs, and killed when it hangs, crashes or breaks its pipe).
    fn round_trip(&mut self, line: &str) -> Result<String, OracleFailure> {
        if self.running.is_none() {
            self.start()?;
        }
        let running = self.running.as_mut().expect("started");
        if let Err(e) = running
            .stdin
            .write_all(line.as_bytes())
            .and_then(|()| running.stdin.write_all(b"\n"))
            .and_then(|()| running.stdin.flush())
        {
            return Err(self.kill(OracleFailure::Crashed(format!("writing the request: {e}"))));
        }
        match running.lines.recv_timeout(self.cmd.timeout) {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(e)) => Err(self.kill(OracleFailure::Garbage(e.to_string()))),
            Err(RecvTimeoutError::Timeout) => {
                Err(self.kill(OracleFailure::Timeout(self.cmd.timeout)))
            }
            Err(RecvTimeoutError::Disconnected) => {
                Err(self.kill(OracleFailure::Crashed("exited before answering".into())))
            }
        }
    }

    /// A program request of serve mode (`capture.py`'s `REQUESTS`): the line
    /// `{"request": KIND, "id": ID, ...body}`, answered by one JSON object
    /// with the same `id`.
    pub fn request(&mut self, kind: &str, id: &str, body: &Json) -> Result<Json, OracleFailure> {
        let mut line = format!(
            "{{\"request\":{},\"id\":{}",
            Json::from(kind),
            Json::from(id)
        );
        if let Some(fields) = body.as_object() {
            for (k, v) in fields {
                line += &format!(",{}:{}", Json::from(k.as_str()), v);
            }
        }
        line.push('}');
        let answer = self.round_trip(&line)?;
        let short = || answer.chars().take(200).collect::<String>();
        match serde_json::from_str::<Json>(&answer) {
            Ok(json) if json.get("id").and_then(Json::as_str) == Some(id) => {
                match json.get("invalid") {
                    Some(why) => Err(OracleFailure::Invalid(
                        why.as_str().unwrap_or_default().to_string(),
                    )),
                    None => Ok(json),
                }
            }
            _ => Err(self.kill(OracleFailure::Garbage(short()))),
        }
    }
}

impl Oracle for ProcessOracle {
    fn eval(&mut self, case: &Case) -> Result<Reply, OracleFailure> {
        let answer = self.round_trip(&case.to_json().to_string())?;
        match parse_reply(&case.id, &answer) {
            Ok(reply) => Ok(reply),
            // The worker is fine; the line was malformed to it.
            Err(f @ OracleFailure::Invalid(_)) => Err(f),
            // Out of step: restart so the next case starts clean.
            Err(f) => Err(self.kill(f)),
        }
    }
}
