//! `grep` against `rg --json` on the vendored sources of our dependencies, four patterns
//! (literal, case-insensitive, alternation, a character class). Both warm; the result sets are
//! checked equal (match count, and the first 1000 matches sorted) before timing.
//!
//! tackle is measured through the tool's own `prepare` + `execute` (no runtime layers: no
//! event log, no artifact capture), in process; rg as a subprocess writing JSON to a pipe.
//!
//! Run: `cargo bench -p tackle-bench --bench grep_vs_rg`

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use tackle_bench::{Stats, corpus, direct, ratio};
use tackle_tools::Grep;

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

const RUNS: usize = 31;

fn main() -> BenchResult<()> {
    if std::env::args()
        .skip(1)
        .any(|arg| !arg.starts_with('-') && !"grep_vs_rg".contains(arg.as_str()))
    {
        return Ok(());
    }
    let dir = corpus::vendored()?.canonicalize()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    println!("corpus {}", dir.display());
    let cases: [(&str, bool, &str); 4] = [
        ("literal", false, "unsafe impl"),
        ("case-insensitive", true, "todo"),
        ("alternation", false, "unreachable!|unimplemented!"),
        ("class", false, "fn [a-z_]+_mut\\("),
    ];
    let mut worst: f64 = 0.0;
    for (name, ci, pattern) in cases {
        let args = json!({"pattern": pattern, "case_insensitive": ci});
        let run_tackle = || -> BenchResult<serde_json::Value> {
            Ok(direct::call(&rt, &Grep, &dir, args.clone())?.metadata)
        };
        let run_rg = || -> BenchResult<Vec<u8>> {
            let mut cmd = Command::new("rg");
            cmd.args([
                "--json",
                "--no-config",
                "-g",
                "!node_modules/",
                "-g",
                "!vendor/",
            ]);
            if ci {
                cmd.arg("-i");
            }
            let out = cmd
                .arg("-e")
                .arg(pattern)
                .arg(".")
                .current_dir(&dir)
                .output()?;
            Ok(out.stdout)
        };
        // Same result set.
        let ours = run_tackle()?;
        let theirs = rg_matches(&run_rg()?);
        let total = ours["total_matches"].as_u64().unwrap_or(0) as usize;
        let shown: Vec<(String, u64)> = ours["matches"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|m| {
                        (
                            m["path"].as_str().unwrap_or("").to_owned(),
                            m["line"].as_u64().unwrap_or(0),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        if total != theirs.len() || shown[..] != theirs[..shown.len()] {
            return Err(format!(
                "{name}: result sets differ: tackle {total} matches, rg {}",
                theirs.len()
            )
            .into());
        }
        let mut t = Vec::new();
        let mut r = Vec::new();
        for _ in 0..RUNS {
            t.push(time(|| run_tackle().map(|_| ()))?);
            r.push(time(|| run_rg().map(|_| ()))?);
        }
        let (t, r) = (Stats::of(&mut t), Stats::of(&mut r));
        let q = ratio(t.median, r.median);
        worst = worst.max(q);
        println!("{name:<17} {pattern:<28} {total:>6} matches");
        println!("  tackle grep   {t}");
        println!("  rg --json     {r}");
        println!("  ratio (median) {q:.2}x");
    }
    println!("worst ratio {worst:.2}x (target <= 1.10x)");
    Ok(())
}

fn time(mut f: impl FnMut() -> BenchResult<()>) -> BenchResult<Duration> {
    let start = Instant::now();
    f()?;
    Ok(start.elapsed())
}

/// (path, line) of every match in rg's JSON, sorted.
fn rg_matches(json: &[u8]) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = json
        .split(|&b| b == b'\n')
        .filter_map(|l| serde_json::from_slice::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "match")
        .map(|v| {
            let p = v["data"]["path"]["text"].as_str().unwrap_or("");
            (
                Path::new(p.trim_start_matches("./"))
                    .to_string_lossy()
                    .into_owned(),
                v["data"]["line_number"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    out.sort();
    out
}
