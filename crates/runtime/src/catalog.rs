//! The catalog: which tools a session offers, and exactly what a model receives for them.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, OnceLock};

use tackle_protocol::ToolSpec;
use tackle_tool::DynTool;

/// Why a set of tools cannot form a catalog. These are programming errors in a tool, caught
/// when the catalog is built rather than when a model first calls the tool.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("tool name `{name}` is invalid; names match ^[A-Za-z0-9_-]{{1,64}}$")]
    BadName { name: String },
    #[error("tool `{name}` is registered twice")]
    Duplicate { name: String },
    #[error("tool `{name}`: {source}")]
    Schema {
        name: String,
        source: tackle_tool::SchemaError,
    },
}

struct Entry {
    tool: Arc<dyn DynTool>,
    spec: ToolSpec,
    /// The one-sentence description of the compact catalog.
    summary: String,
}

/// Which descriptions a catalog is sent with: as the tools wrote them, or one sentence each
/// (the same names and schemas), for models whose context window is small.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Descriptions {
    #[default]
    Full,
    Compact,
}

impl Descriptions {
    pub fn as_str(self) -> &'static str {
        match self {
            Descriptions::Full => "full",
            Descriptions::Compact => "compact",
        }
    }
}

/// The registered tools in registration order, with their specs computed once.
pub struct Catalog {
    entries: Vec<Entry>,
    by_name: BTreeMap<String, usize>,
    /// Known built-in names that are not registered: sentences naming them are dropped from
    /// the descriptions a model is sent.
    absent: Vec<String>,
    /// Each entry's description and summary as a model is sent them, made on first use: a
    /// process that only calls tools (`tackle call`) never reads them.
    shown: OnceLock<Vec<(String, String)>>,
}

impl Catalog {
    /// A catalog of exactly `tools`, descriptions as the tools wrote them.
    pub fn new(tools: Vec<Arc<dyn DynTool>>) -> Result<Self, CatalogError> {
        Self::build(tools, &[])
    }

    /// A catalog whose descriptions follow it (seed 003, "Descriptions follow the catalog"): a
    /// sentence naming a tool of `known_builtins` that is not registered is dropped, because it
    /// would promise the model a capability it does not have. Names outside `known_builtins`
    /// (MCP tools, tools wired by an embedder) are unknown rather than absent and are kept.
    pub fn build(
        tools: Vec<Arc<dyn DynTool>>,
        known_builtins: &[&str],
    ) -> Result<Self, CatalogError> {
        let mut catalog = Self::unrewritten(tools)?;
        catalog.absent = known_builtins
            .iter()
            .filter(|k| !catalog.by_name.contains_key(**k))
            .map(|k| (*k).to_owned())
            .collect();
        Ok(catalog)
    }

    fn unrewritten(tools: Vec<Arc<dyn DynTool>>) -> Result<Self, CatalogError> {
        let mut entries = Vec::with_capacity(tools.len());
        let mut by_name = BTreeMap::new();
        for tool in tools {
            let name = tool.name().to_owned();
            if !valid_tool_name(&name) {
                return Err(CatalogError::BadName { name });
            }
            let input_schema = tool.input_schema().map_err(|source| CatalogError::Schema {
                name: name.clone(),
                source,
            })?;
            if by_name.insert(name.clone(), entries.len()).is_some() {
                return Err(CatalogError::Duplicate { name });
            }
            let spec = ToolSpec {
                name,
                description: tool.description().into_owned(),
                input_schema,
            };
            let summary = tool.summary().into_owned();
            entries.push(Entry {
                tool,
                spec,
                summary,
            });
        }
        Ok(Self {
            entries,
            by_name,
            absent: Vec::new(),
            shown: OnceLock::new(),
        })
    }

    /// The catalog exactly as a model receives it, in registration order.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.specs_in(Descriptions::Full)
    }

    /// The catalog as a model receives it with these descriptions: [`Catalog::specs`], or the
    /// same names and schemas with each tool's one-sentence summary.
    pub fn specs_in(&self, descriptions: Descriptions) -> Vec<ToolSpec> {
        self.entries
            .iter()
            .zip(self.shown())
            .map(|(e, (description, summary))| ToolSpec {
                name: e.spec.name.clone(),
                description: match descriptions {
                    Descriptions::Full => description.clone(),
                    Descriptions::Compact => summary.clone(),
                },
                input_schema: e.spec.input_schema.clone(),
            })
            .collect()
    }

    /// Each entry's description and summary without the sentences naming absent tools.
    fn shown(&self) -> &[(String, String)] {
        self.shown.get_or_init(|| {
            let names: Vec<&str> = self.absent.iter().map(String::as_str).collect();
            let absent = Absent::new(&names);
            self.entries
                .iter()
                .map(|e| {
                    (
                        absent.drop_sentences(&e.spec.description),
                        absent.drop_sentences(&e.summary),
                    )
                })
                .collect()
        })
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn DynTool>> {
        self.by_name.get(name).map(|&i| &self.entries[i].tool)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.spec.name.as_str())
    }

    /// What `plan_mode = "required"` holds back in this catalog, as a model is told it: each
    /// plan-gated built-in by name, then each MCP server once, by its namespace (`mcp__gke__*`).
    pub fn plan_gated(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for entry in &self.entries {
            let gate_name = entry.tool.gate_name();
            if !tackle_tool::plan_gate::plan_gated(&gate_name, entry.tool.read_only()) {
                continue;
            }
            let shown = match gate_name.strip_prefix("mcp.") {
                Some(rest) => {
                    let server = rest.split('.').next().unwrap_or(rest);
                    format!("mcp__{server}__*")
                }
                None => entry.spec.name.clone(),
            };
            if !names.contains(&shown) {
                names.push(shown);
            }
        }
        names
    }

    /// Registered names closest to `name`, best first (for `unknown_tool`).
    pub fn closest(&self, name: &str, n: usize) -> Vec<String> {
        self.closest_among(name, n, |_| true)
    }

    /// [`Catalog::closest`] among the names `offered` keeps (a session's tool filter).
    pub fn closest_among(
        &self,
        name: &str,
        n: usize,
        offered: impl Fn(&str) -> bool,
    ) -> Vec<String> {
        let lower = name.to_ascii_lowercase();
        let mut scored: Vec<(f64, &str)> = self
            .names()
            .filter(|cand| offered(cand))
            .map(|cand| {
                let mut score = strsim::jaro_winkler(&lower, &cand.to_ascii_lowercase());
                if cand.contains(lower.as_str()) || lower.contains(cand) {
                    score += 0.2;
                }
                (score, cand)
            })
            .filter(|(score, _)| *score >= 0.6)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        scored
            .into_iter()
            .take(n)
            .map(|(_, c)| c.to_owned())
            .collect()
    }
}

/// Remove every sentence that names one of `absent` as a whole word.
#[cfg(test)]
fn drop_sentences_naming(description: &str, absent: &[&str]) -> String {
    Absent::new(absent).drop_sentences(description)
}

/// The names whose sentences are dropped, ready to be looked for in many descriptions: a name
/// that is one word (letters, digits, `_`) is found by walking a text's words once against a
/// set; another (an MCP name with `-`) is searched for in the text.
struct Absent<'a> {
    words: HashSet<&'a str>,
    others: Vec<&'a str>,
}

impl<'a> Absent<'a> {
    fn new(names: &[&'a str]) -> Self {
        let (words, others): (Vec<&str>, Vec<&str>) = names
            .iter()
            .copied()
            .filter(|n| !n.is_empty())
            .partition(|n| n.bytes().all(is_word_byte));
        Self {
            words: words.into_iter().collect(),
            others,
        }
    }

    /// The names `text` names as whole words.
    fn named_in(&self, text: &str) -> Vec<&'a str> {
        let mut found: Vec<&'a str> = Vec::new();
        if !self.words.is_empty() {
            for word in text.split(|c: char| !c.is_ascii() || !is_word_byte(c as u8)) {
                if let Some(&name) = self.words.get(word)
                    && !found.contains(&name)
                {
                    found.push(name);
                }
            }
        }
        found.extend(self.others.iter().filter(|n| names_word(text, n)));
        found
    }

    fn drop_sentences(&self, description: &str) -> String {
        if self.words.is_empty() && self.others.is_empty() {
            return description.to_owned();
        }
        // Most descriptions name none of them: the names are looked for once in the whole
        // text, and only those found are looked for sentence by sentence. A whole word of a
        // sentence is one of the whole text (a sentence's ends are whitespace or the text's
        // ends there).
        let present = self.named_in(description);
        if present.is_empty() {
            return description.trim_end().to_owned();
        }
        let mut out = String::with_capacity(description.len());
        for sentence in sentences(description) {
            if !present.iter().any(|name| names_word(sentence, name)) {
                out.push_str(sentence);
            }
        }
        out.trim_end().to_owned()
    }
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Split after `.`, `!` or `?` followed by whitespace, keeping the whitespace with the
/// sentence so that rejoining the survivors keeps the original spacing.
fn sentences(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut parts = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if matches!(bytes[i], b'.' | b'!' | b'?')
            && bytes.get(i + 1).is_some_and(|b| b.is_ascii_whitespace())
        {
            let mut end = i + 1;
            while end < bytes.len() && bytes[end].is_ascii_whitespace() {
                end += 1;
            }
            parts.push(&text[start..end]);
            start = end;
            i = end;
            continue;
        }
        i += 1;
    }
    if start < text.len() {
        parts.push(&text[start..]);
    }
    parts
}

fn names_word(sentence: &str, name: &str) -> bool {
    let is_word = |c: char| c.is_ascii() && is_word_byte(c as u8);
    sentence.match_indices(name).any(|(at, _)| {
        let before = sentence[..at].chars().next_back();
        let after = sentence[at + name.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

fn valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_follow_the_catalog() {
        let d = "Read a file. Use this instead of `cat` in bash. Prefer grep for searching! \
                 Pages follow next_offset.";
        let cases: &[(&[&str], &str)] = &[
            (&[], d),
            (
                &["bash"],
                "Read a file. Prefer grep for searching! Pages follow next_offset.",
            ),
            (&["bash", "grep"], "Read a file. Pages follow next_offset."),
            // Whole words only: `grep_tool` or `bashful` are not `grep` or `bash`.
            (&["next"], d),
        ];
        for (absent, want) in cases {
            assert_eq!(drop_sentences_naming(d, absent), *want, "{absent:?}");
        }
        assert_eq!(
            drop_sentences_naming("See bashful and grep_tool.", &["bash", "grep"]),
            "See bashful and grep_tool."
        );
        // A name with `-` is searched for; a non-ASCII neighbour ends a word.
        assert_eq!(
            drop_sentences_naming(
                "Try mcp-tool now. Call grep\u{2014}then stop. Fine.",
                &["mcp-tool", "grep"]
            ),
            "Fine."
        );
        assert_eq!(
            drop_sentences_naming("Try xmcp-tool now.", &["mcp-tool"]),
            "Try xmcp-tool now."
        );
    }
}
