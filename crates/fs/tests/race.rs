//! A directory inside the root is swapped for a symlink to an outside directory, over and
//! over, while another thread writes and reads through it: nothing outside may change.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::Fixture;
use tackle_fs::{ReadOptions, ReadTarget};

const SWAPS: usize = 20_000;
const OPERATIONS: usize = 3_000;

/// Renames `from` to `dir`, clearing away a directory the writer created while `dir` was
/// absent (a write to `dir/file` legitimately creates its parent).
fn place(from: &Path, dir: &Path) {
    while std::fs::rename(from, dir).is_err() {
        // The writer may be filling it at the same time; try again until it is gone.
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn swapping_a_directory_for_a_symlink_never_leaks_a_write_or_read() {
    let fx = Fixture::new();
    std::fs::write(fx.outside.join("file"), common::SECRET).unwrap();
    std::fs::create_dir(fx.root.join("real")).unwrap();
    std::fs::write(fx.root.join("real/file"), b"inside\n").unwrap();
    std::os::unix::fs::symlink(&fx.outside, fx.root.join("link")).unwrap();
    let before = fx.snapshot_outside();

    let done = Arc::new(AtomicBool::new(false));
    let swapper = {
        let done = done.clone();
        let root = fx.root.clone();
        std::thread::spawn(move || {
            let (real, link, dir) = (root.join("real"), root.join("link"), root.join("dir"));
            for _ in 0..SWAPS {
                if done.load(Ordering::Relaxed) {
                    break;
                }
                // `dir` is in turn the real directory, absent, the symlink out, absent.
                place(&real, &dir);
                std::fs::rename(&dir, &real).unwrap();
                place(&link, &dir);
                std::fs::rename(&dir, &link).unwrap();
            }
        })
    };

    let root = fx.root();
    let rel = root.resolve("dir/file").unwrap();
    let nested = root.resolve("dir/sub/new").unwrap();
    let (mut written, mut read) = (0, 0);
    for i in 0..OPERATIONS {
        let bytes = format!("write {i}\n").into_bytes();
        if let Ok(staged) = root.stage_write(&rel, bytes)
            && root.commit(staged).is_ok()
        {
            written += 1;
        }
        if let Ok(staged) = root.stage_write(&nested, b"n\n".to_vec()) {
            let _ = root.commit(staged);
        }
        if let Ok(ReadTarget::File { file, .. }) = root.open_read(&rel, ReadOptions::default()) {
            let mut text = Vec::new();
            std::io::Read::read_to_end(&mut &file, &mut text).unwrap();
            assert_ne!(text, common::SECRET, "read the outside file");
            read += 1;
        }
        let _ = root.read_dir(&root.resolve("dir").unwrap());
        let _ = root.metadata(&rel);
    }
    done.store(true, Ordering::Relaxed);
    swapper.join().unwrap();

    assert_eq!(fx.snapshot_outside(), before, "the outside changed");
    eprintln!("{written} writes and {read} reads got through to the real directory");
}
