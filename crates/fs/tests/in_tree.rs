//! Symlinks that stay inside the root work, relative or absolute, to files and directories.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Read;

use common::Fixture;
use tackle_fs::{EntryKind, ReadOptions, ReadTarget, Root};

fn read_text(root: &Root, input: &str) -> String {
    let rel = root.resolve(input).unwrap();
    match root.open_read(&rel, ReadOptions::default()) {
        Ok(ReadTarget::File { mut file, .. }) => {
            let mut s = String::new();
            file.read_to_string(&mut s).unwrap();
            s
        }
        other => panic!("{input}: {other:?}"),
    }
}

fn names(root: &Root, input: &str) -> Vec<String> {
    let rel = root.resolve(input).unwrap();
    root.read_dir(&rel)
        .unwrap_or_else(|e| panic!("{input}: {e}"))
        .into_iter()
        .map(|e| e.name.to_string_lossy().into_owned())
        .collect()
}

#[test]
fn in_tree_symlinks_work() {
    let fx = Fixture::new();
    fx.symlink("src/a.txt", "rel_file");
    fx.symlink(fx.root.join("src/a.txt"), "abs_file");
    fx.symlink("src", "rel_dir");
    fx.symlink(fx.root.join("src"), "abs_dir");
    fx.symlink("../a.txt", "src/sub/up_file");
    fx.symlink("abs_file", "chain");
    let root = fx.root();
    for input in [
        "rel_file",
        "abs_file",
        "rel_dir/a.txt",
        "abs_dir/a.txt",
        "src/sub/up_file",
        "chain",
        "abs_dir/../src/a.txt",
    ] {
        assert_eq!(read_text(&root, input), "inside\n", "{input}");
    }
    for input in ["rel_dir", "abs_dir"] {
        assert_eq!(names(&root, input), ["a.txt", "sub"], "{input}");
    }
    let rel = root.resolve("abs_file").unwrap();
    assert_eq!(
        root.metadata(&rel).unwrap().unwrap().kind,
        EntryKind::Symlink
    );
    let rel = root.resolve("abs_dir/a.txt").unwrap();
    let meta = root.metadata(&rel).unwrap().unwrap();
    assert_eq!((meta.kind, meta.len), (EntryKind::File, 7));
    // Writes go through directory links (relative or absolute) to the real directory.
    for (input, real) in [
        ("rel_dir/new1", "src/new1"),
        ("abs_dir/new/two", "src/new/two"),
    ] {
        let rel = root.resolve(input).unwrap();
        let staged = root.stage_write(&rel, b"w".to_vec()).unwrap();
        assert!(root.commit(staged).unwrap().created);
        assert_eq!(fx.read(real), b"w", "{input}");
    }
}

#[test]
fn resolve_normalizes_and_read_dir_sorts_bytewise() {
    let fx = Fixture::new();
    for name in ["b", "B", "a", "_"] {
        fx.write(&format!("d/{name}"), b"");
    }
    std::fs::create_dir(fx.root.join("d/dir")).unwrap();
    fx.symlink("a", "d/link");
    let root = fx.root();
    let abs = format!("{}/d/./x/../a", fx.root.display());
    assert_eq!(root.resolve(&abs).unwrap().as_str(), "d/a");
    assert_eq!(
        root.resolve(fx.root.to_str().unwrap()).unwrap().as_str(),
        "."
    );
    let rel = root.resolve("d").unwrap();
    let entries = root.read_dir(&rel).unwrap();
    let got: Vec<_> = entries
        .iter()
        .map(|e| (e.name.to_str().unwrap(), e.kind))
        .collect();
    assert_eq!(
        got,
        [
            ("B", EntryKind::File),
            ("_", EntryKind::File),
            ("a", EntryKind::File),
            ("b", EntryKind::File),
            ("dir", EntryKind::Dir),
            ("link", EntryKind::Symlink),
        ]
    );
    let missing = root.resolve("d/nope").unwrap();
    assert_eq!(root.metadata(&missing).unwrap(), None);
    let e = root
        .open_read(&missing, ReadOptions::default())
        .unwrap_err();
    assert_eq!(e.code(), "not_found");
    let file = root.resolve("d/a").unwrap();
    assert_eq!(root.read_dir(&file).unwrap_err().code(), "not_a_directory");
    match root.open_read(&root.resolve(".").unwrap(), ReadOptions::default()) {
        Ok(ReadTarget::Dir(entries)) => assert!(entries.iter().any(|e| e.name == "d")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_shared_root_is_reused_until_its_path_names_another_directory() {
    let parent = tempfile::tempdir().unwrap();
    let path = parent.path().join("project");
    std::fs::create_dir(&path).unwrap();
    std::fs::write(path.join("a.txt"), "old").unwrap();
    let first = Root::open_shared(&path).unwrap();
    let again = Root::open_shared(&path).unwrap();
    assert!(std::sync::Arc::ptr_eq(&first, &again));

    // The directory is moved away and another one takes its name: the old handle must not
    // be handed out for the new path.
    std::fs::rename(&path, parent.path().join("moved")).unwrap();
    std::fs::create_dir(&path).unwrap();
    std::fs::write(path.join("a.txt"), "new").unwrap();
    let fresh = Root::open_shared(&path).unwrap();
    assert!(!std::sync::Arc::ptr_eq(&first, &fresh));
    assert_eq!(read_text(&fresh, "a.txt"), "new");
    assert_eq!(read_text(&first, "a.txt"), "old");
}
