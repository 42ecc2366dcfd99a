//! Replays every committed fuzz corpus input through its target's body
//! (`torchspec::testing::fuzz`), so `cargo test` on stable catches a
//! regression that the fuzzer once found.

use std::path::Path;

fn replay(target: &str, body: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("fuzz corpus dir") {
        let path = entry.expect("dir entry").path();
        let data = std::fs::read(&path).expect("corpus file");
        body(&data);
        n += 1;
    }
    assert!(n >= 10, "only {n} inputs in {}", dir.display());
}

#[test]
fn case_line_corpus_replays() {
    replay("case_line", torchspec::testing::fuzz::case_line);
}

#[test]
fn lookup_corpus_replays() {
    replay("lookup", torchspec::testing::fuzz::lookup);
}

#[test]
fn program_corpus_replays() {
    replay("program", torchspec::testing::fuzz::program);
}

#[test]
fn archive_corpus_replays() {
    replay("archive", torchspec::testing::fuzz::archive);
}
