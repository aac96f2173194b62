//! The path-escape corpus: every case is run through read, write (stage and commit), delete,
//! list and stat, and afterwards everything outside the root must be byte-identical with no
//! new files. Every operation runs on a thread with a timeout, so a blocking open (a FIFO)
//! fails the test instead of hanging it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::mpsc;
use std::time::Duration;

use common::{Fixture, SECRET, mkfifo};
use tackle_fs::{FsError, ReadOptions, ReadTarget, Root};

/// What one operation must do.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// Fail with this code.
    Code(&'static str),
    /// Fail somehow (the point of the case is that nothing escapes, not the exact error).
    Fails,
    /// Succeed.
    Ok,
}

use Expect::{Code, Fails, Ok};

const OUT: Expect = Code("path_outside_root");
const INVALID: Expect = Code("invalid_path");

struct Case {
    name: &'static str,
    /// Builds the case inside the fixture and returns the path to pass.
    setup: fn(&Fixture) -> String,
    read: Expect,
    write: Expect,
    delete: Expect,
    list: Expect,
    stat: Expect,
}

/// The same expectation for all five operations.
const fn all(name: &'static str, setup: fn(&Fixture) -> String, e: Expect) -> Case {
    Case {
        name,
        setup,
        read: e,
        write: e,
        delete: e,
        list: e,
        stat: e,
    }
}

fn corpus() -> Vec<Case> {
    vec![
        all("parent", |_| "../outside/secret".into(), OUT),
        all("parent_of_root", |_| "..".into(), OUT),
        all(
            "climb_after_descent",
            |_| "src/../../outside/secret".into(),
            OUT,
        ),
        all(
            "deep_parent_chain",
            |_| "../".repeat(200) + "outside/secret",
            OUT,
        ),
        all(
            "absolute_outside",
            |f| f.outside.join("secret").display().to_string(),
            OUT,
        ),
        all(
            "absolute_through_root_and_up",
            |f| format!("{}/../outside/secret", f.root.display()),
            OUT,
        ),
        all("etc_passwd", |_| "/etc/passwd".into(), OUT),
        all(
            "proc_self_root",
            |f| format!("/proc/self/root{}", f.outside.join("secret").display()),
            OUT,
        ),
        all(
            "prefix_sibling",
            |f| format!("{}-evil/x", f.root.display()),
            OUT,
        ),
        all(
            "absolute_symlink_out",
            |f| {
                f.symlink(f.outside.join("secret"), "link_abs");
                "link_abs".into()
            },
            OUT,
        ),
        all(
            "relative_symlink_out",
            |f| {
                f.symlink("../outside/secret", "link_rel");
                "link_rel".into()
            },
            OUT,
        ),
        all(
            "nested_relative_symlink_out",
            |f| {
                f.symlink("../../../outside/secret", "src/deep/link");
                "src/deep/link".into()
            },
            OUT,
        ),
        all(
            "chain_ending_outside",
            |f| {
                f.symlink("chain2", "chain1");
                f.symlink("src/chain3", "chain2");
                f.symlink("../../outside/secret", "src/chain3");
                "chain1".into()
            },
            OUT,
        ),
        all(
            "magic_link_proc_self_root",
            |f| {
                f.symlink(
                    format!("/proc/self/root{}", f.outside.join("secret").display()),
                    "magic",
                );
                "magic".into()
            },
            OUT,
        ),
        all(
            "magic_link_proc_self_cwd",
            |f| {
                f.symlink("/proc/self/cwd", "cwd");
                "cwd".into()
            },
            OUT,
        ),
        all(
            "dangling_relative_link_as_create_target",
            |f| {
                f.symlink("../outside/created", "dangling");
                "dangling".into()
            },
            OUT,
        ),
        all(
            "dangling_absolute_link_as_create_target",
            |f| {
                f.symlink(f.outside.join("created"), "dangling_abs");
                "dangling_abs".into()
            },
            OUT,
        ),
        all(
            "dangling_link_into_missing_outside_dir",
            |f| {
                f.symlink(f.outside.join("newdir/created"), "dangling_deep");
                "dangling_deep".into()
            },
            OUT,
        ),
        all(
            "directory_symlink_mid_path_existing",
            |f| {
                f.symlink(&f.outside, "linkdir");
                "linkdir/secret".into()
            },
            OUT,
        ),
        all(
            "directory_symlink_mid_path_new_file",
            |f| {
                f.symlink(&f.outside, "linkdir");
                "linkdir/created".into()
            },
            OUT,
        ),
        all(
            "directory_symlink_mid_path_new_subdir",
            |f| {
                f.symlink("../outside", "linkdir");
                "linkdir/newdir/created".into()
            },
            OUT,
        ),
        all(
            "directory_symlink_itself",
            |f| {
                f.symlink("../outside", "linkdir");
                "linkdir".into()
            },
            OUT,
        ),
        all(
            "symlink_to_fifo_outside",
            |f| {
                mkfifo(&f.outside.join("fifo"));
                f.symlink("../outside/fifo", "fifolink");
                "fifolink".into()
            },
            OUT,
        ),
        Case {
            name: "self_loop_link",
            setup: |f| {
                f.symlink("loop", "loop");
                "loop".into()
            },
            read: Fails,
            write: Code("not_a_regular_file"),
            delete: Code("not_a_regular_file"),
            list: Fails,
            stat: Ok,
        },
        Case {
            name: "hard_link_to_outside_file",
            setup: |f| {
                std::fs::hard_link(f.outside.join("secret"), f.root.join("hard")).unwrap();
                "hard".into()
            },
            read: Code("hard_linked"),
            write: Code("hard_linked"),
            delete: Code("hard_linked"),
            list: Code("not_a_directory"),
            stat: Ok,
        },
        Case {
            name: "fifo_inside",
            setup: |f| {
                mkfifo(&f.root.join("pipe"));
                "pipe".into()
            },
            read: Code("not_a_regular_file"),
            write: Code("not_a_regular_file"),
            delete: Code("not_a_regular_file"),
            list: Code("not_a_directory"),
            stat: Ok,
        },
        all("nul_byte", |_| "src/a\0.txt".into(), INVALID),
        all(
            "nul_byte_after_escape",
            |_| "../outside/secret\0".into(),
            INVALID,
        ),
        all("empty", |_| String::new(), INVALID),
        all("component_256_bytes", |_| "x".repeat(256), INVALID),
        all(
            "component_256_bytes_nested",
            |_| format!("src/{}", "y".repeat(256)),
            INVALID,
        ),
        all("path_over_4096_bytes", |_| "a/".repeat(2049), INVALID),
    ]
}

type Outcome = Result<(), (&'static str, String)>;
type Op = fn(&Root, &str) -> Outcome;

fn outcome<T>(r: Result<T, FsError>) -> Outcome {
    r.map(|_| ()).map_err(|e| (e.code(), e.to_string()))
}

fn read(root: &Root, input: &str) -> Outcome {
    let rel = root.resolve(input).map_err(|e| (e.code(), e.to_string()))?;
    outcome(root.open_read(&rel, ReadOptions::default()))
}

fn write(root: &Root, input: &str) -> Outcome {
    let rel = root.resolve(input).map_err(|e| (e.code(), e.to_string()))?;
    let staged = root
        .stage_write(&rel, b"OVERWRITTEN\n".to_vec())
        .map_err(|e| (e.code(), e.to_string()))?;
    outcome(root.commit(staged))
}

fn delete(root: &Root, input: &str) -> Outcome {
    let rel = root.resolve(input).map_err(|e| (e.code(), e.to_string()))?;
    let staged = root
        .stage_delete(&rel)
        .map_err(|e| (e.code(), e.to_string()))?;
    outcome(root.commit_delete(staged))
}

fn list(root: &Root, input: &str) -> Outcome {
    let rel = root.resolve(input).map_err(|e| (e.code(), e.to_string()))?;
    outcome(root.read_dir(&rel))
}

fn stat(root: &Root, input: &str) -> Outcome {
    let rel = root.resolve(input).map_err(|e| (e.code(), e.to_string()))?;
    outcome(root.metadata(&rel))
}

/// Runs `op` on its own thread; a blocked open fails the test after the timeout.
fn guarded(fx: &Fixture, input: &str, op: Op) -> Outcome {
    let root = fx.root();
    let input = input.to_owned();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(op(&root, &input));
    });
    rx.recv_timeout(Duration::from_secs(10))
        .expect("the operation blocked for 10 s")
}

#[test]
fn every_escape_is_refused_and_nothing_outside_changes() {
    let mut failures = Vec::new();
    for case in corpus() {
        let fx = Fixture::new();
        let input = (case.setup)(&fx);
        let before = fx.snapshot_outside();
        let ops: [(&str, Op, Expect); 5] = [
            ("read", read, case.read),
            ("write", write, case.write),
            ("delete", delete, case.delete),
            ("list", list, case.list),
            ("stat", stat, case.stat),
        ];
        for (op_name, op, expect) in ops {
            let got = guarded(&fx, &input, op);
            let fine = match (expect, &got) {
                (Code(code), Err((got_code, _))) => code == *got_code,
                (Fails, Err(_)) => true,
                (Ok, Result::Ok(())) => true,
                _ => false,
            };
            if !fine {
                failures.push(format!(
                    "{} / {op_name}: expected {expect:?}, got {got:?}",
                    case.name
                ));
            }
            let after = fx.snapshot_outside();
            if after != before {
                failures.push(format!(
                    "{} / {op_name}: the outside changed\nbefore: {before:#?}\nafter: {after:#?}",
                    case.name
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn hard_linked_read_is_allowed_only_when_asked() {
    let fx = Fixture::new();
    std::fs::hard_link(fx.outside.join("secret"), fx.root.join("hard")).unwrap();
    let root = fx.root();
    let rel = root.resolve("hard").unwrap();
    let refused = root.open_read(&rel, ReadOptions::default()).unwrap_err();
    assert_eq!(refused.code(), "hard_linked");
    assert!(refused.to_string().contains("2 hard links"), "{refused}");
    let allowed = root
        .open_read(
            &rel,
            ReadOptions {
                allow_hardlinked: true,
            },
        )
        .unwrap();
    let ReadTarget::File { file, meta } = allowed else {
        panic!("a file was expected");
    };
    assert_eq!(meta.len(), SECRET.len() as u64);
    let mut text = Vec::new();
    std::io::Read::read_to_end(&mut &file, &mut text).unwrap();
    assert_eq!(text, SECRET);
    // Writing is never allowed, whatever the read options.
    let e = root.stage_write(&rel, b"x".to_vec()).unwrap_err();
    assert_eq!(e.code(), "hard_linked");
    assert_eq!(std::fs::read(fx.outside.join("secret")).unwrap(), SECRET);
}

#[test]
fn a_fifo_never_blocks_and_is_named_in_the_error() {
    let fx = Fixture::new();
    mkfifo(&fx.root.join("pipe"));
    let got = guarded(&fx, "pipe", read).unwrap_err();
    assert_eq!(got.0, "not_a_regular_file");
    assert!(got.1.contains("FIFO"), "{}", got.1);
    let root = fx.root();
    let meta = root.metadata(&root.resolve("pipe").unwrap()).unwrap();
    assert_eq!(meta.unwrap().kind, tackle_fs::EntryKind::Other);
}

/// The alias corpus of `Root::real_path`: every in-root way of naming `secrets/key.pem` (or
/// `secrets/`) resolves to that file, which is what the gate's second key names. One case a
/// row: (what is linked, the path passed, the real path expected).
#[test]
fn every_alias_resolves_to_the_file_it_names() {
    let fx = Fixture::new();
    fx.write("secrets/key.pem", SECRET);
    fx.write(".env", SECRET);
    std::fs::create_dir_all(fx.root.join(".git/hooks")).unwrap();
    let abs_key = fx.root.join("secrets/key.pem");
    let links: &[(&str, &str)] = &[
        ("alias.txt", "secrets/key.pem"),
        ("sdir", "secrets"),
        ("notenv.txt", ".env"),
        ("gitdir", ".git"),
        ("chain1", "chain2"),
        ("chain2", "alias.txt"),
        ("nest/up", "../secrets"),
        ("nest/final", "../alias.txt"),
        ("nest/dots", "../nest/../sdir/./key.pem"),
        ("src/self", "."),
    ];
    for (link, target) in links {
        fx.symlink(target, link);
    }
    fx.symlink(&abs_key, "abs.txt");
    fx.symlink(fx.root.join("sdir"), "absdir");
    // (path, real path, whether a write may be staged: never through a final link)
    let cases: &[(&str, &str, bool)] = &[
        ("alias.txt", "secrets/key.pem", false),
        ("sdir/key.pem", "secrets/key.pem", true),
        ("sdir", "secrets", false),
        ("abs.txt", "secrets/key.pem", false),
        ("absdir/key.pem", "secrets/key.pem", true),
        ("chain1", "secrets/key.pem", false),
        ("nest/up/key.pem", "secrets/key.pem", true),
        ("nest/final", "secrets/key.pem", false),
        ("nest/dots", "secrets/key.pem", false),
        ("notenv.txt", ".env", false),
        ("gitdir/hooks/pre-commit", ".git/hooks/pre-commit", true),
        ("gitdir/config", ".git/config", true),
        ("sdir/new/deeper.pem", "secrets/new/deeper.pem", true),
        ("src/self/self/a.txt", "src/a.txt", true),
        ("src/a.txt", "src/a.txt", true),
        ("secrets/key.pem", "secrets/key.pem", true),
    ];
    let root = fx.root();
    for &(input, want, stage) in cases {
        let rel = root.resolve(input).unwrap();
        let real = root
            .real_path(&rel)
            .unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(real.as_str(), want, "{input}");
        // Staging records the same real path, which commit then holds the write to.
        if stage {
            let staged = root.stage_write(&rel, b"x".to_vec()).unwrap();
            assert_eq!(staged.real.as_str(), want, "{input}");
        } else {
            let e = root.stage_write(&rel, b"x".to_vec()).unwrap_err();
            assert_eq!(e.code(), "not_a_regular_file", "{input}");
        }
    }
}

/// A directory link swapped between staging and commit: the write would land in another
/// directory than the one the gate was asked about, so it is a conflict and nothing is written.
#[test]
fn a_link_swapped_after_staging_cannot_redirect_a_write() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.root.join("docs")).unwrap();
    std::fs::create_dir_all(fx.root.join(".git/hooks")).unwrap();
    fx.symlink("docs", "d");
    let root = fx.root();
    for (tool, stage) in [("write", true), ("delete", false)] {
        if !stage {
            fx.write("docs/pre-commit", b"old\n");
            fx.write(".git/hooks/pre-commit", b"keep\n");
        }
        let rel = root.resolve("d/pre-commit").unwrap();
        let swap = || {
            std::fs::remove_file(fx.root.join("d")).unwrap();
            std::os::unix::fs::symlink(".git/hooks", fx.root.join("d")).unwrap();
        };
        let restore = || {
            std::fs::remove_file(fx.root.join("d")).unwrap();
            std::os::unix::fs::symlink("docs", fx.root.join("d")).unwrap();
        };
        let err = if stage {
            let staged = root.stage_write(&rel, b"#!/bin/sh\nid\n".to_vec()).unwrap();
            assert_eq!(staged.real.as_str(), "docs/pre-commit");
            swap();
            root.commit(staged).unwrap_err()
        } else {
            let staged = root.stage_delete(&rel).unwrap();
            swap();
            // The hook has the same content as the staged base would need: only the parent
            // check stands between the delete and `.git`.
            std::fs::write(fx.root.join(".git/hooks/pre-commit"), b"old\n").unwrap();
            let e = root.commit_delete(staged).unwrap_err();
            std::fs::write(fx.root.join(".git/hooks/pre-commit"), b"keep\n").unwrap();
            e
        };
        assert_eq!(err.code(), "conflict", "{tool}: {err}");
        let hook = fx.root.join(".git/hooks/pre-commit");
        if stage {
            assert!(!hook.exists(), "{tool}: a hook was written");
        } else {
            assert_eq!(std::fs::read(&hook).unwrap(), b"keep\n", "{tool}");
        }
        restore();
    }
}
