//! Just enough of Rust's lexical grammar for the design figures: comments
//! and literals blanked out (so a brace or a path inside them counts for
//! nothing), `#[cfg(test)]` modules cut, function bodies measured, and the
//! fenced examples of doc comments counted.

/// `text` with comments and the insides of string, byte-string, raw-string
/// and char literals replaced by spaces; newlines and byte offsets kept.
pub fn mask(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = text[i..].find('\n').map_or(b.len(), |n| i + n);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let (mut depth, mut j) = (1, i + 2);
                while j < b.len() && depth > 0 {
                    if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                        depth += 1;
                        j += 2;
                    } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                        depth -= 1;
                        j += 2;
                    } else {
                        j += 1;
                    }
                }
                blank(&mut out, i, j);
                i = j;
            }
            b'r' | b'b' if raw_start(b, i).is_some() => {
                let (open, hashes) = raw_start(b, i).unwrap_or((i, 0));
                let close = format!("\"{}", "#".repeat(hashes));
                let end = text[open + 1..]
                    .find(&close)
                    .map_or(b.len(), |n| open + 1 + n + close.len());
                blank(
                    &mut out,
                    open + 1,
                    end.saturating_sub(close.len()).max(open + 1),
                );
                i = end;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, i + 1, j.min(b.len()));
                i = j + 1;
            }
            b'\'' => i = char_literal(b, i, &mut out),
            c if c.is_ascii_alphanumeric() || c == b'_' => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Where a raw string (`r"`, `r#"`, `br#"`) starting at `i` opens its
/// quote, and how many `#` it has.
fn raw_start(b: &[u8], i: usize) -> Option<(usize, usize)> {
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
        return None;
    }
    let mut j = i;
    if b[j] == b'b' {
        j += 1;
        if b.get(j) == Some(&b'"') {
            return Some((j, 0)); // b"..." is an ordinary escaped string
        }
    }
    if b.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = b[j..].iter().take_while(|&&c| c == b'#').count();
    (b.get(j + hashes) == Some(&b'"')).then_some((j + hashes, hashes))
}

/// A char literal at `i` blanked (returns where it ends), or a lifetime
/// stepped over.
fn char_literal(b: &[u8], i: usize, out: &mut [u8]) -> usize {
    if b.get(i + 1) == Some(&b'\\') {
        let mut j = i + 2;
        while j < b.len() && b[j] != b'\'' && j < i + 12 {
            j += 1;
        }
        for c in &mut out[i + 1..j.min(b.len())] {
            *c = b' ';
        }
        return j + 1;
    }
    // One (possibly multi-byte) character then a quote: a literal.
    let len = match b.get(i + 1) {
        Some(c) if *c >= 0xf0 => 4,
        Some(c) if *c >= 0xe0 => 3,
        Some(c) if *c >= 0xc0 => 2,
        _ => 1,
    };
    if b.get(i + 1 + len) == Some(&b'\'') {
        for c in &mut out[i + 1..i + 1 + len] {
            *c = b' ';
        }
        return i + 2 + len;
    }
    i + 1
}

/// The byte just past the brace matching the `{` at `open`.
pub fn matching_brace(m: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (k, &c) in m.iter().enumerate().skip(open) {
        if c == b'{' {
            depth += 1;
        } else if c == b'}' {
            depth -= 1;
            if depth == 0 {
                return k + 1;
            }
        }
    }
    m.len()
}

/// A masked text with every `#[cfg(test)]` item (a test module) blanked.
pub fn without_tests(masked: &str) -> String {
    let mut m = masked.as_bytes().to_vec();
    let mut from = 0;
    while let Some(n) = String::from_utf8_lossy(&m[from..]).find("#[cfg(test)]") {
        let at = from + n;
        let next_brace = m[at..].iter().position(|&c| c == b'{').map(|k| at + k);
        let next_semi = m[at..].iter().position(|&c| c == b';').map(|k| at + k);
        let end = match (next_brace, next_semi) {
            (Some(b), Some(s)) if s < b => s + 1,
            (Some(b), _) => matching_brace(&m, b),
            (None, Some(s)) => s + 1,
            (None, None) => m.len(),
        };
        for c in &mut m[at..end] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
        from = end;
    }
    String::from_utf8_lossy(&m).into_owned()
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Each function with a body, outside `#[cfg(test)]`: its name and its
/// length in lines, from the `fn` line to the closing brace's.
pub fn function_lengths(text: &str) -> Vec<(String, usize)> {
    let masked = without_tests(&mask(text));
    let m = masked.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(n) = masked[i..].find("fn ") {
        let at = i + n;
        i = at + 3;
        if at > 0 && is_ident(m[at - 1]) {
            continue;
        }
        let name: String = masked[at + 3..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue; // `fn(` types
        }
        let (brace, semi) = (masked[at..].find('{'), masked[at..].find(';'));
        let Some(brace) = brace
            .filter(|b| semi.is_none_or(|s| *b < s))
            .map(|b| at + b)
        else {
            continue;
        };
        let end = matching_brace(m, brace);
        let lines = masked[at..end].matches('\n').count() + 1;
        out.push((name, lines));
    }
    out
}

/// The fenced examples in doc comments (`///`, `//!`) that rustdoc compiles
/// and runs: no info string, or only `rust`, `should_panic` and editions.
pub fn doc_examples(text: &str) -> usize {
    let mut n = 0;
    let mut open = false;
    for line in text.lines() {
        let t = line.trim_start();
        let Some(doc) = t.strip_prefix("///").or_else(|| t.strip_prefix("//!")) else {
            open = false;
            continue;
        };
        let doc = doc.trim_start();
        if let Some(info) = doc.strip_prefix("```") {
            if open {
                open = false;
                continue;
            }
            open = true;
            let runnable = info.split(',').map(str::trim).all(|w| {
                w.is_empty() || w == "rust" || w == "should_panic" || w.starts_with("edition")
            });
            n += usize::from(runnable);
        }
    }
    n
}
