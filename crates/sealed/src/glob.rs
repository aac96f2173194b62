//! list_files' and search's glob: `*`, `?` and `**`, literal otherwise, brace groups refused.
//!
//! Matched by simulating the pattern's automaton over the path (a set of positions advanced
//! one character at a time), never by backtracking: a pattern of `m` characters costs at most
//! `m` steps per character of the path, whatever it holds (`*a*a*a*a*b` against `aaaa…` too).

/// The longest pattern accepted.
pub const MAX_PATTERN_CHARS: usize = 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Literal(char),
    /// `?`: one character other than `/`.
    One,
    /// `*`: any run of characters other than `/`.
    Star,
    /// `**/`: nothing, or whole directories (anything ending in `/`).
    Dirs,
    /// A final `**` (`dir/**`, or the pattern `**`): everything that is left.
    Rest,
}

/// A compiled glob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Glob {
    tokens: Vec<Token>,
    /// A pattern without `/` is matched against each file's name, wherever it is.
    name_only: bool,
}

impl Glob {
    /// Compiles `pattern`, or says why it cannot be used.
    pub fn new(pattern: &str) -> Result<Glob, String> {
        if pattern.is_empty() {
            return Err("pattern is empty; leave it out to list everything".to_owned());
        }
        if pattern.chars().count() > MAX_PATTERN_CHARS {
            return Err(format!(
                "pattern is longer than {MAX_PATTERN_CHARS} characters; use a shorter one"
            ));
        }
        if pattern.contains('{') || pattern.contains('}') {
            return Err(
                "brace groups are not supported: `{a,b}` is not expanded; make one call per alternative"
                    .to_owned(),
            );
        }
        if pattern.starts_with('/') {
            return Err(
                "pattern is relative to the directory listed; drop the leading `/`".to_owned(),
            );
        }
        let chars: Vec<char> = pattern.chars().collect();
        let mut tokens = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let at_segment_start = i == 0 || chars[i - 1] == '/';
            match chars[i] {
                '*' if chars.get(i + 1) == Some(&'*') => {
                    let mut end = i;
                    while chars.get(end) == Some(&'*') {
                        end += 1;
                    }
                    match chars.get(end) {
                        Some('/') if at_segment_start => {
                            tokens.push(Token::Dirs);
                            i = end + 1;
                        }
                        None if at_segment_start => {
                            tokens.push(Token::Rest);
                            i = end;
                        }
                        // `a**b`: within one name, as `*`.
                        _ => {
                            tokens.push(Token::Star);
                            i = end;
                        }
                    }
                }
                '*' => {
                    tokens.push(Token::Star);
                    i += 1;
                }
                '?' => {
                    tokens.push(Token::One);
                    i += 1;
                }
                c => {
                    tokens.push(Token::Literal(c));
                    i += 1;
                }
            }
        }
        Ok(Glob {
            tokens,
            name_only: !pattern.contains('/'),
        })
    }

    /// Whether `path` (relative to the listed directory, `/`-separated) matches.
    pub fn matches(&self, path: &str) -> bool {
        let subject = if self.name_only {
            path.rsplit('/').next().unwrap_or(path)
        } else {
            path
        };
        let n = self.tokens.len();
        // `free[i]`: at token i, nothing of it consumed yet (may also skip an optional one);
        // `inside[i]`: within a `**/` that has consumed something not yet ended by `/`.
        let mut free = vec![false; n + 1];
        let mut inside = vec![false; n + 1];
        free[0] = true;
        self.close(&mut free);
        for c in subject.chars() {
            let mut next_free = vec![false; n + 1];
            let mut next_inside = vec![false; n + 1];
            for i in 0..n {
                if !(free[i] || inside[i]) {
                    continue;
                }
                match self.tokens[i] {
                    Token::Dirs => {
                        next_inside[i] = true;
                        if c == '/' {
                            next_free[i + 1] = true;
                        }
                    }
                    _ if !free[i] => {}
                    Token::Literal(l) => next_free[i + 1] |= l == c,
                    Token::One => next_free[i + 1] |= c != '/',
                    Token::Star => next_free[i] |= c != '/',
                    Token::Rest => next_free[i] = true,
                }
            }
            self.close(&mut next_free);
            free = next_free;
            inside = next_inside;
            if !free.iter().chain(inside.iter()).any(|&b| b) {
                return false;
            }
        }
        free[n]
    }

    /// Tokens that may match nothing let the position after them be reached at once.
    fn close(&self, free: &mut [bool]) {
        for i in 0..self.tokens.len() {
            if free[i] && matches!(self.tokens[i], Token::Star | Token::Dirs | Token::Rest) {
                free[i + 1] = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_wildcards_and_literals() {
        let table: &[(&str, &str, bool)] = &[
            ("*.rs", "main.rs", true),
            ("*.rs", "src/deep/main.rs", true),
            ("*.rs", "main.rsx", false),
            ("src/*.rs", "src/main.rs", true),
            ("src/*.rs", "src/a/main.rs", false),
            ("src/**/*.rs", "src/main.rs", true),
            ("src/**/*.rs", "src/a/b/main.rs", true),
            ("src/**", "src/a/b", true),
            ("src/**", "srcx/a", false),
            ("**", "a/b/c", true),
            ("**/x", "x", true),
            ("**/x", "a/b/x", true),
            ("**/x", "a/bx", false),
            ("a?c", "abc", true),
            ("a?c", "a/c", false),
            ("[ab].txt", "[ab].txt", true),
            ("[ab].txt", "a.txt", false),
            ("a**b/c", "axxb/c", true),
            ("a**b/c", "ax/xb/c", false),
            ("docs/*", "docs/a.md", true),
            ("docs/*", "docs/a/b.md", false),
        ];
        for (pattern, path, want) in table {
            assert_eq!(
                Glob::new(pattern).unwrap().matches(path),
                *want,
                "{pattern} ~ {path}"
            );
        }
    }

    #[test]
    fn braces_and_absolute_patterns_are_refused_with_the_way_out() {
        assert!(
            Glob::new("*.{rs,md}")
                .unwrap_err()
                .contains("one call per alternative")
        );
        assert!(Glob::new("/etc/*").unwrap_err().contains("leading"));
        assert!(Glob::new("").is_err());
        assert!(Glob::new(&"a".repeat(MAX_PATTERN_CHARS + 1)).is_err());
    }

    #[test]
    fn generated_nesting_is_refused_by_length_and_never_recursed_into() {
        // 100,000 levels of `**/`: over the length bound, refused before any token is read.
        let deep = "**/".repeat(100_000);
        assert!(Glob::new(&deep).unwrap_err().contains("longer than"));
        // Within the bound, depth is only a longer flat token list.
        let within = format!("{}x", "**/".repeat(300));
        let glob = Glob::new(&within).unwrap();
        assert!(glob.matches(&format!("{}x", "d/".repeat(5_000))));
    }

    #[test]
    fn a_pathological_pattern_costs_steps_not_backtracking() {
        let pattern = format!("{}b", "*a".repeat(200));
        let glob = Glob::new(&pattern).unwrap();
        let path = "a".repeat(100_000);
        // A backtracking matcher takes exponential time here; this takes at most m·n steps.
        assert!(!glob.matches(&path));
        assert!(glob.matches(&format!("{path}b")));
    }
}
