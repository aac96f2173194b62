//! Every rule of [`RULES`], broken and kept: one row a case, `folder | SKILL.md | rule broken
//! (or ok, or the warning's rule)`. A rule without a breaking row fails the last test.

use super::put;
use crate::skills::rules::{RULES, Severity};

/// `folder`, the file (`\n` for line breaks), and `ok`, `invalid:<rule>` or `warn:<rule>`.
const CASES: &[(&str, &str, &str)] = &[
    (
        "pdf",
        "---\nname: pdf\ndescription: Fills PDF forms.\n---\nbody",
        "ok",
    ),
    ("pdf", "name: pdf\ndescription: d\n", "invalid:frontmatter"),
    (
        "pdf",
        "---\nname: pdf\ndescription: d\n",
        "invalid:frontmatter",
    ),
    ("pdf", "---\n- a list\n---\n", "invalid:frontmatter"),
    (
        "pdf",
        "---\nname: pdf\ndescription: d\nx: *alias\n---\n",
        "invalid:frontmatter",
    ),
    ("pdf", "---\ndescription: d\n---\n", "invalid:name-required"),
    (
        "pdf",
        "---\nname: [pdf]\ndescription: d\n---\n",
        "invalid:name-required",
    ),
    (
        "pdf",
        "---\nname: \"\"\ndescription: d\n---\n",
        "invalid:name-length",
    ),
    (
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "---\nname: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\ndescription: d\n---\n",
        "invalid:name-length",
    ),
    (
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "---\nname: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\ndescription: d\n---\n",
        "ok",
    ),
    (
        "PDF",
        "---\nname: PDF\ndescription: d\n---\n",
        "invalid:name-characters",
    ),
    (
        "-pdf",
        "---\nname: -pdf\ndescription: d\n---\n",
        "invalid:name-characters",
    ),
    (
        "pdf-",
        "---\nname: pdf-\ndescription: d\n---\n",
        "invalid:name-characters",
    ),
    (
        "pdf--x",
        "---\nname: pdf--x\ndescription: d\n---\n",
        "invalid:name-characters",
    ),
    (
        "pdf_x",
        "---\nname: pdf_x\ndescription: d\n---\n",
        "invalid:name-characters",
    ),
    (
        "pdf",
        "---\nname: ../pdf\ndescription: d\n---\n",
        "invalid:name-characters",
    ),
    ("pdf-2", "---\nname: pdf-2\ndescription: d\n---\n", "ok"),
    (
        "pdf",
        "---\nname: pdf-forms\ndescription: d\n---\n",
        "invalid:name-matches-folder",
    ),
    (
        "pdf",
        "---\nname: pdf\n---\n",
        "invalid:description-required",
    ),
    (
        "pdf",
        "---\nname: pdf\ndescription: \"  \"\n---\n",
        "invalid:description-required",
    ),
    (
        "pdf",
        "---\nname: pdf\ndescription: {a: b}\n---\n",
        "invalid:description-required",
    ),
    (
        "pdf",
        "---\nname: pdf\ndescription: DESC1025\n---\n",
        "invalid:description-length",
    ),
    ("pdf", "---\nname: pdf\ndescription: DESC1024\n---\n", "ok"),
    (
        "pdf",
        "---\nname: pdf\ndescription: d\nlicense: [a]\n---\n",
        "invalid:license-text",
    ),
    (
        "pdf",
        "---\nname: pdf\ndescription: d\nlicense: Apache-2.0\n---\n",
        "ok",
    ),
    (
        "pdf",
        "---\nname: pdf\ndescription: d\ncompatibility: \"\"\n---\n",
        "invalid:compatibility",
    ),
    (
        "pdf",
        "---\nname: pdf\ndescription: d\ncompatibility: COMPAT501\n---\n",
        "invalid:compatibility",
    ),
    (
        "pdf",
        "---\nname: pdf\ndescription: d\ncompatibility: Needs python3\n---\n",
        "ok",
    ),
    (
        "pdf",
        "---\nname: pdf\ndescription: d\nmetadata: text\n---\n",
        "invalid:metadata",
    ),
    (
        "pdf",
        "---\nname: pdf\ndescription: d\nmetadata:\n  a: [b]\n---\n",
        "invalid:metadata",
    ),
    (
        "pdf",
        "---\nname: pdf\ndescription: d\nmetadata:\n  author: me\n  version: \"1.0\"\n---\n",
        "ok",
    ),
    (
        "pdf",
        "---\nname: pdf\ndescription: d\nallowed-tools: Bash(git\n---\n",
        "invalid:allowed-tools",
    ),
    (
        "pdf",
        "---\nname: pdf\ndescription: d\nallowed-tools: {a: b}\n---\n",
        "invalid:allowed-tools",
    ),
    (
        "pdf",
        "---\nname: pdf\ndescription: d\nallowed-tools: Read Bash(git:*)\n---\n",
        "ok",
    ),
    (
        "pdf",
        "---\nname: pdf\ndescription: d\nallowed-tools: [Read, Grep]\n---\n",
        "ok",
    ),
    (
        "pdf",
        "---\nname: pdf\ndescription: d\ncolor: blue\n---\n",
        "warn:known-fields",
    ),
    (
        "pdf",
        "---\nname: pdf\ndescription: d\nargument-hint: \"[file]\"\n---\n",
        "warn:known-fields",
    ),
    (
        "pdf",
        "---\nname: pdf\ndescription: d\n---\nBODY501",
        "warn:body-length",
    ),
    (
        "pdf",
        "---\nname: pdf\ndescription: Use when: filling forms\n---\n",
        "warn:frontmatter",
    ),
];

/// The case's file with its placeholders filled.
fn expand(text: &str) -> String {
    text.replace("DESC1025", &"d".repeat(1025))
        .replace("DESC1024", &"d".repeat(1024))
        .replace("COMPAT501", &"c".repeat(501))
        .replace("BODY501", &"line\n".repeat(501))
        .replace(
            "NEST1K",
            &format!("{}a{}", "[".repeat(1_000), "]".repeat(1_000)),
        )
        .replace(
            "NEST100K",
            &format!("{}a{}", "[".repeat(100_000), "]".repeat(100_000)),
        )
}

#[test]
fn each_rule_is_broken_and_kept_as_the_table_says() {
    for (i, (folder, text, want)) in CASES.iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        put(
            dir.path(),
            &format!("skills/{folder}/SKILL.md"),
            &expand(text),
        );
        let skills = crate::skills::load(
            &dir.path().join("no-project"),
            dir.path(),
            &[dir.path().join("skills")],
            false,
        );
        let invalid: Vec<_> = skills
            .invalid()
            .iter()
            .filter(|i| !i.path.ends_with("no-project"))
            .collect();
        let warned: Vec<&str> = skills
            .notes()
            .iter()
            .filter_map(|n| n.rule.map(|r| r.id))
            .collect();
        let case = format!("case {i}: {folder} {text:?}");
        match want.split_once(':') {
            None => {
                assert!(
                    invalid.is_empty() && warned.is_empty(),
                    "{case}: {invalid:?} {warned:?}"
                );
                assert_eq!(skills.set().len(), 1, "{case}");
            }
            Some(("invalid", rule)) => {
                assert_eq!(invalid.len(), 1, "{case}: {invalid:?}");
                assert_eq!(invalid[0].rule.id, rule, "{case}: {}", invalid[0]);
                assert!(skills.set().is_empty(), "{case}: never half-loaded");
            }
            Some(("warn", rule)) => {
                assert!(invalid.is_empty(), "{case}: {invalid:?}");
                assert_eq!(warned, [rule], "{case}");
                assert_eq!(skills.set().len(), 1, "{case}: a warning still loads");
            }
            _ => unreachable!("{want}"),
        }
    }
}

#[test]
fn every_rule_has_a_row_that_breaks_it() {
    for rule in RULES {
        let broken = match rule.severity {
            Severity::Invalid => format!("invalid:{}", rule.id),
            Severity::Warning => format!("warn:{}", rule.id),
        };
        // A missing SKILL.md is broken by the scopes test (a folder without one).
        if rule.id == "skill-file" {
            continue;
        }
        assert!(
            CASES.iter().any(|(_, _, want)| *want == broken),
            "no case breaks [{}]",
            rule.id
        );
    }
}
