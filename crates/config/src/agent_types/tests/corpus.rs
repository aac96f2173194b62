//! Every field in its accepted forms and its wrong types, YAML that is not YAML, and the file's
//! shape: each file with the type it defines (as [`super::summary`] writes it) and its notes,
//! or the refusal's line and words.

use tackle_agent::delegate::agent_type::Origin;

use super::summary;
use crate::agent_types::FileFault;
use crate::agent_types::fields::{Draft, parse};

/// What one file must give.
enum Want {
    /// It loads; its summary ([`summary`]) and a fragment of each note, in order.
    Loads(&'static str, &'static [&'static str]),
    /// It is refused at this line (0: no line), the message holding these words.
    Refused(usize, &'static str),
}

use Want::{Loads, Refused};

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

fn check(name: &str, got: Result<Draft, FileFault>, want: &Want) {
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
