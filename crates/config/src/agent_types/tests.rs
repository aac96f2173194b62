//! The corpus: agent type files as data, each with the type it defines (as a one-line summary)
//! and its notes, or the refusal's line and words; then the bounds at every depth, and the
//! scopes and folder trust through [`super::load`] on real directories.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use tackle_agent::delegate::agent_type::{AgentType, ModelChoice, Origin};

use super::fields::parse;
use super::frontmatter::{MAX_FRONTMATTER_BYTES, MAX_NESTING, check_nesting};
use super::yaml::parse_fields;
use super::{AgentTypes, load};
use crate::models::ModelCatalog;

/// What one file must give.
enum Want {
    /// It loads; its summary ([`summary`]) and a fragment of each note, in order.
    Loads(&'static str, &'static [&'static str]),
    /// It is refused at this line (0: no line), the message holding these words.
    Refused(usize, &'static str),
}

use Want::{Loads, Refused};

/// A type on one line: `name | tools | disallowed | model | maxTurns | allow; ask; deny | prompt`.
fn summary(t: &AgentType) -> String {
    let tools = t.tools.as_ref().map_or("all".to_owned(), |t| t.join(","));
    let model = match &t.model {
        ModelChoice::Inherit => "inherit".to_owned(),
        ModelChoice::Named(m) => m.clone(),
    };
    let turns = t.max_turns.map_or("-".to_owned(), |n| n.to_string());
    let p = &t.permissions;
    format!(
        "{} | {tools} | {} | {model} | {turns} | {}; {}; {} | {}",
        t.name,
        t.disallowed_tools.join(","),
        p.allow.join(","),
        p.ask.join(","),
        p.deny.join(","),
        t.prompt.replace('\n', "\\n"),
    )
}

/// A file as Claude Code writes one (its fields, its tool names, a model alias and a colour).
const CLAUDE_CODE_FILE: &str = "---
name: code-reviewer
description: Reviews a change for correctness and style. Use after code is written.
tools: Read, Grep, Glob, Bash
model: sonnet
color: purple
---

You review code changes.

1. Read the diff.
2. Report problems by file and line.
";

/// Every field in its accepted forms and its wrong types; YAML that is not; the limits.
const CORPUS: &[(&str, &str, Want)] = &[
    (
        "the least a type needs",
        "---\nname: x\ndescription: d\n---\nDo it.\n",
        Loads("x | all |  | inherit | - | ; ;  | Do it.", &[]),
    ),
    (
        "a Claude Code file as it is",
        CLAUDE_CODE_FILE,
        Loads(
            "code-reviewer | read_file,grep,glob,bash |  | inherit | - | ; ;  | You review code changes.\\n\\n1. Read the diff.\\n2. Report problems by file and line.",
            &[
                "5: model: `sonnet` is a Claude Code alias",
                "6: `color` is not a field tackle reads",
            ],
        ),
    ),
    (
        "tools as a list, Claude and tackle names, duplicates once",
        "---\nname: x\ndescription: d\ntools:\n  - Edit\n  - MultiEdit\n  - read_file\n  - mcp__ci__status\n---\n",
        Loads(
            "x | edit_file,read_file,mcp__ci__status |  | inherit | - | ; ;  | ",
            &[],
        ),
    ),
    (
        "Claude Code tools tackle lacks are left out, unknown ones kept",
        "---\nname: x\ndescription: d\ntools: Read, WebSearch, Task, frobnicate\n---\n",
        Loads(
            "x | read_file,frobnicate |  | inherit | - | ; ;  | ",
            &[
                "4: tools: `WebSearch` is a Claude Code tool tackle does not have",
                "4: tools: `Task` is a Claude Code tool",
                "4: tools: `frobnicate` is not a tool tackle knows; kept",
            ],
        ),
    ),
    (
        "a tool narrowed by arguments: left out of tools, all of it disallowed",
        "---\nname: x\ndescription: d\ntools: [Read, \"Bash(git diff:*)\"]\ndisallowedTools: [\"Bash(rm:*)\", WebFetch]\n---\n",
        Loads(
            "x | read_file | bash,fetch_url | inherit | - | ; ;  | ",
            &[
                "4: tools: `Bash(git diff:*)` narrows a tool",
                "5: disallowedTools: `Bash(rm:*)` disallows part of bash",
            ],
        ),
    ),
    (
        "an empty tools list gives no tools; an empty tools field all of them",
        "---\nname: x\ndescription: d\ntools: []\ndisallowedTools:\n---\n",
        Loads("x |  |  | inherit | - | ; ;  | ", &[]),
    ),
    (
        "model, maxTurns and every rule list",
        "---\nname: x\ndescription: d\nmodel: anthropic:claude-sonnet-4-5\nmaxTurns: 12\npermissions:\n  allow: [\"read:**\"]\n  ask: [\"tool.bash.cmd:git *\"]\n  deny: \"write:**\"\n---\n",
        Loads(
            "x | all |  | anthropic:claude-sonnet-4-5 | 12 | read:**; tool.bash.cmd:git *; write:** | ",
            &[],
        ),
    ),
    (
        "model: inherit, quoted values, a multi-line description",
        "---\nname: 'x'\ndescription: >\n  Two\n  lines.\nmodel: \"inherit\"\n---\n",
        Loads("x | all |  | inherit | - | ; ;  | ", &[]),
    ),
    (
        "a byte-order mark and CRLF line endings",
        "\u{feff}---\r\nname: x\r\ndescription: d\r\n---\r\nDo it.\r\n",
        Loads("x | all |  | inherit | - | ; ;  | Do it.", &[]),
    ),
    // Wrong types, one field at a time.
    (
        "name as a list",
        "---\nname: [a]\ndescription: d\n---\n",
        Refused(2, "`name` must be text, such as name: code-reviewer"),
    ),
    (
        "name empty",
        "---\nname:\ndescription: d\n---\n",
        Refused(2, "`name` is empty"),
    ),
    (
        "description as a mapping",
        "---\nname: x\ndescription: {a: 1}\n---\n",
        Refused(3, "`description` must be text"),
    ),
    (
        "description empty",
        "---\nname: x\ndescription: \"\"\n---\n",
        Refused(1, "has no `description`"),
    ),
    (
        "tools as a mapping",
        "---\nname: x\ndescription: d\ntools: {a: 1}\n---\n",
        Refused(
            4,
            "`tools` must be a list of tool names or one comma-separated line",
        ),
    ),
    (
        "tools holding a list",
        "---\nname: x\ndescription: d\ntools:\n  - [a]\n---\n",
        Refused(5, "each entry of `tools` must be a tool name"),
    ),
    (
        "disallowedTools as a mapping",
        "---\nname: x\ndescription: d\ndisallowedTools: {a: 1}\n---\n",
        Refused(4, "`disallowedTools` must be a list"),
    ),
    (
        "model as a list",
        "---\nname: x\ndescription: d\nmodel: [a]\n---\n",
        Refused(4, "`model` must be one word"),
    ),
    (
        "model neither inherit nor provider:model",
        "---\nname: x\ndescription: d\nmodel: gpt5\n---\n",
        Refused(
            4,
            "model `gpt5` is neither inherit nor provider:model; write model: inherit",
        ),
    ),
    (
        "maxTurns as words",
        "---\nname: x\ndescription: d\nmaxTurns: \"ten\"\n---\n",
        Refused(
            4,
            "maxTurns must be a positive whole number, such as maxTurns: 10",
        ),
    ),
    (
        "maxTurns quoted digits",
        "---\nname: x\ndescription: d\nmaxTurns: \"10\"\n---\n",
        Refused(4, "maxTurns must be a positive whole number"),
    ),
    (
        "maxTurns zero",
        "---\nname: x\ndescription: d\nmaxTurns: 0\n---\n",
        Refused(4, "maxTurns must be a positive whole number"),
    ),
    (
        "maxTurns negative",
        "---\nname: x\ndescription: d\nmaxTurns: -3\n---\n",
        Refused(4, "maxTurns must be a positive whole number"),
    ),
    (
        "maxTurns fractional",
        "---\nname: x\ndescription: d\nmaxTurns: 1.5\n---\n",
        Refused(4, "maxTurns must be a positive whole number"),
    ),
    (
        "maxTurns past u32",
        "---\nname: x\ndescription: d\nmaxTurns: 99999999999\n---\n",
        Refused(4, "maxTurns must be a positive whole number"),
    ),
    (
        "maxTurns as a list",
        "---\nname: x\ndescription: d\nmaxTurns: [1]\n---\n",
        Refused(4, "maxTurns must be a positive whole number"),
    ),
    (
        "permissions as a list",
        "---\nname: x\ndescription: d\npermissions: [a]\n---\n",
        Refused(4, "`permissions` must hold allow, ask and deny lists"),
    ),
    (
        "a misspelt rule list",
        "---\nname: x\ndescription: d\npermissions:\n  alow: [\"read:**\"]\n---\n",
        Refused(
            5,
            "permissions has no `alow`; its lists are allow, ask and deny",
        ),
    ),
    (
        "a rule list holding a mapping",
        "---\nname: x\ndescription: d\npermissions:\n  deny:\n    - {a: 1}\n---\n",
        Refused(6, "permissions.deny must be a list of rule patterns"),
    ),
    (
        "a rule list as a mapping",
        "---\nname: x\ndescription: d\npermissions:\n  deny: {a: 1}\n---\n",
        Refused(5, "permissions.deny must be a list of rule patterns"),
    ),
    (
        "an empty rule pattern",
        "---\nname: x\ndescription: d\npermissions:\n  ask: [\"\"]\n---\n",
        Refused(5, "permissions.ask: empty permission pattern"),
    ),
    (
        "a rule pattern the gate refuses",
        "---\nname: x\ndescription: d\npermissions:\n  deny:\n    - \"read:\"\n---\n",
        Refused(
            6,
            "permissions.deny: permission pattern \"read:\" has nothing after",
        ),
    ),
    (
        "one of tackle's fields spelt another way",
        "---\nname: x\ndescription: d\nmax_turns: 3\n---\n",
        Refused(4, "`max_turns` is not a field; did you mean `maxTurns`?"),
    ),
    // Names.
    (
        "a name that climbs",
        "---\nname: ../x\ndescription: d\n---\n",
        Refused(2, "`../x` is not an agent type name"),
    ),
    (
        "a name in capitals",
        "---\nname: Explore\ndescription: d\n---\n",
        Refused(2, "`Explore` is not an agent type name"),
    ),
    (
        "a name with a space",
        "---\nname: code reviewer\ndescription: d\n---\n",
        Refused(2, "is not an agent type name"),
    ),
    (
        "no name",
        "---\ndescription: d\n---\n",
        Refused(
            1,
            "the frontmatter has no `name`; add one, such as name: code-reviewer",
        ),
    ),
    // The file's shape and its YAML.
    (
        "no frontmatter",
        "You are a reviewer.\n",
        Refused(1, "opens with a `---` line"),
    ),
    ("an empty file", "", Refused(1, "opens with a `---` line")),
    (
        "a frontmatter never closed",
        "---\nname: x\ndescription: d\n",
        Refused(1, "has no closing `---` line"),
    ),
    (
        "an empty frontmatter",
        "---\n---\nprompt\n",
        Refused(1, "has no `name`"),
    ),
    (
        "a frontmatter that is not fields",
        "---\njust words\n---\n",
        Refused(2, "the frontmatter must be fields"),
    ),
    (
        "a plain value holding `: `",
        "---\nname: x\ndescription: Use when: the tests fail\n---\n",
        Refused(3, "must be quoted, such as description: \""),
    ),
    (
        "a field given twice",
        "---\nname: x\ndescription: d\nname: y\n---\n",
        Refused(4, "`name` is given twice (first on line 2); keep one"),
    ),
    (
        "a second document",
        "---\nname: x\ndescription: d\n...\nname: y\n---\n",
        Refused(5, "a second YAML document starts here"),
    ),
    (
        "a key that is a list",
        "---\nname: x\ndescription: d\n? [a]\n: b\n---\n",
        Refused(4, "a key must be a word"),
    ),
    (
        "an alias bomb",
        "---\nname: x\ndescription: d\na: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n---\n",
        Refused(5, "an alias (`*name`) is not allowed"),
    ),
    (
        "a bracket tower",
        "---\nname: x\ndescription: d\ntools: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[a]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n---\n",
        Refused(4, "nest more than 32 deep"),
    ),
    (
        "a tower of block lists",
        "---\nname: x\ndescription: d\ntools: \n  - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - a\n---\n",
        Refused(5, "nest more than 32 deep"),
    ),
];

fn check(name: &str, got: Result<super::fields::Draft, super::FileFault>, want: &Want) {
    match (got, want) {
        (Ok(draft), Loads(want_summary, want_notes)) => {
            assert_eq!(summary(&draft.ty), *want_summary, "[{name}]");
            let notes: Vec<String> = draft
                .notes
                .iter()
                .map(|(line, m)| format!("{}: {m}", line.unwrap_or(0)))
                .collect();
            assert_eq!(notes.len(), want_notes.len(), "[{name}] notes: {notes:#?}");
            for (note, want) in notes.iter().zip(want_notes.iter()) {
                assert!(note.contains(want), "[{name}] {note:?} lacks {want:?}");
            }
        }
        (Err(fault), Refused(line, words)) => {
            assert_eq!(fault.line.unwrap_or(0), *line, "[{name}] {}", fault.message);
            assert!(
                fault.message.contains(words),
                "[{name}] {:?} lacks {words:?}",
                fault.message
            );
        }
        (Ok(draft), Refused(..)) => panic!("[{name}] loaded: {}", summary(&draft.ty)),
        (Err(fault), Loads(..)) => panic!("[{name}] refused: {fault:?}"),
    }
}

#[test]
fn the_corpus_loads_or_refuses_as_its_table_says() {
    for (name, text, want) in CORPUS {
        check(name, parse(text, Origin::BuiltIn), want);
    }
}

fn nest(open: &str, middle: &str, close: &str, n: usize) -> String {
    let mut s = String::with_capacity((open.len() + close.len()) * n + middle.len());
    for _ in 0..n {
        s.push_str(open);
    }
    s.push_str(middle);
    for _ in 0..n {
        s.push_str(close);
    }
    s
}

/// The row of `tackle_tools::parser_bounds::PARSERS` for agent type frontmatter: flow and
/// block nesting 10, 1,000 and 100,000 deep, through the whole file's parse (where the size
/// cap or the bracket count refuses first) and through the bracket count and the event parser
/// on their own (where nothing else bounds the input), on this test's ordinary stack.
#[test]
fn frontmatter_at_every_depth() {
    for n in [10, 1_000, 100_000] {
        let flow = nest("[", "a", "]", n);
        let block = format!("\n  {}a", "- ".repeat(n));
        for (shape, value) in [("flow", &flow), ("block", &block)] {
            let text = format!("---\nname: x\ndescription: d\ntools: {value}\n---\n");
            let fault = parse(&text, Origin::BuiltIn).expect_err(shape);
            let words = if text.len() > MAX_FRONTMATTER_BYTES {
                "runs past 65536 bytes"
            } else if n > MAX_NESTING {
                "nest more than 32 deep"
            } else {
                "each entry of `tools` must be a tool name"
            };
            assert!(fault.message.contains(words), "{shape} {n}: {fault:?}");
            let yaml = format!("tools: {value}\n");
            let deep = n > MAX_NESTING;
            assert_eq!(
                check_nesting(&yaml, 2).is_err(),
                deep && shape == "flow",
                "{shape} {n}"
            );
            // Unbounded by the count, the parse still ends cleanly: the builder refuses the
            // 33rd open list, or saphyr's scanner, which reads ahead, its 256th bracket.
            match parse_fields(&yaml, 2) {
                Err(e) if deep => assert!(
                    e.message.contains("nest more than")
                        || e.message.contains("recursion limit exceeded"),
                    "{shape} {n}: {e:?}"
                ),
                Ok(_) if !deep => {}
                other => panic!("{shape} {n}: {other:?}"),
            }
        }
    }
}

#[test]
fn a_frontmatter_past_its_cap_is_refused_before_it_is_parsed() {
    let long = format!(
        "---\nname: x\ndescription: d\n{}---\n",
        "# padding\n".repeat(MAX_FRONTMATTER_BYTES / 10 + 1)
    );
    let fault = parse(&long, Origin::BuiltIn).unwrap_err();
    assert!(fault.message.contains("runs past 65536 bytes"), "{fault:?}");
    // A long prompt is no frontmatter: it loads.
    let prompt = format!("---\nname: x\ndescription: d\n---\n{}", "p".repeat(200_000));
    assert_eq!(
        parse(&prompt, Origin::BuiltIn).unwrap().ty.prompt.len(),
        200_000
    );
}

/// A project and a user config directory on disk.
struct Dirs {
    _temp: tempfile::TempDir,
    root: std::path::PathBuf,
    user: std::path::PathBuf,
}

impl Dirs {
    fn new() -> Dirs {
        let temp = tempfile::tempdir().unwrap();
        std::fs::create_dir(temp.path().join("proj")).unwrap();
        let root = temp.path().join("proj").canonicalize().unwrap();
        let user = temp.path().join("xdg/tackle");
        Dirs {
            _temp: temp,
            root,
            user,
        }
    }

    fn write(&self, at: &Path, text: impl AsRef<[u8]>) {
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(at, text).unwrap();
    }

    fn project(&self, rel: &str, text: impl AsRef<[u8]>) {
        self.write(&self.root.join(rel), text);
    }

    fn user(&self, name: &str, text: impl AsRef<[u8]>) {
        self.write(&self.user.join("agents").join(name), text);
    }

    fn load(&self, trusted: bool) -> AgentTypes {
        load(&self.root, Some(&self.user), trusted, &catalog())
    }
}

fn catalog() -> ModelCatalog {
    crate::models::resolve(&crate::settings::Settings::defaults(1, 1)).unwrap()
}

fn file(name: &str, description: &str, extra: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n{extra}---\nprompt of {description}\n")
}

fn descriptions(types: &AgentTypes) -> Vec<String> {
    types
        .iter()
        .map(|t| format!("{} {}: {}", t.name, t.origin.scope(), t.description))
        .collect()
}

fn said(types: &AgentTypes) -> Vec<String> {
    types
        .notes()
        .iter()
        .map(ToString::to_string)
        .chain(types.refused().iter().map(|r| format!("refused {r}")))
        .collect()
}

#[test]
fn later_scopes_win_by_name() {
    let d = Dirs::new();
    d.user("explore.md", file("explore", "user explore", ""));
    d.user("mine.md", file("mine", "user mine", ""));
    d.user("both.md", file("both", "user both", ""));
    d.project(
        ".claude/agents/review.md",
        file("review", "claude review", ""),
    );
    d.project(
        ".claude/agents/claude-only.md",
        file("claude-only", "claude only", ""),
    );
    d.project(
        ".agents/agents/review.md",
        file("review", "agents review", ""),
    );
    d.project(".agents/agents/both.md", file("both", "agents both", ""));
    let types = d.load(true);
    assert_eq!(
        descriptions(&types),
        [
            "both project: agents both",
            "claude-only project: claude only",
            "explore user: user explore",
            "general built-in: A general-purpose agent with the same tools as you, for a self-contained piece of work.",
            "mine user: user mine",
            "review project: agents review",
        ]
    );
    assert_eq!(
        types.get("review").unwrap().origin,
        Origin::Project(".agents/agents/review.md".into())
    );
    assert_eq!(
        types.get("review").unwrap().prompt,
        "prompt of agents review"
    );
    assert_eq!(
        said(&types),
        [
            ".claude/agents/review.md is not used: .agents/agents/review.md defines `review` too, and wins"
        ]
    );
}

#[test]
fn an_untrusted_project_type_only_narrows() {
    let d = Dirs::new();
    d.user("mine.md", file("mine", "user mine", ""));
    let wide = "tools: Read, Bash\nmodel: anthropic:claude-sonnet-4-5\npermissions:\n  allow: [\"tool.bash.cmd:*\"]\n  ask: [\"write:**\"]\n  deny: [\"read:.env\"]\n";
    d.project(".claude/agents/wide.md", file("wide", "wide", wide));
    d.project(".agents/agents/mine.md", file("mine", "project mine", ""));
    d.project(
        ".agents/agents/explore.md",
        file("explore", "project explore", ""),
    );

    let untrusted = d.load(false);
    let wide_type = untrusted.get("wide").unwrap();
    assert_eq!(
        summary(wide_type),
        "wide | read_file,bash |  | inherit | - | ; write:**; read:.env | prompt of wide"
    );
    assert_eq!(untrusted.get("mine").unwrap().description, "user mine");
    assert_eq!(untrusted.get("explore").unwrap().origin, Origin::BuiltIn);
    let user_mine = d.user.join("agents/mine.md");
    assert_eq!(
        said(&untrusted),
        [
            ".claude/agents/wide.md:5: model anthropic:claude-sonnet-4-5 is ignored until this folder is trusted (tackle trust); the child runs its parent's model".to_owned(),
            ".claude/agents/wide.md:7: permissions.allow tool.bash.cmd:* is ignored until this folder is trusted (tackle trust)".to_owned(),
            ".agents/agents/explore.md:2: `explore` does not replace the built-in type of that name until this folder is trusted (tackle trust); that one is used".to_owned(),
            format!(".agents/agents/mine.md:2: `mine` does not replace the user type at {} of that name until this folder is trusted (tackle trust); that one is used", user_mine.display()),
        ]
    );

    let trusted = d.load(true);
    assert_eq!(
        summary(trusted.get("wide").unwrap()),
        "wide | read_file,bash |  | anthropic:claude-sonnet-4-5 | - | tool.bash.cmd:*; write:**; read:.env | prompt of wide"
    );
    assert_eq!(trusted.get("mine").unwrap().description, "project mine");
    assert_eq!(
        trusted.get("explore").unwrap().description,
        "project explore"
    );
    assert!(said(&trusted).is_empty(), "{:?}", said(&trusted));

    // What trust changes, per file and as widenings for the trust decision.
    let changes: Vec<(String, Vec<String>)> = trusted
        .project_files()
        .iter()
        .map(|f| (f.path.display().to_string(), f.trust_would.clone()))
        .collect();
    assert_eq!(changes.len(), 3, "{changes:#?}");
    assert_eq!(changes[0].0, ".claude/agents/wide.md");
    assert_eq!(
        changes[0].1,
        [
            "the `wide` type runs anthropic:claude-sonnet-4-5 instead of its parent's model",
            "the `wide` type adds the allow rule tool.bash.cmd:*",
        ]
    );
    let handle = tackle_fs::Root::open(&d.root).unwrap();
    let widenings = super::Scanned::read(Some(&handle), Some(&d.user)).widenings();
    let keys: Vec<(&str, String)> = widenings
        .iter()
        .map(|w| (w.key, w.origin.to_string()))
        .collect();
    assert_eq!(
        keys,
        [
            ("agent_types.model", ".claude/agents/wide.md:5".to_owned()),
            (
                "agent_types.permissions.allow",
                ".claude/agents/wide.md:7".to_owned()
            ),
            (
                "agent_types.replace",
                ".agents/agents/explore.md:2".to_owned()
            ),
            ("agent_types.replace", ".agents/agents/mine.md:2".to_owned()),
        ]
    );
    for w in &widenings {
        assert!(
            crate::trust::classify::rule(w.key).is_some(),
            "{} has no row",
            w.key
        );
    }
}

#[test]
fn a_model_the_user_has_not_configured_refuses_its_file() {
    let d = Dirs::new();
    d.user("a.md", file("a", "a", "model: local:qwen\n"));
    d.project(
        ".agents/agents/b.md",
        file("b", "b", "model: anthropic:no-such-model\n"),
    );
    d.project(".agents/agents/c.md", file("c", "c", "model: opus\n"));
    let types = d.load(true);
    assert!(types.get("a").is_none() && types.get("b").is_none());
    assert_eq!(types.get("c").unwrap().model, ModelChoice::Inherit);
    let said = said(&types);
    assert!(
        said[1].contains("a.md:4: model local:qwen names the provider `local`, which your configuration does not have; add a [providers.local] table"),
        "{said:#?}"
    );
    assert!(said[1].contains("or write model: inherit"), "{said:#?}");
    assert!(
        said.iter().any(|s| s.starts_with("refused .agents/agents/b.md:4: model anthropic:no-such-model is not in your model catalog")),
        "{said:#?}"
    );
}

#[test]
fn hostile_files_are_refused_and_the_rest_load() {
    let d = Dirs::new();
    d.project(".agents/agents/good.md", file("good", "good", ""));
    let huge = format!(
        "---\nname: huge\ndescription: d\n---\n{}",
        "x".repeat(10 << 20)
    );
    let huge_len = huge.len();
    d.project(".agents/agents/huge.md", huge);
    d.project(
        ".agents/agents/deep.md",
        format!(
            "---\nname: deep\ndescription: d\ntools: {}\n---\n",
            nest("[", "a", "]", 100_000)
        ),
    );
    let outside = d.root.parent().unwrap().join("outside.md");
    std::fs::write(&outside, file("outside", "outside", "")).unwrap();
    std::os::unix::fs::symlink(&outside, d.root.join(".agents/agents/link.md")).unwrap();
    d.project(".agents/agents/.#lock.md", "not read");
    d.project(".agents/agents/notes.txt", "not read");
    let types = d.load(false);
    assert!(types.get("good").is_some());
    assert_eq!(types.iter().count(), 3, "{:?}", descriptions(&types));
    let said = said(&types);
    assert_eq!(said.len(), 3, "{said:#?}");
    // Files that cannot be read are refused as they are read, the others once parsed.
    assert_eq!(
        said[0],
        format!(
            "refused .agents/agents/huge.md is {huge_len} bytes, over the cap of 262144 bytes read of it; make it smaller or remove it"
        )
    );
    assert!(
        said[1].starts_with(
            "refused .agents/agents/link.md leads out of the project through a symbolic link"
        ),
        "{said:#?}"
    );
    assert!(
        said[2]
            .starts_with("refused .agents/agents/deep.md:4: the frontmatter runs past 65536 bytes"),
        "{said:#?}"
    );
}

#[test]
fn a_directory_reads_at_most_two_hundred_files() {
    let d = Dirs::new();
    for i in 0..205 {
        d.user(&format!("t{i:03}.md"), file(&format!("t{i:03}"), "d", ""));
    }
    let types = d.load(false);
    assert_eq!(types.iter().count(), 200 + 2);
    assert!(types.get("t199").is_some() && types.get("t200").is_none());
    let said = said(&types);
    assert_eq!(
        said,
        [format!(
            "{} holds 205 agent type files; only the first 200 by name are read",
            d.user.join("agents").display()
        )]
    );
}

#[test]
fn one_directory_linked_as_both_is_read_once_and_names_are_one_a_directory() {
    let d = Dirs::new();
    d.project(".agents/agents/a.md", file("a", "first a", ""));
    d.project(".agents/agents/b.md", file("a", "second a", ""));
    std::fs::create_dir_all(d.root.join(".claude")).unwrap();
    std::os::unix::fs::symlink("../.agents/agents", d.root.join(".claude/agents")).unwrap();
    let types = d.load(true);
    assert_eq!(types.get("a").unwrap().description, "first a");
    assert_eq!(
        said(&types),
        [
            "refused .agents/agents/b.md:2: `a` is already the name of .agents/agents/a.md in this directory; give each type its own name"
        ]
    );
}
