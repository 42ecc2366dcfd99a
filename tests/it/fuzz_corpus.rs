//! Replays every committed fuzz corpus input through its target's body
//! (`torchspec::testing::fuzz`), so `cargo test` on stable catches a
//! regression that the fuzzer once found.

use std::path::Path;

#[test]
fn case_line_corpus_replays() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/case_line");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("fuzz corpus dir") {
        let path = entry.expect("dir entry").path();
        let data = std::fs::read(&path).expect("corpus file");
        torchspec::testing::fuzz::case_line(&data);
        n += 1;
    }
    assert!(n >= 10, "only {n} inputs in {}", dir.display());
}
