//! An agent type file cut into its frontmatter and its body, and the bounds the frontmatter
//! must keep before the YAML parser reads a byte of it.
//!
//! A file is a `---` line, the YAML fields, a `---` line, then the prompt. The frontmatter is
//! held to [`MAX_FRONTMATTER_BYTES`] while its closing line is looked for, and its flow brackets
//! (`[`, `{`) are counted in one pass over its bytes, so `[[[[…` a hundred thousand deep is
//! refused here, naming its line, whatever the parser would do with it. The count is
//! conservative: a bracket inside quotes counts too, which can refuse only text no agent type
//! needs (more than [`MAX_NESTING`] unclosed brackets). Block nesting, which indentation and
//! `- - -` can build without brackets, is bounded on the parser's events ([`super::yaml`]);
//! the parser itself (saphyr's event parser) keeps its states on the heap and caps flow nesting
//! at 255, so this pass is the first wall, not the only one.

use super::FileFault;

/// The most bytes of YAML between the two `---` lines: fields take a few hundred bytes, and a
/// long description a few KiB; the prompt goes after the closing line.
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

/// How deep brackets, lists and mappings may nest in a frontmatter: `permissions: {deny: [x]}`
/// is 3 deep (the fields themselves are one mapping).
pub const MAX_NESTING: usize = 32;

/// The two parts of a file.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Frontmatter<'a> {
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
pub(super) fn split(text: &str) -> Result<Frontmatter<'_>, FileFault> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or_default();
    if bare(first) != "---" {
        return Err(FileFault::at(
            1,
            "an agent type file opens with a `---` line, then its fields (name: …, description: …), \
             a closing `---` line and the prompt; add the opening `---`",
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
                     `---` line; keep the fields short and put the prompt after a `---` line"
                ),
            ));
        }
    }
    Err(FileFault::at(
        1,
        "the frontmatter opened here has no closing `---` line; end the fields with one, then \
         write the prompt",
    ))
}

/// Refuses a frontmatter whose brackets open more than [`MAX_NESTING`] deep, naming the line
/// where they pass it. `first_line` is the file line `yaml` starts on.
pub(super) fn check_nesting(yaml: &str, first_line: usize) -> Result<(), FileFault> {
    let mut depth = 0usize;
    let mut line = first_line;
    for byte in yaml.bytes() {
        match byte {
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(too_deep(line));
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
pub(super) fn too_deep(line: usize) -> FileFault {
    FileFault::at(
        line,
        format!(
            "the fields nest more than {MAX_NESTING} deep; an agent type's fields are a few flat \
             values, such as tools: [read_file, grep]"
        ),
    )
}
