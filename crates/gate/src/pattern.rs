//! Glob patterns over permission keys, and over bare paths for the path scope.

use std::fmt;

use globset::{Glob, GlobBuilder, GlobMatcher};

use crate::Effect;
use crate::command::{COMMAND_PREFIX, CommandPattern, CommandWords};
use crate::error::PatternError;
use crate::key::{self, UNPARSEABLE_BASH};

/// A compiled glob over permission keys.
///
/// Three dialects, chosen by the pattern's own text:
///
/// - **path patterns** — `read:` or `write:` followed by a path — are gitignore-style: `*` and
///   `?` stay within one path segment, `**` crosses segments, and a path with no `/` (such as
///   `write:*.rs` or `read:.env`) matches that name at any depth. A leading `/` anchors at the
///   project root (it is otherwise ignored, paths being root-relative) and a trailing `/` means
///   "everything beneath".
/// - **command patterns** — `tool.bash.cmd:` followed by a command — match word by word (see
///   `command.rs`): a whole-word `*` is any run of words, so `tool.bash.cmd:git *` matches
///   `tool.bash.cmd:git log src/a.rs`; a `*` inside a word stays within that word; path-shaped
///   words are compared after lexical normalisation, and a `..` that climbs out of the place a
///   pattern word names never matches it. That is how an allow rule reads them; deny and ask
///   rules also match the key as written, as a key pattern would.
/// - **key patterns** — everything else, including patterns with no action prefix — treat `*`
///   (and `**`) as any run of characters, `/` and spaces included, so `tool.*` matches
///   `tool.bash.cmd:git log src/a.rs`.
///
/// All three match the whole key, case-sensitively, and support `?` and `[...]` classes. Braces
/// are literal (no `{a,b}` alternation): shell commands and URLs contain braces far more often
/// than rule authors need alternation. The exact pattern `tool.bash.cmd:?` names the
/// unparseable-script key literally rather than "any one-character command".
#[derive(Clone, Debug)]
pub struct Pattern {
    text: String,
    dialect: Dialect,
    /// The glob as handed to globset (for sets built by the policy).
    glob: Glob,
    matcher: GlobMatcher,
    /// The word-by-word form of a command pattern.
    command: Option<CommandPattern>,
}

/// How a pattern is matched; decided at parse time from the pattern text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// Whole-key glob; `*` crosses `/`. The candidate is the key itself.
    Key,
    /// A `tool.bash.cmd:` pattern: matched word by word (allow rules), and also as a whole-key
    /// glob (deny and ask rules).
    Command,
    /// Gitignore-style glob over the resource of a key with this action (`read` or `write`;
    /// empty for a bare path pattern of the path scope).
    Path { action: String },
}

impl Pattern {
    /// Parses a rule pattern over permission keys.
    pub fn parse(text: &str) -> Result<Pattern, PatternError> {
        if text.is_empty() {
            return Err(PatternError::Empty);
        }
        if text == UNPARSEABLE_BASH {
            // Literal: `?` here is the key's own text, not a wildcard.
            let glob = build(text, "tool.bash.cmd:[?]", false)?;
            return Ok(Pattern::new(text, Dialect::Key, glob));
        }
        if let Some((action, resource)) = key::split_path_pattern(text) {
            if resource.is_empty() {
                return Err(PatternError::EmptyResource {
                    pattern: text.to_owned(),
                    action: action.to_owned(),
                });
            }
            let glob = build(text, &gitignore_glob(resource), true)?;
            let dialect = Dialect::Path {
                action: action.to_owned(),
            };
            return Ok(Pattern::new(text, dialect, glob));
        }
        let glob = build(text, text, false)?;
        if let Some(command) = text.strip_prefix(COMMAND_PREFIX) {
            let words = CommandPattern::parse(command, |word| {
                Ok(build(text, word, false)?.compile_matcher())
            })?;
            let mut pattern = Pattern::new(text, Dialect::Command, glob);
            pattern.command = Some(words);
            return Ok(pattern);
        }
        Ok(Pattern::new(text, Dialect::Key, glob))
    }

    /// Parses a bare root-relative path pattern (`src/**`, `*.pem`, `.git/`) with the same
    /// gitignore-style rules as the path part of a `read:`/`write:` pattern. Used for
    /// [`crate::PathScope`].
    pub fn parse_path(text: &str) -> Result<Pattern, PatternError> {
        if text.is_empty() {
            return Err(PatternError::Empty);
        }
        let glob = build(text, &gitignore_glob(text), true)?;
        let dialect = Dialect::Path {
            action: String::new(),
        };
        Ok(Pattern::new(text, dialect, glob))
    }

    fn new(text: &str, dialect: Dialect, glob: Glob) -> Pattern {
        let matcher = glob.compile_matcher();
        Pattern {
            text: text.to_owned(),
            dialect,
            glob,
            matcher,
            command: None,
        }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// True when this pattern matches the whole permission key, as an allow rule reads it (a
    /// command pattern word by word; deny and ask rules also read it as a whole-key glob).
    pub fn matches(&self, key: &str) -> bool {
        match &self.dialect {
            Dialect::Key => self.matcher.is_match(key),
            Dialect::Command => key.strip_prefix(COMMAND_PREFIX).is_some_and(|command| {
                self.matches_command(&CommandWords::split(command), Effect::Allow)
            }),
            Dialect::Path { action } => match key.split_once(':') {
                Some((key_action, resource)) if key_action == action => {
                    self.matcher.is_match(resource)
                }
                _ => false,
            },
        }
    }

    /// True when this pattern matches the key as a whole-key glob, `*` crossing spaces: how a
    /// deny or ask rule also reads a command pattern, so normalising never narrows one. The same
    /// as [`Pattern::matches`] for other dialects. (The policy reads its glob set instead.)
    #[cfg(test)]
    pub(crate) fn matches_as_written(&self, key: &str) -> bool {
        match &self.dialect {
            Dialect::Command => self.matcher.is_match(key),
            _ => self.matches(key),
        }
    }

    /// Whether a command pattern matches a command's words as a rule of this effect reads
    /// them (false for other dialects).
    pub(crate) fn matches_command(&self, command: &CommandWords<'_>, effect: Effect) -> bool {
        self.command
            .as_ref()
            .is_some_and(|c| c.matches(command, effect == Effect::Allow))
    }

    /// The literal word at `at` of a command pattern whose earlier words are literal too, as
    /// written and normalised (see [`CommandPattern::literal_word`]); `None` for other
    /// dialects or when a wildcard comes first.
    pub(crate) fn command_word(&self, at: usize) -> Option<[&str; 2]> {
        self.command.as_ref().and_then(|c| c.literal_word(at))
    }

    /// True when this pattern, read as a bare path pattern (see [`Pattern::parse_path`]),
    /// matches a root-relative path.
    #[cfg(test)]
    pub(crate) fn matches_path(&self, path: &str) -> bool {
        self.matcher.is_match(path)
    }

    pub(crate) fn dialect(&self) -> &Dialect {
        &self.dialect
    }

    /// The one action every key this pattern matches has, when the pattern fixes it: the
    /// action of a path pattern, the text before a `:` in the literal prefix, or the action
    /// of a pattern with no wildcard at all. `None` for patterns such as `**` or `tool.*`.
    pub(crate) fn fixed_action(&self) -> Option<&str> {
        if let Dialect::Path { action } = &self.dialect {
            return Some(action);
        }
        let prefix = self.literal_prefix();
        if let Some((action, _)) = prefix.split_once(':') {
            return Some(action);
        }
        (prefix.len() == self.text.len()).then(|| key::action(&self.text))
    }

    pub(crate) fn glob(&self) -> &Glob {
        &self.glob
    }

    /// The pattern text up to its first wildcard or class: every key it matches starts with this.
    pub(crate) fn literal_prefix(&self) -> &str {
        let end = self
            .text
            .find(['*', '?', '[', '\\'])
            .unwrap_or(self.text.len());
        &self.text[..end]
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Pattern) -> bool {
        self.text == other.text && self.dialect == other.dialect
    }
}

impl Eq for Pattern {}

/// Rewrites a gitignore-style path pattern into a globset glob relative to the root: a pattern
/// with no inner `/` matches at any depth, a leading `/` anchors, a trailing `/` means beneath.
/// Public so that code reasoning about path patterns (folder trust deciding whether a project's
/// scope is narrower) reads them exactly as the gate does.
pub fn gitignore_glob(path: &str) -> String {
    let dir_only = path.len() > 1 && path.ends_with('/');
    let trimmed = path.trim_end_matches('/');
    let anchored = trimmed.starts_with('/')
        || trimmed.contains('/')
        || trimmed == "**"
        || trimmed.starts_with("**/");
    let body = trimmed.trim_start_matches('/');
    let mut glob = String::with_capacity(body.len() + 6);
    if !anchored {
        glob.push_str("**/");
    }
    glob.push_str(body);
    if dir_only {
        glob.push_str("/**");
    }
    glob
}

/// Builds a glob with literal braces; `path` selects whether `*` stops at `/`.
fn build(original: &str, glob_text: &str, path: bool) -> Result<Glob, PatternError> {
    let escaped = escape_braces(glob_text);
    GlobBuilder::new(&escaped)
        .literal_separator(path)
        .backslash_escape(true)
        .case_insensitive(false)
        .build()
        .map_err(|err| PatternError::Malformed {
            pattern: original.to_owned(),
            reason: err.kind().to_string(),
        })
}

/// Escapes `{` and `}` outside character classes so globset reads them literally.
fn escape_braces(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 4);
    let mut in_class = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A `]` right after `[` (or `[!`) is a member, not the end.
                if let Some(&next) = chars.peek()
                    && (next == '!' || next == '^')
                {
                    out.push(next);
                    chars.next();
                }
                if let Some(&']') = chars.peek() {
                    out.push(']');
                    chars.next();
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            '{' | '}' if !in_class => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (pattern, key, matches)
    const TABLE: &[(&str, &str, bool)] = &[
        // Path keys: `*` stays within a segment, `**` crosses.
        ("write:src/*", "write:src/main.rs", true),
        ("write:src/*", "write:src/a/b.rs", false),
        ("write:src/**", "write:src/a/b.rs", true),
        ("write:src/**", "write:src/main.rs", true),
        ("write:src/**", "write:srcx/main.rs", false),
        ("write:src/**", "write:lib/src/main.rs", false),
        ("read:**", "read:a/b/c.txt", true),
        ("read:**", "read:top.txt", true),
        ("read:src/**/mod.rs", "read:src/mod.rs", true),
        ("read:src/**/mod.rs", "read:src/a/b/mod.rs", true),
        // Basename patterns match at any depth, like gitignore.
        ("write:*.rs", "write:main.rs", true),
        ("write:*.rs", "write:src/deep/main.rs", true),
        ("write:*.rs", "write:src/main.rsx", false),
        ("read:.env", "read:config/.env", true),
        ("read:.env", "read:config/.envrc", false),
        // A leading `/` anchors; a trailing `/` means beneath.
        ("write:/Cargo.toml", "write:Cargo.toml", true),
        ("write:/Cargo.toml", "write:crates/a/Cargo.toml", false),
        ("write:target/", "write:target/debug/x", true),
        // No inner `/`: like gitignore, the directory matches at any depth.
        ("write:target/", "write:src/target/x", true),
        ("write:/target/", "write:src/target/x", false),
        // `?` and classes.
        ("read:src/?.rs", "read:src/a.rs", true),
        ("read:src/?.rs", "read:src/ab.rs", false),
        ("read:src/?.rs", "read:src//.rs", false),
        ("read:src/[ab].rs", "read:src/b.rs", true),
        ("read:src/[ab].rs", "read:src/c.rs", false),
        ("read:src/[!ab].rs", "read:src/c.rs", true),
        ("read:log[0-9].txt", "read:var/log7.txt", true),
        // The action is part of the match.
        ("write:src/**", "read:src/main.rs", false),
        ("read:*.rs", "write:main.rs", false),
        // Non-path keys: `*` crosses `/` and spaces.
        (
            "tool.bash.cmd:git *",
            "tool.bash.cmd:git log src/a.rs",
            true,
        ),
        ("tool.bash.cmd:git *", "tool.bash.cmd:gitk", false),
        ("tool.bash.cmd:git", "tool.bash.cmd:git status", false),
        (
            "fetch:https://docs.rs/*",
            "fetch:https://docs.rs/globset/latest/globset/",
            true,
        ),
        (
            "fetch:https://docs.rs/*",
            "fetch:https://docs.rs.evil.com/x",
            false,
        ),
        (
            "fetch:https://docs.rs/**",
            "fetch:https://docs.rs/a/b",
            true,
        ),
        ("message:*", "message:parent", true),
        ("message:child", "message:parent", false),
        ("call_peer:*", "call_peer:reviewer", true),
        // No action prefix: a whole-key glob.
        ("tool.bash", "tool.bash", true),
        ("tool.bash", "tool.bash.cmd:ls", false),
        ("tool.*", "tool.mcp.github.create_issue", true),
        ("tool.mcp.github.*", "tool.mcp.github.create_issue", true),
        ("tool.mcp.github.*", "tool.mcp.gitlab.create_issue", false),
        ("**", "write:a/b/c", true),
        ("*", "tool.bash.cmd:rm -rf /", true),
        // Artifacts and goals are not paths: `*` crosses `/`.
        ("read:artifact://*", "read:artifact://0123abcd", true),
        ("read:artifact://*", "read:artifact://0123abcd/stdout", true),
        ("read:goal:current", "read:goal:current", true),
        ("write:goal:*", "write:goal:current", true),
        // Path patterns also see artifact and goal resources (so `read:**` means all reads).
        ("read:**", "read:artifact://0123", true),
        ("read:**", "read:goal:current", true),
        // Case-sensitive, whole key.
        ("write:SRC/**", "write:src/a.rs", false),
        ("tool.Bash", "tool.bash", false),
        ("tool.bas", "tool.bash", false),
        // Braces are literal.
        (
            "tool.bash.cmd:awk {print}",
            "tool.bash.cmd:awk {print}",
            true,
        ),
        ("write:{a,b}.rs", "write:a.rs", false),
        // The unparseable key is named literally.
        ("tool.bash.cmd:?", "tool.bash.cmd:?", true),
        ("tool.bash.cmd:?", "tool.bash.cmd:x", false),
    ];

    #[test]
    fn pattern_table() {
        for &(pattern, key, want) in TABLE {
            let p = Pattern::parse(pattern).unwrap();
            assert_eq!(p.matches(key), want, "{pattern:?} vs {key:?}");
        }
    }

    /// (command pattern, command, matches as an allow rule reads it, matches as written)
    const COMMAND_TABLE: &[(&str, &str, bool, bool)] = &[
        // A whole-word `*` is any run of one or more words.
        ("git *", "git log --oneline src/a.rs", true, true),
        ("git *", "git", false, false),
        ("git *", "gitk", false, false),
        ("git log *", "git log -p", true, true),
        ("git log *", "git status", false, false),
        ("*", "rm -rf target", true, true),
        ("* --version", "cargo --version", true, true),
        ("**", "ls", true, true),
        // A `*` inside a word stays within that word: a second argument is not swallowed.
        ("cat src/*", "cat src/a.rs", true, true),
        ("cat src/*", "cat src/a/b.rs", true, true),
        ("cat src/*", "cat src/a /etc/passwd", false, true),
        ("cat *.rs", "cat a.rs /etc/passwd b.rs", false, true),
        ("git log*", "git log --oneline", false, true),
        ("git log --output=*", "git log --output=x", true, true),
        // Path-shaped words are compared normalised.
        ("cat src/*", "cat ./src/a.rs", true, false),
        ("cat src/*", "cat src//a.rs", true, true),
        ("cat src/*", "cat src/./a.rs", true, true),
        ("cat src/*", "cat src/a/../b.rs", true, true),
        ("cat src/a.rs", "cat ./src/a.rs", true, false),
        ("cat src/*", "cat src/", false, true),
        ("ls src/", "ls ./src", true, false),
        // A `..` that climbs out of what the pattern names never matches.
        (
            "./scripts/*",
            "./scripts/../../../usr/bin/touch pwned",
            false,
            true,
        ),
        (
            "./scripts/* *",
            "./scripts/../../../usr/bin/touch pwned",
            false,
            true,
        ),
        ("./scripts/* *", "./scripts/build.sh --release", true, true),
        ("./scripts/*", "scripts/./../x", false, false),
        ("./scripts/*", "scripts//../../x", false, false),
        ("./scripts/*", "./scripts//../../x", false, true),
        ("cat src/*", "cat src/../../outside", false, true),
        ("cat src/*", "cat src/../secret", false, true),
        ("cat *", "cat src/../../outside", true, true),
        ("cat *.sh", "cat ../x.sh", false, true),
        ("cat *.sh", "cat sub/../../x.sh", false, true),
        ("cat *.sh", "cat sub/x.sh", true, true),
        ("cat */x", "cat ../x", false, true),
        ("cat ../shared/*", "cat ../shared/a", true, true),
        ("cat ../shared/*", "cat ../shared/../secret", false, true),
        ("cat ../shared/*", "cat ../../shared/a", false, false),
        ("cat ..*", "cat ../x", false, true),
        ("cat ..*", "cat ..rc", true, true),
        // Absolute words match only absolute pattern words.
        ("cat /etc/*", "cat /etc/hosts", true, true),
        ("cat /etc/*", "cat //etc//hosts", true, false),
        ("cat /etc/*", "cat /etc/../root/.ssh/id", false, true),
        ("cat *", "cat /etc/passwd", true, true),
        ("cat *passwd", "cat /etc/passwd", false, true),
        ("cat */passwd", "cat /etc/passwd", false, true),
        ("cat /*", "cat /etc/passwd", true, true),
        // A `..` above `/` may climb out of the part of an argument before a space
        // (`'src/a /../..'` is keyed as two words): an allow matches it only as written.
        ("cp src/* /*", "cp src/a /../..", false, true),
        ("cat /etc/*", "cat /../etc/hosts", false, false),
        ("cat /../etc/hosts", "cat /../etc/hosts", true, true),
        // `~` is an anchor a `..` cannot climb out of unseen.
        ("cat ~/notes/*", "cat ~/notes/a.md", true, true),
        ("cat ~/notes/*", "cat ~/notes/../.ssh/id_rsa", false, true),
        ("cat *.txt", "cat ~/../x.txt", false, true),
        ("cat *", "cat ~/x", true, true),
        // A verb given as a path keeps its `/`: `./x` is never the `PATH` lookup `x`.
        ("x *", "./x a", false, false),
        ("./x *", "x a", false, false),
        ("./x *", "./x a", true, true),
        ("./x *", "sub/../x a", true, false),
        // Words that expand at run time match only as written or by a whole-word `*`.
        ("cat src/*", "cat src/$f", false, true),
        ("cat src/*", "cat src/`f`", false, true),
        ("cat src/$f", "cat src/$f", true, true),
        ("cat *", "cat src/$f", true, true),
        ("cat src/*", "cat src/.*", false, true),
        ("cat src/*", "cat src/*/x", false, true),
        ("cat src/*", "cat src/*.rs", true, true),
        ("cat src/*", "cat src/{a,../../x}", false, true),
        ("cat *.rs", "cat \"../x\"*.rs", false, true),
        // Braces and escapes as before.
        ("awk {print}", "awk {print}", true, true),
        ("echo a\\*b", "echo a*b", true, true),
        ("echo a\\*b", "echo axb", false, false),
    ];

    #[test]
    fn command_table() {
        let mut wrong = Vec::new();
        for &(command, key, allow, written) in COMMAND_TABLE {
            let pattern = Pattern::parse(&format!("tool.bash.cmd:{command}")).unwrap();
            let key = format!("tool.bash.cmd:{key}");
            let got = (pattern.matches(&key), pattern.matches_as_written(&key));
            if got != (allow, written) {
                wrong.push(format!("{command:?} vs {key:?}: {got:?}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// Command patterns match only command keys, and other patterns read command keys as
    /// whole-key globs.
    #[test]
    fn command_patterns_stay_in_their_action() {
        let p = Pattern::parse("tool.bash.cmd:*").unwrap();
        assert!(!p.matches("tool.bash"));
        assert!(!p.matches("read:src/a.rs"));
        let any = Pattern::parse("tool.bash.*").unwrap();
        assert!(any.matches("tool.bash.cmd:cat src/../../x"));
    }

    #[test]
    fn bad_patterns_are_errors() {
        let cases: &[(&str, &str)] = &[
            ("", "empty permission pattern"),
            ("write:", "nothing after \"write:\""),
            ("read:", "nothing after \"read:\""),
            ("read:src/[ab", "unclosed character class"),
            ("tool.bash.cmd:ls [z-a]", "invalid range"),
            ("fetch:https://x/\\", "dangling"),
        ];
        for &(pattern, needle) in cases {
            let err = Pattern::parse(pattern).unwrap_err().to_string();
            assert!(err.contains(needle), "{pattern:?}: {err}");
            assert!(
                err.starts_with(|c: char| !c.is_uppercase()),
                "lowercase: {err}"
            );
        }
    }

    #[test]
    fn bare_path_patterns() {
        let cases: &[(&str, &str, bool)] = &[
            ("**", "a/b/c", true),
            ("**", "top", true),
            ("src/**", "src/a/b", true),
            ("src/**", "lib/a", false),
            ("*.pem", "keys/deep/server.pem", true),
            (".git/", ".git/config", true),
            (".git/", "sub/.git/config", true),
            ("/.git/", "sub/.git/config", false),
            ("secrets/*", "secrets/a", true),
            ("secrets/*", "secrets/a/b", false),
        ];
        for &(pattern, path, want) in cases {
            let p = Pattern::parse_path(pattern).unwrap();
            assert_eq!(p.matches_path(path), want, "{pattern:?} vs {path:?}");
        }
    }

    #[test]
    fn fixed_actions() {
        let cases: &[(&str, Option<&str>)] = &[
            ("write:src/**", Some("write")),
            ("read:*.rs", Some("read")),
            ("read:artifact://*", Some("read")),
            ("tool.bash.cmd:git *", Some("tool.bash.cmd")),
            ("tool.bash.cmd:?", Some("tool.bash.cmd")),
            ("fetch:https://docs.rs/*", Some("fetch")),
            ("tool.bash", Some("tool")),
            ("tool.mcp.github.*", None),
            ("**", None),
            ("*rm -rf*", None),
            ("fe*:x", None),
        ];
        for &(pattern, want) in cases {
            assert_eq!(
                Pattern::parse(pattern).unwrap().fixed_action(),
                want,
                "{pattern}"
            );
        }
    }

    #[test]
    fn literal_prefix_stops_at_the_first_wildcard() {
        assert_eq!(
            Pattern::parse("fetch:https://*").unwrap().literal_prefix(),
            "fetch:https://"
        );
        assert_eq!(Pattern::parse("**").unwrap().literal_prefix(), "");
        assert_eq!(
            Pattern::parse("tool.bash").unwrap().literal_prefix(),
            "tool.bash"
        );
    }
}
