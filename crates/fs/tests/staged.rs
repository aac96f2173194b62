//! Staged writes and deletes: publish only against the recorded base.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::PermissionsExt;

use common::Fixture;
use sha2::{Digest, Sha256};
use tackle_fs::{Committed, Deleted};

fn mode(fx: &Fixture, rel: &str) -> u32 {
    std::fs::metadata(fx.root.join(rel))
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

/// No temporary file is left next to the target.
fn no_leftovers(fx: &Fixture, dir: &str) {
    for e in std::fs::read_dir(fx.root.join(dir)).unwrap() {
        let name = e.unwrap().file_name();
        assert!(
            !name.to_string_lossy().starts_with(".tackle-"),
            "leftover {name:?}"
        );
    }
}

#[test]
fn create_writes_a_new_file_0600_and_creates_parents() {
    let fx = Fixture::new();
    let root = fx.root();
    let rel = root.resolve("a/b/new.txt").unwrap();
    let staged = root.stage_write(&rel, b"hello\n".to_vec()).unwrap();
    assert_eq!(staged.base, None);
    assert_eq!(staged.rel.as_str(), "a/b/new.txt");
    assert_eq!(staged.bytes, b"hello\n");
    let done = root.commit(staged).unwrap();
    assert_eq!(
        done,
        Committed {
            created: true,
            bytes: 6
        }
    );
    assert_eq!(fx.read("a/b/new.txt"), b"hello\n");
    assert_eq!(mode(&fx, "a/b/new.txt"), 0o600);
    no_leftovers(&fx, "a/b");
}

#[test]
fn overwrite_records_the_base_and_keeps_the_mode() {
    let fx = Fixture::new();
    fx.write("f.sh", b"old\n");
    std::fs::set_permissions(fx.root.join("f.sh"), std::fs::Permissions::from_mode(0o751)).unwrap();
    let root = fx.root();
    let rel = root.resolve("f.sh").unwrap();
    let staged = root.stage_write(&rel, b"new content\n".to_vec()).unwrap();
    let base = staged.base.unwrap();
    assert_eq!(base.len, 4);
    assert_eq!(base.sha256, <[u8; 32]>::from(Sha256::digest(b"old\n")));
    assert_eq!(base.sha256_hex().len(), 64);
    let done = root.commit(staged).unwrap();
    assert!(!done.created);
    assert_eq!(done.bytes, 12);
    assert_eq!(fx.read("f.sh"), b"new content\n");
    assert_eq!(mode(&fx, "f.sh"), 0o751);
    no_leftovers(&fx, ".");
}

#[test]
fn a_base_changed_after_staging_is_a_conflict() {
    let fx = Fixture::new();
    fx.write("f", b"one\n");
    let root = fx.root();
    let rel = root.resolve("f").unwrap();
    let staged = root.stage_write(&rel, b"mine\n".to_vec()).unwrap();
    fx.write("f", b"formatter output\n");
    let e = root.commit(staged).unwrap_err();
    assert_eq!(e.code(), "conflict");
    assert!(e.to_string().contains("f changed since"), "{e}");
    assert_eq!(fx.read("f"), b"formatter output\n");
    no_leftovers(&fx, ".");
}

#[test]
fn a_file_created_after_staging_is_a_conflict() {
    let fx = Fixture::new();
    let root = fx.root();
    let rel = root.resolve("d/f").unwrap();
    let staged = root.stage_write(&rel, b"mine\n".to_vec()).unwrap();
    fx.write("d/f", b"theirs\n");
    assert_eq!(root.commit(staged).unwrap_err().code(), "conflict");
    assert_eq!(fx.read("d/f"), b"theirs\n");
    no_leftovers(&fx, "d");
}

#[test]
fn unsuitable_targets_are_refused() {
    let fx = Fixture::new();
    fx.write("one", b"x");
    std::fs::hard_link(fx.root.join("one"), fx.root.join("two")).unwrap();
    fx.symlink("src/a.txt", "alink");
    fx.symlink("missing", "dangling_in_tree");
    let root = fx.root();
    let cases = [
        ("two", "hard_linked"),
        ("one", "hard_linked"),
        ("src", "is_a_directory"),
        (".", "is_a_directory"),
        ("alink", "not_a_regular_file"),
        ("dangling_in_tree", "not_a_regular_file"),
        ("src/a.txt/x", "not_a_directory"),
    ];
    for (input, code) in cases {
        let rel = root.resolve(input).unwrap();
        let e = root.stage_write(&rel, b"y".to_vec()).unwrap_err();
        assert_eq!(e.code(), code, "write {input}: {e}");
        let e = root.stage_delete(&rel).unwrap_err();
        assert_eq!(e.code(), code, "delete {input}: {e}");
    }
    assert_eq!(fx.read("one"), b"x");
    assert_eq!(fx.read("src/a.txt"), b"inside\n");
    assert!(!fx.root.join("missing").exists());
}

#[test]
fn a_target_that_became_a_symlink_is_a_conflict_and_is_not_followed() {
    let fx = Fixture::new();
    fx.write("f", b"one\n");
    let root = fx.root();
    let rel = root.resolve("f").unwrap();
    let staged = root.stage_write(&rel, b"mine\n".to_vec()).unwrap();
    std::fs::remove_file(fx.root.join("f")).unwrap();
    fx.symlink(fx.outside.join("secret"), "f");
    let before = fx.snapshot_outside();
    assert!(root.commit(staged).is_err());
    assert_eq!(fx.snapshot_outside(), before);
}

#[test]
fn delete_is_staged_and_idempotent() {
    let fx = Fixture::new();
    fx.write("f", b"one\n");
    fx.write("g", b"one\n");
    let root = fx.root();
    let f = root.resolve("f").unwrap();
    let staged = root.stage_delete(&f).unwrap();
    assert_eq!(staged.base.unwrap().len, 4);
    assert_eq!(
        root.commit_delete(staged.clone()).unwrap(),
        Deleted { existed: true }
    );
    assert!(!fx.root.join("f").exists());
    assert_eq!(
        root.commit_delete(staged).unwrap(),
        Deleted { existed: false }
    );
    let missing = root.resolve("no/such/file").unwrap();
    let staged = root.stage_delete(&missing).unwrap();
    assert_eq!(
        root.commit_delete(staged).unwrap(),
        Deleted { existed: false }
    );
    let g = root.resolve("g").unwrap();
    let staged = root.stage_delete(&g).unwrap();
    fx.write("g", b"changed\n");
    assert_eq!(root.commit_delete(staged).unwrap_err().code(), "conflict");
    assert_eq!(fx.read("g"), b"changed\n");
}
