//! The Agent Skills format's rules (agentskills.io/specification, as its reference validator
//! applies them), one row each: what `tackle skills --check` names when a skill breaks one.
//!
//! A skill that breaks an `Invalid` rule is not loaded at all, never half-loaded; one that
//! breaks a `Warning` rule loads, and the warning is listed (other agents ignore the same
//! things: Claude Code's extra fields, a long body).

/// How a broken rule counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// The skill is not loaded.
    Invalid,
    /// The skill loads; the warning is listed.
    Warning,
}

/// One rule of the format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// Stable id, shown in brackets: `[name-matches-folder]`.
    pub id: &'static str,
    pub severity: Severity,
    /// The rule in a sentence.
    pub text: &'static str,
}

const fn invalid(id: &'static str, text: &'static str) -> Rule {
    Rule {
        id,
        severity: Severity::Invalid,
        text,
    }
}

const fn warning(id: &'static str, text: &'static str) -> Rule {
    Rule {
        id,
        severity: Severity::Warning,
        text,
    }
}

pub const SKILL_FILE: Rule = invalid(
    "skill-file",
    "a skill is a folder holding a regular file named SKILL.md",
);
pub const FRONTMATTER: Rule = invalid(
    "frontmatter",
    "SKILL.md opens with YAML frontmatter between `---` lines, holding fields",
);
pub const NAME_REQUIRED: Rule = invalid("name-required", "`name` is required, as text");
pub const NAME_LENGTH: Rule = invalid("name-length", "`name` is 1 to 64 characters");
pub const NAME_CHARACTERS: Rule = invalid(
    "name-characters",
    "`name` holds lowercase letters a-z, digits and hyphens, with no hyphen first, last or \
     doubled",
);
pub const NAME_MATCHES_FOLDER: Rule = invalid(
    "name-matches-folder",
    "`name` equals the name of the folder holding SKILL.md",
);
pub const DESCRIPTION_REQUIRED: Rule = invalid(
    "description-required",
    "`description` is required, as non-empty text",
);
pub const DESCRIPTION_LENGTH: Rule = invalid(
    "description-length",
    "`description` is at most 1024 characters",
);
pub const LICENSE_TEXT: Rule = invalid("license-text", "`license` is text");
pub const COMPATIBILITY: Rule = invalid(
    "compatibility",
    "`compatibility` is text of 1 to 500 characters",
);
pub const METADATA: Rule = invalid("metadata", "`metadata` maps text keys to text values");
pub const ALLOWED_TOOLS: Rule = invalid(
    "allowed-tools",
    "`allowed-tools` is a space-separated list of tools, such as `Read Bash(git:*)`",
);
pub const KNOWN_FIELDS: Rule = warning(
    "known-fields",
    "the frontmatter holds only name, description, license, compatibility, metadata and \
     allowed-tools",
);
pub const BODY_LENGTH: Rule = warning(
    "body-length",
    "the instructions stay under 500 lines; longer material goes in references/",
);

/// Every rule, in the order a file is checked.
pub const RULES: &[Rule] = &[
    SKILL_FILE,
    FRONTMATTER,
    NAME_REQUIRED,
    NAME_LENGTH,
    NAME_CHARACTERS,
    NAME_MATCHES_FOLDER,
    DESCRIPTION_REQUIRED,
    DESCRIPTION_LENGTH,
    LICENSE_TEXT,
    COMPATIBILITY,
    METADATA,
    ALLOWED_TOOLS,
    KNOWN_FIELDS,
    BODY_LENGTH,
];

/// The most characters of `name`.
pub const MAX_NAME_CHARS: usize = 64;
/// The most characters of `description`.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The most characters of `compatibility`.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;
/// The most lines of the instructions before [`BODY_LENGTH`] warns.
pub const MAX_BODY_LINES: usize = 500;

/// The rule `name` breaks, if any (the folder aside).
pub fn name_fault(name: &str) -> Option<Rule> {
    let chars = name.chars().count();
    if chars == 0 || chars > MAX_NAME_CHARS {
        return Some(NAME_LENGTH);
    }
    let allowed = name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !allowed || name.starts_with('-') || name.ends_with('-') || name.contains("--") {
        return Some(NAME_CHARACTERS);
    }
    None
}
