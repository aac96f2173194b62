//! Protected paths: built-in protections on `write:` and `read:` keys that no mode, rule or
//! grant lifts.
//!
//! **Owns** the short list of project paths whose change alters what tackle or git will do on
//! a later call, and the one path no tool reads, as data ([`PROTECTED`]), and the lookup of a
//! key's path in it. Each entry carries the sentence that tells the user why it holds.
//!
//! **Key decision:** two strengths, both checked on every key of the entry's action whatever
//! tool produced it (a file tool, a bash redirect, a walk's per-file question) and on the name
//! as well as the real path, since tools emit a key for each (DESIGN.md §4a):
//!
//! - [`Protection::Deny`] — `.agents/store/` holds the artifact store and the event logs. Only
//!   the runtime writes there; a tool that could would forge or erase the record of what
//!   happened. Denied in every mode. Reading it is denied too: an artifact is a copy of what
//!   some call read, so it is read only by its URI (`artifact://<digest>`), which asks the
//!   policy about the call that produced it as well (a deny on `.env` covers its copies), and a
//!   log names every artifact's digest. Rejected: leaving reads to the ordinary rules, under
//!   which a user's `--deny read:.env` never covers `.agents/store/artifacts/<digest>`.
//! - [`Protection::Ask`] — `.agents/` (configuration, MCP servers, skills, agents, plans) and
//!   git's own directory. A write there asks every time, in `yolo` and `accept-edits` too, over
//!   any allow rule, and a session grant does not cover it: one approved write must not become
//!   standing permission to rewrite what decides the next call.
//!
//! Why all of `.git/` and not only `.git/config` and `.git/hooks/`: git reads configuration and
//! runs programs through more of its directory than those two (`config.worktree`, `commondir`
//! pointing at another repository's config, `info/attributes` naming filter drivers, the
//! `modules/*/config` and `hooks` of submodules), and a file tool has no legitimate reason to
//! write any of it by hand (git writes it itself, which is no `write:` key). A `.git` *file* is
//! a pointer to the repository git should use, so the name itself is protected too.
//!
//! Deliberately absent: `.gitattributes` and `.gitmodules` (a filter driver or a submodule
//! `update = !cmd` only runs when `.git/config` defines it, which is protected), `.envrc`
//! (direnv refuses a changed file until the user runs `direnv allow` again), and files that a
//! program the user runs chooses to execute (`Makefile`, `package.json` scripts, `.husky/`):
//! those are project content the gate cannot tell from code, and the ordinary write rules apply.
//!
//! Matching is case-insensitive (a case-insensitive file system stores `.GIT/config` as git's
//! own) and at any depth (a nested repository or project has its own `.git` and `.agents`), on
//! the path with empty and `.` segments removed (the gate does no I/O, but it need not be
//! fooled by `.git//config`).

use std::sync::OnceLock;

use globset::{Candidate, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::PolicyError;

/// How strongly a protected path is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protection {
    /// Denied in every mode: only the runtime writes here.
    Deny,
    /// Asks every time: no mode, allow rule or session grant lifts it.
    Ask,
}

/// One protected path: the action it holds for, gitignore-style globs, its strength, and why
/// it is protected.
#[derive(Clone, Copy, Debug)]
pub struct ProtectedPath {
    /// The key action it applies to: `write` or `read`.
    pub action: &'static str,
    /// The globs over root-relative paths this entry covers.
    pub globs: &'static [&'static str],
    pub protection: Protection,
    /// Completes "<key> is protected: …", for the user and the model.
    pub why: &'static str,
}

/// The built-in protections, strongest first (the first entry of the key's action that matches
/// decides).
pub const PROTECTED: &[ProtectedPath] = &[
    ProtectedPath {
        action: "read",
        globs: &["**/.agents/store", "**/.agents/store/**"],
        protection: Protection::Deny,
        why: "the artifact store and the event logs are tackle's record, not project files; \
              read retained output by its URI, artifact://<digest>, which also asks the policy \
              about what produced it",
    },
    ProtectedPath {
        action: "write",
        globs: &["**/.agents/store", "**/.agents/store/**"],
        protection: Protection::Deny,
        why: "the artifact store and the event logs are written by tackle's runtime only, \
              never by a tool, so that the record of what happened cannot be forged or erased",
    },
    ProtectedPath {
        action: "write",
        globs: &["**/.agents", "**/.agents/**"],
        protection: Protection::Ask,
        why: "project configuration (config.toml, mcp.json, skills, agents, plans) decides \
              what tackle allows and runs on the next call",
    },
    ProtectedPath {
        action: "write",
        globs: &["**/.git", "**/.git/**"],
        protection: Protection::Ask,
        why: "git reads its configuration and runs programs from here (core.fsmonitor and \
              core.hooksPath in config, hooks, commondir), so a write can make the next git \
              command run anything",
    },
];

/// The lookup of [`PROTECTED`]: one glob set, each glob mapped to its entry, compiled once per
/// process and only when a key first names a protected directory. Compiling it is a quarter
/// of what a one-call `tackle call` executes before its call, and most processes never meet
/// such a key ([`mentions_protected_name`] answers the rest without it).
#[derive(Clone, Debug)]
pub(crate) struct ProtectedSet;

/// [`PROTECTED`]'s globs compiled.
struct Compiled {
    set: GlobSet,
    entry_of_glob: Vec<usize>,
}

fn compile() -> Result<Compiled, PolicyError> {
    let mut set = GlobSetBuilder::new();
    let mut entry_of_glob = Vec::new();
    for (index, entry) in PROTECTED.iter().enumerate() {
        for glob in entry.globs {
            let glob = GlobBuilder::new(glob)
                .literal_separator(true)
                .case_insensitive(true)
                .build()
                .map_err(|e| PolicyError::Compile {
                    reason: e.to_string(),
                })?;
            set.add(glob);
            entry_of_glob.push(index);
        }
    }
    Ok(Compiled {
        set: set.build().map_err(|e| PolicyError::Compile {
            reason: e.to_string(),
        })?,
        entry_of_glob,
    })
}

/// The compiled set; `None` if the constant globs failed to compile, which a test rules out.
fn compiled() -> Option<&'static Compiled> {
    static COMPILED: OnceLock<Option<Compiled>> = OnceLock::new();
    COMPILED.get_or_init(|| compile().ok()).as_ref()
}

impl ProtectedSet {
    pub(crate) fn build() -> Result<ProtectedSet, PolicyError> {
        Ok(ProtectedSet)
    }

    /// The protection covering `action` on a root-relative path, if any (the strongest when
    /// several do).
    pub(crate) fn find(&self, action: &str, path: &str) -> Option<&'static ProtectedPath> {
        if !mentions_protected_name(path) {
            return None;
        }
        let Some(compiled) = compiled() else {
            // Fails closed: every path naming a protected directory gets the strongest
            // protection of its action.
            return PROTECTED.iter().find(|entry| entry.action == action);
        };
        let tidy = tidy(path);
        let candidate = Candidate::new(&tidy);
        compiled
            .set
            .matches_candidate(&candidate)
            .into_iter()
            .map(|glob| compiled.entry_of_glob[glob])
            .filter(|&entry| PROTECTED[entry].action == action)
            .min()
            .map(|entry| &PROTECTED[entry])
    }
}

/// The directory names every [`PROTECTED`] glob names as a literal component: a path that
/// holds none of them (in any case) is not protected, and is answered without tidying it or
/// running the glob set, as most keys are.
const PROTECTED_NAMES: &[&str] = &[".agents", ".git"];

/// Every name in [`PROTECTED_NAMES`] starts with a dot, so only what follows a dot is compared:
/// a walk asks this of every file it finds, and most paths hold one or two dots.
fn mentions_protected_name(path: &str) -> bool {
    let path = path.as_bytes();
    let mut from = 0;
    while let Some(at) = path[from..].iter().position(|&b| b == b'.') {
        let dot = from + at;
        let after = &path[dot..];
        if PROTECTED_NAMES.iter().any(|name| {
            after
                .get(..name.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(name.as_bytes()))
        }) {
            return true;
        }
        from = dot + 1;
    }
    false
}

/// `path` without empty or `.` segments (`./.git//config` → `.git/config`).
fn tidy(path: &str) -> String {
    path.split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shortcut past the glob set holds: every glob names one of [`PROTECTED_NAMES`] as a
    /// whole literal component, so a path without that name cannot match it.
    #[test]
    fn every_glob_names_a_protected_name() {
        for entry in PROTECTED {
            for glob in entry.globs {
                assert!(
                    glob.split('/').any(|c| PROTECTED_NAMES.contains(&c)),
                    "{glob} names none of {PROTECTED_NAMES:?}"
                );
            }
        }
        assert!(PROTECTED_NAMES.iter().all(|n| n.starts_with('.')));
        assert!(mentions_protected_name("a/.GIT/config"));
        assert!(mentions_protected_name("a.b/c..git"));
        assert!(mentions_protected_name(".agents"));
        assert!(!mentions_protected_name("a.b/c.gi"));
        assert!(!mentions_protected_name("."));
        assert!(mentions_protected_name("./.Agents//store"));
        assert!(!mentions_protected_name("src/git/agents.rs"));
    }

    /// The lazily compiled set never falls back to failing closed.
    #[test]
    fn the_protected_globs_compile() {
        assert!(compile().is_ok());
        assert!(compiled().is_some());
    }

    #[test]
    fn protection_table() {
        let set = ProtectedSet::build().unwrap();
        let cases: &[(&str, Option<Protection>)] = &[
            (".agents/store/artifacts/ab12", Some(Protection::Deny)),
            (
                ".agents/store/sessions/s1/events.jsonl",
                Some(Protection::Deny),
            ),
            (".agents/store", Some(Protection::Deny)),
            ("./.agents//store/x", Some(Protection::Deny)),
            (".AGENTS/Store/x", Some(Protection::Deny)),
            ("sub/.agents/store/x", Some(Protection::Deny)),
            (".agents/config.toml", Some(Protection::Ask)),
            (".agents/mcp.json", Some(Protection::Ask)),
            (".agents/skills/x/SKILL.md", Some(Protection::Ask)),
            (".agents", Some(Protection::Ask)),
            (".git/config", Some(Protection::Ask)),
            (".git/hooks/pre-commit", Some(Protection::Ask)),
            (".git/commondir", Some(Protection::Ask)),
            (".git/info/attributes", Some(Protection::Ask)),
            (".git/modules/m/hooks/post-checkout", Some(Protection::Ask)),
            (".git", Some(Protection::Ask)),
            (".Git/CONFIG", Some(Protection::Ask)),
            ("vendor/lib/.git/config", Some(Protection::Ask)),
            (".git//config", Some(Protection::Ask)),
            ("src/.agents.rs", None),
            ("src/main.rs", None),
            (".gitignore", None),
            (".gitattributes", None),
            (".gitmodules", None),
            (".github/workflows/ci.yml", None),
            ("my.git/config", None),
            ("agents/store/x", None),
        ];
        for &(path, want) in cases {
            assert_eq!(
                set.find("write", path).map(|p| p.protection),
                want,
                "{path}"
            );
        }
    }

    /// Reads: the store alone, by any spelling and at any depth; configuration and git's
    /// directory are ordinary reads.
    #[test]
    fn read_protection_table() {
        let set = ProtectedSet::build().unwrap();
        let cases: &[(&str, Option<Protection>)] = &[
            (".agents/store", Some(Protection::Deny)),
            (".agents/store/artifacts", Some(Protection::Deny)),
            (".agents/store/artifacts/ab12", Some(Protection::Deny)),
            (
                ".agents/store/sessions/s1/events.jsonl",
                Some(Protection::Deny),
            ),
            ("./.agents//store/artifacts/x", Some(Protection::Deny)),
            (".AGENTS/STORE/artifacts/x", Some(Protection::Deny)),
            (".Agents/Store", Some(Protection::Deny)),
            ("sub/.agents/store/artifacts/x", Some(Protection::Deny)),
            ("a/b/.agents/store", Some(Protection::Deny)),
            (".agents", None),
            (".agents/config.toml", None),
            (".agents/plans/plan-1.md", None),
            (".agents/storehouse/x", None),
            (".git/config", None),
            ("store/artifacts/x", None),
            ("agents/store/x", None),
            ("src/main.rs", None),
        ];
        for &(path, want) in cases {
            assert_eq!(set.find("read", path).map(|p| p.protection), want, "{path}");
        }
    }
}
