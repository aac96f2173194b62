//! The path scope and the URL scope: limits no rule can widen.

use crate::Pattern;
use crate::error::PatternError;

/// Which root-relative paths `read:`/`write:` keys may name. A path outside `allow` or inside
/// `deny` is denied whatever the rules say. Patterns are gitignore-style (see
/// [`Pattern::parse_path`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathScope {
    /// Paths the tools may touch.
    pub allow: Vec<Pattern>,
    /// Paths they may not, even inside `allow`.
    pub deny: Vec<Pattern>,
}

impl PathScope {
    /// A scope from pattern texts, parsed as bare paths.
    pub fn parse(allow: &[&str], deny: &[&str]) -> Result<PathScope, PatternError> {
        Ok(PathScope {
            allow: parse_all(allow, Pattern::parse_path)?,
            deny: parse_all(deny, Pattern::parse_path)?,
        })
    }
}

impl Default for PathScope {
    /// The whole project root (`**`), nothing denied.
    fn default() -> PathScope {
        PathScope {
            allow: vec![whole_root()],
            deny: Vec::new(),
        }
    }
}

fn whole_root() -> Pattern {
    // `**` is a fixed glob that always compiles; the pattern table tests it.
    #[allow(clippy::expect_used)]
    Pattern::parse_path("**").expect("`**` is a valid glob")
}

/// Which URLs `fetch:` keys may name. A URL no `allow` pattern matches is denied; the default
/// (empty) denies every fetch, and `fetch_url` is then not advertised.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UrlScope {
    /// URL globs (`*` crosses `/`), e.g. `https://docs.rs/*`.
    pub allow: Vec<Pattern>,
}

impl UrlScope {
    /// A scope from pattern texts.
    pub fn parse(allow: &[&str]) -> Result<UrlScope, PatternError> {
        Ok(UrlScope {
            allow: parse_all(allow, Pattern::parse)?,
        })
    }
}

fn parse_all(
    texts: &[&str],
    parse: fn(&str) -> Result<Pattern, PatternError>,
) -> Result<Vec<Pattern>, PatternError> {
    texts.iter().map(|text| parse(text)).collect()
}
