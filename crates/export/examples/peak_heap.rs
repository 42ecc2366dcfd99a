//! Peak heap of loading a program, measured by a counting global allocator
//! (`docs/performance.md`, "Memory"): the size of the program JSON
//! (`models/model.json`), the peak of live heap bytes while
//! `ExportedProgram::open` runs, what stays live after it, and the time.
//!
//! ```sh
//! cargo run --release -p torchspec-export --example peak_heap -- corpus/programs/decoder-5k.pt2
//! ```
//!
//! The archive is mapped, not read into the heap: the JSON entry is
//! stored uncompressed by `torch.export.save`, but the loader copies it out
//! (a `Vec<u8>`), which counts.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

/// The system allocator, counting live and peak bytes.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(n: usize) {
    let live = LIVE.fetch_add(n, Relaxed) + n;
    PEAK.fetch_max(live, Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, layout, new) };
        if !q.is_null() {
            if new >= layout.size() {
                grew(new - layout.size());
            } else {
                LIVE.fetch_sub(layout.size() - new, Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() -> Result<(), torchspec_export::Error> {
    let path = std::env::args_os()
        .nth(1)
        .unwrap_or_else(|| "corpus/programs/decoder-5k.pt2".into());
    let json = torchspec_export::archive::Pt2Archive::open(&path)?
        .read_program()?
        .len();
    let before = LIVE.load(Relaxed);
    PEAK.store(before, Relaxed);
    let start = Instant::now();
    let ep = torchspec_export::ExportedProgram::open(&path)?;
    let elapsed = start.elapsed();
    let peak = PEAK.load(Relaxed) - before;
    let kept = LIVE.load(Relaxed) - before;
    let mb = |n: usize| n as f64 / 1e6;
    println!(
        "{}: JSON {:.1} MB, peak heap {:.1} MB ({:.2}x), kept {:.1} MB ({:.2}x), {} nodes, {:.0} ms",
        std::path::Path::new(&path).display(),
        mb(json),
        mb(peak),
        peak as f64 / json as f64,
        mb(kept),
        kept as f64 / json as f64,
        ep.graph_module.graph.len(),
        elapsed.as_secs_f64() * 1e3
    );
    drop(ep);
    // The load time: the best of five more loads (the first one's above).
    let mut best = elapsed;
    for _ in 0..5 {
        let start = Instant::now();
        drop(torchspec_export::ExportedProgram::open(&path)?);
        best = best.min(start.elapsed());
    }
    println!("  load time, best of 6: {:.0} ms", best.as_secs_f64() * 1e3);
    // The same through the Rust-shaped API, with the graph's value index
    // built and every node's type read.
    let before = LIVE.load(Relaxed);
    PEAK.store(before, Relaxed);
    let program = torchspec_export::open(&path)?;
    let typed = program
        .graphs()
        .flat_map(|g| g.nodes())
        .filter(|n| n.value().is_some())
        .count();
    let peak = PEAK.load(Relaxed) - before;
    println!(
        "  torchspec_export::open + every node's type ({typed}): peak heap {:.1} MB ({:.2}x)",
        mb(peak),
        peak as f64 / json as f64
    );
    drop(program);
    if std::env::args().any(|a| a == "--stages") {
        stages(&path)?;
    }
    Ok(())
}

/// Where the peak comes from: the checked text's container ends, the wire
/// types (typed from the text), the graph module, each measured on its own.
fn stages(path: &std::ffi::OsStr) -> Result<(), torchspec_export::Error> {
    use torchspec_export::schema;
    let json = torchspec_export::archive::Pt2Archive::open(path)?.read_program()?;
    let mb = |n: usize| n as f64 / 1e6;
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let doc = torchspec_pyval::pyjson::text::Doc::new(std::str::from_utf8(&json).expect("utf-8"))?;
    println!(
        "  checked text (container ends): live {:.1} MB, peak {:.1} MB",
        mb(LIVE.load(Relaxed) - base),
        mb(PEAK.load(Relaxed) - base)
    );
    drop(doc);
    PEAK.store(LIVE.load(Relaxed), Relaxed);
    let loaded = schema::load_program(&json, schema::Mode::Default)?;
    println!(
        "  wire program: live {:.1} MB, peak {:.1} MB",
        mb(LIVE.load(Relaxed) - base),
        mb(PEAK.load(Relaxed) - base)
    );
    let mid = LIVE.load(Relaxed);
    PEAK.store(mid, Relaxed);
    let gm = torchspec_export::load::load_graph_module(
        &loaded.program,
        torchspec_export::registrations::Registrations::plain(),
    )
    .map_err(torchspec_export::failure::into_error)?;
    println!(
        "  graph module: live {:.1} MB, peak {:.1} MB above the wire program",
        mb(LIVE.load(Relaxed) - mid),
        mb(PEAK.load(Relaxed) - mid)
    );
    drop(gm);
    Ok(())
}
