//! view_file_outline against fixture files of every language it parses: names, kinds and start
//! lines, and no body text (every fixture body holds the word `secret`).

#![cfg(feature = "outline")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use tackle_tools::outline::{Outline, for_extension, outline};

fn outline_of(name: &str) -> Outline {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/outline")
        .join(name);
    let source = std::fs::read_to_string(&path).unwrap();
    let ext = name.rsplit_once('.').unwrap().1;
    outline(for_extension(ext).unwrap(), &source).unwrap()
}

type Expected = &'static [(usize, &'static str, Option<&'static str>)];

const CASES: &[(&str, Expected)] = &[
    (
        "sample.rs",
        &[
            (1, "import", None),
            (3, "const", Some("LIMIT")),
            (5, "struct", Some("Point")),
            (6, "field", Some("x")),
            (7, "field", Some("y")),
            (10, "enum", Some("Shape")),
            (11, "variant", Some("Circle")),
            (12, "variant", Some("Square")),
            (15, "trait", Some("Area")),
            (16, "method", Some("area")),
            (19, "impl", None),
            (20, "method", Some("area")),
            (26, "function", Some("distance")),
        ],
    ),
    (
        "sample.go",
        &[
            (1, "package", None),
            (3, "import", None),
            (5, "const", None),
            (7, "type", Some("grepArgs")),
            (8, "field", Some("Path")),
            (9, "field", Some("Pattern")),
            (12, "type", Some("Runner")),
            (13, "method", Some("Run")),
            (16, "function", Some("grepFunc")),
            (21, "method", Some("Check")),
        ],
    ),
    (
        "sample.py",
        &[
            (1, "import", Some("os")),
            (2, "import", Some("List")),
            (4, "assignment", None),
            (7, "class", Some("Store")),
            (10, "method", Some("__init__")),
            (15, "method", Some("load")),
            (20, "function", Some("main")),
        ],
    ),
    (
        "sample.js",
        &[
            (1, "import", None),
            (3, "variable", None),
            (5, "class", Some("Store")),
            (6, "method", Some("constructor")),
            (10, "method", Some("load")),
            (16, "function", Some("main")),
        ],
    ),
    (
        "sample.ts",
        &[
            (1, "import", None),
            (3, "interface", Some("Shape")),
            (4, "field", Some("name")),
            (5, "method", Some("area")),
            (8, "type", Some("Id")),
            (10, "enum", Some("Color")),
            (11, "variant", None),
            (12, "variant", Some("Green")),
            (15, "class", Some("Circle")),
            (16, "field", Some("name")),
            (17, "method", Some("area")),
            (23, "function", Some("make")),
        ],
    ),
    (
        "sample.tsx",
        &[
            (1, "import", None),
            (3, "interface", Some("Props")),
            (4, "field", Some("title")),
            (7, "function", Some("Title")),
        ],
    ),
    (
        "Sample.java",
        &[
            (1, "package", None),
            (3, "import", None),
            (5, "class", Some("Sample")),
            (6, "field", Some("count")),
            (8, "constructor", Some("Sample")),
            (13, "method", Some("total")),
            (19, "interface", Some("Greeter")),
            (20, "method", Some("greet")),
        ],
    ),
    (
        "sample.c",
        &[
            (1, "include", None),
            (3, "macro", Some("LIMIT")),
            (5, "struct", Some("point")),
            (6, "field", Some("x")),
            (7, "field", Some("y")),
            (10, "declaration", Some("add")),
            (12, "function", Some("add")),
        ],
    ),
    (
        "sample.cpp",
        &[
            (1, "include", None),
            (3, "namespace", Some("geo")),
            (5, "class", Some("Shape")),
            (7, "field", Some("area")),
            (8, "field", Some("id")),
            (11, "method", Some("total")),
        ],
    ),
    (
        "sample.rb",
        &[
            (1, "assignment", None),
            (3, "module", Some("Geo")),
            (4, "class", Some("Point")),
            (5, "method", Some("initialize")),
            (10, "method", Some("origin")),
        ],
    ),
    (
        "sample.sh",
        &[
            (2, "variable", Some("LIMIT")),
            (3, "variable", None),
            (5, "function", Some("greet")),
        ],
    ),
];

#[test]
fn outlines_of_every_language_name_kind_and_line_without_bodies() {
    for (file, want) in CASES {
        let o = outline_of(file);
        assert_eq!(o.error, None, "{file} should parse cleanly");
        let got: Vec<(usize, &str, Option<&str>)> = o
            .declarations
            .iter()
            .map(|d| (d.line, d.kind, d.name.as_deref()))
            .collect();
        assert_eq!(&got, want, "{file}:\n{}", o.render());
        let text = o.render();
        assert!(
            !text.to_ascii_lowercase().contains("secret"),
            "{file}: body text leaked into the outline:\n{text}"
        );
    }
}

#[test]
fn signatures_span_lines_but_stop_at_the_body() {
    let o = outline_of("sample.rs");
    let f = o.declarations.iter().find(|d| d.line == 26).unwrap();
    assert_eq!(f.signature, "pub fn distance(a: &Point, b: &Point) -> f64");
    let go = outline_of("sample.go");
    assert_eq!(go.declarations[3].signature, "type grepArgs struct");
    assert_eq!(
        go.declarations[9].signature,
        "func (g *grepArgs) Check() bool"
    );
}

#[test]
fn a_syntax_error_is_located_and_the_rest_outlined() {
    let o = outline_of("broken.rs");
    assert_eq!(o.error, Some((5, 1)));
    assert!(o.render().starts_with("[syntax error at line 5, column 1"));
    let names: Vec<_> = o
        .declarations
        .iter()
        .filter_map(|d| d.name.as_deref())
        .collect();
    assert!(
        names.contains(&"ok") && names.contains(&"After"),
        "{names:?}"
    );
}

#[test]
fn unknown_extensions_have_no_grammar() {
    for ext in ["txt", "md", "toml", ""] {
        assert!(for_extension(ext).is_none(), "{ext}");
    }
    for ext in [
        "rs", "go", "py", "js", "ts", "tsx", "java", "c", "cpp", "rb", "sh",
    ] {
        assert!(for_extension(ext).is_some(), "{ext}");
    }
}
