//! The system prompt: a base prompt, the catalog's tools, the project's instructions
//! (`AGENTS.md` at the root, `CLAUDE.md` where there is none) and the environment (root, OS,
//! date, posture line). Instructions of a directory a tool enters later are sent with that
//! batch's results instead ([`Instructions::entered`]), so the system prompt, and the prompt
//! cache behind it, stays the same for the whole session.

use std::path::{Component, Path, PathBuf};

use tackle_fs::{OwnFile, OwnFileError, Root};
use tackle_protocol::{InstructionNote, ToolSpec};

/// The most of one instructions file sent; the rest is cut with a note.
pub const INSTRUCTIONS_LIMIT_BYTES: usize = OwnFile::INSTRUCTIONS.cap as usize;

const BASE_PROMPT: &str = "You are tackle, a coding agent working in the user's project. \
Use the tools to read, search, change and run what the task needs, then end your turn with a \
short answer saying what you did. Prefer the dedicated tools (read_file, grep, glob, edit_file) \
over shell commands that do the same. A result that says its output was truncated names the \
artifact to read for the rest. Never guess a file's contents: read it.";

/// The short form's base prompt, for small windows: the same rules in fewer words.
const SHORT_BASE_PROMPT: &str = "You are tackle, a coding agent in the user's project. Use the \
tools to read, search, change and run what the task needs; never guess a file's contents. End \
with a short answer saying what you did.";

/// The most of the root's instructions file the short form carries; the rest is cut with a
/// note naming the file, which the model can read.
pub const SHORT_INSTRUCTIONS_LIMIT_BYTES: usize = 2_000;

/// The system prompt in both forms: the full one, and the short one sent with the compact
/// catalog to a model whose window is small (no tool list, the project's instructions cut).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SystemPrompt {
    pub full: String,
    pub short: String,
}

impl SystemPrompt {
    /// The form sent with a catalog of these descriptions.
    pub fn form(&self, descriptions: tackle_runtime::Descriptions) -> &str {
        match descriptions {
            tackle_runtime::Descriptions::Full => &self.full,
            tackle_runtime::Descriptions::Compact => &self.short,
        }
    }
}

/// One text for both forms (tests, and front ends with a prompt of their own).
impl From<String> for SystemPrompt {
    fn from(text: String) -> Self {
        Self {
            short: text.clone(),
            full: text,
        }
    }
}

impl From<&str> for SystemPrompt {
    fn from(text: &str) -> Self {
        Self::from(text.to_owned())
    }
}

/// Both forms of the system prompt for a session rooted at `env.root`.
pub fn system_prompts(tools: &[ToolSpec], env: &Environment) -> SystemPrompt {
    SystemPrompt {
        full: system_prompt(tools, env),
        short: short_system_prompt(env),
    }
}

/// The short form: the short base, the root's instructions cut at
/// [`SHORT_INSTRUCTIONS_LIMIT_BYTES`], and the environment.
pub fn short_system_prompt(env: &Environment) -> String {
    let mut out = String::from(SHORT_BASE_PROMPT);
    if let Some(note) = root_instructions(&env.root) {
        let text = match cut_at(&note.text, SHORT_INSTRUCTIONS_LIMIT_BYTES) {
            Some(kept) => format!(
                "{kept}\n[cut at {SHORT_INSTRUCTIONS_LIMIT_BYTES} bytes; read {} for the rest]",
                note.path
            ),
            None => note.text,
        };
        out.push_str(&format!(
            "\n\nProject instructions ({}):\n{text}",
            note.path
        ));
    }
    out.push_str(&format!(
        "\n\nEnvironment: root {}, {}, {}; {}",
        env.root.display(),
        env.os,
        env.date,
        env.posture
    ));
    out
}

/// `text` cut at a character boundary at most `limit` bytes in, when it is longer.
fn cut_at(text: &str, limit: usize) -> Option<&str> {
    if text.len() <= limit {
        return None;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some(&text[..end])
}

/// Facts about where the agent runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Environment {
    pub root: PathBuf,
    pub os: String,
    /// `YYYY-MM-DD`.
    pub date: String,
    /// The posture line the front end shows a person (`posture: standard …`).
    pub posture: String,
}

/// What every subagent is told after its type's prompt: its last message is its answer.
pub const SUBAGENT_NOTE: &str = "You are a subagent: another agent gave you this task and \
will read only your final message, so end with a complete, self-contained answer (what you \
found or did, with the files and lines it rests on). Ask no questions; nobody will answer.";

/// Both forms of a subagent's system prompt: its type's prompt (tackle's own when the type
/// has none) with [`SUBAGENT_NOTE`], then the tools, project instructions and environment.
pub fn subagent_prompts(type_prompt: &str, tools: &[ToolSpec], env: &Environment) -> SystemPrompt {
    let base = if type_prompt.trim().is_empty() {
        BASE_PROMPT
    } else {
        type_prompt.trim()
    };
    let base = format!("{base}\n\n{SUBAGENT_NOTE}");
    let short = short_system_prompt(env).replacen(SHORT_BASE_PROMPT, &base, 1);
    SystemPrompt {
        full: prompt_on(&base, tools, env),
        short,
    }
}

/// The sealed posture's base prompt: the standard one names tools the sealed surface lacks.
const SEALED_BASE_PROMPT: &str = "You are tackle, a coding agent working in the user's project. \
Use the tools to read, search, change and run what the task needs, then end your turn with a \
short answer saying what you did. Never guess a file's contents.";

/// The sealed posture's system prompt (both forms): the base, the tools, `section` (what the
/// posture tells the planner), the root's instructions only when `instructions` (the user
/// vouched for the root), and the environment.
pub fn sealed_system_prompts(
    tools: &[ToolSpec],
    env: &Environment,
    section: &str,
    instructions: bool,
) -> SystemPrompt {
    let mut full = String::from(SEALED_BASE_PROMPT);
    if !tools.is_empty() {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        full.push_str(&format!("\n\nTools available: {}.", names.join(", ")));
    }
    full.push_str("\n\n");
    full.push_str(section);
    if instructions && let Some(note) = root_instructions(&env.root) {
        full.push_str(&format!(
            "\n\nProject instructions ({}):\n{}",
            note.path, note.text
        ));
    }
    full.push_str(&format!(
        "\n\nEnvironment:\n- project root: {}\n- OS: {}\n- date: {}\n- {}",
        env.root.display(),
        env.os,
        env.date,
        env.posture
    ));
    SystemPrompt::from(full)
}

/// The system prompt for a session rooted at `env.root`.
pub fn system_prompt(tools: &[ToolSpec], env: &Environment) -> String {
    prompt_on(BASE_PROMPT, tools, env)
}

/// `base`, then the tools, the root's instructions and the environment.
fn prompt_on(base: &str, tools: &[ToolSpec], env: &Environment) -> String {
    let mut out = String::from(base);
    if !tools.is_empty() {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        out.push_str(&format!("\n\nTools available: {}.", names.join(", ")));
    }
    if let Some(note) = root_instructions(&env.root) {
        out.push_str(&format!(
            "\n\nProject instructions ({}):\n{}",
            note.path, note.text
        ));
    }
    out.push_str(&format!(
        "\n\nEnvironment:\n- project root: {}\n- OS: {}\n- date: {}\n- {}",
        env.root.display(),
        env.os,
        env.date,
        env.posture
    ));
    out
}

fn root_instructions(root: &Path) -> Option<InstructionNote> {
    read_instructions(root, Path::new(""))
}

/// The instructions file of `dir` (relative to the root): `AGENTS.md`, else `CLAUDE.md`.
/// A file that is there but is not one tackle reads (a FIFO, a device, a link out of the
/// project) is a note saying so, sent in its place: the model learns the instructions exist and
/// were not read, and nothing blocks.
fn read_instructions(root: &Path, dir: &Path) -> Option<InstructionNote> {
    ["AGENTS.md", "CLAUDE.md"].iter().find_map(|name| {
        let rel = dir.join(name);
        let text = match read_beneath(root, &rel)? {
            Ok(text) => text,
            Err(e) => format!("[tackle did not read this file: {e}]"),
        };
        Some(InstructionNote {
            path: rel.display().to_string(),
            text,
        })
    })
}

/// Why the root's instructions file was not read, if it is there and was refused: for a front
/// end to warn the person running it (the model gets the same as the file's note).
pub fn root_instructions_refusal(root: &Path) -> Option<OwnFileError> {
    ["AGENTS.md", "CLAUDE.md"]
        .iter()
        .find_map(|name| read_beneath(root, Path::new(name)))?
        .err()
}

/// A regular file beneath the root, read as tackle reads its own files
/// ([`OwnFile::INSTRUCTIONS`]: through the root handle, never through a link out, never
/// blocking), cut at the limit. `None` when nothing is there.
fn read_beneath(root: &Path, rel: &Path) -> Option<Result<String, OwnFileError>> {
    let handle = Root::open_shared(root).ok()?;
    let rel = rel.to_str()?;
    let read = match OwnFile::INSTRUCTIONS.read_in(&handle, rel) {
        Ok(read) => read?,
        Err(e) => return Some(Err(e)),
    };
    let cut = read.cut;
    let mut text = String::from_utf8_lossy(&read.bytes).into_owned();
    if cut {
        // The cut may have split a character, which the lossy conversion turned into U+FFFD.
        if text.ends_with('\u{FFFD}') {
            text.pop();
        }
        text.push_str("\n[cut: the file continues; read it with read_file]");
    }
    Some(Ok(text))
}

/// Which directories' instructions a session has been sent.
pub struct Instructions {
    root: PathBuf,
    sent: Vec<String>,
    /// Sent at all: not in the sealed posture, where a directory's instructions are content
    /// nobody vouched for.
    on: bool,
}

impl Instructions {
    /// `sent`: the files already sent (from the rebuilt conversation).
    pub fn new(root: &Path, sent: Vec<String>) -> Self {
        Self {
            root: root.to_path_buf(),
            sent,
            on: true,
        }
    }

    /// Instructions that are never sent (the sealed posture).
    pub fn off(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            sent: Vec::new(),
            on: false,
        }
    }

    /// The instructions of directories beneath the root that `paths` (tool arguments, as the
    /// model wrote them) lead into, each file once per session. The root's own went out with
    /// the system prompt.
    pub fn entered<'a>(&mut self, paths: impl Iterator<Item = &'a str>) -> Vec<InstructionNote> {
        let mut notes = Vec::new();
        if !self.on {
            return notes;
        }
        for path in paths {
            for dir in directories(&self.root, path) {
                if let Some(note) = read_instructions(&self.root, &dir)
                    && !self.sent.contains(&note.path)
                {
                    self.sent.push(note.path.clone());
                    notes.push(note);
                }
            }
        }
        notes
    }
}

/// The directories between the root (exclusive) and `path` (its directory, or itself when it
/// is one), relative to the root; nothing for a path outside it.
fn directories(root: &Path, path: &str) -> Vec<PathBuf> {
    let p = Path::new(path);
    let rel = if p.is_absolute() {
        match p.strip_prefix(root) {
            Ok(r) => r.to_path_buf(),
            Err(_) => return Vec::new(),
        }
    } else {
        p.to_path_buf()
    };
    if rel
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Vec::new();
    }
    let is_dir = root.join(&rel).is_dir();
    let mut dirs = Vec::new();
    let mut acc = PathBuf::new();
    let components: Vec<_> = rel.components().collect();
    let keep = if is_dir {
        components.len()
    } else {
        components.len().saturating_sub(1)
    };
    for c in components.into_iter().take(keep) {
        if let Component::Normal(name) = c {
            acc.push(name);
            dirs.push(acc.clone());
        }
    }
    dirs
}

/// The string arguments a call names files or directories with.
pub fn path_arguments(arguments: &serde_json::Value) -> Vec<&str> {
    ["path", "file_path", "dir", "directory"]
        .iter()
        .filter_map(|k| arguments.get(*k).and_then(|v| v.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(root: &Path) -> Environment {
        Environment {
            root: root.to_path_buf(),
            os: "linux".into(),
            date: "2026-01-02".into(),
            posture: "posture: standard".into(),
        }
    }

    #[test]
    fn the_prompt_holds_root_instructions_tools_and_environment() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("CLAUDE.md"), "fallback rules").unwrap();
        let tools = vec![ToolSpec {
            name: "read_file".into(),
            description: "d".into(),
            input_schema: serde_json::json!({}),
        }];
        let p = system_prompt(&tools, &env(&root));
        assert!(p.contains("fallback rules"), "{p}");
        assert!(p.contains("Tools available: read_file."), "{p}");
        assert!(p.contains("date: 2026-01-02") && p.contains("posture: standard"));
        std::fs::write(root.join("AGENTS.md"), "agents rules").unwrap();
        let p = system_prompt(&tools, &env(&root));
        assert!(
            p.contains("agents rules") && !p.contains("fallback rules"),
            "{p}"
        );
    }

    #[test]
    fn hostile_instructions_files_are_noted_never_read_past_or_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap().join("proj");
        std::fs::create_dir(&root).unwrap();
        let outside = root.with_file_name("secret");
        std::fs::write(&outside, "outside secret").unwrap();
        let fifo = |p: &Path| {
            let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        };
        type Plant = fn(&Path, &Path, &dyn Fn(&Path));
        let cases: [(&str, Plant, &str); 5] = [
            ("fifo", |at, _, fifo| fifo(at), "(a FIFO)"),
            (
                "zero",
                |at, _, _| std::os::unix::fs::symlink("/dev/zero", at).unwrap(),
                "leads out of the project",
            ),
            (
                "out",
                |at, out, _| std::os::unix::fs::symlink(out, at).unwrap(),
                "leads out of the project",
            ),
            (
                "dir",
                |at, _, _| std::fs::create_dir(at).unwrap(),
                "(a directory)",
            ),
            (
                "dangling",
                |at, _, _| std::os::unix::fs::symlink("nowhere", at).unwrap(),
                "symbolic link to nothing",
            ),
        ];
        for (name, plant, says) in cases {
            let at = root.join("AGENTS.md");
            let _ = std::fs::remove_file(&at);
            let _ = std::fs::remove_dir(&at);
            plant(&at, &outside, &fifo);
            let p = system_prompt(&[], &env(&root));
            assert!(
                p.contains("Project instructions (AGENTS.md):\n[tackle did not read this file: instructions: AGENTS.md")
                    && p.contains(says)
                    && !p.contains("outside secret"),
                "{name}: {p}"
            );
            let refused = root_instructions_refusal(&root).unwrap().to_string();
            assert!(refused.contains(says), "{name}: {refused}");
        }
        std::fs::remove_file(root.join("AGENTS.md")).unwrap();
        std::fs::write(root.join("AGENTS.md"), "é".repeat(INSTRUCTIONS_LIMIT_BYTES)).unwrap();
        let p = system_prompt(&[], &env(&root));
        assert!(p.contains("[cut: the file continues"), "a long file is cut");
        assert!(root_instructions_refusal(&root).is_none());
    }

    #[test]
    fn entered_directories_send_their_instructions_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/AGENTS.md"), "rules of a").unwrap();
        std::fs::write(root.join("a/b/f.txt"), "x").unwrap();
        let mut seen = Instructions::new(&root, Vec::new());
        let notes = seen.entered(["a/b/f.txt"].into_iter());
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].path, "a/AGENTS.md");
        assert_eq!(notes[0].text, "rules of a");
        assert!(seen.entered(["a"].into_iter()).is_empty(), "sent once");
        assert!(
            seen.entered(["../etc/passwd", "/etc"].into_iter())
                .is_empty()
        );
    }

    #[test]
    fn the_short_form_drops_the_tool_list_and_cuts_the_instructions() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let rules = format!("rule one\n{}", "x".repeat(5_000));
        std::fs::write(root.join("AGENTS.md"), &rules).unwrap();
        let env = Environment {
            root: root.clone(),
            os: "linux".into(),
            date: "2026-12-06".into(),
            posture: "posture: standard".into(),
        };
        let tools = [ToolSpec {
            name: "read_file".into(),
            description: "Read.".into(),
            input_schema: serde_json::json!({"type": "object"}),
        }];
        let both = system_prompts(&tools, &env);
        assert!(both.full.contains("Tools available: read_file."));
        assert!(both.full.contains(&rules));
        assert!(!both.short.contains("Tools available"));
        assert!(both.short.contains("rule one"));
        assert!(
            both.short
                .contains("[cut at 2000 bytes; read AGENTS.md for the rest]")
        );
        assert!(both.short.contains("posture: standard") && both.short.contains("2026-12-06"));
        assert!(both.short.len() < 2_600, "{}", both.short.len());
        assert_eq!(both.form(tackle_runtime::Descriptions::Compact), both.short);
    }
}
