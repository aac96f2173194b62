//! The facade's public items are those `PUBLIC_API.md` lists: this test reads the `pub use`
//! lists of `src/lib.rs`, module by module, and compares them with the file, so the supported
//! surface changes only when both change together.
//!
//! The reading is deliberately narrow: `pub mod <name> {` opens a module, a `}` alone at the
//! start of a line closes it, and each `pub use` statement up to its `;` exports either its
//! last path segment or the names in its one pair of braces (`x as y` exports `y`). A shape it
//! does not know (nested braces, a glob) fails the test rather than being misread.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};

type Surface = BTreeMap<String, BTreeSet<String>>;

/// The crate root's own module name in both readings.
const ROOT: &str = "tackle";

fn exported(statement: &str) -> Vec<String> {
    let body = statement
        .trim()
        .strip_prefix("pub use ")
        .and_then(|s| s.strip_suffix(';'))
        .unwrap_or_else(|| panic!("not a pub use statement: {statement}"));
    assert!(!body.contains('*'), "a glob re-export: {statement}");
    let names = match (body.find('{'), body.rfind('}')) {
        (Some(open), Some(close)) => {
            let inner = &body[open + 1..close];
            assert!(!inner.contains('{'), "nested braces: {statement}");
            inner
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned)
                .collect()
        }
        (None, None) => vec![body.rsplit("::").next().unwrap_or(body).to_owned()],
        _ => panic!("unbalanced braces: {statement}"),
    };
    names
        .into_iter()
        .map(|n| match n.split_once(" as ") {
            Some((_, alias)) => alias.trim().to_owned(),
            None => n,
        })
        .collect()
}

fn from_lib_rs(text: &str) -> Surface {
    let mut surface = Surface::new();
    let mut module = ROOT.to_owned();
    let mut statement: Option<String> = None;
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("").trim();
        if let Some(open) = statement.as_mut() {
            open.push(' ');
            open.push_str(code);
        } else if let Some(name) = code
            .strip_prefix("pub mod ")
            .and_then(|s| s.strip_suffix(" {"))
        {
            module = format!("{ROOT}::{name}");
            surface.entry(module.clone()).or_default();
            continue;
        } else if line.starts_with('}') {
            module = ROOT.to_owned();
            continue;
        } else if code.starts_with("pub use ") {
            statement = Some(code.to_owned());
        }
        if statement.as_deref().is_some_and(|s| s.ends_with(';')) {
            let done = statement.take().unwrap_or_default();
            surface
                .entry(module.clone())
                .or_default()
                .extend(exported(&done));
        }
    }
    surface
}

fn from_listing(text: &str) -> Surface {
    let mut surface = Surface::new();
    let mut module: Option<String> = None;
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            let name = heading.trim().trim_matches('`').to_owned();
            surface.entry(name.clone()).or_default();
            module = Some(name);
        } else if let Some(item) = line.strip_prefix("- ") {
            let name = item.split('`').nth(1).unwrap_or_else(|| {
                panic!("PUBLIC_API.md: an item is written - `Name`, not {line:?}")
            });
            let module = module
                .as_ref()
                .unwrap_or_else(|| panic!("PUBLIC_API.md: {line:?} comes before any ## module"));
            surface
                .entry(module.clone())
                .or_default()
                .insert(name.to_owned());
        }
    }
    surface
}

#[test]
fn the_re_exports_are_exactly_those_public_api_md_lists() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let lib = std::fs::read_to_string(format!("{dir}/src/lib.rs")).unwrap();
    let listing = std::fs::read_to_string(format!("{dir}/PUBLIC_API.md")).unwrap();
    let (real, listed) = (from_lib_rs(&lib), from_listing(&listing));
    let mut problems = Vec::new();
    for module in real.keys().chain(listed.keys()).collect::<BTreeSet<_>>() {
        let (r, l) = (
            real.get(module).cloned().unwrap_or_default(),
            listed.get(module).cloned().unwrap_or_default(),
        );
        for name in r.difference(&l) {
            problems.push(format!("src/lib.rs exports {module}::{name}, unlisted"));
        }
        for name in l.difference(&r) {
            problems.push(format!(
                "PUBLIC_API.md lists {module}::{name}, not exported"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "the facade's surface and PUBLIC_API.md differ; an API change updates both (and says \
         why in its commit):\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn the_reader_takes_aliases_single_paths_and_braced_lists() {
    let surface = from_lib_rs(
        "pub use schemars;\npub mod llm {\n    pub use a::b::{X, parse as parse_replay,\n        Y};\n    pub use c::d::Z; // a comment\n}\n",
    );
    let names = |m: &str| surface[m].iter().cloned().collect::<Vec<_>>();
    assert_eq!(names("tackle"), ["schemars"]);
    assert_eq!(names("tackle::llm"), ["X", "Y", "Z", "parse_replay"]);
}
