//! Resolving a model-supplied path beneath the session root.
//!
//! This is the lexical-plus-canonical check the tools use until the `fs` crate's
//! `RESOLVE_BENEATH` handle replaces it: `..` that climbs out, absolute paths elsewhere and prefix
//! siblings (`/proj-evil` for root `/proj`) are refused before any I/O, and the deepest existing
//! ancestor is canonicalized so a symlink leading out of the root is refused too. It fails
//! closed: anything it cannot resolve is refused.

use std::path::{Component, Path, PathBuf};

use tackle_tool::ToolError;
use tackle_tool::protocol::ErrorCode;

pub const PATH_OUTSIDE_ROOT: ErrorCode = ErrorCode::new("path_outside_root");
pub const INVALID_PATH: ErrorCode = ErrorCode::new("invalid_path");

/// A path known (at resolution time) to lie beneath the root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// Root-relative, `/`-separated; `.` for the root itself. This is the permission resource.
    pub relative: String,
    pub absolute: PathBuf,
}

pub fn resolve(tool: &str, root: &Path, input: &str) -> Result<Resolved, ToolError> {
    if input.is_empty() {
        return Err(ToolError::new(
            INVALID_PATH,
            format!("{tool}: path is empty; pass a path relative to the project root"),
        ));
    }
    if input.contains('\0') {
        return Err(ToolError::new(
            INVALID_PATH,
            format!("{tool}: path contains a NUL byte"),
        ));
    }
    if input.len() > 4096 {
        return Err(ToolError::new(
            INVALID_PATH,
            format!("{tool}: path is {} bytes; the limit is 4096", input.len()),
        ));
    }
    let outside = || {
        ToolError::new(
            PATH_OUTSIDE_ROOT,
            format!(
                "{tool}: `{input}` is outside the project root {}; pass a path inside it",
                root.display()
            ),
        )
    };
    let path = Path::new(input);
    let relative_part = if path.is_absolute() {
        // Component-wise, so `/proj-evil` never matches root `/proj`.
        path.strip_prefix(root).map_err(|_| outside())?
    } else {
        path
    };
    let mut parts: Vec<&str> = Vec::new();
    for c in relative_part.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if parts.pop().is_none() {
                    return Err(outside());
                }
            }
            Component::Normal(s) => {
                let s = s.to_str().ok_or_else(|| {
                    ToolError::new(INVALID_PATH, format!("{tool}: path is not valid UTF-8"))
                })?;
                if s.len() > 255 {
                    return Err(ToolError::new(
                        INVALID_PATH,
                        format!(
                            "{tool}: a path component is {} bytes; the limit is 255",
                            s.len()
                        ),
                    ));
                }
                parts.push(s);
            }
            Component::RootDir | Component::Prefix(_) => return Err(outside()),
        }
    }
    let mut absolute = root.to_path_buf();
    absolute.extend(&parts);
    // Follow symlinks as the kernel would: the deepest existing ancestor must stay inside.
    let mut probe = absolute.as_path();
    loop {
        match probe.canonicalize() {
            Ok(real) => {
                if !real.starts_with(root) {
                    return Err(outside());
                }
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // A dangling symlink is not "missing": refuse rather than guess where it points.
                if probe.symlink_metadata().is_ok() {
                    return Err(outside());
                }
                match probe.parent() {
                    Some(p) if p.starts_with(root) => probe = p,
                    _ => return Err(outside()),
                }
            }
            Err(_) => return Err(outside()),
        }
    }
    let relative = if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    };
    Ok(Resolved { relative, absolute })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolution_table() {
        let top = tempfile::tempdir().unwrap();
        let root = top.path().join("proj");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(top.path().join("proj-evil")).unwrap();
        std::fs::write(top.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(top.path().join("secret"), root.join("out")).unwrap();
        std::os::unix::fs::symlink("src", root.join("inlink")).unwrap();
        std::os::unix::fs::symlink(top.path().join("nowhere"), root.join("dangling")).unwrap();
        let root = root.canonicalize().unwrap();
        let ok = |input: &str, rel: &str| {
            let r = resolve("t", &root, input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(r.relative, rel, "{input}");
        };
        ok("src", "src");
        ok("./src/../src/new.rs", "src/new.rs");
        ok(".", ".");
        ok(&format!("{}/src", root.display()), "src");
        ok("inlink/x", "inlink/x");
        ok("missing/deeper/file", "missing/deeper/file");
        let evil = format!("{}-evil/x", root.display());
        for bad in [
            "../secret",
            "src/../../secret",
            "/etc/passwd",
            evil.as_str(),
            "out",
            "dangling",
            "/proc/self/root/etc/passwd",
        ] {
            let e = resolve("t", &root, bad).unwrap_err();
            assert_eq!(e.code, PATH_OUTSIDE_ROOT, "{bad}");
        }
        for bad in ["", "a\0b", &"x".repeat(256), &"a/".repeat(2100)] {
            let e = resolve("t", &root, bad).unwrap_err();
            assert_eq!(e.code, INVALID_PATH, "{bad:?}");
        }
    }
}
