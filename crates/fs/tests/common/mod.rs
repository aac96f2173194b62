//! The fixture every test here uses: a root directory with an outside world next to it, and a
//! snapshot of that outside world to prove it was not touched.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use tackle_fs::Root;

pub const SECRET: &[u8] = b"TOP-SECRET-CONTENT\n";

/// `<top>/proj` is the root; everything else under `<top>` is outside.
pub struct Fixture {
    _top: tempfile::TempDir,
    pub top: PathBuf,
    pub root: PathBuf,
    pub outside: PathBuf,
}

impl Fixture {
    pub fn new() -> Self {
        let top = tempfile::tempdir().unwrap();
        let top_path = top.path().canonicalize().unwrap();
        let root = top_path.join("proj");
        let outside = top_path.join("outside");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::create_dir_all(top_path.join("proj-evil")).unwrap();
        std::fs::write(root.join("src/a.txt"), "inside\n").unwrap();
        std::fs::write(outside.join("secret"), SECRET).unwrap();
        std::fs::write(top_path.join("proj-evil/x"), SECRET).unwrap();
        Fixture {
            _top: top,
            top: top_path,
            root,
            outside,
        }
    }

    pub fn root(&self) -> Root {
        Root::open(&self.root).unwrap()
    }

    pub fn symlink(&self, target: impl AsRef<Path>, link: &str) {
        let link = self.root.join(link);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, link).unwrap();
    }

    pub fn write(&self, rel: &str, bytes: &[u8]) {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }

    pub fn read(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.root.join(rel)).unwrap()
    }

    /// Everything under `<top>` except the root, by path: kind, mode, and content or link text.
    pub fn snapshot_outside(&self) -> BTreeMap<PathBuf, String> {
        let mut out = BTreeMap::new();
        walk(&self.top, &self.root, &mut out);
        out
    }
}

fn walk(dir: &Path, skip: &Path, out: &mut BTreeMap<PathBuf, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path == skip {
            continue;
        }
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let ft = meta.file_type();
        let what = if ft.is_dir() {
            walk(&path, skip, out);
            "dir".to_owned()
        } else if ft.is_symlink() {
            format!("link {}", std::fs::read_link(&path).unwrap().display())
        } else if ft.is_file() {
            format!(
                "file {:o} {:?}",
                meta.mode(),
                String::from_utf8_lossy(&std::fs::read(&path).unwrap())
            )
        } else if ft.is_fifo() {
            "fifo".to_owned()
        } else {
            "other".to_owned()
        };
        out.insert(path, what);
    }
}

pub fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}
