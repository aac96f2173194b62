//! Surveys of a small tree, one call at a time, as an agent makes them: tackle's `grep` and
//! `glob` over 20 files, beside a bare loop over the same files with ripgrep's `ignore` walk
//! and `grep-searcher` (what tackle's grep is built on, with no confinement, gate, ignore-file
//! screening or result metadata). The two are checked to find the same files before timing.
//!
//! A parallel walk ends no sooner than about a millisecond after its work (an idle walker
//! thread sleeps a millisecond at a time), so a survey of a few files is dominated by how it
//! goes parallel, not by its work; this benchmark shows that cost (see `tackle_tools`'s
//! `walk_share`).
//!
//! Run: `cargo bench -p tackle-bench --bench survey_small`

use std::path::Path;
use std::time::{Duration, Instant};

use grep_regex::RegexMatcher;
use grep_searcher::sinks::UTF8;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use serde_json::json;
use tackle_bench::{Stats, direct, ratio};
use tackle_tools::{Glob, Grep};

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

/// Calls per sample, and samples per side.
const CALLS: usize = 200;
const SAMPLES: usize = 31;

fn main() -> BenchResult<()> {
    if std::env::args()
        .skip(1)
        .any(|arg| !arg.starts_with('-') && !"survey_small".contains(arg.as_str()))
    {
        return Ok(());
    }
    let project = tempfile::tempdir()?;
    let src = project.path().join("src");
    std::fs::create_dir(&src)?;
    for i in 0..20 {
        let filler = "let x = 1; // filler filler filler filler filler filler\n".repeat(30);
        std::fs::write(
            src.join(format!("m{i}.rs")),
            format!("// module {i}\nfn helper() {{}}\n{filler}fn main() {{}}\n"),
        )?;
    }
    let root = project.path().canonicalize()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    println!("20 files of 2 KiB in src/, {CALLS} calls per sample, one at a time");

    let grep_args = json!({"pattern": "fn main", "path": "src"});
    let tackle_grep = || -> BenchResult<u64> {
        let done = direct::call(&rt, &Grep, &root, grep_args.clone())?;
        Ok(done.metadata["total_matches"].as_u64().unwrap_or(0))
    };
    let glob_args = json!({"pattern": "*.rs", "path": "src"});
    let tackle_glob = || -> BenchResult<u64> {
        let done = direct::call(&rt, &Glob, &root, glob_args.clone())?;
        Ok(done.metadata["files"]
            .as_array()
            .map_or(0, |f| f.len() as u64))
    };
    let bare_grep = || bare_grep(&root);
    let bare_list = || bare_list(&root);
    type Side<'a> = &'a dyn Fn() -> BenchResult<u64>;
    let sides: [(&str, Side<'_>, Side<'_>); 2] = [
        ("grep `fn main`", &tackle_grep, &bare_grep),
        ("glob `*.rs`", &tackle_glob, &bare_list),
    ];
    let mut worst: f64 = 0.0;
    for (name, tackle, bare) in sides {
        let (ours, theirs) = (tackle()?, bare()?);
        if ours != 20 || theirs != 20 {
            return Err(format!("{name}: tackle found {ours}, the bare walk {theirs}").into());
        }
        let mut t = Vec::new();
        let mut b = Vec::new();
        for _ in 0..SAMPLES {
            t.push(per_call(tackle)?);
            b.push(per_call(bare)?);
        }
        let (t, b) = (Stats::of(&mut t), Stats::of(&mut b));
        let q = ratio(t.median, b.median);
        worst = worst.max(q);
        println!("{name}");
        println!("  tackle        {t}");
        println!("  bare walk     {b}");
        println!("  ratio (median) {q:.2}x");
    }
    println!("worst ratio {worst:.2}x");
    Ok(())
}

/// The mean time of one call over [`CALLS`] calls.
fn per_call(f: &dyn Fn() -> BenchResult<u64>) -> BenchResult<Duration> {
    let start = Instant::now();
    for _ in 0..CALLS {
        std::hint::black_box(f()?);
    }
    Ok(start.elapsed() / CALLS as u32)
}

/// Matching lines under `src`, searched file by file on this thread.
fn bare_grep(root: &Path) -> BenchResult<u64> {
    let matcher = RegexMatcher::new("fn main")?;
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\0'))
        .build();
    let mut found = 0;
    for entry in ignore::WalkBuilder::new(root.join("src")).build().flatten() {
        if entry.file_type().is_some_and(|t| t.is_file()) {
            searcher.search_path(
                &matcher,
                entry.path(),
                UTF8(|_, _| {
                    found += 1;
                    Ok(true)
                }),
            )?;
        }
    }
    Ok(found)
}

/// Files under `src` named `*.rs`.
fn bare_list(root: &Path) -> BenchResult<u64> {
    let mut found = 0;
    for entry in ignore::WalkBuilder::new(root.join("src")).build().flatten() {
        if entry.file_type().is_some_and(|t| t.is_file())
            && entry.path().extension().is_some_and(|e| e == "rs")
        {
            found += 1;
        }
    }
    Ok(found)
}
