//! `edit_file` replacing one unique string in a 500 KiB file, against `sed -i` doing the same
//! replacement. The file is restored before every run (untimed); the results are checked
//! byte-equal.
//!
//! tackle is measured through the tool's own `prepare` + `execute` (read, match, diff, stage
//! against the content hash, then commit: temp file, fsync, hash re-check, rename, directory
//! fsync), in process; sed as a subprocess (no fsync).
//!
//! Run: `cargo bench -p tackle-bench --bench edit_vs_sed`

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use tackle_bench::{Stats, direct, ratio};
use tackle_tools::EditFile;

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

const RUNS: usize = 30;
const SIZE: usize = 500 * 1024;

fn main() -> BenchResult<()> {
    if std::env::args()
        .skip(1)
        .any(|arg| !arg.starts_with('-') && !"edit_vs_sed".contains(arg.as_str()))
    {
        return Ok(());
    }
    let tmp = tempfile::tempdir()?;
    let root = tmp.path().canonicalize()?;
    let file = root.join("big.rs");
    let mut original = String::with_capacity(SIZE + 100);
    let mut i = 0;
    while original.len() < SIZE {
        if i == 6000 {
            original.push_str("    let marker = OLD_UNIQUE_NAME;\n");
        }
        original.push_str(&format!("    let value_{i} = compute({i}, \"text\");\n"));
        i += 1;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let args = json!({"path": "big.rs", "old_string": "OLD_UNIQUE_NAME", "new_string": "NEW_NAME"});
    let run_tackle = || -> BenchResult<()> {
        direct::call(&rt, &EditFile, &root, args.clone())?;
        Ok(())
    };
    let run_sed = || -> BenchResult<()> {
        let status = Command::new("sed")
            .args(["-i", "s/OLD_UNIQUE_NAME/NEW_NAME/"])
            .arg(&file)
            .status()?;
        if !status.success() {
            return Err("sed failed".into());
        }
        Ok(())
    };
    std::fs::write(&file, &original)?;
    run_tackle()?;
    let ours = std::fs::read(&file)?;
    std::fs::write(&file, &original)?;
    run_sed()?;
    if std::fs::read(&file)? != ours {
        return Err("edit_file and sed produced different files".into());
    }
    let mut t = Vec::new();
    let mut s = Vec::new();
    for _ in 0..RUNS {
        std::fs::write(&file, &original)?;
        t.push(time(run_tackle)?);
        std::fs::write(&file, &original)?;
        s.push(time(run_sed)?);
    }
    let (t, s) = (Stats::of(&mut t), Stats::of(&mut s));
    println!("file {} KiB, one replacement", original.len() / 1024);
    println!("  tackle edit_file {t}");
    println!("  sed -i           {s}");
    println!(
        "  ratio (median) {:.2}x (target <= 1.00x)",
        ratio(t.median, s.median)
    );
    Ok(())
}

fn time(f: impl Fn() -> BenchResult<()>) -> BenchResult<Duration> {
    let start = Instant::now();
    f()?;
    Ok(start.elapsed())
}
