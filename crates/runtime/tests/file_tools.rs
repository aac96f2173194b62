//! write_file, edit_file and delete_file through `Runtime::run_batch`: staged mutations,
//! serialization by file, and no lost update when one batch changes one file twice.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::*;
use serde_json::json;
use tackle_tools::{DeleteFile, EditFile, WriteFile};

fn harness() -> Harness {
    Harness::new(
        vec![
            Arc::new(WriteFile),
            Arc::new(EditFile),
            Arc::new(DeleteFile),
        ],
        WIDE,
        LONG_TIMEOUT,
    )
}

#[tokio::test]
async fn two_edits_of_one_file_in_one_batch_give_exactly_one_conflict_and_no_lost_update() {
    let h = harness();
    std::fs::write(h.root().join("f.txt"), "alpha\nbeta\n").unwrap();
    let results = h
        .run(vec![
            call(
                "1",
                "edit_file",
                json!({"path": "f.txt", "old_string": "alpha", "new_string": "ALPHA"}),
            ),
            call(
                "2",
                "edit_file",
                json!({"path": "f.txt", "old_string": "beta", "new_string": "BETA"}),
            ),
        ])
        .await;
    let codes: Vec<Option<&str>> = results.iter().map(code).collect();
    assert_eq!(codes, [None, Some("conflict")], "{results:?}");
    // The first edit is on disk; the second was refused, not applied over a stale base.
    assert_eq!(
        std::fs::read_to_string(h.root().join("f.txt")).unwrap(),
        "ALPHA\nbeta\n"
    );
    assert!(
        results[1].text().contains("read it again"),
        "{}",
        results[1].text()
    );
}

#[tokio::test]
async fn write_then_write_of_one_path_in_one_batch_conflicts_in_turn_order() {
    let h = harness();
    let results = h
        .run(vec![
            call(
                "1",
                "write_file",
                json!({"path": "new.txt", "content": "first"}),
            ),
            call(
                "2",
                "write_file",
                json!({"path": "new.txt", "content": "second"}),
            ),
        ])
        .await;
    assert_eq!(code(&results[0]), None, "{results:?}");
    assert_eq!(results[0].metadata["created"], true);
    assert_eq!(code(&results[1]), Some("conflict"));
    assert_eq!(
        std::fs::read_to_string(h.root().join("new.txt")).unwrap(),
        "first"
    );
}

#[tokio::test]
async fn write_file_creates_overwrites_and_makes_parents() {
    let h = harness();
    let r = h
        .run(vec![call(
            "1",
            "write_file",
            json!({"path": "a/b/c.txt", "content": "hello\n"}),
        )])
        .await
        .remove(0);
    assert_eq!(code(&r), None, "{}", r.text());
    assert_eq!(r.metadata["created"], true);
    assert_eq!(r.metadata["bytes"], 6);
    let r = h
        .run(vec![call(
            "2",
            "write_file",
            json!({"path": "a/b/c.txt", "content": "bye"}),
        )])
        .await
        .remove(0);
    assert_eq!(r.metadata["created"], false);
    assert_eq!(
        std::fs::read_to_string(h.root().join("a/b/c.txt")).unwrap(),
        "bye"
    );
}

#[tokio::test]
async fn write_file_refuses_paths_outside_the_root() {
    let h = harness();
    let outside = h
        .dir
        .path()
        .parent()
        .unwrap()
        .join("tackle-outside-write.txt");
    let cases = [
        ("../escape.txt", "path_outside_root"),
        (outside.to_str().unwrap(), "path_outside_root"),
        ("", "invalid_path"),
        ("a\0b", "invalid_path"),
    ];
    for (path, want) in cases {
        let r = h
            .run(vec![call(
                "w",
                "write_file",
                json!({"path": path, "content": "x"}),
            )])
            .await
            .remove(0);
        assert_eq!(code(&r), Some(want), "{path:?}: {}", r.text());
    }
    assert!(!outside.exists());
    // A symlink leading out is refused too.
    std::os::unix::fs::symlink("/tmp", h.root().join("out")).unwrap();
    let r = h
        .run(vec![call(
            "w",
            "write_file",
            json!({"path": "out/x.txt", "content": "x"}),
        )])
        .await
        .remove(0);
    assert_eq!(code(&r), Some("path_outside_root"), "{}", r.text());
}

#[tokio::test]
async fn edit_file_refusals_and_success_through_the_runtime() {
    let h = harness();
    std::fs::write(h.root().join("m.rs"), "a\nfoo\nb\nfoo\nc\nfoo\n").unwrap();
    let r = h
        .run(vec![call(
            "1",
            "edit_file",
            json!({"path": "m.rs", "old_string": "foo", "new_string": "bar"}),
        )])
        .await
        .remove(0);
    assert_eq!(code(&r), Some("multiple_matches"));
    assert!(
        r.text().contains("old_string matches 3 places in m.rs (lines 2, 4, 6); pass replace_all: true or include more context"),
        "{}",
        r.text()
    );
    let r = h
        .run(vec![call(
            "2",
            "edit_file",
            json!({"path": "m.rs", "old_string": "foo", "new_string": "bar", "replace_all": true}),
        )])
        .await
        .remove(0);
    assert_eq!(code(&r), None, "{}", r.text());
    assert_eq!(r.metadata["replacements"], 3);
    assert!(r.text().contains("-foo\n+bar\n"), "{}", r.text());
    let r = h
        .run(vec![call(
            "3",
            "edit_file",
            json!({"path": "missing.rs", "old_string": "x", "new_string": "y"}),
        )])
        .await
        .remove(0);
    assert_eq!(code(&r), Some("not_found"));
}

#[tokio::test]
async fn delete_file_is_idempotent_and_refuses_directories() {
    let h = harness();
    std::fs::write(h.root().join("gone.txt"), "x").unwrap();
    std::fs::create_dir(h.root().join("dir")).unwrap();
    let r = h
        .run(vec![call("1", "delete_file", json!({"path": "gone.txt"}))])
        .await
        .remove(0);
    assert_eq!(code(&r), None);
    assert_eq!(r.metadata["existed"], true);
    assert!(!h.root().join("gone.txt").exists());
    let r = h
        .run(vec![call("2", "delete_file", json!({"path": "gone.txt"}))])
        .await
        .remove(0);
    assert_eq!(code(&r), None);
    assert_eq!(r.metadata["existed"], false);
    for path in ["dir", "."] {
        let r = h
            .run(vec![call("3", "delete_file", json!({"path": path}))])
            .await
            .remove(0);
        assert_eq!(code(&r), Some("is_a_directory"), "{path}: {}", r.text());
    }
    assert!(h.root().join("dir").is_dir());
}
