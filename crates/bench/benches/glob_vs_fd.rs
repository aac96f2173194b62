//! `glob` against `fd -t f -g` on the vendored sources of our dependencies, both honouring
//! `.gitignore` and skipping hidden and vendored directories. Both warm; the result sets are
//! checked equal before timing.
//!
//! tackle is measured through the tool's own `prepare` + `execute` (no runtime layers), in
//! process; fd as a subprocess writing to a pipe.
//!
//! Run: `cargo bench -p tackle-bench --bench glob_vs_fd`

use std::collections::BTreeSet;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use tackle_bench::{Stats, corpus, direct, ratio};
use tackle_tools::Glob;

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

const RUNS: usize = 31;

fn fd() -> &'static str {
    if Command::new("fd").arg("--version").output().is_ok() {
        "fd"
    } else {
        "fdfind"
    }
}

fn main() -> BenchResult<()> {
    if std::env::args()
        .skip(1)
        .any(|arg| !arg.starts_with('-') && !"glob_vs_fd".contains(arg.as_str()))
    {
        return Ok(());
    }
    let dir = corpus::vendored()?.canonicalize()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    println!("corpus {}", dir.display());
    let mut worst: f64 = 0.0;
    // Patterns whose matches fit under the result cap, so both list the same set.
    for pattern in ["*.toml", "lib.rs", "*.md"] {
        let run_tackle = || -> BenchResult<serde_json::Value> {
            Ok(direct::call(&rt, &Glob, &dir, json!({"pattern": pattern}))?.metadata)
        };
        let run_fd = || -> BenchResult<Vec<u8>> {
            let out = Command::new(fd())
                .args([
                    "-t",
                    "f",
                    "-g",
                    pattern,
                    "-E",
                    "node_modules",
                    "-E",
                    "vendor",
                ])
                .current_dir(&dir)
                .output()?;
            Ok(out.stdout)
        };
        let ours: BTreeSet<String> = run_tackle()?["files"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|f| f.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let fd_out = run_fd()?;
        let theirs: BTreeSet<String> = String::from_utf8_lossy(&fd_out)
            .lines()
            .map(|l| l.trim_start_matches("./").to_owned())
            .collect();
        if ours != theirs {
            let only_ours: Vec<_> = ours.difference(&theirs).take(5).collect();
            let only_fd: Vec<_> = theirs.difference(&ours).take(5).collect();
            return Err(format!(
                "{pattern}: result sets differ ({} vs {}): only tackle {only_ours:?}, only fd {only_fd:?}",
                ours.len(),
                theirs.len()
            )
            .into());
        }
        let mut t = Vec::new();
        let mut f = Vec::new();
        for _ in 0..RUNS {
            t.push(time(|| run_tackle().map(|_| ()))?);
            f.push(time(|| run_fd().map(|_| ()))?);
        }
        let (t, f) = (Stats::of(&mut t), Stats::of(&mut f));
        let q = ratio(t.median, f.median);
        worst = worst.max(q);
        println!("{pattern:<8} {:>6} files", ours.len());
        println!("  tackle glob   {t}");
        println!("  fd -g         {f}");
        println!("  ratio (median) {q:.2}x");
    }
    println!("worst ratio {worst:.2}x (target <= 1.00x)");
    Ok(())
}

fn time(mut f: impl FnMut() -> BenchResult<()>) -> BenchResult<Duration> {
    let start = Instant::now();
    f()?;
    Ok(start.elapsed())
}
