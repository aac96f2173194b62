//! Adding and removing an entry of an `mcp.json` file, atomically.
//!
//! Key decision: the file is read and checked with the loader's own parser before and after
//! the edit, so `tackle mcp add` can write nothing the loader would refuse (an invalid name, a
//! URL that is not http(s), a malformed `${VAR}`), and a file that is already invalid is left
//! for a person to fix rather than rewritten. The new text goes to a temp file created beside
//! the target (0600 for the user's file), is synced, and renamed over it: a crash leaves the
//! old file or the new one, never half of either. A symlink at the target is refused: it could
//! aim the edit at another file.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::Path;

use anyhow::{Context, anyhow, bail};
use serde_json::{Map, Value};

/// The file's `servers` object as written (key order kept), checked by the loader; a missing
/// file is an empty one.
fn read(path: &Path) -> anyhow::Result<Map<String, Value>> {
    // A link could point the edit at another file (a repository's `.agents/mcp.json` at the
    // user's own); tackle edits only a file that is itself at the path.
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        bail!(
            "{} is a symbolic link; tackle edits only a regular file there, so replace the link with the file or edit its target by hand",
            path.display()
        );
    }
    // Regular files only, capped, never blocking: a FIFO or a device is refused, not read.
    let kind = tackle_fs::OwnFile::MCP_CONFIG;
    let Some(read) = kind.read_at(path)? else {
        return Ok(Map::new());
    };
    let text = read.into_text(kind, &path.display().to_string())?;
    tackle_mcp::client::config::parse(&text).map_err(|e| {
        anyhow!(
            "{}: {e}; fix the file by hand first (tackle rewrites only files it can read)",
            path.display()
        )
    })?;
    let value: Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not valid JSON", path.display()))?;
    Ok(match value {
        Value::Object(mut top) => match top.remove("servers") {
            Some(Value::Object(servers)) => servers,
            _ => Map::new(),
        },
        _ => Map::new(),
    })
}

/// Write `servers` back as `{"servers": …}`, after checking it with the loader.
fn write(path: &Path, servers: Map<String, Value>, private: bool) -> anyhow::Result<()> {
    let mut top = Map::new();
    top.insert("servers".to_owned(), Value::Object(servers));
    let mut text = serde_json::to_string_pretty(&Value::Object(top))
        .context("serializing the server entries")?;
    text.push('\n');
    tackle_mcp::client::config::parse(&text)
        .map_err(|e| anyhow!("the entry would not load: {e}"))?;
    replace(path, text.as_bytes(), private)
}

/// Whether `servers` of the file at `path` has `name`.
pub fn contains(path: &Path, name: &str) -> anyhow::Result<bool> {
    Ok(read(path)?.contains_key(name))
}

/// Add `entry` as `name`; a name already there is refused, naming `remove`.
pub fn add(
    path: &Path,
    scope: super::scope::Scope,
    name: &str,
    entry: Map<String, Value>,
) -> anyhow::Result<()> {
    let mut servers = read(path)?;
    if servers.contains_key(name) {
        return Err(duplicate(path, scope, name));
    }
    servers.insert(name.to_owned(), Value::Object(entry));
    write(path, servers, scope == super::scope::Scope::User)
}

/// The refusal of a name already in `scope`: it names `remove`.
pub fn duplicate(path: &Path, scope: super::scope::Scope, name: &str) -> anyhow::Error {
    anyhow!(
        "an MCP server named `{name}` is already in the {} scope ({}); remove it first with `tackle mcp remove --scope {} {name}`, or choose another name",
        scope.as_str(),
        path.display(),
        scope.as_str()
    )
}

/// Remove `name`; whether it was there.
pub fn remove(path: &Path, scope: super::scope::Scope, name: &str) -> anyhow::Result<bool> {
    let mut servers = read(path)?;
    if servers.remove(name).is_none() {
        return Ok(false);
    }
    write(path, servers, scope == super::scope::Scope::User)?;
    Ok(true)
}

/// Temp file (created new, 0600 when `private`, else 0644) → fsync → rename over `path` →
/// fsync of the directory. The directory is created (0700 when `private`) if missing.
fn replace(path: &Path, bytes: &[u8], private: bool) -> anyhow::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| anyhow!("{} has no parent directory", path.display()))?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(if private { 0o700 } else { 0o755 })
        .create(dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    let file_name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| anyhow!("{} has no file name", path.display()))?;
    let tmp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let written = (|| -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(if private { 0o600 } else { 0o644 })
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        std::fs::File::open(dir)?.sync_all()
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(anyhow!("writing {}: {e}", path.display()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::super::scope::Scope;
    use super::*;

    fn entry(command: &str) -> Map<String, Value> {
        let Value::Object(m) = serde_json::json!({ "command": command }) else {
            unreachable!()
        };
        m
    }

    #[test]
    fn the_user_file_is_private_and_a_duplicate_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("cfg/mcp.json");
        add(&path, Scope::User, "a", entry("x")).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let err = add(&path, Scope::User, "a", entry("y"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("tackle mcp remove --scope user a"), "{err}");
        add(&path, Scope::User, "b", entry("y")).unwrap();
        assert!(remove(&path, Scope::User, "a").unwrap());
        assert!(!remove(&path, Scope::User, "a").unwrap());
        let left =
            tackle_mcp::client::config::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].name, "b");
        let names: Vec<_> = std::fs::read_dir(t.path().join("cfg"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["mcp.json"], "no temp file is left behind");
    }

    #[test]
    fn what_the_loader_refuses_is_never_written() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("mcp.json");
        for (name, entry) in [
            ("a.b", serde_json::json!({"command": "x"})),
            ("a", serde_json::json!({"url": "file:///etc/passwd"})),
            (
                "a",
                serde_json::json!({"command": "x", "env": {"K": "${1}"}}),
            ),
        ] {
            let Value::Object(entry) = entry else {
                unreachable!()
            };
            assert!(add(&path, Scope::User, name, entry).is_err(), "{name}");
            assert!(!path.exists());
        }
    }

    #[test]
    fn an_invalid_file_is_left_for_a_person() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("mcp.json");
        std::fs::write(&path, r#"{"servers": {"a": {"comand": "x"}}}"#).unwrap();
        let err = add(&path, Scope::Project, "b", entry("y"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("did you mean") && err.contains("fix the file"),
            "{err}"
        );
        assert!(std::fs::read_to_string(&path).unwrap().contains("comand"));
    }

    #[test]
    fn a_symlink_at_the_target_is_refused_not_followed() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, "{}").unwrap();
        let path = t.path().join("mcp.json");
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        let err = add(&path, Scope::Project, "a", entry("x"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("symbolic link"), "{err}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "{}");
        assert!(std::fs::symlink_metadata(&path).unwrap().is_symlink());
    }
}
