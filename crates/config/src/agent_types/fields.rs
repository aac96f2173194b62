//! One agent type file read into an [`AgentType`]: the frontmatter cut off and bounded, its
//! YAML read, and each field checked in the forms it accepts. A field of the wrong type is a
//! refusal naming its line and a correct example; what is left out (a Claude Code tool tackle
//! lacks, a field tackle does not have) is a note.

use tackle_agent::delegate::agent_type::{
    AgentType, MAX_NAME_BYTES, ModelChoice, Origin, Overlay, valid_name,
};
use tackle_gate::Pattern;
use tackle_llm::catalog::ModelId;

use super::tool_names::{ToolName, classify};
use super::{FileFault, KIND};
use crate::frontmatter::yaml::{self, Entry, Node, Value};
use crate::frontmatter::{self};

/// The fields of an agent type file, as Claude Code spells them.
pub const FIELDS: &[&str] = &[
    "name",
    "description",
    "tools",
    "disallowedTools",
    "model",
    "maxTurns",
    "permissions",
];

/// Claude Code's model aliases: tackle runs the parent's model for them.
pub const CLAUDE_MODEL_ALIASES: &[&str] = &["sonnet", "opus", "haiku"];

/// One file's type before scopes, trust and the model catalog apply, with the lines they name.
#[derive(Clone, Debug)]
pub(super) struct Draft {
    pub ty: AgentType,
    pub name_line: usize,
    /// The line of `model`, when the file has one.
    pub model_line: Option<usize>,
    /// The line of each `permissions.allow` rule, in order.
    pub allow_lines: Vec<usize>,
    /// What was left out or changed, with its line.
    pub notes: Vec<(Option<usize>, String)>,
}

/// The type `text` (a whole file) defines, found at `origin`.
pub(super) fn parse(text: &str, origin: Origin) -> Result<Draft, FileFault> {
    let parts = frontmatter::split(text, KIND)?;
    frontmatter::check_nesting(parts.yaml, parts.first_line, KIND)?;
    let entries = yaml::parse_fields(parts.yaml, parts.first_line, KIND)?;
    read(entries, parts.body, origin)
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

fn read(entries: Vec<Entry>, body: &str, origin: Origin) -> Result<Draft, FileFault> {
    let mut notes = Vec::new();
    let mut name = None;
    let mut description = None;
    let mut tools = None;
    let mut disallowed_tools = Vec::new();
    let mut model = (ModelChoice::Inherit, None);
    let mut max_turns = None;
    let mut permissions = (Overlay::default(), Vec::new());
    for Entry {
        key,
        key_line,
        value,
    } in entries
    {
        match key.as_str() {
            "name" => name = Some((text("name", &value, "name: code-reviewer")?, value.line)),
            "description" => {
                description = Some(text(
                    "description",
                    &value,
                    "description: Reviews a change for bugs",
                )?);
            }
            "tools" => tools = tool_list("tools", &value, false, &mut notes)?,
            "disallowedTools" => {
                disallowed_tools =
                    tool_list("disallowedTools", &value, true, &mut notes)?.unwrap_or_default();
            }
            "model" => model = (model_choice(&value, &mut notes)?, Some(value.line)),
            "maxTurns" => max_turns = turn_bound(&value)?,
            "permissions" => permissions = overlay(value)?,
            other => unknown_field(other, key_line, &mut notes)?,
        }
    }
    let Some((name, name_line)) = name else {
        return Err(FileFault::at(
            1,
            "the frontmatter has no `name`; add one, such as name: code-reviewer",
        ));
    };
    if !valid_name(&name) {
        return Err(FileFault::at(
            name_line,
            format!(
                "`{}` is not an agent type name: use lowercase letters, digits, `-` and `_`, \
                 starting with a letter or digit, at most {MAX_NAME_BYTES} bytes, such as \
                 name: code-reviewer",
                shown(&name)
            ),
        ));
    }
    let Some(description) = description.filter(|d| !d.is_empty()) else {
        return Err(FileFault::at(
            1,
            "the frontmatter has no `description`; the parent's model picks a type by it, so \
             add one line, such as description: Reviews a change for bugs",
        ));
    };
    let (permissions, allow_lines) = permissions;
    Ok(Draft {
        ty: AgentType {
            name,
            description,
            prompt: body.trim().to_owned(),
            tools,
            disallowed_tools,
            model: model.0,
            max_turns,
            permissions,
            origin,
        },
        name_line,
        model_line: model.1,
        allow_lines,
        notes,
    })
}

fn text(field: &str, node: &Node, example: &str) -> Result<String, FileFault> {
    match &node.value {
        Value::Scalar { text, .. } => Ok(text.trim().to_owned()),
        Value::Null => Err(FileFault::at(
            node.line,
            format!("`{field}` is empty; give it a value, such as {example}"),
        )),
        _ => Err(FileFault::at(
            node.line,
            format!("`{field}` must be text, such as {example}"),
        )),
    }
}

/// The names a `tools`-like field writes: a list, or one comma-separated line (Claude Code's
/// `tools: Read, Grep, Glob`); `None` when it is empty.
fn written_names(field: &str, node: &Node) -> Result<Option<Vec<(String, usize)>>, FileFault> {
    let example = format!("{field}: read_file, grep");
    match &node.value {
        Value::Null => Ok(None),
        Value::Scalar { text, .. } => Ok(Some(
            text.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| (s.to_owned(), node.line))
                .collect(),
        )),
        Value::List(items) => items
            .iter()
            .map(|item| match &item.value {
                Value::Scalar { text, .. } => Ok((text.trim().to_owned(), item.line)),
                _ => Err(FileFault::at(
                    item.line,
                    format!("each entry of `{field}` must be a tool name, such as {example}"),
                )),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Value::Map(_) => Err(FileFault::at(
            node.line,
            format!(
                "`{field}` must be a list of tool names or one comma-separated line, such as \
                 {example}"
            ),
        )),
    }
}

/// `tools` or `disallowedTools` in tackle's names. A name that narrows a tool by its arguments
/// is left out of `tools` and disallows the whole tool in `disallowedTools`: either way the
/// child gets less than the file asked for, never more.
fn tool_list(
    field: &str,
    node: &Node,
    disallowing: bool,
    notes: &mut Vec<(Option<usize>, String)>,
) -> Result<Option<Vec<String>>, FileFault> {
    let Some(written) = written_names(field, node)? else {
        return Ok(None);
    };
    let mut out: Vec<String> = Vec::new();
    for (name, line) in written {
        let mut note = |message: String| notes.push((Some(line), message));
        let tackle = match classify(&name) {
            ToolName::Tackle(t) => Some(t),
            ToolName::FromClaude { tackle, .. } => Some(tackle.to_owned()),
            ToolName::ClaudeOnly(claude) => {
                note(format!(
                    "{field}: `{claude}` is a Claude Code tool tackle does not have; left out"
                ));
                None
            }
            ToolName::Scoped { tool: Some(tool) } if disallowing => {
                note(format!(
                    "{field}: `{}` disallows part of {tool}; tackle disallows all of it (a \
                     permissions deny rule can be finer)",
                    shown(&name)
                ));
                Some(tool.to_owned())
            }
            ToolName::Scoped { .. } => {
                note(format!(
                    "{field}: `{}` narrows a tool by its arguments, which a list of tools \
                     cannot; left out (list the tool and narrow it with permissions ask or \
                     deny rules)",
                    shown(&name)
                ));
                None
            }
            ToolName::Unknown(unknown) => {
                note(format!(
                    "{field}: `{}` is not a tool tackle knows; kept, so a child has it only \
                     where its parent's catalog does",
                    shown(&unknown)
                ));
                Some(unknown)
            }
        };
        if let Some(t) = tackle
            && !out.contains(&t)
        {
            out.push(t);
        }
    }
    Ok(Some(out))
}

fn model_choice(
    node: &Node,
    notes: &mut Vec<(Option<usize>, String)>,
) -> Result<ModelChoice, FileFault> {
    let fix = "write model: inherit, or a model `tackle models` lists, such as \
               model: anthropic:claude-sonnet-4-5";
    let text = match &node.value {
        Value::Null => return Ok(ModelChoice::Inherit),
        Value::Scalar { text, .. } => text.trim(),
        _ => {
            return Err(FileFault::at(
                node.line,
                format!("`model` must be one word; {fix}"),
            ));
        }
    };
    if text == "inherit" {
        return Ok(ModelChoice::Inherit);
    }
    if CLAUDE_MODEL_ALIASES.contains(&text) {
        notes.push((
            Some(node.line),
            format!(
                "model: `{text}` is a Claude Code alias; the child runs its parent's model \
                 (name one `tackle models` lists, as provider:model, to choose another)"
            ),
        ));
        return Ok(ModelChoice::Inherit);
    }
    match text.parse::<ModelId>() {
        Ok(_) => Ok(ModelChoice::Named(text.to_owned())),
        Err(_) => Err(FileFault::at(
            node.line,
            format!(
                "model `{}` is neither inherit nor provider:model; {fix}",
                shown(text)
            ),
        )),
    }
}

fn turn_bound(node: &Node) -> Result<Option<u32>, FileFault> {
    let fault = || {
        FileFault::at(
            node.line,
            "maxTurns must be a positive whole number, such as maxTurns: 10",
        )
    };
    match &node.value {
        Value::Null => Ok(None),
        Value::Scalar { text, plain: true } if text.bytes().all(|b| b.is_ascii_digit()) => text
            .parse::<u32>()
            .ok()
            .filter(|n| *n > 0)
            .map(Some)
            .ok_or_else(fault),
        _ => Err(fault()),
    }
}

/// `permissions`: allow, ask and deny lists of gate patterns, each parsed as the gate would.
/// A misspelt list is a refusal, never a note: a deny rule that silently did nothing would
/// widen what the author meant the child to have.
fn overlay(node: Node) -> Result<(Overlay, Vec<usize>), FileFault> {
    let example = "permissions: {deny: [\"tool.bash\"]}";
    let entries = match node.value {
        Value::Null => return Ok((Overlay::default(), Vec::new())),
        Value::Map(entries) => entries,
        _ => {
            return Err(FileFault::at(
                node.line,
                format!(
                    "`permissions` must hold allow, ask and deny lists of rule patterns, such \
                     as {example}"
                ),
            ));
        }
    };
    let mut overlay = Overlay::default();
    let mut allow_lines = Vec::new();
    for Entry {
        key,
        key_line,
        value,
    } in entries
    {
        let list = match key.as_str() {
            "allow" => &mut overlay.allow,
            "ask" => &mut overlay.ask,
            "deny" => &mut overlay.deny,
            other => {
                return Err(FileFault::at(
                    key_line,
                    format!(
                        "permissions has no `{}`; its lists are allow, ask and deny, such as \
                         {example}",
                        shown(other)
                    ),
                ));
            }
        };
        for (pattern, line) in patterns(&key, value)? {
            Pattern::parse(&pattern)
                .map_err(|e| FileFault::at(line, format!("permissions.{key}: {e}")))?;
            if key == "allow" {
                allow_lines.push(line);
            }
            list.push(pattern);
        }
    }
    Ok((overlay, allow_lines))
}

/// One list of `permissions`: a list of patterns, or a single one (never split: a command
/// pattern may hold a comma).
fn patterns(key: &str, node: Node) -> Result<Vec<(String, usize)>, FileFault> {
    let fault = |line| {
        FileFault::at(
            line,
            format!(
                "permissions.{key} must be a list of rule patterns, such as {key}: \
                 [\"read:src/**\"]"
            ),
        )
    };
    match node.value {
        Value::Null => Ok(Vec::new()),
        Value::Scalar { text, .. } => Ok(vec![(text, node.line)]),
        Value::List(items) => items
            .into_iter()
            .map(|item| match item.value {
                Value::Scalar { text, .. } => Ok((text, item.line)),
                _ => Err(fault(item.line)),
            })
            .collect(),
        Value::Map(_) => Err(fault(node.line)),
    }
}

/// A field tackle does not have is noted and ignored (Claude Code's `color`), unless it is one
/// of tackle's own spelt another way (`max_turns`), which would otherwise vanish unseen.
fn unknown_field(
    key: &str,
    line: usize,
    notes: &mut Vec<(Option<usize>, String)>,
) -> Result<(), FileFault> {
    let squash = |s: &str| {
        s.chars()
            .filter(|c| *c != '_' && *c != '-')
            .collect::<String>()
            .to_ascii_lowercase()
    };
    if let Some(field) = FIELDS.iter().find(|f| squash(f) == squash(key)) {
        return Err(FileFault::at(
            line,
            format!("`{}` is not a field; did you mean `{field}`?", shown(key)),
        ));
    }
    notes.push((
        Some(line),
        format!(
            "`{}` is not a field tackle reads, so it is ignored (fields: {})",
            shown(key),
            FIELDS.join(", ")
        ),
    ));
    Ok(())
}
