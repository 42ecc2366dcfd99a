#!/usr/bin/env bash
# Writes the "Memory" section at the end of docs/performance.md: the peak
# heap of loading decoder-5k and a generated program of more than 50,000
# nodes, against the size of their program JSON, measured by the counting
# allocator of crates/export/examples/peak_heap.rs. oracle/bench-page.sh
# runs it after writing the rest of the page.
# Usage: oracle/memory-page.sh   (writes target/bench/chain-50k.pt2 first if
# missing: about 13 minutes of torch.export.export)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${ORACLE_PYTHON:-.oracle/bin/python}"
big=target/bench/chain-50k.pt2
if [[ ! -f "$big" ]]; then
  mkdir -p target/bench
  "$PY" oracle/big_program.py "$big"
fi
cargo build --release -q -p torchspec-export --example peak_heap
runs="$(for f in corpus/programs/decoder-5k.pt2 "$big"; do target/release/examples/peak_heap "$f" --stages; done)"
page="$(sed '/^## Memory$/,$d' docs/performance.md)"
{
  echo "$page"
  cat <<MD
## Memory

Peak heap while \`ExportedProgram::open\` loads a program, beside the size of
its program JSON (\`models/model.json\`), from
\`cargo run --release -p torchspec-export --example peak_heap -- FILE --stages\`
(a \`#[global_allocator]\` that counts live bytes over the system allocator;
the mapped archive is not heap). \`kept\` is what stays live in the loaded
program; the stages split the peak: the parsed \`PyJson\` document, the
schema wire types built from it (the document still live), then the FX graph
module built from the wire types. \`chain-50k\` is
\`oracle/big_program.py\` (13,000 blocks of Linear, tanh, add over a dynamic
batch: 52,000 nodes). Date $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD).

\`\`\`
$runs
\`\`\`

Before the program JSON was read in place (commit 0d46406, the same
example): decoder-5k 34.5 MB peak for 5.3 MB of JSON (6.48x), chain-50k
296.7 MB for 47.0 MB (6.31x). Borrowing \`models/model.json\` from the
mapped archive (stored, CRC checked as before) took one copy of the JSON
off the peak (to 5.5x and 5.3x), and the load time is no worse: best of 6
loads on the 2-core machine shared with other jobs, system allocator,
decoder-5k 240 ms before and 194 ms after, chain-50k 1,250 ms before and
1,198 ms after (the \`load time\` lines above are this run's). Reading the
program through \`torchspec_export::open\` and typing every node's value
adds nothing to the peak (the \`Program\` and its graph index are built after
the document is freed).

What bounds it, and what 2x would take:

- The peak is the \`PyJson\` document (3.6x the JSON: a 40-byte value and a
  separately allocated \`String\` key per object member) and the wire types
  built from it (1.85x), live together while \`from_pyjson\` walks the
  document by reference. Typing straight from the text (a pull parser
  driving the generated \`from_pyjson\`, keeping \`Loose\` raw values as
  small \`PyJson\` pieces) would take the document off the peak: about 2.5x
  the JSON, the wire program plus the graph module.
- What stays live is itself 2.4-2.5x the JSON: the wire program
  (\`ExportedProgram::serialized\`, which the writer and the report read:
  1.85x, mostly \`String\`s, the same \`srepr\` texts of the symbolic sizes
  and strides repeated per tensor) and the FX graph module (0.6x). Under 2x
  needs those strings interned (one \`Arc<str>\` per distinct \`expr_str\`,
  node name and metadata value) as well, a change to the generated wire
  types and their users across the harness.
MD
} >docs/performance.md
echo "wrote the Memory section of docs/performance.md"
