//! Temps a killed writer left: swept on the next commit into their directory and through the
//! intents at start-up, and nothing a hostile tree plants under a temp's name is followed,
//! opened blocking, or removed unless it is a single-linked regular file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use common::{Fixture, SECRET, mkfifo};
use tackle_fs::{SweepMode, Swept};

/// What stands at a name in the directory a commit writes into.
#[derive(Clone, Copy, Debug)]
enum Planted {
    /// A regular file nobody holds: what a SIGKILL between create and rename leaves.
    Abandoned,
    /// A regular file whose lock a live writer holds.
    Locked,
    SymlinkOutside,
    SymlinkInside,
    DanglingSymlink,
    Fifo,
    Directory,
    /// A second name of a file elsewhere in the tree.
    HardLink,
}

/// One case a row: the name, what is planted there, whether the next commit removes it.
const CORPUS: &[(&str, Planted, bool)] = &[
    (".tackle-1-1.tmp", Planted::Abandoned, true),
    (".tackle-4194304-77.tmp", Planted::Abandoned, true),
    (".tackle-2-1.tmp", Planted::Locked, false),
    (".tackle-3-1.tmp", Planted::SymlinkOutside, false),
    (".tackle-4-1.tmp", Planted::SymlinkInside, false),
    (".tackle-5-1.tmp", Planted::DanglingSymlink, false),
    (".tackle-6-1.tmp", Planted::Fifo, false),
    (".tackle-7-1.tmp", Planted::Directory, false),
    (".tackle-8-1.tmp", Planted::HardLink, false),
    // Near misses of the grammar are the user's files, whatever they hold.
    (".tackle-9-1.tmp.orig", Planted::Abandoned, false),
    (".tackle-x-1.tmp", Planted::Abandoned, false),
    ("tackle-10-1.tmp", Planted::Abandoned, false),
    (".tackle-11.tmp", Planted::Abandoned, false),
    (".tackle-12-1-2.tmp", Planted::Abandoned, false),
];

/// Plants `what` at `dir/name`; returns the file whose lock is held, for `Locked`.
fn plant(fx: &Fixture, dir: &str, name: &str, what: Planted) -> Option<File> {
    let path = fx.root.join(dir).join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    match what {
        Planted::Abandoned => std::fs::write(&path, b"half a file").unwrap(),
        Planted::Locked => {
            std::fs::write(&path, b"still being written").unwrap();
            let file = File::open(&path).unwrap();
            file.lock().unwrap();
            return Some(file);
        }
        Planted::SymlinkOutside => {
            std::os::unix::fs::symlink(fx.outside.join("secret"), &path).unwrap()
        }
        Planted::SymlinkInside => std::os::unix::fs::symlink("../src/a.txt", &path).unwrap(),
        Planted::DanglingSymlink => std::os::unix::fs::symlink("nowhere", &path).unwrap(),
        Planted::Fifo => mkfifo(&path),
        Planted::Directory => {
            std::fs::create_dir(&path).unwrap();
            std::fs::write(path.join("inner"), b"x").unwrap();
        }
        Planted::HardLink => std::fs::hard_link(fx.root.join("src/a.txt"), &path).unwrap(),
    }
    None
}

fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

#[test]
fn the_next_commit_sweeps_only_abandoned_temps_of_the_grammar() {
    for &(name, what, removed) in CORPUS {
        let fx = Fixture::new();
        let outside = fx.snapshot_outside();
        let held = plant(&fx, "dir", name, what);
        // A temp in a sibling directory is not this commit's to sweep.
        plant(&fx, "other", ".tackle-99-1.tmp", Planted::Abandoned);
        let root = fx.root();
        let rel = root.resolve("dir/target.txt").unwrap();
        let staged = root.stage_write(&rel, b"new\n".to_vec()).unwrap();
        root.commit(staged).unwrap();
        let path = fx.root.join("dir").join(name);
        assert_eq!(!exists(&path), removed, "{name} ({what:?})");
        assert_eq!(fx.read("dir/target.txt"), b"new\n");
        assert!(exists(&fx.root.join("other/.tackle-99-1.tmp")), "{what:?}");
        assert_eq!(fx.read("src/a.txt"), b"inside\n", "{what:?}");
        assert_eq!(fx.snapshot_outside(), outside, "{what:?}");
        if let Planted::HardLink = what {
            assert_eq!(std::fs::metadata(&path).unwrap().nlink(), 2);
        }
        drop(held);
    }
}

#[test]
fn a_temp_with_its_writers_pid_and_counter_is_swept_when_that_name_is_wanted() {
    // An earlier process with this pid left temps under the names this one counts through.
    let fx = Fixture::new();
    let pid = std::process::id();
    for n in 0..80 {
        fx.write(&format!("d/.tackle-{pid}-{n}.tmp"), b"left over");
    }
    let root = fx.root();
    let rel = root.resolve("d/f").unwrap();
    root.commit(root.stage_write(&rel, b"x".to_vec()).unwrap())
        .unwrap();
    let left: Vec<_> = std::fs::read_dir(fx.root.join("d"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("f")]);
}

/// A directory never written again: found through the intent a killed commit left.
#[test]
fn start_up_sweeps_the_directories_abandoned_intents_name() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.root.join(".agents/store/writes")).unwrap();
    let writes = fx.root.join(".agents/store/writes");
    // Abandoned intents: the root itself, a nested directory, and one whose temp is gone.
    plant(&fx, ".", ".tackle-1-1.tmp", Planted::Abandoned);
    plant(&fx, "a/b", ".tackle-1-2.tmp", Planted::Abandoned);
    std::fs::write(writes.join("write-1-1"), ".\n").unwrap();
    std::fs::write(writes.join("write-1-2"), "a/b\n").unwrap();
    std::fs::write(writes.join("write-1-3"), "gone/dir\n").unwrap();
    // A live commit's intent: its directory is not swept, its intent stays.
    plant(&fx, "live", ".tackle-2-1.tmp", Planted::Abandoned);
    std::fs::write(writes.join("write-2-1"), "live\n").unwrap();
    let live = File::open(writes.join("write-2-1")).unwrap();
    live.lock().unwrap();
    // Hostile intents: out of the root, through a link, not normal form, huge, not UTF-8.
    fx.symlink(&fx.outside, "via-link");
    std::fs::write(fx.outside.join(".tackle-3-1.tmp"), SECRET).unwrap();
    let outside = fx.snapshot_outside();
    let hostile: &[&[u8]] = &[
        b"..\n",
        b"../outside\n",
        b"via-link\n",
        b"a/../a/b\n",
        b"/etc\n",
        b"a//b\n",
        b"\xff\n",
    ];
    for (i, text) in hostile.iter().enumerate() {
        std::fs::write(writes.join(format!("write-3-{i}")), text).unwrap();
    }
    std::fs::write(writes.join("write-3-99"), vec![b'a'; 10_000]).unwrap();
    // Not an intent at all.
    std::fs::write(writes.join("notes"), "a/b\n").unwrap();

    let root = fx.root();
    let counted = root.sweep_abandoned_writes(SweepMode::Count);
    assert_eq!(
        counted,
        Swept {
            files: 2,
            bytes: 2 * b"half a file".len() as u64
        }
    );
    assert!(
        exists(&fx.root.join("a/b/.tackle-1-2.tmp")),
        "counting removes nothing"
    );
    assert!(exists(&writes.join("write-1-2")));

    let swept = root.sweep_abandoned_writes(SweepMode::Remove);
    assert_eq!(swept, counted);
    assert!(!exists(&fx.root.join(".tackle-1-1.tmp")));
    assert!(!exists(&fx.root.join("a/b/.tackle-1-2.tmp")));
    assert!(exists(&fx.root.join("live/.tackle-2-1.tmp")));
    let mut left: Vec<_> = std::fs::read_dir(&writes)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, ["notes", "write-2-1"]);
    assert_eq!(fx.snapshot_outside(), outside);
    assert_eq!(
        root.sweep_abandoned_writes(SweepMode::Remove),
        Swept::default()
    );
    drop(live);
}

#[test]
fn a_commit_leaves_no_intent_and_a_store_that_is_a_link_gets_none() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.root.join(".agents/store")).unwrap();
    let root = fx.root();
    for (i, path) in ["x.txt", "deep/er/y.txt"].iter().enumerate() {
        let rel = root.resolve(path).unwrap();
        root.commit(root.stage_write(&rel, vec![b'a'; i * 1000]).unwrap())
            .unwrap();
    }
    let writes = fx.root.join(".agents/store/writes");
    assert!(
        writes.is_dir(),
        "the intents directory is made where a store is"
    );
    assert_eq!(std::fs::read_dir(&writes).unwrap().count(), 0);

    // A store that is a symlink out of the tree is never written through.
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.root.join(".agents")).unwrap();
    fx.symlink(&fx.outside, ".agents/store");
    let outside = fx.snapshot_outside();
    let root = fx.root();
    let rel = root.resolve("z.txt").unwrap();
    root.commit(root.stage_write(&rel, b"z".to_vec()).unwrap())
        .unwrap();
    assert_eq!(fx.snapshot_outside(), outside);
}
