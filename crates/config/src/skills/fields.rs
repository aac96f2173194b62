//! One `SKILL.md` read into a [`Draft`]: the frontmatter cut off and bounded (the same reader
//! as agent types, [`crate::frontmatter`]), each field checked against the format's rules
//! ([`rules`]), the instructions kept.
//!
//! Lenient where other agents are: a frontmatter that is not valid YAML only because a plain
//! value holds `: ` (`description: Use when: forms`) is read line by line, with a warning, as
//! the format's guide for clients recommends; Claude Code's own fields load with a warning,
//! and its `disable-model-invocation` and `user-invocable` are honoured.

use crate::frontmatter::yaml::{self, Entry, Node, Value};
use crate::frontmatter::{self, FileFault, Kind};

use super::allowed_tools::{self, AllowedTools};
use super::files::Found;
use super::rules::{self, Rule};

const KIND: Kind = Kind {
    file: "a SKILL.md",
    body: "the instructions",
    fields: "a skill's fields",
    flat_example: "description: Fills PDF forms",
    field_example: "name: pdf-forms",
};

/// Claude Code's fields beyond the format's: loaded with a warning; the two marked honoured
/// change what tackle does.
const CLAUDE_FIELDS: &[&str] = &[
    "when_to_use",
    "argument-hint",
    "arguments",
    "disable-model-invocation",
    "user-invocable",
    "disallowed-tools",
    "model",
    "effort",
    "context",
    "agent",
    "background",
    "hooks",
    "paths",
    "shell",
    "version",
];

/// A skill before scopes and trust apply.
#[derive(Clone, Debug)]
pub(super) struct Draft {
    pub name: String,
    pub name_line: usize,
    pub description: String,
    pub body: String,
    pub allowed: AllowedTools,
    pub allowed_line: Option<usize>,
    pub model_invocable: bool,
    pub user_invocable: bool,
    /// Warnings: the rule (when one is broken) and the message, with its line.
    pub warnings: Vec<(Option<usize>, Option<Rule>, String)>,
}

/// Why a skill is invalid: the rule, its line, the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Broken {
    pub rule: Rule,
    pub line: Option<usize>,
    pub message: String,
}

fn broken(rule: Rule, line: Option<usize>, message: impl Into<String>) -> Broken {
    Broken {
        rule,
        line,
        message: message.into(),
    }
}

fn from_fault(rule: Rule, fault: FileFault) -> Broken {
    broken(rule, fault.line, fault.message)
}

/// The skill `found` holds.
pub(super) fn parse(found: &Found) -> Result<Draft, Broken> {
    let parts =
        frontmatter::split(&found.text, KIND).map_err(|f| from_fault(rules::FRONTMATTER, f))?;
    frontmatter::check_nesting(parts.yaml, parts.first_line, KIND)
        .map_err(|f| from_fault(rules::FRONTMATTER, f))?;
    let mut warnings = Vec::new();
    let entries = match yaml::parse_fields(parts.yaml, parts.first_line, KIND) {
        Ok(entries) => entries,
        // Only the one mistake other agents forgive: an alias or a second document is refused.
        Err(fault) if !fault.message.contains("mapping values are not allowed") => {
            return Err(from_fault(rules::FRONTMATTER, fault));
        }
        Err(fault) => match line_by_line(parts.yaml, parts.first_line) {
            Some(entries) => {
                warnings.push((
                    fault.line,
                    Some(rules::FRONTMATTER),
                    format!("{}; read line by line instead", fault.message),
                ));
                entries
            }
            None => return Err(from_fault(rules::FRONTMATTER, fault)),
        },
    };
    read(entries, parts.body, found, warnings)
}

/// Flat `key: value` lines read as text, for a frontmatter YAML refuses: `None` unless every
/// line is one (an indented line, a list or a comment makes it YAML that is really wrong).
fn line_by_line(text: &str, first_line: usize) -> Option<Vec<Entry>> {
    let mut entries: Vec<Entry> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let (key, value) = line.split_once(':')?;
        let key_ok = !key.is_empty()
            && key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !key_ok || entries.iter().any(|e| e.key == key) {
            return None;
        }
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(value);
        let line = first_line + i;
        entries.push(Entry {
            key: key.to_owned(),
            key_line: line,
            value: Node {
                line,
                value: Value::Scalar {
                    text: value.to_owned(),
                    plain: false,
                },
            },
        });
    }
    Some(entries)
}

/// The value as text, when it is one (a plain `10` or `true` is text here too).
fn text(node: &Node) -> Option<&str> {
    match &node.value {
        Value::Scalar { text, .. } => Some(text),
        _ => None,
    }
}

fn flag(node: &Node) -> Option<bool> {
    match text(node)? {
        "true" | "True" | "yes" => Some(true),
        "false" | "False" | "no" => Some(false),
        _ => None,
    }
}

fn read(
    entries: Vec<Entry>,
    body: &str,
    found: &Found,
    mut warnings: Vec<(Option<usize>, Option<Rule>, String)>,
) -> Result<Draft, Broken> {
    let field = |key: &str| entries.iter().find(|e| e.key == key);
    let name_entry = field("name").ok_or_else(|| {
        broken(
            rules::NAME_REQUIRED,
            Some(1),
            "there is no `name` field; add name: <the folder's name>",
        )
    })?;
    let name_line = name_entry.value.line;
    let name = text(&name_entry.value).ok_or_else(|| {
        broken(
            rules::NAME_REQUIRED,
            Some(name_line),
            "`name` must be text, such as name: pdf-forms",
        )
    })?;
    if let Some(rule) = rules::name_fault(name) {
        return Err(broken(
            rule,
            Some(name_line),
            format!("`name: {}` breaks the rule: {}", shown(name), rule.text),
        ));
    }
    if name != found.folder {
        return Err(broken(
            rules::NAME_MATCHES_FOLDER,
            Some(name_line),
            format!(
                "`name: {name}` differs from its folder `{}`; rename one to match the other",
                found.folder
            ),
        ));
    }
    let description = match field("description") {
        None => {
            return Err(broken(
                rules::DESCRIPTION_REQUIRED,
                Some(1),
                "there is no `description` field; say what the skill does and when to use it",
            ));
        }
        Some(e) => match text(&e.value).map(str::trim) {
            Some(d) if !d.is_empty() => (d.to_owned(), e.value.line),
            _ => {
                return Err(broken(
                    rules::DESCRIPTION_REQUIRED,
                    Some(e.value.line),
                    "`description` must be non-empty text saying what the skill does and when \
                     to use it",
                ));
            }
        },
    };
    let chars = description.0.chars().count();
    if chars > rules::MAX_DESCRIPTION_CHARS {
        return Err(broken(
            rules::DESCRIPTION_LENGTH,
            Some(description.1),
            format!(
                "`description` is {chars} characters, over {}; keep it to what the skill does \
                 and when, and move the rest into the instructions",
                rules::MAX_DESCRIPTION_CHARS
            ),
        ));
    }
    if let Some(e) = field("license")
        && text(&e.value).is_none()
    {
        return Err(broken(
            rules::LICENSE_TEXT,
            Some(e.value.line),
            "`license` must be text, such as license: Apache-2.0",
        ));
    }
    if let Some(e) = field("compatibility") {
        let n = text(&e.value).map(|t| t.chars().count());
        if !matches!(n, Some(1..=rules::MAX_COMPATIBILITY_CHARS)) {
            return Err(broken(
                rules::COMPATIBILITY,
                Some(e.value.line),
                format!(
                    "`compatibility` must be text of 1 to {} characters, such as \
                     compatibility: Requires git and python3",
                    rules::MAX_COMPATIBILITY_CHARS
                ),
            ));
        }
    }
    if let Some(e) = field("metadata") {
        let ok = match &e.value.value {
            Value::Map(items) => items.iter().all(|i| text(&i.value).is_some()),
            Value::Null => true,
            _ => false,
        };
        if !ok {
            return Err(broken(
                rules::METADATA,
                Some(e.value.line),
                "`metadata` must map text to text, such as metadata: {author: me, version: \"1.0\"}",
            ));
        }
    }
    let (allowed, allowed_line) = match field("allowed-tools") {
        None => (AllowedTools::default(), None),
        Some(e) => {
            let line = e.value.line;
            let list = match &e.value.value {
                Value::Null => Some(Vec::new()),
                Value::Scalar { text, .. } => allowed_tools::entries(text),
                Value::List(items) => items
                    .iter()
                    .map(|i| text(i).map(str::to_owned))
                    .collect::<Option<Vec<_>>>(),
                Value::Map(_) => None,
            };
            let Some(list) = list else {
                return Err(broken(
                    rules::ALLOWED_TOOLS,
                    Some(line),
                    "`allowed-tools` must be a space-separated list with balanced parentheses, \
                     such as allowed-tools: Read Bash(git:*)",
                ));
            };
            let allowed = allowed_tools::read(&list);
            for note in &allowed.notes {
                warnings.push((Some(line), None, note.clone()));
            }
            (allowed, Some(line))
        }
    };
    let mut model_invocable = true;
    let mut user_invocable = true;
    for e in &entries {
        match e.key.as_str() {
            "name" | "description" | "license" | "compatibility" | "metadata" | "allowed-tools" => {
            }
            "disable-model-invocation" => match flag(&e.value) {
                Some(v) => model_invocable = !v,
                None => warnings.push((
                    Some(e.value.line),
                    None,
                    "`disable-model-invocation` is true or false; ignored".to_owned(),
                )),
            },
            "user-invocable" => match flag(&e.value) {
                Some(v) => user_invocable = v,
                None => warnings.push((
                    Some(e.value.line),
                    None,
                    "`user-invocable` is true or false; ignored".to_owned(),
                )),
            },
            key if CLAUDE_FIELDS.contains(&key) => warnings.push((
                Some(e.key_line),
                Some(rules::KNOWN_FIELDS),
                format!("`{key}` is a Claude Code field tackle does not use; ignored"),
            )),
            key => warnings.push((
                Some(e.key_line),
                Some(rules::KNOWN_FIELDS),
                format!(
                    "`{}` is not a field of the format; ignored (put extras under metadata)",
                    shown(key)
                ),
            )),
        }
    }
    let lines = body.lines().count();
    if lines > rules::MAX_BODY_LINES {
        warnings.push((
            None,
            Some(rules::BODY_LENGTH),
            format!(
                "the instructions are {lines} lines, over the {} the format recommends; move \
                 detail into references/",
                rules::MAX_BODY_LINES
            ),
        ));
    }
    Ok(Draft {
        name: name.to_owned(),
        name_line,
        description: description.0,
        body: body.trim().to_owned(),
        allowed,
        allowed_line,
        model_invocable,
        user_invocable,
        warnings,
    })
}

/// Text cut for a message: a hostile file's value can be 60 KiB long.
fn shown(text: &str) -> String {
    const MAX: usize = 80;
    if text.chars().count() <= MAX {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(MAX - 1).collect();
    cut.push('…');
    cut
}
