//! Generated nesting for every parser of [`super::PARSERS`] that lives in this crate: depth 10,
//! 1,000 and 100,000, built programmatically, parsed in-process on the test's own thread (an
//! ordinary 2 MiB stack: an overflow would kill the test binary, not fail an assertion).

use super::PARSERS;

const DEPTHS: [usize; 3] = [10, 1_000, 100_000];

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

#[test]
fn every_row_names_a_test_that_exists() {
    let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for row in PARSERS {
        let (file, name) = row
            .test
            .split_once("::")
            .unwrap_or_else(|| panic!("{}: test is not <file>::<fn>", row.parser));
        let text = std::fs::read_to_string(workspace.join(file))
            .unwrap_or_else(|e| panic!("{}: reading {file}: {e}", row.parser));
        assert!(
            text.contains(&format!("fn {name}(")),
            "{}: {file} has no fn {name}",
            row.parser
        );
        for enforced in row.enforced.split(", ") {
            let path = enforced.split(' ').next().unwrap_or(enforced);
            if path.starts_with("crates/") {
                assert!(
                    workspace.join(path).exists(),
                    "{}: {path} does not exist",
                    row.parser
                );
            }
        }
    }
}

#[cfg(feature = "outline")]
mod outline {
    use super::{DEPTHS, nest};
    use crate::outline::{LANGS, Lang, MAX_OUTLINE_DEPTH, OUTLINE_MAX_BYTES, Outline, outline};

    /// An expression's prefix, opening and closing bracket, and suffix.
    type Brackets = (&'static str, &'static str, &'static str, &'static str);

    /// Declarations nested `n` deep (capped where a language's nesting costs more than a few
    /// bytes a level), whether each level is a container the outline shows, and brackets to
    /// nest `n` deep in an expression.
    fn shapes(lang: &Lang, n: usize) -> (String, bool, Brackets) {
        match lang.name {
            "rust" => (
                nest("mod a {\n", "fn f() {}\n", "}\n", n),
                true,
                ("const X: u8 = ", "[", "]", ";\n"),
            ),
            // A field's struct type is part of the field's line: not walked.
            "go" => (
                format!("package p\ntype T {}", nest("struct { a ", "int", " }", n)),
                false,
                ("package p\nvar x = ", "(", ")", "\n"),
            ),
            "python" => (python_classes(n), true, ("x = ", "[", "]", "\n")),
            // A JavaScript class cannot hold a class declaration: blocks nest instead, and
            // the outline shows no statement's insides.
            "javascript" => (
                nest("{\n", "class A { m() {} }\n", "}\n", n),
                false,
                ("const x = ", "[", "]", ";\n"),
            ),
            "typescript" | "tsx" => (
                nest("namespace a {\n", "function f(): void {}\n", "}\n", n),
                true,
                ("let x = ", "[", "]", ";\n"),
            ),
            "java" => (
                nest("class A {\n", "void f() {}\n", "}\n", n),
                true,
                ("class A { int x = ", "(", ")", "; }\n"),
            ),
            // `struct a {…} f;` is a declaration (one line), inside a struct a field.
            "c" => (
                nest("struct a {\n", "int x;\n", "} f;\n", n),
                false,
                ("int x = ", "(", ")", ";\n"),
            ),
            "cpp" => (
                nest("namespace a {\n", "void f() {}\n", "}\n", n),
                true,
                ("int x = ", "(", ")", ";\n"),
            ),
            "ruby" => (
                nest("module A\n", "def f; end\n", "end\n", n),
                true,
                ("x = ", "[", "]", "\n"),
            ),
            // Functions are signatures (their bodies are not walked); compound commands nest.
            "bash" => (
                nest("f() {\n", "x=1\n", "}\n", n),
                false,
                ("x=$((", "(", ")", "))\n"),
            ),
            other => panic!("no generated nesting for {other}: add its shapes here"),
        }
    }

    /// Python nests by indentation, so `n` classes cost about n²/2 bytes: the deepest that fits
    /// under [`OUTLINE_MAX_BYTES`] is about 5,600 levels, which is what 100,000 becomes.
    fn python_classes(n: usize) -> String {
        let mut s = String::new();
        for i in 0..n {
            let line = format!("{}class A:\n", " ".repeat(i));
            if (s.len() + line.len() + n) as u64 > OUTLINE_MAX_BYTES {
                break;
            }
            s.push_str(&line);
        }
        let depth = s.lines().count();
        s.push_str(&" ".repeat(depth));
        s.push_str("x = 1\n");
        s
    }

    /// The parse is abandoned through tree-sitter's progress callback once its budget is spent.
    #[test]
    fn a_parse_past_its_budget_is_abandoned() {
        let rust = crate::outline::for_extension("rs").expect("rust is outlined");
        let source = nest("mod a {\n", "", "}\n", 100_000);
        let got = crate::outline::outline_within(rust, &source, std::time::Duration::ZERO);
        assert!(
            matches!(got, Err(crate::outline::OutlineError::OverBudget(_))),
            "{got:?}"
        );
    }

    fn deepest(o: &Outline) -> usize {
        o.declarations.iter().map(|d| d.depth).max().unwrap_or(0)
    }

    #[test]
    fn outline_of_every_language_at_every_depth() {
        for lang in LANGS {
            for n in DEPTHS {
                let (declarations, containers, brackets) = shapes(lang, n);
                let o = outline(lang, &declarations)
                    .unwrap_or_else(|e| panic!("{} nested {n}: {e}", lang.name));
                let rendered = o.render();
                if containers {
                    let shown = n.min(MAX_OUTLINE_DEPTH);
                    assert!(
                        deepest(&o) + 1 >= shown.min(10),
                        "{} nested {n}: deepest shown {}",
                        lang.name,
                        deepest(&o)
                    );
                    assert!(deepest(&o) < MAX_OUTLINE_DEPTH, "{} nested {n}", lang.name);
                    assert_eq!(
                        o.too_deep,
                        n >= MAX_OUTLINE_DEPTH,
                        "{} nested {n}",
                        lang.name
                    );
                    assert_eq!(
                        rendered.contains("nesting deeper than"),
                        o.too_deep,
                        "{} nested {n}",
                        lang.name
                    );
                } else {
                    // Only the outermost level is a declaration the outline shows.
                    assert!(
                        o.declarations.len() <= 3 && !o.too_deep,
                        "{} nested {n}: {:?}",
                        lang.name,
                        o.declarations
                    );
                }
                // Unclosed (the error at the end) and closed around an error at the innermost
                // level (where the search for the first error must go): both once ended tackle.
                let (prefix, open, close, suffix) = brackets;
                let unclosed = format!("{prefix}{}{suffix}", open.repeat(n));
                let inner_error = format!("{prefix}{}{suffix}", nest(open, "1 1", close, n));
                for (what, text) in [("unclosed", unclosed), ("inner error", inner_error)] {
                    let o = outline(lang, &text)
                        .unwrap_or_else(|e| panic!("{} {what} {n}: {e}", lang.name));
                    assert!(o.error.is_some(), "{} {what} {n} deep: no error", lang.name);
                    assert!(o.render().contains("syntax error at line"), "{}", lang.name);
                }
            }
        }
    }
}

mod shell {
    use super::{DEPTHS, nest};
    use crate::shell::Dialect;
    use crate::shell::analyze::analyze;

    /// Every way the shell grammar nests, each at every depth: the analysis comes back (the
    /// deep ones unresolved: the gate then asks), never an abort.
    #[test]
    fn shell_lines_at_every_depth() {
        let shapes: &[(&str, &str, &str)] = &[
            ("{ ", "true", "; }"),
            ("( ", "true", " )"),
            ("$(", "true", ")"),
            ("${x:-", "y", "}"),
            ("`", "true", "`"),
            ("if true; then ", "true", "; fi"),
            ("while false; do ", "true", "; done"),
            ("case x in x) ", "true", ";; esac"),
            ("[[ ", "x", " ]]"),
            ("$((", "1", "))"),
            ("echo \"$(", "true", ")\""),
        ];
        for &(open, middle, close) in shapes {
            for n in DEPTHS {
                let line = nest(open, middle, close, n);
                let a = analyze(&line, Dialect::Bash);
                if n >= 1_000 {
                    assert!(a.unresolved, "`{open}` nested {n} must be unresolved");
                }
                // Unclosed, too (an even run of backquotes closes itself).
                if open != "`" {
                    let a = analyze(&open.repeat(n), Dialect::Bash);
                    assert!(
                        a.unresolved,
                        "`{open}` unclosed {n} deep must be unresolved"
                    );
                }
            }
        }
    }
}

mod jq {
    use super::{DEPTHS, nest};
    use crate::json_query::{check_filter, nesting::MAX_JSON_DEPTH, nesting::check_json};

    /// Filters and inline data nested at every depth: compiled or refused, never an abort.
    /// (A file's or a polled output's JSON goes through json_query's reader on its own
    /// thread; that path is json_query's and is tested there.)
    #[test]
    fn jq_filters_and_inline_data_at_every_depth() {
        let filters: &[(&str, &str, &str)] = &[
            ("(", ".", ")"),
            ("[", ".", "]"),
            ("{a:", ".", "}"),
            ("if . then ", ".", " else . end"),
            ("-", "1", ""),
            (". as $x | ", ".", ""),
            ("\"\\(", ".", ")\""),
            ("def f: ", ".", "; f"),
            ("reduce . as $x (", ".", "; .)"),
        ];
        for &(open, middle, close) in filters {
            for n in DEPTHS {
                let filter = nest(open, middle, close, n);
                let got = check_filter(&filter);
                if n == 10 {
                    assert!(got.is_ok(), "`{open}` nested 10: {got:?}");
                }
                if n == 100_000 {
                    assert!(got.is_err(), "`{open}` nested {n} must be refused");
                }
            }
        }
        for (open, close) in [("[", "]"), ("{\"a\":", "}")] {
            for n in DEPTHS {
                let data = nest(open, "1", close, n);
                assert_eq!(
                    check_json(data.as_bytes()).is_ok(),
                    n <= MAX_JSON_DEPTH,
                    "{n}"
                );
            }
        }
    }
}

mod html {
    use super::{DEPTHS, nest};
    use crate::fetch_url::RENDER_WIDTH;
    use crate::html_text::{MAX_HTML_DEPTH, render};

    fn render_html_text(page: &[u8]) -> String {
        render(page, RENDER_WIDTH)
    }

    /// Every element that nests, at every depth, closed and unclosed: rendered, or above the
    /// bound shown as its source; never an abort.
    #[test]
    fn html_pages_at_every_depth() {
        let tags = [
            "div",
            "span",
            "b",
            "ul><li",
            "ol><li",
            "table><tr><td",
            "blockquote",
            "pre",
            "a",
            "p",
            "section",
            "dl><dd",
        ];
        for tag in tags {
            let closer = tag
                .split("><")
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .map(|t| format!("</{t}>"))
                .collect::<String>();
            for n in DEPTHS {
                let page = nest(&format!("<{tag}>"), "deep text", &closer, n);
                let text = render_html_text(page.as_bytes());
                assert!(text.contains("deep text"), "<{tag}> nested {n}");
                let unclosed = format!("<{tag}>").repeat(n) + "deep text";
                let text = render_html_text(unclosed.as_bytes());
                assert!(text.contains("deep text"), "<{tag}> unclosed {n}");
                let as_source = text.starts_with("[fetch_url: the page nests elements");
                // `<a>` and `<p>` close the one before them: they never nest.
                let nests = !matches!(tag, "a" | "p");
                assert_eq!(
                    as_source,
                    nests && n > MAX_HTML_DEPTH,
                    "<{tag}> unclosed {n}"
                );
                if as_source {
                    assert!(
                        text.contains(&format!("<{tag}>")),
                        "<{tag}> {n}: source shown"
                    );
                }
            }
        }
    }
}

mod media {
    use super::DEPTHS;
    use crate::media::{sniff, validate};

    fn iso_box(kind: &[u8; 4], inner: Vec<u8>) -> Vec<u8> {
        let mut out = ((inner.len() + 8) as u32).to_be_bytes().to_vec();
        out.extend_from_slice(kind);
        out.extend(inner);
        out
    }

    /// `n` ISO boxes each holding the next, around `leaf`, built outside in (linear time).
    fn iso_nested(n: usize, leaf: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 * n + leaf.len());
        for i in 0..n {
            out.extend_from_slice(&((8 * (n - i) + leaf.len()) as u32).to_be_bytes());
            out.extend_from_slice(b"trak");
        }
        out.extend_from_slice(leaf);
        out
    }

    /// `n` RIFF `LIST` chunks each holding the next.
    fn riff_nested(n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(12 * n);
        for i in 0..n {
            out.extend_from_slice(b"LIST");
            out.extend_from_slice(&((4 + 12 * (n - i - 1)) as u32).to_le_bytes());
            out.extend_from_slice(b"hdrl");
        }
        out
    }

    /// An EBML element with an 8-byte size (0x01 marker, then 7 bytes).
    fn ebml_header(id: &[u8], len: usize) -> Vec<u8> {
        let mut out = id.to_vec();
        out.push(0x01);
        out.extend_from_slice(&(len as u64).to_be_bytes()[1..]);
        out
    }

    /// `n` EBML Segment elements each holding the next, around a two-byte Void element.
    fn ebml_nested(n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(12 * n + 2);
        for i in 0..n {
            out.extend(ebml_header(&[0x18, 0x53, 0x80, 0x67], 12 * (n - i - 1) + 2));
        }
        out.extend_from_slice(&[0xEC, 0x80]);
        out
    }

    /// Containers nested at every depth (boxes in boxes, lists in lists, elements in elements,
    /// dictionaries in dictionaries): the validators walk the top level only, so the verdict
    /// is the same at every depth, and comes back.
    #[test]
    fn media_containers_at_every_depth() {
        type Build = fn(usize) -> Vec<u8>;
        let builds: &[(&str, Build)] = &[
            ("iso", |n| {
                let mut file = iso_box(b"ftyp", b"isom\0\0\0\0".to_vec());
                file.extend(iso_box(b"moov", iso_nested(n, b"leaf")));
                file
            }),
            ("avi", |n| {
                let inner = riff_nested(n);
                let mut file = b"RIFF".to_vec();
                file.extend_from_slice(&((inner.len() + 4) as u32).to_le_bytes());
                file.extend_from_slice(b"AVI ");
                file.extend(inner);
                file
            }),
            ("ebml", |n| {
                // The header holds DocType (0x4282) "webm".
                let doctype = [0x42, 0x82, 0x84, b'w', b'e', b'b', b'm'];
                let mut file = ebml_header(&[0x1A, 0x45, 0xDF, 0xA3], doctype.len());
                file.extend_from_slice(&doctype);
                file.extend(ebml_nested(n));
                file
            }),
            ("pdf", |n| {
                let mut file = b"%PDF-1.7\n1 0 obj\n".to_vec();
                file.extend(b"<<".repeat(n));
                file.extend(b"[".repeat(n));
                file.extend(b"]".repeat(n));
                file.extend(b">>".repeat(n));
                file.extend_from_slice(b"\nendobj\nstartxref\n0\n%%EOF\n");
                file
            }),
        ];
        for &(name, build) in builds {
            let mut verdicts = Vec::new();
            for n in DEPTHS {
                let file = build(n);
                let format = sniff(&file).unwrap_or_else(|| panic!("{name} {n}: not sniffed"));
                verdicts.push(validate(format, &file).map_err(|e| e.to_string()));
            }
            assert!(
                verdicts.windows(2).all(|w| w[0] == w[1]),
                "{name}: nesting changed the verdict: {verdicts:?}"
            );
            assert!(
                verdicts[0].is_ok(),
                "{name}: a well-formed file: {verdicts:?}"
            );
        }
    }
}

mod plan {
    use super::{DEPTHS, nest};
    use crate::record_plan::header::PlanHeader;

    /// Header values nested at every depth: read as text or as no value, never an abort.
    #[test]
    fn plan_headers_at_every_depth() {
        for n in DEPTHS {
            for value in [
                nest("[", "1", "]", n),
                nest("\"", "x", "\"", n),
                nest("{a: ", "1", "}", n),
            ] {
                let file = format!("---\nplan: 3\nagent: {value}\nsession: \"s\"\n---\nbody\n");
                let (header, body) = PlanHeader::parse(&file);
                let header = header.unwrap_or_else(|| panic!("{n}: no header"));
                assert_eq!(header.plan, 3);
                assert_eq!(header.session.as_deref(), Some("s"));
                assert_eq!(body, "body\n");
            }
        }
    }
}

mod patterns {
    use super::{DEPTHS, nest};

    /// grep's regex and glob's patterns nested at every depth: compiled or refused.
    #[test]
    fn regex_and_glob_patterns_at_every_depth() {
        for (open, middle, close) in [("(", "a", ")"), ("(?:", "a", ")*"), ("[", "a", "]")] {
            for n in DEPTHS {
                let pattern = nest(open, middle, close, n);
                let built = crate::grep::build_matcher(&pattern, false, false);
                if n == 10 && open != "[" {
                    assert!(built.is_ok(), "{open} 10: {:?}", built.err());
                }
                if n == 100_000 {
                    assert!(built.is_err(), "{open} nested {n} must be refused");
                }
            }
        }
        // Repetition multiplies the compiled program: past REGEX_SIZE_LIMIT it is refused.
        for pattern in [r"(?:\w{100}){100}", r"\p{L}{1000}{1000}"] {
            assert!(
                crate::grep::build_matcher(pattern, false, false).is_err(),
                "{pattern}"
            );
        }
        assert!(crate::grep::build_matcher(r"\w{50}", true, false).is_ok());
        for n in DEPTHS {
            for pattern in [nest("{a,", "b", "}", n), nest("**/{", "x", "}", n)] {
                let built = crate::walk::NamePattern::new("glob", &pattern);
                if n == 10 {
                    assert!(built.is_ok(), "{pattern}");
                }
                if n == 100_000 {
                    assert!(built.is_err(), "{pattern:.10} nested {n} must be refused");
                }
            }
            let mut gitignore = ignore::gitignore::GitignoreBuilder::new("/");
            let _ = gitignore.add_line(None, &nest("{a,", "b", "}", n));
            assert!(gitignore.build().is_ok(), "gitignore {n}");
        }
    }
}
