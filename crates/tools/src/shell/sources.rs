//! The files a command line may read that no key gates one by one: every literal argument of
//! every simple command that names a place inside the root (`cat .env`, `head -5 src/../.env`,
//! `git diff --output=x`'s value), as `read:` resources under the name as normalised and the
//! real path its links lead to.
//!
//! They are never asked about before the line runs: a command's arguments are already in its
//! `tool.bash.cmd:` key, which is what the user allows. They are the *sources* of what the line
//! prints (`Prepared::sources`): the runtime records them with the call's retained output, and a
//! later read of that output as `artifact://` asks today's policy about them, so a deny added
//! after `cat .env` ran (`--deny 'read:.env'`) covers the copy as it covers a read_file's.
//!
//! Over-approximation is the safe side here: an argument that is no file at all (`git status`
//! gives `read:status`) can only make a copy harder to read, when a rule denies that name.
//! Words outside the root are left out, since the path scope denies every such key and would
//! make the output of any command naming `/usr/lib` unreadable. What this cannot see: globs
//! (`cat *.env` is the source `read:*.env`, which a deny on `read:.env` does not match), files a
//! program finds for itself (`grep -r KEY .` reads what its walk meets), and words that expand
//! at run time.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use tackle_tool::PermissionResource;

use super::analyze::{Analysis, Location, MAX_COMMANDS};
use super::paths::{lexical, resolve_absolute, shown};

/// The `read:` sources of `analysis` run in `root` (see the module docs), sorted, without
/// duplicates.
pub fn argument_sources(analysis: &Analysis, root: &Path) -> Vec<PermissionResource> {
    let mut names = BTreeSet::new();
    for c in analysis.commands.iter().take(MAX_COMMANDS) {
        let dirs: Vec<PathBuf> = match &c.dirs {
            Some(dirs) => dirs
                .iter()
                .filter_map(|d| match d {
                    Location::Path(p) => Some(lexical(&root.join(p))),
                    Location::Home(_) => None,
                })
                .collect(),
            None => vec![root.to_path_buf()],
        };
        for word in c.words.iter().skip(1) {
            let Some(text) = word.literal.as_deref() else {
                continue;
            };
            let Some(path) = path_of(text) else {
                continue;
            };
            for dir in &dirs {
                let absolute = lexical(&dir.join(path));
                if absolute.starts_with(root) {
                    names.insert(shown(root, &absolute));
                }
                if let Some(real) = resolve_absolute(&absolute)
                    && real.starts_with(root)
                {
                    names.insert(shown(root, &real));
                }
            }
        }
    }
    names.into_iter().map(PermissionResource::read).collect()
}

/// The path an argument names: the word itself, or the value of `--option=value`; `None` for
/// an option without a value, an empty word, or a word with a NUL.
fn path_of(text: &str) -> Option<&str> {
    let path = match text.strip_prefix('-') {
        Some(_) => text.split_once('=')?.1,
        None => text,
    };
    (!path.is_empty() && !path.contains('\0')).then_some(path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::shell::Dialect;
    use crate::shell::analyze::analyze;

    fn sources(root: &Path, line: &str) -> Vec<String> {
        let analysis = analyze(line, Dialect::Bash);
        argument_sources(&analysis, root)
            .into_iter()
            .map(|r| r.key())
            .collect()
    }

    #[test]
    fn arguments_inside_the_root_are_sources_under_name_and_real_path() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join(".env"), "K=1").unwrap();
        std::os::unix::fs::symlink(root.join(".env"), root.join("sub/alias")).unwrap();
        let rows: &[(&str, &[&str])] = &[
            ("cat .env", &["read:.env"]),
            ("head -n 5 ./.env", &["read:.env", "read:5"]),
            ("cat src/../.env", &["read:.env"]),
            ("cat sub/alias", &["read:.env", "read:sub/alias"]),
            ("cd sub && cat ../.env", &["read:.env", "read:sub"]),
            // After `;` the `cd` may have failed: both directories.
            (
                "cd sub; cat alias",
                &["read:.env", "read:alias", "read:sub", "read:sub/alias"],
            ),
            ("git diff --output=out.txt", &["read:diff", "read:out.txt"]),
            ("cat /etc/passwd ../outside", &[]),
            ("cat \"$F\" -n", &[]),
            ("cat '.e'nv | wc -l", &["read:.env"]),
        ];
        for (line, want) in rows {
            assert_eq!(sources(&root, line), *want, "{line}");
        }
    }
}
