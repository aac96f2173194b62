//! Command rules: how a `tool.bash.cmd:` pattern matches a command key, word by word.
//!
//! A command key is `tool.bash.cmd:` followed by the command's words joined by spaces. A
//! command pattern is split the same way, and each of its words matches:
//!
//! - `*` (or `**`) standing as a whole word: any run of one or more words, so
//!   `tool.bash.cmd:git *` keeps meaning every `git` command with arguments;
//! - any other word: exactly one word of the command. A `*` or `**` inside it matches any run
//!   of characters within that word (`/` included, never a space), `?` one character; so
//!   `cat src/*` no longer matches `cat src/a /etc/passwd`.
//!
//! Words are compared after lexical normalisation of path-shaped words (those with a `/`): `.`
//! and empty components dropped, a `..` applied to the component before it, a trailing `/`
//! dropped (`./scripts//a/` is `scripts/a`; a word that had a `/` keeps one, `./x`, so a path
//! verb never turns into a `PATH` lookup). A word with a wildcard names a place: the absolute
//! root, the home directory (`~`) or the working directory, and how many `..` lead out of it;
//! a command word matches it only from that same place, so a `..` that climbs out of what the
//! pattern names never matches (`./scripts/*` matches neither `./scripts/../../bin/touch` nor
//! `../x`, `*.sh` matches no absolute path). A command word that expands when the shell runs
//! it into other text (`$`, a backquote, braces, quotes, a backslash) or whose glob could step
//! out (`.*`, `*/..`, a glob before another component) is matched only by the same word
//! written out or by a whole-word `*`. So is, for an allow rule, an absolute word with a `..`
//! above `/`: the key joins words with spaces, so `/../..` may be the tail of one argument
//! (`'src/a /../..'`) whose `..` climbs out of the part before it.
//!
//! Lexical `..` is not what the kernel does after a symlink (`src/link/..` is the link
//! target's parent): the bash tool adds a second key with each path word resolved through the
//! root handle, as file tools do, and a call is allowed only when every key is.
//!
//! Deny and ask rules match a command key as written too (the whole-key glob, where `*`
//! crosses spaces), so normalising never narrows a deny; it only narrows allows.

use std::borrow::Cow;
use std::cell::OnceCell;

use globset::GlobMatcher;

use crate::error::PatternError;

/// The action prefix of command keys and patterns.
pub(crate) const COMMAND_PREFIX: &str = "tool.bash.cmd:";

/// A compiled command pattern: one matcher per word.
#[derive(Clone, Debug)]
pub(crate) struct CommandPattern {
    words: Vec<WordPattern>,
}

#[derive(Clone, Debug)]
enum WordPattern {
    /// A whole-word `*` or `**`: one or more words.
    AnyRun,
    /// No wildcard: the word as written or its normal form.
    Exact { raw: String, normal: String },
    /// A wildcard inside the word: the normal form matched, from the place the pattern names.
    Glob { matcher: GlobMatcher, place: Place },
}

/// Where a path word starts: the anchor of its first component and the `..` that follow it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Place {
    anchor: Anchor,
    ups: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Anchor {
    /// The working directory.
    Relative,
    /// `/`.
    Absolute,
    /// `~` or `~user`: a directory the words cannot see the parent of.
    Home,
}

/// One word of a command key, read for matching when a rule first needs more than its text.
#[derive(Debug)]
struct KeyWord<'a> {
    raw: &'a str,
    reading: OnceCell<WordReading<'a>>,
}

/// What a key word means beyond its text, worked out once for every rule.
#[derive(Debug)]
struct WordReading<'a> {
    /// An absolute word with a `..` above `/` (`/../x`): the kernel reads it as `/x`, but a
    /// key word may be one part of an argument that holds a space (`'src/a /../..'`), where that
    /// `..` climbs out of the part before it. An allow rule matches it only as written.
    above_root: bool,
    /// `None` when the word expands at run time or its glob could step out: only a whole-word
    /// `*` or the same word written out matches it.
    normal: Option<(Cow<'a, str>, Place)>,
}

impl<'a> KeyWord<'a> {
    fn reading(&self) -> &WordReading<'a> {
        self.reading.get_or_init(|| WordReading {
            above_root: above_root(self.raw),
            normal: if opaque(self.raw) {
                None
            } else {
                let normal = normalize(self.raw);
                let place = place_of(&normal, normal.len());
                Some((normal, place))
            },
        })
    }
}

/// The words of one command key, split once for every rule and read as rules need them.
#[derive(Debug)]
pub(crate) struct CommandWords<'a> {
    words: Vec<KeyWord<'a>>,
}

impl<'a> CommandWords<'a> {
    /// The words of `command` (the key without `tool.bash.cmd:`).
    pub(crate) fn split(command: &'a str) -> CommandWords<'a> {
        let words = command
            .split(' ')
            .map(|raw| KeyWord {
                raw,
                reading: OnceCell::new(),
            })
            .collect();
        CommandWords { words }
    }
}

impl CommandPattern {
    /// Compiles the command part of a `tool.bash.cmd:` pattern; `build` compiles one word's glob.
    pub(crate) fn parse(
        command: &str,
        build: impl Fn(&str) -> Result<GlobMatcher, PatternError>,
    ) -> Result<CommandPattern, PatternError> {
        let mut words = Vec::new();
        for raw in command.split(' ') {
            let word = if raw == "*" || raw == "**" {
                WordPattern::AnyRun
            } else {
                let normal = normalize(raw);
                match first_wildcard(&normal) {
                    None => WordPattern::Exact {
                        raw: raw.to_owned(),
                        normal: normal.into_owned(),
                    },
                    Some(at) => WordPattern::Glob {
                        matcher: build(&normal)?,
                        place: place_of(&normal, at),
                    },
                }
            };
            words.push(word);
        }
        Ok(CommandPattern { words })
    }

    /// Whether the pattern's words match the command's words; `strict` (how an allow rule
    /// reads them) also refuses words with a `..` above `/` unless written out.
    pub(crate) fn matches(&self, command: &CommandWords<'_>, strict: bool) -> bool {
        let (n, m) = (self.words.len(), command.words.len());
        // Each word matches at least one command word, and only a whole-word `*` more than one.
        let runs = self
            .words
            .iter()
            .filter(|w| matches!(w, WordPattern::AnyRun))
            .count();
        if n > m || (runs == 0 && n != m) {
            return false;
        }
        n > 0
            && if m < 64 {
                self.reaches_all(command, strict)
            } else {
                self.reaches_all_long(command, strict)
            }
    }

    /// [`CommandPattern::matches`] for a command of any length.
    fn reaches_all_long(&self, command: &CommandWords<'_>, strict: bool) -> bool {
        let m = command.words.len();
        // reach[j]: the first i pattern words can match the first j command words.
        let mut reach = vec![false; m + 1];
        let mut next = vec![false; m + 1];
        reach[0] = true;
        for pattern in &self.words {
            next.fill(false);
            match pattern {
                WordPattern::AnyRun => {
                    let mut open = false;
                    for j in 1..=m {
                        open |= reach[j - 1];
                        next[j] = open;
                    }
                }
                word => {
                    for j in 1..=m {
                        next[j] = reach[j - 1] && word.matches(&command.words[j - 1], strict);
                    }
                }
            }
            std::mem::swap(&mut reach, &mut next);
            if !reach.contains(&true) {
                return false;
            }
        }
        reach[m]
    }

    /// [`CommandPattern::matches`] for a command of fewer than 64 words, with the set of
    /// reachable prefixes as the bits of one word: no allocation, one pass per pattern word.
    fn reaches_all(&self, command: &CommandWords<'_>, strict: bool) -> bool {
        let m = command.words.len();
        // Bit j: the pattern words so far can match the first j command words.
        let mut reach: u64 = 1;
        let within: u64 = if m + 1 == 64 {
            u64::MAX
        } else {
            (1 << (m + 1)) - 1
        };
        for pattern in &self.words {
            reach = match pattern {
                // One or more words: every j past the first reachable one.
                WordPattern::AnyRun => {
                    u64::MAX
                        .checked_shl(reach.trailing_zeros() + 1)
                        .unwrap_or(0)
                        & within
                }
                word => {
                    let mut next = 0;
                    let mut from = reach & !(1 << m);
                    while from != 0 {
                        let j = from.trailing_zeros() as usize;
                        from &= from - 1;
                        if word.matches(&command.words[j], strict) {
                            next |= 1 << (j + 1);
                        }
                    }
                    next
                }
            };
            if reach == 0 {
                return false;
            }
        }
        reach & (1 << m) != 0
    }
}

impl CommandPattern {
    /// The spellings the command's word at `at` must have for this pattern to match it, when
    /// the pattern's words up to `at` are literal (each matches exactly one command word), as
    /// written and normalised: what the policy indexes its command rules by, so a key is
    /// matched only against the rules for its own first words.
    pub(crate) fn literal_word(&self, at: usize) -> Option<[&str; 2]> {
        fn exact(word: &WordPattern) -> Option<[&str; 2]> {
            match word {
                WordPattern::Exact { raw, normal } => Some([raw.as_str(), normal.as_str()]),
                _ => None,
            }
        }
        if self.words.iter().take(at).any(|w| exact(w).is_none()) {
            return None;
        }
        self.words.get(at).and_then(exact)
    }
}

/// The spellings of a command word that an exact pattern word can meet: as written and,
/// unless it expands at run time, normalised (see [`WordPattern`]'s matching).
pub(crate) fn word_spellings(raw: &str) -> (&str, Option<String>) {
    let normal = (raw.contains('/') && !opaque(raw))
        .then(|| normalize_path(raw))
        .filter(|n| n != raw);
    (raw, normal)
}

impl WordPattern {
    fn matches(&self, word: &KeyWord<'_>, strict: bool) -> bool {
        let normal = || {
            let reading = word.reading();
            reading
                .normal
                .as_ref()
                .filter(|_| !(strict && reading.above_root))
        };
        match self {
            WordPattern::AnyRun => true,
            WordPattern::Exact { raw, normal: want } => {
                word.raw == raw || normal().is_some_and(|(text, _)| text == want)
            }
            WordPattern::Glob { matcher, place } => {
                normal().is_some_and(|(text, at)| at == place && matcher.is_match(text.as_ref()))
            }
        }
    }
}

/// Whether a command word is matched only as written: it may expand when the shell runs it
/// into something other than its text (a parameter, a substitution, a brace expansion, quoting
/// around a glob: `"../x"*.rs`), or it is a glob that could step out of the directory it names
/// (a component `..`, one that starts with `.` or a bracket, which may match `..`, or a glob
/// before another component, which may go through a symlink).
fn opaque(word: &str) -> bool {
    if word.contains(['$', '`', '{', '\'', '"', '\\']) {
        return true;
    }
    let components: Vec<&str> = word.split('/').filter(|c| !c.is_empty()).collect();
    let Some(first_glob) = components.iter().position(|c| is_glob(c)) else {
        return false;
    };
    first_glob + 1 < components.len()
        || components
            .iter()
            .any(|c| *c == ".." || (is_glob(c) && c.starts_with(['.', '['])))
}

/// Whether an absolute word has a `..` above `/`.
fn above_root(word: &str) -> bool {
    if !word.starts_with('/') {
        return false;
    }
    let mut depth = 0usize;
    for c in word.split('/').filter(|c| !c.is_empty() && *c != ".") {
        if c == ".." {
            match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return true,
            }
        } else {
            depth += 1;
        }
    }
    false
}

fn is_glob(component: &str) -> bool {
    component.contains(['*', '?', '['])
}

/// The byte offset of the first wildcard or escape of a pattern word.
fn first_wildcard(word: &str) -> Option<usize> {
    word.find(['*', '?', '[', '\\'])
}

/// The lexical normal form of a word that has a `/`; other words are returned as they are.
/// A leading `/` or `~…` component is an anchor a `..` cannot remove (`/..` is `/`; `~/..` is
/// kept, the home directory's parent being unknown here).
pub(crate) fn normalize(word: &str) -> Cow<'_, str> {
    if !word.contains('/') {
        return Cow::Borrowed(word);
    }
    Cow::Owned(normalize_path(word))
}

/// [`normalize`] of a word that has a `/`.
fn normalize_path(word: &str) -> String {
    let absolute = word.starts_with('/');
    let mut parts = word.split('/').filter(|c| !c.is_empty() && *c != ".");
    let home = if absolute {
        None
    } else {
        match word.split('/').next() {
            Some(first) if first.starts_with('~') => parts.next(),
            _ => None,
        }
    };
    let mut stack: Vec<&str> = Vec::new();
    for part in parts {
        if part == ".." {
            match stack.last() {
                Some(&last) if last != ".." => {
                    stack.pop();
                }
                _ if absolute => {}
                _ => stack.push(".."),
            }
        } else {
            stack.push(part);
        }
    }
    let body = stack.join("/");
    match (absolute, home) {
        (true, _) => format!("/{body}"),
        (false, Some(home)) if body.is_empty() => format!("{home}/"),
        (false, Some(home)) => format!("{home}/{body}"),
        (false, None) if body.is_empty() => "./".to_owned(),
        (false, None) if !body.contains('/') && !body.starts_with("..") => format!("./{body}"),
        (false, None) => body,
    }
}

/// The place a normalised word starts from, reading only its first `end` bytes (a pattern
/// word's literal prefix): a `..` counts only when it is a whole component there.
fn place_of(normal: &str, end: usize) -> Place {
    let anchor = if normal.starts_with('/') {
        Anchor::Absolute
    } else if normal.starts_with('~') {
        Anchor::Home
    } else {
        Anchor::Relative
    };
    let literal = &normal[..end];
    let components: Vec<&str> = literal.split('/').collect();
    let skip = usize::from(anchor != Anchor::Relative);
    let mut ups = 0;
    for (i, c) in components.iter().enumerate().skip(skip) {
        // A component is whole when a `/` follows it within the literal part, or when the
        // literal part is the whole word.
        let whole = i + 1 < components.len() || end == normal.len();
        if *c == ".." && whole {
            ups += 1;
        } else if !c.is_empty() {
            break;
        }
    }
    Place { anchor, ups }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_forms() {
        let cases: &[(&str, &str)] = &[
            ("log", "log"),
            ("-la", "-la"),
            ("..", ".."),
            ("src/a.rs", "src/a.rs"),
            ("./src/a.rs", "src/a.rs"),
            ("src//a.rs", "src/a.rs"),
            ("src/./a.rs", "src/a.rs"),
            ("src/a/", "src/a"),
            ("src/", "./src"),
            ("./x", "./x"),
            ("x/../y", "./y"),
            ("scripts/./../x", "./x"),
            ("scripts//../../x", "../x"),
            ("./scripts/../../../usr/bin/touch", "../../usr/bin/touch"),
            ("../shared/a", "../shared/a"),
            ("a/..", "./"),
            ("/", "/"),
            ("//etc//passwd", "/etc/passwd"),
            ("/../../etc/passwd", "/etc/passwd"),
            ("/etc/../root/x", "/root/x"),
            ("~/notes/../.ssh/id", "~/.ssh/id"),
            ("~/../x", "~/../x"),
            ("~alice/x/..", "~alice/"),
            ("--output=src/../../x", "../x"),
        ];
        for &(word, want) in cases {
            assert_eq!(normalize(word), want, "{word:?}");
            // Normalising is idempotent: patterns and keys meet in one form.
            assert_eq!(normalize(&normalize(word)), want, "{word:?} twice");
        }
    }

    #[test]
    fn places() {
        let cases: &[(&str, Anchor, usize)] = &[
            ("src/*", Anchor::Relative, 0),
            ("*.sh", Anchor::Relative, 0),
            ("../*", Anchor::Relative, 1),
            ("../../x/*", Anchor::Relative, 2),
            ("..*", Anchor::Relative, 0),
            ("/etc/*", Anchor::Absolute, 0),
            ("/*", Anchor::Absolute, 0),
            ("~/notes/*", Anchor::Home, 0),
            ("~/../*", Anchor::Home, 1),
        ];
        for &(word, anchor, ups) in cases {
            let at = first_wildcard(word).unwrap_or(word.len());
            assert_eq!(place_of(word, at), Place { anchor, ups }, "{word:?}");
        }
        assert_eq!(
            place_of("../../x", 7),
            Place {
                anchor: Anchor::Relative,
                ups: 2
            }
        );
        assert_eq!(
            place_of("..", 2),
            Place {
                anchor: Anchor::Relative,
                ups: 1
            }
        );
    }

    #[test]
    fn opaque_words() {
        let cases: &[(&str, bool)] = &[
            ("src/a.rs", false),
            ("src/*.rs", false),
            ("src/../x", false),
            ("src/$f", true),
            ("src/`f`", true),
            ("src/*/x", true),
            ("src/.*", true),
            ("src/.?", true),
            ("src/*/..", true),
            ("src/.hidden", false),
            ("*.rs", false),
            ("src/{a,../../x}", true),
            ("\"../x\"*.rs", true),
            ("'src'/a", true),
            ("src/\\*", true),
            ("src/[.][.]", true),
            // A bracket might hold a `.`: conservatively opaque.
            ("src/[ab].rs", true),
        ];
        for &(word, want) in cases {
            assert_eq!(opaque(word), want, "{word:?}");
        }
    }

    /// The one-word bit set and the vector of reachable prefixes agree on every pattern and
    /// command of a small grammar.
    #[test]
    fn both_matchers_agree() {
        let words = ["git", "log", "*", "src/*", "-n", "./a"];
        let mut patterns = Vec::new();
        for a in words {
            for b in words {
                for c in words {
                    patterns.push(format!("{a} {b} {c}"));
                    patterns.push(format!("{a} {b}"));
                }
            }
        }
        let commands = [
            "git log -n src/a",
            "git",
            "git log",
            "git log ./a src/b -n",
            "src/x log git",
            "git log src/a /etc/passwd",
            "./a -n -n -n -n",
        ];
        let build = |w: &str| {
            globset::GlobBuilder::new(w)
                .literal_separator(false)
                .build()
                .map(|g| g.compile_matcher())
                .map_err(|e| PatternError::Malformed {
                    pattern: w.to_owned(),
                    reason: e.to_string(),
                })
        };
        for p in &patterns {
            let pattern = CommandPattern::parse(p, build).unwrap();
            for c in commands {
                let words = CommandWords::split(c);
                for strict in [false, true] {
                    assert_eq!(
                        pattern.reaches_all(&words, strict),
                        pattern.reaches_all_long(&words, strict),
                        "{p} / {c}"
                    );
                }
            }
        }
    }
}
