//! The path words of a command → the command as the kernel will meet them: a second
//! `tool.bash.cmd:` key in which every path-shaped word is the file it reaches from the
//! directory the command runs in, symlinks followed and each `..` applied after the link
//! before it (`cat src/link/../x` with `link → /etc/ssl` reads `/etc/x`).
//!
//! The gate reads a command key's words lexically and as if the command ran in the project root
//! (`tackle_gate`'s command rules): that is predictable, and right whenever no symlink and no
//! `cd` stands between the words and the files. When either does, the command is also keyed
//! with the words resolved here, root-relative inside the root and absolute outside, so an
//! allow rule must hold for both and a deny or ask on either holds (as file tools key a name
//! and its real path).
//!
//! Which words are path-shaped: the verb and every argument with a `/` (for `--opt=value`, the
//! value); after a `cd`, an
//! argument that names an existing entry of that directory too; a `~/…` word under `$HOME`; a
//! glob's directory. Only a path that starts in the root is resolved through links (the links a
//! hostile repository can plant); one that starts outside is read lexically. A glob whose last
//! component could match a symlink in its directory is unresolved: one key cannot name where
//! each match leads. What cannot be resolved (a directory
//! the analysis could not follow, a loop of links, `~` without `$HOME`) is unresolved, the key
//! no allow rule matches.
//!
//! Rejected: rewriting the words of the one key, which would show a person an approval for a
//! command they did not read, and would let a rule on the name as written stop matching.

use std::path::{Path, PathBuf};

use globset::GlobBuilder;

use super::analyze::{Analysis, Location, MAX_COMMANDS, ShellWord, SimpleCommand};
use super::keys::command_target;
use super::paths::{NOT_FILES, lexical, resolve_absolute, shown};

/// The resolved command targets of a line (those that differ from the targets as written),
/// and whether a path word could not be resolved.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ResolvedCommands {
    pub targets: Vec<String>,
    pub unresolved: bool,
}

/// The command targets of `analysis` with path-shaped words resolved (see the module docs).
pub fn resolved_targets(analysis: &Analysis, root: &Path, home: Option<&Path>) -> ResolvedCommands {
    let mut out = ResolvedCommands::default();
    if analysis.commands.len() > MAX_COMMANDS {
        // The written targets are already only `?`.
        return out;
    }
    for c in &analysis.commands {
        let Some(written) = command_target(c) else {
            continue;
        };
        let dirs: Vec<Location> = match &c.dirs {
            Some(dirs) => dirs.clone(),
            None if c.words.iter().any(names_relative_path) => {
                out.unresolved = true;
                continue;
            }
            None => continue,
        };
        for dir in &dirs {
            let Some(dir) = absolute_dir(dir, root, home) else {
                // `~` without `$HOME`: only a relative path word depends on it.
                out.unresolved |= c.words.iter().any(names_relative_path);
                continue;
            };
            match resolved_command(c, &dir, root, home) {
                Some(target) if target != written => {
                    if !out.targets.contains(&target) {
                        out.targets.push(target);
                    }
                }
                Some(_) => {}
                None => out.unresolved = true,
            }
        }
    }
    out
}

/// Whether a word names a path relative to the working directory (which an unknown directory
/// makes unknowable).
fn names_relative_path(word: &ShellWord) -> bool {
    let text = word.shown();
    text.contains('/') && !text.starts_with('/') && !text.starts_with('~')
}

/// The directory a command runs in, absolute and lexically normal (as bash's logical `cd`
/// leaves it); `None` for a directory under `~` without `$HOME`.
fn absolute_dir(dir: &Location, root: &Path, home: Option<&Path>) -> Option<PathBuf> {
    Some(match dir {
        Location::Path(p) if p.starts_with('/') => lexical(Path::new(p)),
        Location::Path(p) => lexical(&root.join(p)),
        Location::Home(p) => lexical(&absolute_home(home)?.join(p)),
    })
}

/// The command's target with its path words resolved from `dir`; `None` when one cannot be.
fn resolved_command(
    c: &SimpleCommand,
    dir: &Path,
    root: &Path,
    home: Option<&Path>,
) -> Option<String> {
    let in_root = dir == root;
    let mut parts: Vec<String> = c.assignments.clone();
    for (i, word) in c.words.iter().enumerate() {
        let verb = i == 0;
        let resolved = match &word.literal {
            Some(text) => literal_word(text, verb, dir, in_root, root)?,
            None => expanding_word(&word.raw, dir, in_root, root, home)?,
        };
        parts.push(resolved.unwrap_or_else(|| word.shown().to_owned()));
    }
    let target = parts.join(" ");
    // As for the target as written: no control character reaches an approval prompt.
    (!target.chars().any(char::is_control)).then_some(target)
}

fn absolute_home(home: Option<&Path>) -> Option<&Path> {
    home.filter(|h| h.is_absolute())
}

/// A literal word: `Some(None)` when it stays as written, `Some(Some(w))` when it resolves to
/// `w`, `None` when it cannot be resolved.
fn literal_word(
    text: &str,
    verb: bool,
    dir: &Path,
    in_root: bool,
    root: &Path,
) -> Option<Option<String>> {
    let path_shaped = text.contains('/')
        || (!verb
            && !in_root
            && !text.is_empty()
            && !text.starts_with('-')
            && dir.join(text).symlink_metadata().is_ok());
    if !path_shaped || NOT_FILES.contains(&text) {
        return Some(None);
    }
    // `--output=src/x`: the path is the value (`git log --output=F` writes `F`).
    if !verb
        && text.starts_with('-')
        && let Some((option, value)) = text.split_once('=')
        && value.contains('/')
    {
        return Some(
            resolved_path(&dir.join(value), in_root, root)?.map(|v| format!("{option}={v}")),
        );
    }
    let written = dir.join(text);
    resolved_path(&written, in_root, root)
}

/// `written` resolved: `Some(None)` when the command as written already names it (the command
/// runs in the root and no link or `..` after one moves it).
fn resolved_path(written: &Path, in_root: bool, root: &Path) -> Option<Option<String>> {
    let real = shown(root, &reach(written, root)?);
    if in_root && real == shown(root, &lexical(written)) {
        return Some(None);
    }
    Some(Some(as_word(&real)))
}

/// The file an absolute path as written reaches. A path that starts in the root (where a
/// hostile repository plants links) is resolved as the kernel does (`paths::physical`); one that
/// starts outside names the machine's own files and is taken lexically, so `/bin/ls` stays
/// `/bin/ls` where `/bin` is a link to `/usr/bin`.
fn reach(written: &Path, root: &Path) -> Option<PathBuf> {
    if written.starts_with(root) {
        resolve_absolute(written)
    } else {
        Some(lexical(written))
    }
}

/// A word that expands when the shell runs it: a `~/…` path and a plain glob are resolved,
/// anything else (parameters, substitutions, quoting) stays as written, which the gate matches
/// only as written or by a whole-word `*`.
fn expanding_word(
    raw: &str,
    dir: &Path,
    in_root: bool,
    root: &Path,
    home: Option<&Path>,
) -> Option<Option<String>> {
    if raw.contains(['$', '`', '\'', '"', '\\', '{', '(']) {
        return Some(None);
    }
    if let Some(rest) = raw.strip_prefix('~') {
        if !(rest.is_empty() || rest.starts_with('/')) || is_glob(rest) {
            // `~user/…`, or a glob under `~`: the gate sees an anchor it cannot climb out of.
            return Some(None);
        }
        let home = absolute_home(home)?;
        return resolved_path(&home.join(rest.trim_start_matches('/')), true, root);
    }
    if !is_glob(raw) {
        return Some(None);
    }
    let (parent, pattern) = match raw.rsplit_once('/') {
        Some((parent, pattern)) => (parent, pattern),
        None => ("", raw),
    };
    if is_glob(parent) {
        // A glob before another component: the gate matches it only as written.
        return Some(None);
    }
    let parent_written: PathBuf = if parent.is_empty() && !raw.starts_with('/') {
        dir.to_path_buf()
    } else if raw.starts_with('/') {
        PathBuf::from(if parent.is_empty() { "/" } else { parent })
    } else {
        dir.join(parent)
    };
    let parent_real = reach(&parent_written, root)?;
    if links_match(&parent_real, pattern)? {
        return None;
    }
    let parent_shown = shown(root, &parent_real);
    if in_root && parent_shown == shown(root, &lexical(&parent_written)) {
        return Some(None);
    }
    Some(Some(format!(
        "{}/{pattern}",
        parent_shown.trim_end_matches('/')
    )))
}

/// Whether a symlink in `dir` has a name the glob `pattern` matches (hidden names included, as
/// bash's `dotglob` would). `None` when the pattern is not a glob the matcher reads.
fn links_match(dir: &Path, pattern: &str) -> Option<bool> {
    let matcher = GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .ok()?
        .compile_matcher();
    let Ok(entries) = std::fs::read_dir(dir) else {
        // Nothing to list: the glob matches nothing, or bash passes it on as written.
        return Some(false);
    };
    for entry in entries.flatten() {
        let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
        if is_link && matcher.is_match(entry.file_name()) {
            return Some(true);
        }
    }
    Some(false)
}

fn is_glob(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

/// A resolved path as a command word: a root-relative path with no `/` keeps one (`./x`), so a
/// resolved verb is never read as a `PATH` lookup.
fn as_word(path: &str) -> String {
    if path.contains('/') || path == "." {
        path.to_owned()
    } else {
        format!("./{path}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::Dialect;
    use crate::shell::analyze::analyze;

    /// (line, second keys with `@out` for the outside directory, unresolved)
    const TABLE: &[(&str, &[&str], bool)] = &[
        // Nothing moves a plain word, `.`, `//` or a `..` without a link before it.
        ("cat src/a.rs ./src//a.rs src/sub/../a.rs", &[], false),
        ("git log --oneline origin/main", &[], false),
        ("curl https://example.com/a/../b", &[], false),
        // Words starting outside the root are the machine's own: read lexically.
        ("cat /etc/hosts ../x", &[], false),
        // A link, then `..`: the kernel's answer.
        ("cat src/out/../x", &["cat @out/x"], false),
        ("cat src/out/y", &["cat @out/deep/y"], false),
        ("cat src/in/b.rs", &["cat src/sub/b.rs"], false),
        ("./src/run_link -v", &["./run.sh -v"], false),
        // An option's value is a path too.
        (
            "git log --output=src/out/x",
            &["git log --output=@out/deep/x"],
            false,
        ),
        (
            "git log --output=src/x -o src/out/y",
            &["git log --output=src/x -o @out/deep/y"],
            false,
        ),
        // After a `cd`, words name files from there.
        ("cd src && cat a.rs -n", &["cat src/a.rs -n"], false),
        ("cd src && cat missing.rs", &[], false),
        ("cd .. && cat root/src/out/../x", &["cat @out/x"], false),
        // A glob over a directory with a link it could match cannot be one key.
        ("cat src/*.rs", &[], false),
        ("cat src/o*", &[], true),
        ("cd src && cat *.rs", &["cat src/*.rs"], false),
        // Words the shell expands otherwise are left to the gate, which matches them only as
        // written.
        ("cat src/$f", &[], false),
    ];

    #[test]
    fn second_keys() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("root");
        let out = base.join("out");
        std::fs::create_dir_all(root.join("src/sub")).unwrap();
        std::fs::create_dir_all(out.join("deep")).unwrap();
        std::fs::write(root.join("src/a.rs"), "").unwrap();
        std::fs::write(root.join("src/sub/b.rs"), "").unwrap();
        std::fs::write(root.join("run.sh"), "").unwrap();
        std::os::unix::fs::symlink(out.join("deep"), root.join("src/out")).unwrap();
        std::os::unix::fs::symlink("sub", root.join("src/in")).unwrap();
        std::os::unix::fs::symlink("../run.sh", root.join("src/run_link")).unwrap();
        let mut wrong = Vec::new();
        for &(line, want, unresolved) in TABLE {
            let analysis = analyze(line, Dialect::Bash);
            let got = resolved_targets(&analysis, &root, None);
            let want: Vec<String> = want
                .iter()
                .map(|w| w.replace("@out", &out.to_string_lossy()))
                .collect();
            if got.targets != want || got.unresolved != unresolved {
                wrong.push(format!("{line:?}: {got:?}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
