use serde_json::{Map, Value};

use super::*;

/// Every way to cut `text` in two at a char boundary, and one char per fragment.
fn splits(text: &str) -> Vec<Vec<&str>> {
    let mut out = vec![vec![text]];
    for (at, _) in text.char_indices().skip(1) {
        out.push(vec![&text[..at], &text[at..]]);
    }
    let mut chars = Vec::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let (one, tail) = rest.split_at(c.len_utf8());
        chars.push(one);
        rest = tail;
    }
    out.push(chars);
    out
}

fn build(fragments: &[&str]) -> Option<Map<String, Value>> {
    let mut builder = ObjectBuilder::new();
    for f in fragments {
        builder.feed(f);
    }
    builder.finish()
}

/// Objects the builder takes: whatever the cuts, it builds what `serde_json` parses.
#[test]
fn objects_are_built_as_serde_json_parses_them_however_the_text_is_cut() {
    let docs = [
        r#"{}"#,
        r#"  { "path" : "src/main.rs" , "limit" : 200 }  "#,
        r#"{"a":[1,-2.5,3e2,0,-0,1E-3,12345678901234567890],"b":{"c":null,"d":true,"e":false}}"#,
        r#"{"esc":"quote \" backslash \\ slash \/ \b\f\n\r\t end"}"#,
        r#"{"uni":"\u00e9\u4e2d\ud83d\ude00 é 中 😀","k\u0041y":"v"}"#,
        r#"{"dup":1,"other":[],"dup":2}"#,
        r#"{"nested":[[[{"x":[{}]}]],[]],"empty":"","n":[true,false,null]}"#,
        "{\"ws\":\t[\r\n1 ,\n2\t]\n}",
        r#"{"big":1.7976931348623157e308,"small":5e-324,"f":0.1}"#,
    ];
    for doc in docs {
        let want: Value = serde_json::from_str(doc).unwrap();
        for cut in splits(doc) {
            assert_eq!(
                build(&cut).map(Value::Object).as_ref(),
                Some(&want),
                "{cut:?}"
            );
        }
    }
}

/// Text that is not one plain object is left to `serde_json`, however it is cut.
#[test]
fn anything_else_is_given_up() {
    let docs = [
        "",
        "   ",
        "null",
        "[1]",
        r#""text""#,
        r#"{"a":1"#,
        r#"{"a":"unterminated"#,
        r#"{"a":1,}"#,
        r#"{"a":[1,]}"#,
        r#"{"a" 1}"#,
        r#"{"a":1}{"b":2}"#,
        r#"{"a":1} x"#,
        r#"{"a":01}"#,
        r#"{"a":1.}"#,
        r#"{"a":-}"#,
        r#"{"a":+1}"#,
        r#"{"a":1e999}"#,
        r#"{"a":tru}"#,
        r#"{"a":nulll}"#,
        r#"{"a":"\x"}"#,
        r#"{"a":"\u12"}"#,
        r#"{"a":"\ud83d"}"#,
        r#"{"a":"\ud83dx"}"#,
        r#"{"a":"\ude00"}"#,
        r#"{"a":"\ud83d\u0041"}"#,
        "{\"a\":\"tab\tinside\"}",
        "{\"a\":\"line\nbreak\"}",
        r#"{a:1}"#,
        r#"{"a":1]"#,
        r#"{"a":[1}"#,
        "\u{feff}{}",
    ];
    for doc in docs {
        for cut in splits(doc) {
            assert_eq!(build(&cut), None, "{cut:?}");
        }
    }
    let deep = format!(
        "{{\"a\":{}{}}}",
        "[".repeat(MAX_DEPTH),
        "]".repeat(MAX_DEPTH)
    );
    assert_eq!(build(&[&deep]), None);
    let fits = format!(
        "{{\"a\":{}{}}}",
        "[".repeat(MAX_DEPTH - 1),
        "]".repeat(MAX_DEPTH - 1)
    );
    assert!(build(&[&fits]).is_some());
}
