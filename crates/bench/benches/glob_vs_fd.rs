//! `glob` against `fd -t f -g` on two corpora: the vendored sources of our dependencies (about
//! 15,000 `.rs` files) and a small project of 20 files, both honouring `.gitignore` and skipping
//! hidden and vendored directories. Both warm; the result sets are checked equal before timing
//! (for a pattern over the result cap, the totals).
//!
//! tackle is measured three ways ([`tackle_bench::layers`]), each against the same fd process,
//! interleaved run by run: the tool alone in process (`prepare` + `execute`); one call through
//! the runtime with the project's catalog and gate (the per-file read check, retention, the
//! call's durable log records), as `tackle run` and `serve` pay it; and `tackle call glob` as a
//! process of the release binary, as a person comparing the two commands measures them.
//!
//! Run: `cargo bench -p tackle-bench --bench glob_vs_fd` (`TACKLE_BENCH_RUNS`: runs per
//! measurement on the vendored corpus, default 21, ten times that on the small one;
//! `TACKLE_BENCH_CORPORA=small`: one corpus). Both processes run with
//! the environment a shell gives them ([`tackle_bench::user_env`]).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_json::json;
use tackle_bench::layers::{InRuntime, process_call, three_ways};
use tackle_bench::{corpus, direct, release};
use tackle_tools::Glob;
use tackle_tools::glob::MAX_GLOB_RESULTS;

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

fn fd() -> &'static str {
    if Command::new("fd").arg("--version").output().is_ok() {
        "fd"
    } else {
        "fdfind"
    }
}

fn run_fd(dir: &Path, pattern: &str) -> BenchResult<Vec<u8>> {
    let out = tackle_bench::user_env::command(fd())
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
        .current_dir(dir)
        .output()?;
    Ok(out.stdout)
}

fn main() -> BenchResult<()> {
    if std::env::args()
        .skip(1)
        .any(|arg| !arg.starts_with('-') && !"glob_vs_fd".contains(arg.as_str()))
    {
        return Ok(());
    }
    let runs: usize = std::env::var("TACKLE_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(21);
    let tackle = release::release_tackle()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let mut worst = [0.0f64; 3];
    let corpora = [
        (
            "vendored",
            corpus::vendored()?.canonicalize()?,
            &["*.rs", "*.toml", "lib.rs", "*.md"][..],
            runs,
        ),
        (
            "small",
            corpus::small()?.canonicalize()?,
            &["*.rs", "*.md"][..],
            // A run there takes milliseconds, and both processes' times are mostly start-up,
            // which the machine's noise moves by as much: ten times the runs.
            runs * 10,
        ),
    ];
    // `TACKLE_BENCH_CORPORA=small` (or `vendored`): only those, comma-separated.
    let chosen = std::env::var("TACKLE_BENCH_CORPORA").ok();
    for (name, dir, patterns, runs) in corpora {
        if chosen
            .as_deref()
            .is_some_and(|c| !c.split(',').any(|n| n == name))
        {
            continue;
        }
        println!("corpus {name}: {}", dir.display());
        let layered = InRuntime::open(&dir)?;
        for &pattern in patterns {
            let args = json!({"pattern": pattern});
            let direct_call = || -> BenchResult<serde_json::Value> {
                Ok(direct::call(&rt, &Glob, &dir, args.clone())?.metadata)
            };
            check_same(&direct_call()?, &run_fd(&dir, pattern)?, pattern)?;
            println!("  {pattern}");
            let ratios = three_ways(
                runs,
                "    ",
                "fd",
                [
                    &mut || direct_call().map(|_| ()),
                    &mut || layered.call("glob", &args).map(|_| ()),
                    &mut || process_call(&tackle, &dir, "glob", &args).map(|_| ()),
                ],
                &mut || run_fd(&dir, pattern).map(|_| ()),
            )?;
            for (w, q) in worst.iter_mut().zip(ratios) {
                *w = w.max(q);
            }
        }
    }
    println!(
        "worst ratio (median, target <= 1.00x): tool {:.2}x, runtime {:.2}x, process {:.2}x",
        worst[0], worst[1], worst[2]
    );
    Ok(())
}

/// Fails unless tackle's result and fd's name the same files (for a pattern over the result
/// cap, the same number of them).
fn check_same(metadata: &serde_json::Value, fd_out: &[u8], pattern: &str) -> BenchResult<()> {
    let theirs: BTreeSet<String> = String::from_utf8_lossy(fd_out)
        .lines()
        .map(|l| l.trim_start_matches("./").to_owned())
        .collect();
    let total = metadata["total"].as_u64().unwrap_or(0) as usize;
    if total > MAX_GLOB_RESULTS {
        if total != theirs.len() {
            return Err(
                format!("{pattern}: tackle found {total} files, fd {}", theirs.len()).into(),
            );
        }
        return Ok(());
    }
    let ours: BTreeSet<String> = metadata["files"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
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
    Ok(())
}
