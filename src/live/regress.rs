//! Keeping a divergence: its case line in `corpus/regressions/NAME.jsonl`,
//! the oracle's own result line as its golden in
//! `corpus/goldens/torch-2.15.0/regressions/NAME.jsonl`, an allow-list entry
//! (until the reference is fixed: the list only shrinks) and a repro packet
//! `corpus/regressions/packets/NAME.md` for a maintainer.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::case::{Case, ResultLine};
use crate::conformance::{Verdict, ALLOW_LIST, GOLDENS, REGRESSIONS};
use crate::error::{Error, Result};

use crate::shard::fnv1a64;

/// A shrunk divergence, ready to be written.
#[derive(Clone, Debug)]
pub struct Kept {
    /// The regression's name, also the case's id.
    pub name: String,
    pub signature: String,
    pub family: String,
    /// The generated case it was shrunk from.
    pub original_id: String,
    /// The shrunk case (id = `name`).
    pub case: Case,
    /// The oracle's result line for `case`, byte for byte.
    pub golden_line: String,
    pub golden: ResultLine,
    pub ours: ResultLine,
    /// Unified diff PyTorch → torchspec.
    pub diff: String,
    pub shrink_steps: usize,
}

/// The regression name of a signature: family and a hash, so one signature
/// always names one file (a rerun does not keep it twice).
pub fn regression_name(family: &str, signature: &str) -> String {
    format!(
        "live-{}-{:08x}",
        family.replace('_', "-"),
        fnv1a64(signature.as_bytes()) as u32
    )
}

/// The case file of regression `name`.
pub fn case_path(root: &Path, name: &str) -> PathBuf {
    root.join(REGRESSIONS).join(format!("{name}.jsonl"))
}

/// Whether regression `name` is already kept.
pub fn exists(root: &Path, name: &str) -> bool {
    case_path(root, name).exists()
}

/// The names a signature's regressions take: `base`, then `base` + `r2`,
/// `r3`, ... (a later one is kept when every earlier one agrees now; the
/// suffix keeps `live-FAMILY-HASH`'s shape).
fn names(base: &str) -> impl Iterator<Item = String> + '_ {
    std::iter::once(base.to_string()).chain((2u32..).map(move |n| format!("{base}r{n}")))
}

/// Whether regression `name` still diverges: its case evaluated now
/// against its golden. A file that cannot be read counts as diverging, so
/// nothing is kept over it.
pub fn still_diverges(root: &Path, name: &str) -> bool {
    let golden_path = root
        .join(GOLDENS)
        .join("regressions")
        .join(format!("{name}.jsonl"));
    let case = crate::case::file::read_cases(&case_path(root, name))
        .ok()
        .and_then(|c| c.into_iter().next());
    let golden = std::fs::read_to_string(golden_path)
        .ok()
        .and_then(|t| crate::case::file::parse_results(&t).ok())
        .and_then(|mut g| g.pop());
    match (case, golden) {
        (Some((_, case)), Some(golden)) => {
            !crate::diff::results_agree(&golden, &super::eval_reference(&case))
        }
        _ => true,
    }
}

/// Whether a regression of the signature `base` names is kept and still
/// diverges (a fixed one no longer stands for new instances).
pub fn kept_and_diverging(root: &Path, base: &str) -> bool {
    names(base)
        .take_while(|n| exists(root, n))
        .any(|n| still_diverges(root, &n))
}

/// The first name of the signature `base` that no regression holds yet.
pub fn free_name(root: &Path, base: &str) -> String {
    names(base)
        .find(|n| !exists(root, n))
        .unwrap_or_else(|| base.to_string())
}

/// Write `text` to `path`, creating its folder.
pub fn write_file(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    std::fs::write(path, text).map_err(|e| Error::io(path, e))
}

/// Write everything of a kept divergence under `root`.
pub fn write(root: &Path, kept: &Kept) -> Result<()> {
    write_file(
        &case_path(root, &kept.name),
        &format!("{}\n", kept.case.to_json()),
    )?;
    write_file(
        &root
            .join(GOLDENS)
            .join("regressions")
            .join(format!("{}.jsonl", kept.name)),
        &format!("{}\n", kept.golden_line),
    )?;
    write_file(
        &root
            .join(REGRESSIONS)
            .join("packets")
            .join(format!("{}.md", kept.name)),
        &packet(kept),
    )?;
    allow_list(root, &allow_entry(kept))
}

/// Append an entry (a kept divergence, marked untriaged, with how it
/// diverges as `check` records it) to the allow-list: it diverges until fixed.
pub fn allow_list(root: &Path, entry: &str) -> Result<()> {
    let path = root.join(ALLOW_LIST);
    let existing = std::fs::read_to_string(&path).unwrap_or_default();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    let sep = if existing.is_empty() || existing.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    writeln!(f, "{sep}{entry}").map_err(|e| Error::io(&path, e))
}

/// The allow-list line of a kept case, in the list's own layout:
/// `{"id", "reason", "verdict": "diverge", "differs", "untriaged": true}`.
pub fn allow_entry(kept: &Kept) -> String {
    let reason = format!(
        "live fuzz divergence, not triaged yet ({}): see {REGRESSIONS}/packets/{}.md",
        kept.signature, kept.name
    );
    let (verdict, differs) = match crate::conformance::verdict(&kept.golden, &kept.ours) {
        Verdict::Unsupported(_) => ("unsupported", None),
        Verdict::Diverge(d) => ("diverge", Some(d.differs)),
        _ => ("diverge", None),
    };
    allow_line(&kept.name, &reason, verdict, differs.as_deref())
}

/// An untriaged allow-list line in the list's own layout: `{"id", "reason",
/// "verdict", "differs" (when known), "untriaged": true}`.
pub fn allow_line(id: &str, reason: &str, verdict: &str, differs: Option<&[String]>) -> String {
    use serde_json::Value as Json;
    let differs = differs.map_or(String::new(), |d| {
        let d: Vec<String> = d
            .iter()
            .map(|p| Json::from(p.as_str()).to_string())
            .collect();
        format!(", \"differs\": [{}]", d.join(", "))
    });
    format!(
        "{{\"id\": {}, \"reason\": {}, \"verdict\": \"{verdict}\"{differs}, \"untriaged\": true}}",
        Json::from(id),
        Json::from(reason)
    )
}

/// A Rust raw string literal holding `s`.
pub fn raw_literal(s: &str) -> String {
    let mut hashes = 1;
    while s.contains(&format!("\"{}", "#".repeat(hashes))) {
        hashes += 1;
    }
    let h = "#".repeat(hashes);
    format!("r{h}\"{s}\"{h}")
}

/// A ready-to-paste `#[test]` that fails until the reference agrees.
pub fn rust_test(kept: &Kept) -> String {
    format!(
        r#"/// Kept by `torchspec fuzz --live` ({sig}).
#[test]
fn {fname}() {{
    let case = torchspec::case::Case::parse({case}).unwrap();
    let golden = torchspec::case::file::parse_results({golden})
        .unwrap()
        .remove(0);
    let ours = torchspec::case::eval_case(&case);
    assert!(
        torchspec::diff::results_agree(&golden, &ours),
        "{{}}",
        torchspec::diff::render_divergence(&golden, &ours)
    );
}}
"#,
        sig = kept.signature,
        fname = kept.name.replace('-', "_"),
        case = raw_literal(&kept.case.to_json().to_string()),
        golden = raw_literal(&kept.golden_line),
    )
}

/// The `python -c` reproduction with stock torch (`repro::python_c`); none
/// for a case too deep for a one-liner.
pub fn python_c(case: &Case) -> Option<String> {
    crate::repro::python_c(case).ok()
}

/// A markdown code block holding `body`.
pub fn fence(lang: &str, body: &str) -> String {
    let mut ticks = 3;
    while body.contains(&"`".repeat(ticks)) {
        ticks += 1;
    }
    let t = "`".repeat(ticks);
    let nl = if body.ends_with('\n') { "" } else { "\n" };
    format!("{t}{lang}\n{body}{nl}{t}\n")
}

/// The repro packet: what a maintainer needs to act on the divergence.
pub fn packet(kept: &Kept) -> String {
    let case_line = kept.case.to_json().to_string();
    let repro = match python_c(&kept.case) {
        Some(cmd) => format!(
            "{}\nIt prints the golden result without its `id`.\n",
            fence("sh", &cmd)
        ),
        None => format!(
            "The case is too deep for a `python -c` one-liner; with the oracle:\n\n{}",
            fence(
                "sh",
                &format!(
                    "cat > /tmp/{name}.jsonl <<'EOF'\n{case_line}\nEOF\n\
                     .oracle/bin/python oracle/capture.py /tmp/{name}.jsonl",
                    name = kept.name
                )
            )
        ),
    };
    let ours = kept.ours.to_json().to_string();
    format!(
        "# {name}\n\n\
         Divergence kept by `torchspec fuzz --live` (shrunk from `{orig}` in {steps} oracle \
         round trips, generator family `{family}`).\n\n\
         Signature: `{sig}`\n\n\
         ## Case line\n\n{case}\n\
         ## Reproduce with stock PyTorch\n\n{repro}\n\
         ## What PyTorch says (the golden, `corpus/goldens/torch-2.15.0/regressions/{name}.jsonl`)\n\n{golden}\n\
         ## What the reference says (`torchspec eval`)\n\n{ours}\n\
         ## Diff (PyTorch → torchspec)\n\n{diff}\n\
         ## Rust test\n\n{test}",
        name = kept.name,
        orig = kept.original_id,
        steps = kept.shrink_steps,
        family = kept.family,
        sig = kept.signature,
        case = fence("json", &case_line),
        golden = fence("json", &kept.golden_line),
        ours = fence("json", &ours),
        diff = fence("diff", &kept.diff),
        test = fence("rust", &rust_test(kept)),
    )
}

/// The generator family named in a regression name (`live-FAMILY-HASH`).
pub fn family_of_name(name: &str) -> Option<&'static str> {
    let rest = name.strip_prefix("live-")?;
    let (family, _hash) = rest.rsplit_once('-')?;
    super::gen::FAMILIES
        .iter()
        .chain(super::gen::OPT_IN_FAMILIES.iter())
        .copied()
        .find(|f| f.replace('_', "-") == family)
}

/// Rewrite every packet of `corpus/regressions/` from its case line, its
/// golden and the reference as it is now (after a fix, or when the repro
/// generator changes). Where it was shrunk from, and in how many steps, are
/// read back from the old packet. Returns the names rewritten.
pub fn rewrite_packets(root: &Path) -> Result<Vec<String>> {
    let mut done = Vec::new();
    for file in crate::conformance::regression_files(root)? {
        let name = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Some(family) = family_of_name(&name) else {
            continue;
        };
        let cases = crate::case::file::read_cases(&file)?;
        let Some((_, case)) = cases.into_iter().next() else {
            continue;
        };
        let golden_path = root
            .join(GOLDENS)
            .join("regressions")
            .join(format!("{name}.jsonl"));
        let golden_line = std::fs::read_to_string(&golden_path)
            .map_err(|e| Error::io(&golden_path, e))?
            .trim_end()
            .to_string();
        let golden = crate::case::file::parse_results(&golden_line)
            .map_err(|e| e.in_file(&golden_path))?
            .pop()
            .ok_or_else(|| Error::new("empty golden").in_file(&golden_path))?;
        let ours = super::eval_reference(&case);
        let packet_path = root
            .join(REGRESSIONS)
            .join("packets")
            .join(format!("{name}.md"));
        let old = std::fs::read_to_string(&packet_path).unwrap_or_default();
        let (original_id, shrink_steps) = old
            .split_once("(shrunk from `")
            .and_then(|(_, rest)| {
                let (id, rest) = rest.split_once("` in ")?;
                let steps = rest.split_whitespace().next()?.parse().ok()?;
                Some((id.to_string(), steps))
            })
            .unwrap_or_else(|| ("an unrecorded case".to_string(), 0));
        let kept = Kept {
            signature: super::compare::signature(family, &case, &golden, &ours),
            diff: crate::diff::render_divergence(&golden, &ours),
            name: name.clone(),
            family: family.to_string(),
            original_id,
            case,
            golden_line,
            golden,
            ours,
            shrink_steps,
        };
        write_file(&packet_path, &packet(&kept))?;
        done.push(name);
    }
    Ok(done)
}
