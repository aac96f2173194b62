//! Hostile ignore files cannot crash or stall the walking tools (DESIGN.md §4a). One row per
//! hostile file × where it sits × tool: a FIFO, a link to `/dev/zero`, a link to a file
//! outside the root (whose `*` would hide everything if it were read), a file over the size
//! cap (likewise all `*`), a directory, a dangling link — as `.gitignore`, `.ignore`,
//! `sub/.gitignore` and `.git/info/exclude`, walked by glob, grep, read_many_files with a
//! pattern, and listed by list_dir. Each must finish within the guard with the visible files
//! found, and report the ignore file it did not use (a dangling link is simply absent).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::sync::Arc;

use common::*;
use serde_json::{Value, json};
use tackle_tools::{Glob, Grep, ListDir, ReadManyFiles};

#[derive(Clone, Copy, Debug)]
enum Hostile {
    Fifo,
    DevZero,
    Outside,
    Huge,
    Directory,
    Dangling,
}

const HOSTILE: [Hostile; 6] = [
    Hostile::Fifo,
    Hostile::DevZero,
    Hostile::Outside,
    Hostile::Huge,
    Hostile::Directory,
    Hostile::Dangling,
];

const PLACES: [&str; 4] = [
    ".gitignore",
    ".ignore",
    "sub/.gitignore",
    ".git/info/exclude",
];

impl Hostile {
    fn place(self, root: &Path, outside: &Path, rel: &str) {
        let at = root.join(rel);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        match self {
            Hostile::Fifo => {
                let made = std::process::Command::new("mkfifo")
                    .arg(&at)
                    .status()
                    .unwrap();
                assert!(made.success(), "mkfifo {}", at.display());
            }
            Hostile::DevZero => std::os::unix::fs::symlink("/dev/zero", &at).unwrap(),
            Hostile::Outside => {
                std::fs::write(outside.join("ignore"), "*\n").unwrap();
                std::os::unix::fs::symlink(outside.join("ignore"), &at).unwrap();
            }
            Hostile::Huge => {
                let line = "*\n".repeat(600 * 1024);
                std::fs::write(&at, line).unwrap();
            }
            Hostile::Directory => std::fs::create_dir(&at).unwrap(),
            Hostile::Dangling => std::os::unix::fs::symlink("no-such-file", &at).unwrap(),
        }
    }

    fn reported(self) -> bool {
        !matches!(self, Hostile::Dangling)
    }
}

fn calls() -> Vec<(&'static str, Value)> {
    vec![
        ("glob", json!({ "pattern": "*.rs" })),
        ("grep", json!({ "pattern": "visible" })),
        ("read_many_files", json!({ "pattern": "*.rs" })),
        ("list_dir", json!({ "path": "." })),
        ("list_dir", json!({ "path": "sub" })),
    ]
}

#[tokio::test]
async fn hostile_ignore_files_neither_stall_nor_hide_nor_leak() {
    let mut rows = 0;
    for hostile in HOSTILE {
        for place in PLACES {
            for (tool, args) in calls() {
                let h = Harness::new(
                    vec![
                        Arc::new(Glob),
                        Arc::new(Grep),
                        Arc::new(ReadManyFiles),
                        Arc::new(ListDir),
                    ],
                    WIDE,
                    LONG_TIMEOUT,
                );
                let outside = tempfile::tempdir().unwrap();
                std::fs::create_dir_all(h.root().join(".git")).unwrap();
                std::fs::write(h.root().join("top.rs"), "// visible top\n").unwrap();
                std::fs::create_dir_all(h.root().join("sub")).unwrap();
                std::fs::write(h.root().join("sub/inner.rs"), "// visible inner\n").unwrap();
                hostile.place(h.root(), outside.path(), place);
                let row = format!("{hostile:?} at {place}: {tool} {args}");
                let r = guarded(h.run(vec![call("1", tool, args.clone())])).await;
                let text = r[0].text();
                assert_eq!(code(&r[0]), None, "{row}: {text}");
                if tool == "list_dir" {
                    // Listing shows names, never reads an ignore file.
                    let want = if args["path"] == "sub" {
                        "inner.rs"
                    } else {
                        "top.rs"
                    };
                    assert!(text.contains(want), "{row}: {text}");
                } else {
                    assert!(text.contains("top.rs"), "{row}: {text}");
                    assert!(text.contains("sub/inner.rs"), "{row}: {text}");
                    let skipped = r[0].metadata["skipped_ignore_files"].as_array().cloned();
                    let skipped = skipped.unwrap_or_default();
                    if hostile.reported() {
                        assert_eq!(skipped.len(), 1, "{row}: {skipped:?}");
                        assert_eq!(skipped[0]["path"], place, "{row}");
                        assert!(text.contains("ignore file not used"), "{row}: {text}");
                    } else {
                        assert!(skipped.is_empty(), "{row}: {skipped:?}");
                    }
                }
                rows += 1;
            }
        }
    }
    assert_eq!(rows, HOSTILE.len() * PLACES.len() * calls().len());
}
