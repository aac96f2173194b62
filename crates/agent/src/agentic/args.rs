//! The four wrappers' arguments: each underlying tool's own, field for field, plus `question`
//! (what the caller wants from the bulk). agentic_research has no underlying tool: a question
//! and where to start.
//!
//! The underlying fields are written out here rather than flattened from the tools' own types
//! because serde refuses `deny_unknown_fields` beside `flatten`, and strict parsing is the
//! house rule. A test holds each copy to the tool's schema (same properties, same types, same
//! required fields), so the two cannot drift apart; the underlying call is then parsed again,
//! strictly, by the tool itself in the subtask, as any call is.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// The longest question, in bytes: a question, not a document.
pub const MAX_QUESTION_BYTES: usize = 8 * 1024;

/// agentic_read_file.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileQuestion {
    /// What you want to know about the file. Another model reads the file and answers only
    /// this, so ask exactly what you need (names, lines, values).
    pub question: String,
    /// Path relative to the project root, or an `artifact://<digest>[/<stream>]` URI from a truncated tool result.
    pub path: String,
    /// 1-based number of the first line to read. Default 1.
    #[schemars(range(min = 1))]
    pub offset: Option<u64>,
    /// How many lines to read, 1 to 2000. Default: the whole file from `offset`, page after page.
    #[schemars(range(min = 1, max = 2000))]
    pub limit: Option<u64>,
}

/// agentic_grep.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepQuestion {
    /// What you want to know from the matches. Another model reads them all and answers only
    /// this.
    pub question: String,
    /// A regular expression in RE2 syntax (Rust regex): no backreferences or look-around. Escape regex metacharacters, or pass literal: true.
    pub pattern: String,
    /// A directory to search recursively, or a single file. Relative to the project root; default `.`.
    pub path: Option<String>,
    /// Only search files matching this glob: `*.rs` matches names at any depth, `src/**/*.ts` matches paths below `path`.
    pub glob: Option<String>,
    /// Match without regard to case. Default false.
    #[serde(default)]
    pub case_insensitive: bool,
    /// Treat the pattern as a literal string, not a regex. Default false.
    #[serde(default)]
    pub literal: bool,
}

/// agentic_fetch_url.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FetchUrlQuestion {
    /// What you want to know from the page. Another model reads it and answers only this.
    pub question: String,
    /// The full URL, starting with lowercase `http://` or `https://`.
    pub url: String,
    /// Read the HTML source instead of rendered text. Default false.
    #[serde(default)]
    pub raw: bool,
}

/// agentic_research.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResearchQuestion {
    /// The question to research in the project, self-contained: the researcher sees nothing
    /// of your conversation.
    pub question: String,
    /// A file or directory to start from, relative to the project root. Default: the root.
    pub path: Option<String>,
}

/// The one call a digest wrapper makes first: the underlying tool and its arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct UnderlyingCall {
    pub tool: &'static str,
    pub arguments: Value,
}

impl UnderlyingCall {
    fn new(tool: &'static str, fields: Vec<(&str, Option<Value>)>) -> Self {
        let arguments: Map<String, Value> = fields
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v)))
            .collect();
        Self {
            tool,
            arguments: Value::Object(arguments),
        }
    }

    /// The call as a prompt names it: `read_file {"path":"src/lib.rs"}`.
    pub fn describe(&self) -> String {
        format!("{} {}", self.tool, self.arguments)
    }
}

impl ReadFileQuestion {
    /// read_file's part of the arguments; whether the wrapper pages on (no `limit` given).
    pub fn underlying(&self) -> (UnderlyingCall, bool) {
        let call = UnderlyingCall::new(
            "read_file",
            vec![
                ("path", Some(json!(self.path))),
                ("offset", self.offset.map(|o| json!(o))),
                ("limit", self.limit.map(|l| json!(l))),
            ],
        );
        (call, self.limit.is_none())
    }
}

impl GrepQuestion {
    pub fn underlying(&self) -> UnderlyingCall {
        UnderlyingCall::new(
            "grep",
            vec![
                ("pattern", Some(json!(self.pattern))),
                ("path", self.path.as_ref().map(|p| json!(p))),
                ("glob", self.glob.as_ref().map(|g| json!(g))),
                (
                    "case_insensitive",
                    self.case_insensitive.then_some(Value::Bool(true)),
                ),
                ("literal", self.literal.then_some(Value::Bool(true))),
            ],
        )
    }
}

impl FetchUrlQuestion {
    pub fn underlying(&self) -> UnderlyingCall {
        UnderlyingCall::new(
            "fetch_url",
            vec![
                ("url", Some(json!(self.url))),
                ("raw", self.raw.then_some(Value::Bool(true))),
            ],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tackle_tool::strict_schema_for;

    /// Each property's schema without its description (which says how the wrapper, not the
    /// tool, reads it).
    fn shape(schema: &Value, without: &str) -> (Value, Value) {
        let mut properties = schema["properties"].as_object().unwrap().clone();
        properties.remove(without);
        for p in properties.values_mut() {
            p.as_object_mut().unwrap().remove("description");
        }
        let mut required: Vec<Value> = schema["required"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|r| r != without)
            .collect();
        required.sort_by_key(Value::to_string);
        (Value::Object(properties), Value::Array(required))
    }

    #[test]
    fn each_wrapper_takes_its_tools_arguments_and_a_question() {
        let rows = [
            (
                strict_schema_for::<ReadFileQuestion>().unwrap(),
                strict_schema_for::<tackle_tools::read_file::ReadFileArgs>().unwrap(),
            ),
            (
                strict_schema_for::<GrepQuestion>().unwrap(),
                strict_schema_for::<tackle_tools::grep::GrepArgs>().unwrap(),
            ),
            (
                strict_schema_for::<FetchUrlQuestion>().unwrap(),
                strict_schema_for::<tackle_tools::fetch_url::FetchUrlArgs>().unwrap(),
            ),
        ];
        for (wrapper, tool) in rows {
            assert_eq!(shape(&wrapper, "question"), shape(&tool, ""), "{wrapper}");
            assert_eq!(wrapper["properties"]["question"]["type"], "string");
            assert!(
                wrapper["required"]
                    .as_array()
                    .unwrap()
                    .contains(&json!("question"))
            );
        }
    }

    #[test]
    fn the_underlying_call_carries_only_what_was_given() {
        let read: ReadFileQuestion = serde_json::from_value(json!({
            "question": "q", "path": "src/a.rs", "offset": 10
        }))
        .unwrap();
        let (call, paging) = read.underlying();
        assert_eq!(call.arguments, json!({"path": "src/a.rs", "offset": 10}));
        assert!(paging);
        let grep: GrepQuestion = serde_json::from_value(json!({
            "question": "q", "pattern": "fn main", "literal": true
        }))
        .unwrap();
        assert_eq!(
            grep.underlying().arguments,
            json!({"pattern": "fn main", "literal": true})
        );
        let fetch: FetchUrlQuestion =
            serde_json::from_value(json!({"question": "q", "url": "https://example.com/"}))
                .unwrap();
        assert_eq!(
            fetch.underlying().describe(),
            r#"fetch_url {"url":"https://example.com/"}"#
        );
        assert!(
            serde_json::from_value::<GrepQuestion>(
                json!({"question": "q", "pattern": "x", "extra": 1})
            )
            .is_err()
        );
    }
}
