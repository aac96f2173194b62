//! A frontmatter's YAML read into a small tree of scalars, lists and mappings, every node with
//! the file line it starts on.
//!
//! saphyr's event parser is driven one event at a time with a stack of our own (its `load`
//! recurses; its event iterator does not), and the tree is built only as deep as
//! [`MAX_NESTING`]: the event that would open a deeper list or mapping is refused with its line.
//! An alias (`*name`) is refused where it appears, so nothing is ever expanded and an alias bomb
//! is one error at its first alias; anchors alone are harmless and pass. Tags are ignored: a
//! field's type is what the field's reader (an agent type's or a skill's) accepts, not what a tag claims.
//!
//! Rejected: deserializing into a struct with a serde YAML crate, which expands aliases itself
//! (serde_yaml's answer to a bomb is a repetition limit, after the expansion began) and reports
//! a field of the wrong type without the line of the value.

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError};

use super::{FileFault, Kind, MAX_NESTING, too_deep};

/// One value and the file line it starts on.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Node {
    pub line: usize,
    pub value: Value,
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Value {
    /// Nothing, `~` or `null` (an empty `tools:`).
    Null,
    /// Text as written, quotes taken off; `plain` when it had none (only a plain `10` is a
    /// number).
    Scalar {
        text: String,
        plain: bool,
    },
    List(Vec<Node>),
    Map(Vec<Entry>),
}

/// One `key: value` of a mapping.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub key: String,
    pub key_line: usize,
    pub value: Node,
}

/// A list or mapping whose end has not come yet.
enum Open {
    List {
        line: usize,
        items: Vec<Node>,
    },
    Map {
        line: usize,
        entries: Vec<Entry>,
        key: Option<(String, usize)>,
    },
}

/// The fields of `yaml`, which starts on file line `first_line`: the entries of its one
/// top-level mapping (none for an empty frontmatter).
pub(crate) fn parse_fields(
    yaml: &str,
    first_line: usize,
    kind: Kind,
) -> Result<Vec<Entry>, FileFault> {
    let at = |line: usize| first_line + line.saturating_sub(1);
    let mut parser = Parser::new_from_str(yaml);
    let mut stack: Vec<Open> = Vec::new();
    let mut root: Option<Node> = None;
    let mut documents = 0;
    while let Some(next) = parser.next_event() {
        let (event, span) = next.map_err(|e| scan_fault(&e, first_line))?;
        let line = at(span.start.line());
        let node = match event {
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {
                continue;
            }
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(FileFault::at(
                        line,
                        "a second YAML document starts here; the frontmatter is one set of \
                         fields, so remove the `...` line before it",
                    ));
                }
                continue;
            }
            Event::Alias(_) => {
                return Err(FileFault::at(
                    line,
                    format!(
                        "an alias (`*name`) is not allowed in {}; write the value out where it \
                         is used",
                        kind.file
                    ),
                ));
            }
            Event::Scalar(text, style, _, _) => Node {
                line,
                value: scalar(&text, style),
            },
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                if stack.len() >= MAX_NESTING {
                    return Err(too_deep(line, kind));
                }
                stack.push(match event {
                    Event::SequenceStart(..) => Open::List {
                        line,
                        items: Vec::new(),
                    },
                    _ => Open::Map {
                        line,
                        entries: Vec::new(),
                        key: None,
                    },
                });
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Open::List { line, items }) => Node {
                    line,
                    value: Value::List(items),
                },
                Some(Open::Map { line, entries, .. }) => Node {
                    line,
                    value: Value::Map(entries),
                },
                // The parser pairs every end with its start.
                None => continue,
            },
        };
        match stack.last_mut() {
            None => root = Some(node),
            Some(open) => attach(open, node)?,
        }
    }
    match root {
        None
        | Some(Node {
            value: Value::Null, ..
        }) => Ok(Vec::new()),
        Some(Node {
            value: Value::Map(entries),
            ..
        }) => Ok(entries),
        Some(Node { line, .. }) => Err(FileFault::at(
            line,
            format!(
                "the frontmatter must be fields, one `name: value` a line ({})",
                kind.field_example
            ),
        )),
    }
}

fn scalar(text: &str, style: ScalarStyle) -> Value {
    let plain = style == ScalarStyle::Plain;
    if plain && matches!(text, "" | "~" | "null" | "Null" | "NULL") {
        return Value::Null;
    }
    Value::Scalar {
        text: text.to_owned(),
        plain,
    }
}

/// Puts `node` in the list or mapping being built: a mapping's nodes alternate key, value.
fn attach(open: &mut Open, node: Node) -> Result<(), FileFault> {
    match open {
        Open::List { items, .. } => items.push(node),
        Open::Map { entries, key, .. } => match key.take() {
            Some((name, key_line)) => {
                if let Some(first) = entries.iter().find(|e| e.key == name) {
                    return Err(FileFault::at(
                        key_line,
                        format!(
                            "`{name}` is given twice (first on line {}); keep one",
                            first.key_line
                        ),
                    ));
                }
                entries.push(Entry {
                    key: name,
                    key_line,
                    value: node,
                });
            }
            None => match node.value {
                Value::Scalar { text, .. } => *key = Some((text, node.line)),
                _ => {
                    return Err(FileFault::at(
                        node.line,
                        "a key must be a word, such as `name` or `tools`",
                    ));
                }
            },
        },
    }
    Ok(())
}

/// The parser's refusal, on the file's line, with the fix for the one mistake agent files
/// copied from elsewhere make most: a plain value holding `: `.
fn scan_fault(e: &ScanError, first_line: usize) -> FileFault {
    let line = first_line + e.marker().line().saturating_sub(1);
    let hint = if e.info().contains("mapping values are not allowed") {
        "; a value that holds `: ` must be quoted, such as description: \"Reviews code: style \
         and bugs\""
    } else {
        "; check the YAML on this line"
    };
    FileFault::at(
        line,
        format!("the frontmatter is not valid YAML: {}{hint}", e.info()),
    )
}
