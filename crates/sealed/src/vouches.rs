//! What the user vouched for, per project: directories whose files (content and names) the
//! planner may see, and commands that run without asking and whose output it may see.
//!
//! Kept in the user's own configuration directory (`$XDG_CONFIG_HOME/tackle/sealed.json`,
//! else `~/.config/tackle/sealed.json`), never in a project: a repository cannot vouch for
//! itself. Written by `tackle trust --sealed DIR` and `tackle trust --sealed-command "ARGV"`.
//!
//! ```json
//! {"tackle_sealed": 1, "roots": {"/abs/project": {"directories": ["src"], "commands": [["git", "status"]]}}}
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tackle_fs::OwnFile;

/// The file's format version.
const VERSION: u32 = 1;

/// What one project's user vouched for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vouches {
    /// Root-relative directories (`.` for the whole project), normalized.
    #[serde(default)]
    pub directories: Vec<String>,
    /// Exact argv of vouched commands (program as written, then its arguments).
    #[serde(default)]
    pub commands: Vec<Vec<String>>,
    /// Files (root-relative, real paths) a sealed session wrote quarantined content into:
    /// untrusted in every later session too, whatever directory holds them, until a write of
    /// trusted content (or a vouch for the file at the prompt) replaces it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tainted: Vec<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct VouchFile {
    tackle_sealed: u32,
    #[serde(default)]
    roots: BTreeMap<String, Vouches>,
}

/// Where the user's vouches are kept.
pub fn file_path() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".config"),
    };
    Some(base.join("tackle").join("sealed.json"))
}

impl Vouches {
    /// The vouches for `root` kept in the file at `path` (none when it does not exist).
    pub fn load(path: &Path, root: &Path) -> Result<Vouches, String> {
        let file = read(path)?;
        Ok(file
            .roots
            .get(&root.to_string_lossy().into_owned())
            .cloned()
            .unwrap_or_default())
    }

    /// Whether `argv` is exactly a vouched command.
    pub fn command_vouched(&self, argv: &[String]) -> bool {
        self.commands.iter().any(|c| c.as_slice() == argv)
    }

    /// Whether `path` (root-relative, normalized) lies beneath a vouched directory.
    pub fn covers(&self, path: &str) -> bool {
        self.directories.iter().any(|dir| beneath(path, dir))
    }

    /// Whether a sealed session wrote quarantined content into `path`.
    pub fn tainted(&self, path: &str) -> bool {
        self.tainted.iter().any(|f| f == path)
    }
}

/// Marks `file` (root-relative) tainted, or no longer, in `root`'s vouches in the file at `path`.
pub fn set_tainted(path: &Path, root: &Path, file: &str, tainted: bool) -> Result<(), String> {
    let mut vouch_file = read(path)?;
    vouch_file.tackle_sealed = VERSION;
    let key = root.to_string_lossy().into_owned();
    let entry = vouch_file.roots.entry(key.clone()).or_default();
    let listed = entry.tainted.iter().any(|f| f == file);
    match (tainted, listed) {
        (true, false) => entry.tainted.push(file.to_owned()),
        (false, true) => entry.tainted.retain(|f| f != file),
        _ => return Ok(()),
    }
    if *entry == Vouches::default() {
        vouch_file.roots.remove(&key);
    }
    let text = serde_json::to_string_pretty(&vouch_file).map_err(|e| e.to_string())?;
    write_private(path, text.as_bytes())
}

/// Every root's vouches kept in the file at `path`, by root.
pub fn all(path: &Path) -> Result<BTreeMap<String, Vouches>, String> {
    Ok(read(path)?.roots)
}

/// Adds `directory` (root-relative, normalized) and `commands` to `root`'s vouches in the file at
/// `path`, written atomically with mode 0600.
pub fn add(
    path: &Path,
    root: &Path,
    directories: &[String],
    commands: &[Vec<String>],
) -> Result<Vouches, String> {
    let mut file = read(path)?;
    file.tackle_sealed = VERSION;
    let entry = file
        .roots
        .entry(root.to_string_lossy().into_owned())
        .or_default();
    for dir in directories {
        if !entry.directories.contains(dir) {
            entry.directories.push(dir.clone());
        }
    }
    for command in commands {
        if !entry.commands.contains(command) {
            entry.commands.push(command.clone());
        }
    }
    let vouches = entry.clone();
    let text = serde_json::to_string_pretty(&file).map_err(|e| e.to_string())?;
    write_private(path, text.as_bytes())?;
    Ok(vouches)
}

/// Takes `directories` and `commands` out of `root`'s vouches in the file at `path`; says how
/// many of them were there.
pub fn remove(
    path: &Path,
    root: &Path,
    directories: &[String],
    commands: &[Vec<String>],
) -> Result<(Vouches, usize), String> {
    let mut file = read(path)?;
    file.tackle_sealed = VERSION;
    let key = root.to_string_lossy().into_owned();
    let Some(entry) = file.roots.get_mut(&key) else {
        return Ok((Vouches::default(), 0));
    };
    let before = entry.directories.len() + entry.commands.len();
    entry.directories.retain(|d| !directories.contains(d));
    entry.commands.retain(|c| !commands.contains(c));
    let removed = before - entry.directories.len() - entry.commands.len();
    let vouches = entry.clone();
    if vouches == Vouches::default() {
        file.roots.remove(&key);
    }
    if removed > 0 {
        let text = serde_json::to_string_pretty(&file).map_err(|e| e.to_string())?;
        write_private(path, text.as_bytes())?;
    }
    Ok((vouches, removed))
}

fn read(path: &Path) -> Result<VouchFile, String> {
    let bytes = match OwnFile::VOUCHES.read_at(path) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => {
            return Ok(VouchFile {
                tackle_sealed: VERSION,
                roots: BTreeMap::new(),
            });
        }
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let text = bytes
        .into_text(OwnFile::VOUCHES, &path.to_string_lossy())
        .map_err(|e| e.to_string())?;
    let file: VouchFile = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}: {e}; fix the file or remove it (it holds only what `tackle trust --sealed` wrote)",
            path.display()
        )
    })?;
    if file.tackle_sealed != VERSION {
        return Err(format!(
            "{}: format {} is not one this tackle reads ({VERSION})",
            path.display(),
            file.tackle_sealed
        ));
    }
    Ok(file)
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let dir = path.parent().ok_or("the vouch file has no directory")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let temp = dir.join(format!(".sealed.json.{}.tmp", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temp)
        .map_err(|e| format!("{}: {e}", temp.display()))?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    if let Err(e) = written.and_then(|()| std::fs::rename(&temp, path)) {
        let _ = std::fs::remove_file(&temp);
        return Err(format!("{}: {e}", path.display()));
    }
    Ok(())
}

/// Whether `path` is `dir` or lies beneath it (both root-relative, normalized; `.` is the root).
pub fn beneath(path: &str, dir: &str) -> bool {
    dir == "."
        || path == dir
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_covers_what_lies_beneath_it_and_nothing_beside_it() {
        assert!(beneath("src/a.rs", "src"));
        assert!(beneath("src", "src"));
        assert!(!beneath("srcx/a.rs", "src"));
        assert!(!beneath("a.rs", "src"));
        assert!(beneath("anything", "."));
    }

    #[test]
    fn vouches_are_kept_per_root_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tackle/sealed.json");
        let root = Path::new("/p/one");
        assert_eq!(Vouches::load(&path, root).unwrap(), Vouches::default());
        add(
            &path,
            root,
            &["src".into()],
            &[vec!["git".into(), "status".into()]],
        )
        .unwrap();
        add(&path, Path::new("/p/two"), &["docs".into()], &[]).unwrap();
        let one = Vouches::load(&path, root).unwrap();
        assert!(one.covers("src/x") && !one.covers("docs/x"));
        set_tainted(&path, root, "src/a.rs", true).unwrap();
        assert!(Vouches::load(&path, root).unwrap().tainted("src/a.rs"));
        set_tainted(&path, root, "src/a.rs", false).unwrap();
        assert!(!Vouches::load(&path, root).unwrap().tainted("src/a.rs"));
        let (left, removed) = remove(&path, root, &["src".into(), "nope".into()], &[]).unwrap();
        assert_eq!(removed, 1);
        assert!(!left.covers("src/x") && left.command_vouched(&["git".into(), "status".into()]));
        add(&path, root, &["src".into()], &[]).unwrap();
        let one = Vouches::load(&path, root).unwrap();
        assert!(one.command_vouched(&["git".into(), "status".into()]));
        assert!(!one.command_vouched(&["git".into(), "status".into(), "-s".into()]));
        assert!(!one.command_vouched(&["git".into()]));
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    #[test]
    fn a_file_nested_100000_deep_is_an_error_not_a_crash() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sealed.json");
        let nested = format!(
            r#"{{"tackle_sealed":1,"roots":{{"/p":{{"directories":{}{}}}}}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        std::fs::write(&path, nested).unwrap();
        let err = Vouches::load(&path, Path::new("/p")).unwrap_err();
        assert!(err.contains("sealed.json"), "{err}");
    }

    #[test]
    fn a_damaged_file_is_an_error_that_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sealed.json");
        std::fs::write(&path, "{not json").unwrap();
        let err = Vouches::load(&path, Path::new("/p")).unwrap_err();
        assert!(err.contains("sealed.json"), "{err}");
        std::fs::write(&path, r#"{"tackle_sealed":1,"roots":{},"extra":1}"#).unwrap();
        assert!(Vouches::load(&path, Path::new("/p")).is_err());
    }
}
