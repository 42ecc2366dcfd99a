//! `docs/upstream/README.md`, the triage table `oracle/upstream_triage.py`
//! generates: every packet of classes 1-4 is a row once, and no row is of
//! another class (class 5 is one note, never a row).

use std::collections::BTreeMap;
use std::path::Path;

fn upstream() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/upstream"))
}

/// The table's rows as (class, linked packet file).
fn rows() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(upstream().join("README.md")).expect("README.md");
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("| ") else {
            continue;
        };
        let Some((class, rest)) = rest.split_once(" | [") else {
            continue;
        };
        // The link closes at the first `](` not inside the signature's text.
        let Some(link) = rest.split("](").nth(1).and_then(|r| r.split(')').next()) else {
            continue;
        };
        out.push((class.to_string(), link.to_string()));
    }
    out
}

/// The packet files: round-trip, fuzzer and export_spec findings (not the
/// export_spec summary, not class 5's folder).
fn packets() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(upstream())
        .expect("docs/upstream")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".md") && n != "README.md" && n != "export-spec-findings.md")
        .collect();
    out.sort();
    out
}

#[test]
fn the_triage_table_lists_each_packet_once_with_a_class_of_1_to_4() {
    let rows = rows();
    assert!(
        !rows.is_empty(),
        "no row parsed from docs/upstream/README.md"
    );
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (class, link) in &rows {
        assert!(
            matches!(class.as_str(), "1" | "2" | "3" | "4"),
            "row {link}: class {class}, not 1-4"
        );
        assert!(
            upstream().join(link).is_file(),
            "row links {link}, which is not a file"
        );
        *seen.entry(link.as_str()).or_default() += 1;
    }
    for p in packets() {
        assert_eq!(
            seen.get(p.as_str()).copied().unwrap_or(0),
            1,
            "packet {p}: rows of the table that link it"
        );
    }
    assert_eq!(seen.len(), packets().len(), "rows linking no packet file");
}
