//! `cargo xtask codegen [--check] [--schema FILE]`: writes
//! `crates/export/src/schema/generated.rs` from `schema.yaml` (default: the
//! committed copy of upstream's); `--check` writes nothing and fails when
//! the committed file is stale.
//!
//! `cargo xtask design-metrics [--verbose] [DIR]`: prints the design figures of the
//! checkout at DIR (default: this one), see `xtask::metrics`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use xtask::codegen::{generate, SCHEMA_YAML};

const GENERATED: &str = "crates/export/src/schema/generated.rs";

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Vec<String>) -> Result<ExitCode, String> {
    let mut args = args.into_iter();
    match args.next().as_deref() {
        Some("codegen") => {}
        Some("design-metrics") => {
            let rest: Vec<String> = args.collect();
            let verbose = rest.iter().any(|a| a == "--verbose");
            let root = match rest.iter().find(|a| *a != "--verbose") {
                Some(dir) => PathBuf::from(dir),
                None => Path::new(env!("CARGO_MANIFEST_DIR")).join(".."),
            };
            print!("{}", xtask::metrics::report(&root, verbose));
            return Ok(ExitCode::SUCCESS);
        }
        _ => {
            return Err(
                "usage: cargo xtask codegen [--check] [--schema FILE] | cargo xtask design-metrics [--verbose] [DIR]"
                    .into(),
            )
        }
    }
    let (mut check, mut schema) = (false, None::<PathBuf>);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--check" => check = true,
            "--schema" => schema = Some(args.next().ok_or("--schema needs a file")?.into()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    let yaml = match &schema {
        Some(p) => std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?,
        None => SCHEMA_YAML.to_string(),
    };
    let fresh = generate(&yaml).map_err(|e| e.to_string())?;
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(GENERATED);
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    if check {
        if old != fresh {
            return Err(format!("{GENERATED} is stale: run `cargo xtask codegen`"));
        }
        return Ok(ExitCode::SUCCESS);
    }
    if old != fresh {
        std::fs::write(&path, fresh).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("wrote {GENERATED}");
    }
    Ok(ExitCode::SUCCESS)
}
