//! A Markdown file with YAML frontmatter (an agent type, a skill's `SKILL.md`) cut into its
//! frontmatter and its body, and the bounds the frontmatter must keep before the YAML parser
//! reads a byte of it; the fields themselves are read by [`yaml`] into a small tree with lines.
//!
//! A file is a `---` line, the YAML fields, a `---` line, then the body (an agent type's
//! prompt, a skill's instructions). Messages name the kind of file ([`Kind`]), so one reader
//! serves both with the words each kind's author knows. The frontmatter is
//! held to [`MAX_FRONTMATTER_BYTES`] while its closing line is looked for, and its flow brackets
//! (`[`, `{`) are counted in one pass over its bytes, so `[[[[…` a hundred thousand deep is
//! refused here, naming its line, whatever the parser would do with it. The count is
//! conservative: a bracket inside quotes counts too, which can refuse only text no agent type
//! needs (more than [`MAX_NESTING`] unclosed brackets). Block nesting, which indentation and
//! `- - -` can build without brackets, is bounded on the parser's events ([`yaml`]);
//! the parser itself (saphyr's event parser) keeps its states on the heap and caps flow nesting
//! at 255, so this pass is the first wall, not the only one.

pub(crate) mod yaml;

use std::fmt;
use std::path::Path;

/// `path:line: message`; without a line the message says what the file is (`path is …`): how
/// a note or refusal about an agent type or skill file is shown.
pub(crate) fn located(
    f: &mut fmt::Formatter<'_>,
    path: &Path,
    line: Option<usize>,
    message: &str,
) -> fmt::Result {
    match line {
        Some(line) => write!(f, "{}:{line}: {message}", path.display()),
        None => write!(f, "{} {message}", path.display()),
    }
}

/// Why one file is refused, before its path joins the message: the line to blame, if one is,
/// and the problem with its fix. Without a line the message is a predicate of the file
/// (`is 300000 bytes, over the cap …`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FileFault {
    pub(crate) line: Option<usize>,
    pub(crate) message: String,
}

impl FileFault {
    pub(crate) fn at(line: usize, message: impl Into<String>) -> FileFault {
        FileFault {
            line: Some(line),
            message: message.into(),
        }
    }

    pub(crate) fn whole(message: impl Into<String>) -> FileFault {
        FileFault {
            line: None,
            message: message.into(),
        }
    }
}

/// The kind of file being read, in the words its messages use.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Kind {
    /// `an agent type file`.
    pub file: &'static str,
    /// What comes after the closing line: `the prompt`.
    pub body: &'static str,
    /// Whose fields: `an agent type's fields`.
    pub fields: &'static str,
    /// Flat fields, for the nesting refusal: `tools: [read_file, grep]`.
    pub flat_example: &'static str,
    /// One field, for a frontmatter that is not fields: `name: code-reviewer`.
    pub field_example: &'static str,
}

/// The most bytes of YAML between the two `---` lines: fields take a few hundred bytes, and a
/// long description a few KiB; the prompt goes after the closing line.
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

/// How deep brackets, lists and mappings may nest in a frontmatter: `permissions: {deny: [x]}`
/// is 3 deep (the fields themselves are one mapping).
pub const MAX_NESTING: usize = 32;

/// The two parts of a file.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Frontmatter<'a> {
    /// The YAML between the `---` lines.
    pub yaml: &'a str,
    /// The file line the YAML starts on (the line after the opening `---`).
    pub first_line: usize,
    /// Everything after the closing `---` line.
    pub body: &'a str,
}

/// A line without its ending and trailing blanks (`--- ` closes as `---` does).
fn bare(line: &str) -> &str {
    line.trim_end_matches(['\n', '\r']).trim_end()
}

/// Cuts `text` at its `---` lines, refusing a frontmatter past [`MAX_FRONTMATTER_BYTES`]
/// before reading further.
pub(crate) fn split(text: &str, kind: Kind) -> Result<Frontmatter<'_>, FileFault> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or_default();
    if bare(first) != "---" {
        return Err(FileFault::at(
            1,
            format!(
                "{} opens with a `---` line, then its fields (name: …, description: …), a \
                 closing `---` line and {}; add the opening `---`",
                kind.file, kind.body
            ),
        ));
    }
    let start = first.len();
    let mut end = start;
    for (i, line) in lines.enumerate() {
        let number = i + 2;
        if bare(line) == "---" {
            return Ok(Frontmatter {
                yaml: &text[start..end],
                first_line: 2,
                body: &text[end + line.len()..],
            });
        }
        end += line.len();
        if end - start > MAX_FRONTMATTER_BYTES {
            return Err(FileFault::at(
                number,
                format!(
                    "the frontmatter runs past {MAX_FRONTMATTER_BYTES} bytes without its closing \
                     `---` line; keep the fields short and put {} after a `---` line",
                    kind.body
                ),
            ));
        }
    }
    Err(FileFault::at(
        1,
        format!(
            "the frontmatter opened here has no closing `---` line; end the fields with one, \
             then write {}",
            kind.body
        ),
    ))
}

/// Refuses a frontmatter whose brackets open more than [`MAX_NESTING`] deep, naming the line
/// where they pass it. `first_line` is the file line `yaml` starts on.
pub(crate) fn check_nesting(yaml: &str, first_line: usize, kind: Kind) -> Result<(), FileFault> {
    let mut depth = 0usize;
    let mut line = first_line;
    for byte in yaml.bytes() {
        match byte {
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(too_deep(line, kind));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b'\n' => line += 1,
            _ => {}
        }
    }
    Ok(())
}

/// The refusal of nesting past [`MAX_NESTING`], from the bracket count or the parser's events.
pub(crate) fn too_deep(line: usize, kind: Kind) -> FileFault {
    FileFault::at(
        line,
        format!(
            "the fields nest more than {MAX_NESTING} deep; {} are a few flat values, such as {}",
            kind.fields, kind.flat_example
        ),
    )
}
