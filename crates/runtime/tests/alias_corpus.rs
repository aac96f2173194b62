//! The alias corpus: rules apply to the file, not to the name (DESIGN.md §4a).
//!
//! Rows are generated as link shape × tool × how the file is fenced off (a `--deny` rule or
//! `path_scope.deny`): every way of naming a fenced file through an in-root symlink — a
//! relative link, a link to a directory, an absolute link back into the root, a chain of
//! links, a path whose final component is a link to a link, a link whose target climbs with
//! `..` — must be refused for direct tools, and left out (counted) by walking tools, and the
//! fenced content must never appear in any result. Writes through a link to `.git` are refused
//! by `write:.git/**` and by `path_scope.deny = [".git/**"]`. Control rows name an unfenced
//! file the same ways and must succeed, so the corpus cannot pass by refusing everything.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::sync::Arc;

use common::*;
use serde_json::{Value, json};
use tackle_gate::{Effect, Mode, PathScope, Pattern, Policy, Rule, RuleSource, UrlScope};
use tackle_runtime::PolicyGate;
use tackle_tool::DynTool;
use tackle_tools::{
    DeleteFile, EditFile, Glob, Grep, JsonQuery, ListDir, ReadFile, ReadManyFiles, Stat, WriteFile,
};

const SECRET: &str = "{\"secret\": \"SECRET-CONTENT-7f3a\"}\n";
const OPEN: &str = "{\"open\": \"open-content\"}\n";

fn tools() -> Vec<Arc<dyn DynTool>> {
    vec![
        Arc::new(ReadFile::new()),
        Arc::new(ReadManyFiles),
        Arc::new(Stat),
        Arc::new(ListDir),
        Arc::new(Glob),
        Arc::new(Grep),
        Arc::new(JsonQuery),
        Arc::new(WriteFile),
        Arc::new(EditFile),
        Arc::new(DeleteFile),
    ]
}

/// How a directory is fenced off.
#[derive(Clone, Copy, Debug)]
enum Fence {
    /// `--deny read:<dir>/**` and `--deny write:<dir>/**`.
    DenyRule,
    /// `path_scope.deny = ["<dir>/**"]`.
    ScopeDeny,
}

fn policy(fence: Fence, dirs: &[&str]) -> Policy {
    let mut rules = Vec::new();
    let mut scope_deny = Vec::new();
    for dir in dirs {
        match fence {
            Fence::DenyRule => {
                for action in ["read", "write"] {
                    rules.push(Rule::new(
                        Effect::Deny,
                        Pattern::parse(&format!("{action}:{dir}/**")).unwrap(),
                        RuleSource::Flag {
                            flag: "--deny".to_owned(),
                        },
                    ));
                }
            }
            Fence::ScopeDeny => scope_deny.push(format!("{dir}/**")),
        }
    }
    let deny: Vec<&str> = scope_deny.iter().map(String::as_str).collect();
    Policy::new(
        rules,
        // Writes that no rule denies are allowed, so a refusal can only be the fence's.
        Mode::AcceptEdits,
        PathScope::parse(&["**"], &deny).unwrap(),
        UrlScope::default(),
    )
    .unwrap()
}

fn link(root: &Path, target: &str, name: &str) {
    let at = root.join(name);
    std::fs::create_dir_all(at.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, at).unwrap();
}

/// The tree: `fenced/` and `open/` with one file each, and for each of them the same six link
/// shapes, named `<shape>-<dir>`.
fn build(root: &Path) {
    let abs = root.canonicalize().unwrap();
    for dir in ["fenced", "open"] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
        let content = if dir == "fenced" { SECRET } else { OPEN };
        std::fs::write(root.join(format!("{dir}/file.json")), content).unwrap();
        link(
            root,
            &format!("{dir}/file.json"),
            &format!("rel-{dir}.json"),
        );
        link(root, dir, &format!("dirlink-{dir}"));
        let target = abs.join(format!("{dir}/file.json"));
        link(root, target.to_str().unwrap(), &format!("abs-{dir}.json"));
        link(
            root,
            &format!("rel-{dir}.json"),
            &format!("chain2-{dir}.json"),
        );
        link(
            root,
            &format!("chain2-{dir}.json"),
            &format!("chain-{dir}.json"),
        );
        link(
            root,
            &format!("../rel-{dir}.json"),
            &format!("nest/final-{dir}.json"),
        );
        link(root, &format!("../{dir}"), &format!("nest/up-{dir}"));
    }
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(root.join(".git/hooks/pre-commit"), "[core]\n").unwrap();
    link(root, ".git", "gitdir");
}

/// The names of `<dir>/file.json` through each link shape, and of `<dir>` itself.
fn file_names(dir: &str) -> Vec<String> {
    vec![
        format!("rel-{dir}.json"),
        format!("dirlink-{dir}/file.json"),
        format!("abs-{dir}.json"),
        format!("chain-{dir}.json"),
        format!("nest/final-{dir}.json"),
        format!("nest/up-{dir}/file.json"),
    ]
}

fn dir_names(dir: &str) -> Vec<String> {
    vec![format!("dirlink-{dir}"), format!("nest/up-{dir}")]
}

/// A direct call on one file name: its tool and arguments.
fn file_calls(name: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("read_file", json!({ "path": name })),
        ("stat", json!({ "path": name })),
        ("read_many_files", json!({ "paths": [name] })),
        ("json_query", json!({ "path": name, "expression": "." })),
        ("grep", json!({ "pattern": "content", "path": name })),
        ("glob", json!({ "pattern": "*", "path": name })),
        (
            "edit_file",
            json!({ "path": name, "old_string": "content", "new_string": "changed" }),
        ),
        (
            "write_file",
            json!({ "path": name, "content": "overwritten\n" }),
        ),
        ("delete_file", json!({ "path": name })),
    ]
}

/// A walk (or listing) starting at a directory name.
fn dir_calls(name: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("grep", json!({ "pattern": "content", "path": name })),
        ("glob", json!({ "pattern": "*.json", "path": name })),
        (
            "read_many_files",
            json!({ "pattern": "*.json", "path": name }),
        ),
        ("list_dir", json!({ "path": name })),
        ("read_file", json!({ "path": name })),
        (
            "write_file",
            json!({ "path": format!("{name}/new.json"), "content": "new\n" }),
        ),
    ]
}

/// Whether a result let the fenced file through: its content, or its name in a listing.
fn leaked(text: &str) -> bool {
    text.contains("SECRET-CONTENT") || text.contains("file.json")
}

#[tokio::test]
async fn rules_apply_to_the_file_whatever_name_reaches_it() {
    let mut rows = 0;
    for fence in [Fence::DenyRule, Fence::ScopeDeny] {
        // Fenced: every direct call is refused by the gate, before anything runs.
        for name in file_names("fenced") {
            for (tool, args) in file_calls(&name) {
                let h = Harness::gated(
                    tools(),
                    Arc::new(PolicyGate::new(policy(fence, &["fenced"]))),
                );
                build(h.root());
                let r = h.run(vec![call("1", tool, args.clone())]).await;
                let row = format!("{fence:?} {tool} {args}");
                let refused = match code(&r[0]) {
                    Some("permission_denied") => true,
                    // A write never goes through a final symlink: the fs crate refuses it
                    // while staging, which is before the gate and says nothing of the file.
                    Some("not_a_regular_file") => {
                        matches!(tool, "write_file" | "edit_file" | "delete_file")
                            && (!name.contains('/') || name.starts_with("nest/final"))
                    }
                    _ => false,
                };
                assert!(refused, "{row}: {:?} {}", code(&r[0]), r[0].text());
                assert!(!r[0].text().contains("SECRET-CONTENT"), "{row}");
                let on_disk = std::fs::read_to_string(h.root().join("fenced/file.json")).unwrap();
                assert_eq!(on_disk, SECRET, "{row}: the fenced file changed");
                rows += 1;
            }
        }
        // Fenced directories through links: walks and listings are refused or leave the
        // fenced file out; a write beneath is refused.
        for name in dir_names("fenced") {
            for (tool, args) in dir_calls(&name) {
                let h = Harness::gated(
                    tools(),
                    Arc::new(PolicyGate::new(policy(fence, &["fenced"]))),
                );
                build(h.root());
                let r = h.run(vec![call("1", tool, args.clone())]).await;
                let row = format!("{fence:?} {tool} {args}");
                let text = r[0].text();
                match code(&r[0]) {
                    Some("permission_denied") => {}
                    None if matches!(tool, "grep" | "glob" | "read_many_files") => {
                        assert!(!leaked(&text), "{row}: {text}");
                        let meta = r[0].metadata.clone();
                        assert_eq!(meta["excluded_by_scope"], 1, "{row}: {meta}");
                    }
                    // Listing the fenced directory itself shows names only; `<dir>/**` fences
                    // what is inside, as it does for the directory's own name.
                    None if matches!(tool, "list_dir" | "read_file") => {
                        assert!(!text.contains("SECRET-CONTENT"), "{row}: {text}");
                    }
                    other => panic!("{row}: {other:?} {text}"),
                }
                assert!(!h.root().join("fenced/new.json").exists(), "{row}");
                rows += 1;
            }
        }
        // Writes into `.git` through `gitdir → .git`.
        for path in ["gitdir/hooks/pre-commit", "gitdir/config"] {
            let calls = [
                (
                    "write_file",
                    json!({ "path": path, "content": "#!/bin/sh\nid\n" }),
                ),
                (
                    "edit_file",
                    json!({ "path": path, "old_string": "[core]", "new_string": "[core]\nfsmonitor = id" }),
                ),
                ("delete_file", json!({ "path": path })),
            ];
            for (tool, args) in calls {
                let h =
                    Harness::gated(tools(), Arc::new(PolicyGate::new(policy(fence, &[".git"]))));
                build(h.root());
                let r = h.run(vec![call("1", tool, args.clone())]).await;
                let row = format!("{fence:?} {tool} {args}");
                assert_eq!(
                    code(&r[0]),
                    Some("permission_denied"),
                    "{row}: {}",
                    r[0].text()
                );
                for file in [".git/hooks/pre-commit", ".git/config"] {
                    let now = std::fs::read_to_string(h.root().join(file)).unwrap();
                    assert_eq!(now, "[core]\n", "{row}: {file} changed");
                }
                rows += 1;
            }
        }
        // Control: the same shapes onto an unfenced file read and write as usual.
        for name in file_names("open") {
            for (tool, args) in file_calls(&name) {
                let h = Harness::gated(
                    tools(),
                    Arc::new(PolicyGate::new(policy(fence, &["fenced"]))),
                );
                build(h.root());
                let r = h.run(vec![call("1", tool, args.clone())]).await;
                let row = format!("{fence:?} {tool} {args}");
                let allowed = match code(&r[0]) {
                    None => true,
                    // Writes never go through a final symlink; that refusal is the fs crate's,
                    // after the gate allowed the call.
                    Some("not_a_regular_file") => {
                        matches!(tool, "write_file" | "edit_file" | "delete_file")
                    }
                    Some(_) => false,
                };
                assert!(allowed, "{row}: {:?} {}", code(&r[0]), r[0].text());
                rows += 1;
            }
        }
    }
    // 2 fences × (6 names × 9 calls + 2 dirs × 6 calls + 2 paths × 3 calls + 6 × 9 controls).
    assert_eq!(rows, 2 * (54 + 12 + 6 + 54));
}

/// A walk from the root never follows a link into a fenced directory, and the fenced file is
/// found only under its own name, where the rule excludes it.
#[tokio::test]
async fn walks_from_the_root_follow_no_link_into_a_fenced_directory() {
    for fence in [Fence::DenyRule, Fence::ScopeDeny] {
        for (tool, args) in [
            ("grep", json!({ "pattern": "content" })),
            ("glob", json!({ "pattern": "**/*.json" })),
            ("read_many_files", json!({ "pattern": "*.json" })),
        ] {
            let h = Harness::gated(
                tools(),
                Arc::new(PolicyGate::new(policy(fence, &["fenced"]))),
            );
            build(h.root());
            let r = h.run(vec![call("1", tool, args.clone())]).await;
            let row = format!("{fence:?} {tool} {args}");
            let text = r[0].text();
            assert_eq!(code(&r[0]), None, "{row}: {text}");
            assert!(!text.contains("SECRET-CONTENT"), "{row}: {text}");
            assert!(text.contains("open/file.json"), "{row}: {text}");
            assert!(!text.contains("fenced/file.json"), "{row}: {text}");
            assert!(!text.contains("dirlink-fenced"), "{row}: {text}");
            let meta = r[0].metadata.clone();
            assert_eq!(meta["excluded_by_scope"], 1, "{row}: {meta}");
        }
    }
}
