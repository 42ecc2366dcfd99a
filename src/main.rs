//! The `torchspec` command line: `eval` a case file, `check` the corpus
//! against the goldens, `gen` generated cases.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use torchspec::case::file::eval_file;
use torchspec::conformance;
use torchspec::testing::{derived, lookup, sample, strategies};

#[derive(Parser)]
#[command(
    name = "torchspec",
    version,
    about = "A reference implementation of PyTorch's dynamic-shape specs, checked against PyTorch"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Evaluate a case file and print one result line per case.
    Eval { file: PathBuf },
    /// Compare every corpus case with PyTorch's goldens and print the conformance table.
    Check {
        /// The repository root (holding `corpus/`).
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// Also list allow-listed divergences.
        #[arg(long)]
        verbose: bool,
    },
    /// Print generated cases (JSON Lines), deterministic in the seed.
    Gen {
        #[arg(long)]
        seed: u64,
        #[arg(long)]
        count: usize,
        /// The case kind to generate.
        #[arg(long, default_value = "build")]
        kind: String,
    },
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> torchspec::Result<ExitCode> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match cli.command {
        Command::Eval { file } => {
            eval_file(&file, &mut out)?;
        }
        Command::Check { root, verbose } => {
            let report = conformance::run(&root)?;
            let _ = write!(out, "{}", report.table());
            if verbose {
                for c in report.cases.iter().filter(|c| c.allowed.is_some()) {
                    let _ = writeln!(
                        out,
                        "allow-listed `{}`: {}",
                        c.id,
                        c.allowed.as_deref().unwrap_or("")
                    );
                }
            }
            let failures = report.failures();
            if !failures.is_empty() {
                let _ = writeln!(out);
                for f in &failures {
                    let _ = writeln!(out, "FAIL {f}");
                }
                let _ = writeln!(out, "{} failure(s)", failures.len());
                let _ = out.flush();
                return Ok(ExitCode::FAILURE);
            }
        }
        Command::Gen { seed, count, kind } => {
            let cases = match kind.as_str() {
                "build" => sample(
                    strategies::build_case(),
                    seed,
                    count,
                    &format!("gen-build-s{seed}"),
                ),
                "derived" => sample(
                    derived::derived_case(),
                    seed,
                    count,
                    &format!("derived-gen-s{seed}"),
                ),
                other if other.starts_with("derived-") => {
                    let family = &other["derived-".len()..];
                    let strategy = derived::family_case(family).ok_or_else(|| {
                        torchspec::Error::new(format!(
                            "no derived family `{family}` (one of {})",
                            derived::FAMILIES.join(", ")
                        ))
                    })?;
                    sample(
                        strategy,
                        seed,
                        count,
                        &format!("derived-gen-{family}-s{seed}"),
                    )
                }
                "lookup" => sample(
                    lookup::lookup_case(),
                    seed,
                    count,
                    &format!("gen-lookup-s{seed}"),
                ),
                "source_name" => sample(
                    lookup::source_name_case(),
                    seed,
                    count,
                    &format!("gen-source-name-s{seed}"),
                ),
                other => {
                    return Err(torchspec::Error::new(format!(
                        "no generator for kind `{other}` yet"
                    )))
                }
            };
            for case in cases {
                let _ = writeln!(out, "{}", case.to_json());
            }
        }
    }
    let _ = out.flush();
    Ok(ExitCode::SUCCESS)
}
