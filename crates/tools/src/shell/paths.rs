//! The files a line's redirections open → the paths their `write:`/`read:` keys name: the name
//! given (root-relative when inside the root, absolute otherwise) and, when symlinks lead
//! elsewhere, the path they resolve to (`echo x >> link` with `link → .git/config` is keyed
//! `write:link` and `write:.git/config`; a link out of the root adds the absolute outside path).
//!
//! Key decision: both names are keys, so a deny or ask on either holds. In-root paths are
//! resolved with [`tackle_fs::Root::real_path`], the same answer every file tool's keys get;
//! only a link that leads out of the root is followed further here, by `lstat`/`readlink`
//! alone (nothing is opened). Both read `..` lexically, as the name is keyed; the kernel
//! applies a `..` after the link it follows (`src/link/../f` is beside the link's target), so
//! the path as written is also resolved that way ([`physical`]) and keyed when it differs.
//! The answer is as fresh as `prepare`: the shell opens the file later, so this is a gate on
//! names, not a sandbox.

use std::path::{Component, Path, PathBuf};

use tackle_fs::{FsError, Root};

use super::analyze::Location;

/// The kernel's own limit on symlinks followed in one resolution.
const MAX_LINKS: usize = 40;

/// Special files a redirection may name without touching any file.
pub(super) const NOT_FILES: &[&str] = &[
    "/dev/null",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/stdin",
    "/dev/tty",
];

/// `target` joined to `root` when relative, with `.` and `..` applied (as the shell's
/// logical working directory does); root-relative when inside the root, absolute otherwise.
/// `None` for `/dev/null` and the standard streams.
pub fn normalize(root: &Path, target: &str) -> Option<String> {
    if NOT_FILES.contains(&target) {
        return None;
    }
    let joined = if target.starts_with('/') {
        PathBuf::from(target)
    } else {
        root.join(target)
    };
    let normal = lexical(&joined);
    Some(shown(root, &normal))
}

pub(super) fn lexical(path: &Path) -> PathBuf {
    let mut normal = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::ParentDir => {
                normal.pop();
            }
            Component::Normal(p) => normal.push(p),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    normal
}

/// An absolute path as keys name it: root-relative inside the root (`.` for the root itself),
/// absolute outside.
pub(super) fn shown(root: &Path, absolute: &Path) -> String {
    match absolute.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => absolute.to_string_lossy().into_owned(),
    }
}

/// The key paths of one file a redirection opens; `None` when it cannot be named (a `~` with
/// no `$HOME`, a path the root refuses, a loop of links).
pub fn file_keys(root: &Path, home: Option<&Path>, location: &Location) -> Option<Vec<String>> {
    let named = match location {
        Location::Path(p) => p.clone(),
        Location::Home(p) => {
            let home = home?;
            if !home.is_absolute() {
                return None;
            }
            home.join(p).to_string_lossy().into_owned()
        }
    };
    let Some(name) = normalize(root, &named) else {
        return Some(Vec::new());
    };
    let mut keys = vec![name.clone()];
    let real = if name.starts_with('/') {
        let resolved = resolve_absolute(Path::new(&name))?;
        shown(root, &resolved)
    } else {
        in_root(root, &name)?
    };
    if NOT_FILES.contains(&real.as_str()) {
        return Some(Vec::new());
    }
    if real != name {
        keys.push(real);
    }
    let written = if named.starts_with('/') {
        PathBuf::from(&named)
    } else {
        root.join(&named)
    };
    let physical = physical(root, &written)?;
    if !keys.contains(&physical) && !NOT_FILES.contains(&physical.as_str()) {
        keys.push(physical);
    }
    Some(keys)
}

/// The file the kernel reaches for an absolute path as written: every symlink followed and
/// each `..` applied to what the component before it resolved to, as the kernel does. Shown
/// root-relative inside the root, absolute outside; `None` on a loop of links.
pub(super) fn physical(root: &Path, written: &Path) -> Option<String> {
    Some(shown(root, &resolve_absolute(written)?))
}

/// The in-root path a root-relative name resolves to, or the absolute path outside the root a
/// link on it leads to.
fn in_root(root_path: &Path, name: &str) -> Option<String> {
    let root = Root::open_shared(root_path).ok()?;
    let rel = root.resolve(name).ok()?;
    match root.real_path(&rel) {
        Ok(real) if real.is_root() => Some(".".to_owned()),
        Ok(real) => Some(real.as_str().to_owned()),
        Err(FsError::OutsideRoot { .. }) => {
            let resolved = resolve_absolute(&root.path().join(rel.as_path()))?;
            Some(shown(root.path(), &resolved))
        }
        Err(_) => None,
    }
}

/// `path` with every symlink on it followed (the final one included); parts that do not exist
/// yet are kept as written. `None` on a loop of links or an unreadable link.
pub(super) fn resolve_absolute(path: &Path) -> Option<PathBuf> {
    let mut pending: std::collections::VecDeque<std::ffi::OsString> =
        std::collections::VecDeque::new();
    for c in path.components() {
        match c {
            Component::Normal(p) => pending.push_back(p.to_owned()),
            Component::ParentDir => pending.push_back("..".into()),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    let mut done = PathBuf::from("/");
    let mut links = 0;
    while let Some(part) = pending.pop_front() {
        if part == ".." {
            done.pop();
            continue;
        }
        let candidate = done.join(&part);
        match std::fs::symlink_metadata(&candidate) {
            Ok(m) if m.file_type().is_symlink() => {
                links += 1;
                if links > MAX_LINKS {
                    return None;
                }
                let target = std::fs::read_link(&candidate).ok()?;
                if target.is_absolute() {
                    done = PathBuf::from("/");
                }
                let mut parts = Vec::new();
                for c in target.components() {
                    match c {
                        Component::Normal(p) => parts.push(p.to_owned()),
                        Component::ParentDir => parts.push("..".into()),
                        Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
                    }
                }
                for p in parts.into_iter().rev() {
                    pending.push_front(p);
                }
            }
            _ => done = candidate,
        }
    }
    Some(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_root_relative_and_normalized() {
        let root = Path::new("/work/proj");
        for (target, want) in [
            ("out.txt", Some("out.txt")),
            ("./a/../b/c.log", Some("b/c.log")),
            ("/work/proj/x", Some("x")),
            ("../escape", Some("/work/escape")),
            ("/etc/passwd", Some("/etc/passwd")),
            ("/dev/null", None),
            ("/dev/stderr", None),
        ] {
            assert_eq!(normalize(root, target).as_deref(), want, "{target}");
        }
    }

    /// (link name, link target, redirection target, keys)
    const LINKS: &[(&str, &str, &str, &[&str])] = &[
        ("link", ".git/config", "link", &["link", ".git/config"]),
        (
            "gitdir",
            ".git",
            "gitdir/hooks/pre-commit",
            &["gitdir/hooks/pre-commit", ".git/hooks/pre-commit"],
        ),
        ("up", "../outside/f", "up", &["up", "@outside/f"]),
        ("abs", "@outside", "abs/x", &["abs/x", "@outside/x"]),
        (
            "back",
            "@root/.git",
            "back/config",
            &["back/config", ".git/config"],
        ),
        ("plain", "", "plain", &["plain"]),
        // The kernel applies `..` after the link: beside the link's target, not the link.
        (
            "dirlink",
            "@outside/sub",
            "dirlink/../f",
            &["f", "@outside/f"],
        ),
        (
            "inlink",
            ".git/hooks",
            "inlink/../config",
            &["config", ".git/config"],
        ),
        (
            "dangling",
            "newdir/new.txt",
            "dangling",
            &["dangling", "newdir/new.txt"],
        ),
    ];

    #[test]
    fn symlinks_add_the_path_they_resolve_to() {
        let base = tempfile::tempdir().unwrap();
        let base_path = base.path().canonicalize().unwrap();
        let root = base_path.join("root");
        let outside = base_path.join("outside");
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join(".git/config"), "").unwrap();
        let fill = |s: &str| {
            s.replace("@outside", &outside.to_string_lossy())
                .replace("@root", &root.to_string_lossy())
        };
        for (name, target, redirect, want) in LINKS {
            if target.is_empty() {
                std::fs::write(root.join(name), "").unwrap();
            } else {
                std::os::unix::fs::symlink(fill(target), root.join(name)).unwrap();
            }
            let got = file_keys(&root, None, &Location::Path((*redirect).to_owned()));
            let want: Vec<String> = want.iter().map(|w| fill(w)).collect();
            assert_eq!(got, Some(want), "{redirect}");
        }
        let home = Location::Home(".ssh/id_rsa".to_owned());
        assert_eq!(file_keys(&root, None, &home), None);
        assert_eq!(
            file_keys(&root, Some(&outside), &home),
            Some(vec![format!("{}/.ssh/id_rsa", outside.display())])
        );
    }
}
