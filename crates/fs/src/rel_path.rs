//! Lexical resolution of a caller's path to a normalized root-relative path.

use std::fmt;
use std::path::{Component, Path};

use crate::FsError;

/// The longest path accepted, in bytes (Linux `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;
/// The longest path component accepted, in bytes (Linux `NAME_MAX`).
pub const MAX_COMPONENT_BYTES: usize = 255;

/// A normalized path relative to the root: `/`-separated components with no `.`, `..`, empty
/// or absolute parts, or `.` for the root itself. Only [`crate::Root::resolve`] makes one.
///
/// Lexically it cannot leave the root; whether the file system agrees (symlinks) is checked by
/// every operation that opens it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelPath(String);

impl RelPath {
    /// The path as the permission resource: `src/main.rs`, or `.` for the root.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn as_path(&self) -> &Path {
        Path::new(&self.0)
    }

    pub fn is_root(&self) -> bool {
        self.0 == "."
    }

    /// Joins already validated components; no components is the root.
    pub(crate) fn from_parts<'a>(parts: impl Iterator<Item = &'a String>) -> RelPath {
        let joined = parts.map(String::as_str).collect::<Vec<_>>().join("/");
        RelPath(if joined.is_empty() {
            ".".to_owned()
        } else {
            joined
        })
    }

    /// The parent directory (`.` at the top) and the last component; `None` for the root.
    pub(crate) fn split_last(&self) -> Option<(&str, &str)> {
        if self.is_root() {
            return None;
        }
        Some(match self.0.rsplit_once('/') {
            Some((parent, name)) => (parent, name),
            None => (".", self.0.as_str()),
        })
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Validates and normalizes `input` against the canonical `root` without touching the disk.
pub(crate) fn resolve_lexically(root: &Path, input: &str) -> Result<RelPath, FsError> {
    if input.is_empty() {
        return Err(FsError::invalid(
            input,
            "the path is empty; pass a path relative to the project root",
        ));
    }
    if input.len() > MAX_PATH_BYTES {
        return Err(FsError::invalid(
            input,
            format!(
                "the path is {} bytes; the limit is {MAX_PATH_BYTES}",
                input.len()
            ),
        ));
    }
    if input.contains('\0') {
        return Err(FsError::invalid(
            input,
            "the path contains a NUL byte; remove it",
        ));
    }
    let outside = || FsError::OutsideRoot {
        input: input.to_owned(),
    };
    let path = Path::new(input);
    let relative = if path.is_absolute() {
        // Component-wise, so `/proj-evil/x` never matches root `/proj`.
        path.strip_prefix(root).map_err(|_| outside())?
    } else {
        path
    };
    let mut parts: Vec<&str> = Vec::new();
    for component in relative.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if parts.pop().is_none() {
                    return Err(outside());
                }
            }
            Component::Normal(name) => {
                // The input is a `&str`, so every component is valid UTF-8.
                let name = name.to_str().ok_or_else(|| {
                    FsError::invalid(input, "the path is not valid UTF-8; pass a UTF-8 path")
                })?;
                if name.len() > MAX_COMPONENT_BYTES {
                    return Err(FsError::invalid(
                        input,
                        format!(
                            "a path component is {} bytes; the limit is {MAX_COMPONENT_BYTES}",
                            name.len()
                        ),
                    ));
                }
                parts.push(name);
            }
            Component::RootDir | Component::Prefix(_) => return Err(outside()),
        }
    }
    Ok(RelPath(if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolution_table() {
        let root = Path::new("/proj");
        let ok = [
            ("src", "src"),
            ("./src/../src/new.rs", "src/new.rs"),
            (".", "."),
            ("./", "."),
            ("a//b/", "a/b"),
            ("/proj", "."),
            ("/proj/src/x", "src/x"),
            ("/proj/src/../x", "x"),
            ("a/..", "."),
        ];
        for (input, rel) in ok {
            let got = resolve_lexically(root, input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(got.as_str(), rel, "{input}");
        }
        let deep = "../".repeat(200) + "x";
        let outside = [
            "..",
            "../x",
            "a/../../x",
            deep.as_str(),
            "/etc/passwd",
            "/proj-evil/x",
            "/proj/../x",
            "/proc/self/root/etc/passwd",
            "/",
        ];
        for input in outside {
            let e = resolve_lexically(root, input).unwrap_err();
            assert_eq!(e.code(), "path_outside_root", "{input}");
        }
        let long_name = "x".repeat(256);
        let long_path = "a/".repeat(2100);
        for input in ["", "a\0b", long_name.as_str(), long_path.as_str()] {
            let e = resolve_lexically(root, input).unwrap_err();
            assert_eq!(e.code(), "invalid_path", "{input:?}");
        }
        assert!(resolve_lexically(root, &"x".repeat(255)).is_ok());
    }

    #[test]
    fn split_last() {
        let root = Path::new("/proj");
        let r = |s| resolve_lexically(root, s).unwrap();
        assert_eq!(r("a/b/c").split_last(), Some(("a/b", "c")));
        assert_eq!(r("c").split_last(), Some((".", "c")));
        assert_eq!(r(".").split_last(), None);
    }
}
