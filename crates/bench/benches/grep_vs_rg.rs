//! `grep` against `rg --json` on the vendored sources of our dependencies, four patterns
//! (literal, case-insensitive, alternation, a character class). Both warm; the result sets are
//! checked equal (match count, and the first 1000 matches sorted) before timing.
//!
//! tackle is measured three ways ([`tackle_bench::layers`]), each against the same rg process
//! writing JSON to a pipe, interleaved run by run: the tool alone in process (`prepare` +
//! `execute`); one call through the runtime with the project's catalog and gate (the per-file
//! read check, retention of the matches, the call's durable log records), as `tackle run` and
//! `serve` pay it; and `tackle call grep` as a process of the release binary.
//!
//! Run: `cargo bench -p tackle-bench --bench grep_vs_rg` (`TACKLE_BENCH_RUNS`: runs per
//! measurement, default 21)

use serde_json::json;
use std::path::Path;
use tackle_bench::layers::{InRuntime, process_call, three_ways};
use tackle_bench::{corpus, direct, release};
use tackle_tools::Grep;

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> BenchResult<()> {
    if std::env::args()
        .skip(1)
        .any(|arg| !arg.starts_with('-') && !"grep_vs_rg".contains(arg.as_str()))
    {
        return Ok(());
    }
    let runs: usize = std::env::var("TACKLE_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(21);
    let tackle = release::release_tackle()?;
    let dir = corpus::vendored()?.canonicalize()?;
    let layered = InRuntime::open(&dir)?;
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
    let mut worst = [0.0f64; 3];
    for (name, ci, pattern) in cases {
        let args = json!({"pattern": pattern, "case_insensitive": ci});
        let run_tackle = || -> BenchResult<serde_json::Value> {
            Ok(direct::call(&rt, &Grep, &dir, args.clone())?.metadata)
        };
        let run_rg = || -> BenchResult<Vec<u8>> {
            let mut cmd = tackle_bench::user_env::command("rg");
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
        println!("{name:<17} {pattern:<28} {total:>6} matches");
        let ratios = three_ways(
            runs,
            "  ",
            "rg",
            [
                &mut || run_tackle().map(|_| ()),
                &mut || layered.call("grep", &args).map(|_| ()),
                &mut || process_call(&tackle, &dir, "grep", &args).map(|_| ()),
            ],
            &mut || run_rg().map(|_| ()),
        )?;
        for (w, q) in worst.iter_mut().zip(ratios) {
            *w = w.max(q);
        }
    }
    println!(
        "worst ratio (median, target <= 1.10x): tool {:.2}x, runtime {:.2}x, process {:.2}x",
        worst[0], worst[1], worst[2]
    );
    Ok(())
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
