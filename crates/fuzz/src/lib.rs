//! Bounded, seeded, deterministic fuzzing of every parser a model's call reaches: tool
//! arguments against every built-in tool's schema, the shell analyzer (both dialects), jq
//! filters and inputs through json_query, and glob patterns through glob, grep and
//! read_many_files.
//!
//! Owns: the generators (grammar-generated and mutated inputs) and [`Rig`], which runs each
//! input as a real call through `tackle_runtime::Runtime` in a temp project. A gate lets only
//! read-only tools execute; the others are resolved, parsed and prepared (where the bash
//! analyzer runs) and then denied, so nothing fuzzed is ever run or written.
//!
//! The property: every call ends in a result — success, or an error with a stable code —
//! never a crash of the process, and never `tool_panicked` or `internal_error` (the runtime
//! catches panics; here one is a failure).
//!
//! Key decision: property runs inside `cargo test` (fixed seed, a fixed number of executions,
//! both printed), not cargo-fuzz: they run on every `.ci/run`, need no nightly toolchain, and a
//! failure names its seed and input. `TACKLE_FUZZ_EXECS` raises the count for a long run,
//! `TACKLE_FUZZ_SEED` changes the seed.

use std::sync::Arc;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde_json::{Map, Value, json};
use tackle_protocol::{CallId, ErrorCode, ToolCall, ToolResult};
use tackle_runtime::{
    Catalog, GateHook, GateRequest, GateVerdict, Runtime, RuntimeConfig, Session,
};

/// The seed of every run unless `TACKLE_FUZZ_SEED` says otherwise.
pub const DEFAULT_SEED: u64 = 0x0007_ac1e_f022;

/// The seed of this run.
pub fn seed() -> u64 {
    std::env::var("TACKLE_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SEED)
}

/// How many executions a target runs: `default`, or `TACKLE_FUZZ_EXECS` when set.
pub fn execs(default: usize) -> usize {
    std::env::var("TACKLE_FUZZ_EXECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// A seeded generator for one target (the target's name is mixed into the seed, so targets
/// do not share a stream and each can be rerun alone).
pub fn rng_for(target: &str) -> StdRng {
    let mixed = target
        .bytes()
        .fold(seed(), |h, b| h.rotate_left(5) ^ u64::from(b));
    StdRng::seed_from_u64(mixed)
}

/// Lets read-only tools run; denies the rest after they were parsed and prepared.
struct ReadOnlyGate;

impl GateHook for ReadOnlyGate {
    fn check(&self, request: &GateRequest<'_>) -> GateVerdict {
        if request.read_only {
            GateVerdict::Allow
        } else {
            GateVerdict::Deny {
                key: format!("tool.{}", request.tool),
                rule: "fuzz".into(),
                message: "fuzzing never runs a tool with effects".into(),
            }
        }
    }
}

/// A temp project with a few files, and a runtime over the built-in tools.
pub struct Rig {
    pub dir: tempfile::TempDir,
    session: Session,
    runtime: Runtime,
    tokio: tokio::runtime::Runtime,
    next_id: u64,
    /// Executions so far.
    pub execs: usize,
}

impl Rig {
    pub fn new() -> Rig {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
        let root = dir.path();
        for (name, text) in [
            ("a.json", r#"{"a": [1, 2, {"b": "c"}], "d": null}"#),
            ("src/main.rs", "fn main() {}\n"),
            ("src/lib.rs", "pub fn f() -> u8 { 1 }\n"),
            ("README.md", "# readme\nsome text\n"),
            ("deep/er/x.txt", "x\n"),
        ] {
            let path = root.join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
            }
            std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
        }
        let session = Session::open(root).unwrap_or_else(|e| panic!("session: {e}"));
        let config = tackle_tools::BuiltinConfig {
            bash_prestart: false,
            ..tackle_tools::BuiltinConfig::default()
        };
        let catalog = Catalog::new(tackle_tools::builtin_tools(&config))
            .unwrap_or_else(|e| panic!("catalog: {e}"));
        let runtime = Runtime::new(
            catalog,
            Arc::new(ReadOnlyGate),
            RuntimeConfig {
                call_timeout: Duration::from_secs(30),
                ..RuntimeConfig::default()
            },
        );
        let tokio = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("tokio: {e}"));
        Rig {
            dir,
            session,
            runtime,
            tokio,
            next_id: 0,
            execs: 0,
        }
    }

    /// The input schemas of the built-in tools, by name.
    pub fn schemas(&self) -> Vec<(String, Value)> {
        let config = tackle_tools::BuiltinConfig::default();
        tackle_tools::builtin_tools(&config)
            .iter()
            .filter_map(|t| Some((t.name().to_owned(), t.input_schema().ok()?)))
            .collect()
    }

    /// Run one batch of calls and check the property on every result. Panics naming the seed
    /// and the offending call.
    pub fn run(&mut self, target: &str, calls: Vec<(String, Value)>) {
        let calls: Vec<ToolCall> = calls
            .into_iter()
            .map(|(name, arguments)| {
                self.next_id += 1;
                ToolCall {
                    id: CallId(format!("fuzz-{}", self.next_id)),
                    name,
                    arguments,
                }
            })
            .collect();
        let shown: Vec<String> = calls
            .iter()
            .map(|c| format!("{} {}", c.name, show(&c.arguments)))
            .collect();
        let results = self
            .tokio
            .block_on(self.runtime.run_batch(
                &self.session,
                calls,
                tackle_runtime::CancellationToken::new(),
            ))
            .unwrap_or_else(|e| panic!("[{target}] seed {}: runtime error {e}", seed()));
        self.execs += results.len();
        for (result, call) in results.iter().zip(&shown) {
            if let Some(bad) = failure(result) {
                panic!("[{target}] seed {}: {bad} for {call}", seed());
            }
        }
    }
}

impl Default for Rig {
    fn default() -> Self {
        Rig::new()
    }
}

/// Why a result breaks the property, if it does.
fn failure(result: &ToolResult) -> Option<String> {
    match &result.code {
        Some(code) if *code == ErrorCode::PANICKED || *code == ErrorCode::INTERNAL => {
            Some(format!("{code:?}: {:?}", result.content))
        }
        Some(code) if code.0.is_empty() => Some("an empty error code".into()),
        None if result.is_error => Some("an error without a code".into()),
        _ => None,
    }
}

/// A call's arguments for a failure message; deep ones only by their depth (printing
/// recurses).
fn show(arguments: &Value) -> String {
    let depth = depth(arguments);
    if depth > 64 {
        return format!("<arguments nested {depth} deep>");
    }
    shorten(&arguments.to_string())
}

/// Nesting depth of a value, measured without recursion.
pub fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|c| (c, d + 1))),
            Value::Object(m) => stack.extend(m.values().map(|c| (c, d + 1))),
            _ => {}
        }
    }
    deepest
}

fn shorten(s: &str) -> String {
    if s.len() <= 200 {
        return s.to_owned();
    }
    let cut = (0..=200)
        .rev()
        .find(|i| s.is_char_boundary(*i))
        .unwrap_or(0);
    format!("{}… ({} bytes)", &s[..cut], s.len())
}

/// Pick one of `items`.
pub fn pick<'a, T>(rng: &mut StdRng, items: &'a [T]) -> &'a T {
    &items[rng.random_range(0..items.len())]
}

/// Strings a model might send where a string is expected: ordinary, hostile and odd.
pub fn string(rng: &mut StdRng) -> String {
    const ATOMS: &[&str] = &[
        "",
        ".",
        "..",
        "/",
        "a.json",
        "src",
        "src/main.rs",
        "../etc/passwd",
        "/etc/passwd",
        "\0",
        "*",
        "**/*.rs",
        "{a,b}",
        "[",
        "\\",
        "$(id)",
        "`id`",
        "'",
        "\"",
        "\u{202e}",
        "é",
        "\u{feff}",
        "artifact://",
        "artifact://00",
        "~",
        "-rf",
        "\n",
        " ",
        "%00",
    ];
    match rng.random_range(0..4) {
        0 => pick(rng, ATOMS).to_string(),
        1 => (0..rng.random_range(0..6))
            .map(|_| *pick(rng, ATOMS))
            .collect(),
        2 => (0..rng.random_range(0..40))
            .map(|_| char::from(rng.random_range(0x20u8..0x7f)))
            .collect(),
        _ => pick(rng, ATOMS).repeat(rng.random_range(1..3000)),
    }
}

/// Random JSON up to `depth` levels, with numbers at the edges of their types.
pub fn random_json(rng: &mut StdRng, depth: usize) -> Value {
    let top = if depth == 0 { 5 } else { 8 };
    match rng.random_range(0..top) {
        0 => Value::Null,
        1 => Value::Bool(rng.random_bool(0.5)),
        2 => json!(*pick(
            rng,
            &[0i64, -1, 1, i64::MAX, i64::MIN, 4096, 1_000_000_000]
        )),
        3 => json!(*pick(rng, &[0.5f64, -0.0, 1e308, 1e-308, 1.5e19])),
        4 => Value::String(string(rng)),
        5 | 6 => Value::Array(
            (0..rng.random_range(0..4))
                .map(|_| random_json(rng, depth - 1))
                .collect(),
        ),
        _ => {
            let mut m = Map::new();
            for _ in 0..rng.random_range(0..4) {
                m.insert(string(rng), random_json(rng, depth - 1));
            }
            Value::Object(m)
        }
    }
}

/// JSON nested `n` deep, built without recursion (the shape the report's crashers had).
pub fn nested_json(n: usize) -> Value {
    (0..n).fold(Value::Null, |inner, i| {
        // Not `json!`, which serializes its operand recursively.
        if i % 2 == 0 {
            Value::Array(vec![inner])
        } else {
            Value::Object([("a".to_owned(), inner)].into_iter().collect())
        }
    })
}

/// A value shaped by a tool's schema (`properties` with `type`), with some fields dropped.
pub fn valid_arguments(rng: &mut StdRng, schema: &Value) -> Value {
    let mut out = Map::new();
    let props = schema.get("properties").and_then(Value::as_object);
    for (name, prop) in props.into_iter().flatten() {
        if rng.random_bool(0.3) {
            continue;
        }
        out.insert(name.clone(), value_of_type(rng, prop));
    }
    Value::Object(out)
}

fn value_of_type(rng: &mut StdRng, prop: &Value) -> Value {
    let ty = match prop.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null")
            .to_owned(),
        _ => String::new(),
    };
    match ty.as_str() {
        "string" => Value::String(string(rng)),
        "integer" => json!(*pick(rng, &[0i64, 1, 5, 100, -1, 1 << 40])),
        "number" => json!(*pick(rng, &[0.0f64, 1.5, -2.0])),
        "boolean" => Value::Bool(rng.random_bool(0.5)),
        "array" => {
            let items = prop.get("items").cloned().unwrap_or(Value::Null);
            Value::Array(
                (0..rng.random_range(0..4))
                    .map(|_| value_of_type(rng, &items))
                    .collect(),
            )
        }
        "object" => valid_arguments(rng, prop),
        _ => random_json(rng, 2),
    }
}

/// One structural mutation of a JSON value: replace, drop or add a field, change a type,
/// nest deeper.
pub fn mutate(rng: &mut StdRng, value: &mut Value) {
    match value {
        Value::Object(m) if !m.is_empty() && rng.random_bool(0.7) => {
            let keys: Vec<String> = m.keys().cloned().collect();
            let key = pick(rng, &keys).clone();
            match rng.random_range(0..4) {
                0 => {
                    m.remove(&key);
                }
                1 => {
                    if let Some(v) = m.get_mut(&key) {
                        mutate(rng, v);
                    }
                }
                2 => {
                    m.insert(key, random_json(rng, 3));
                }
                _ => {
                    m.insert(string(rng), random_json(rng, 1));
                }
            }
        }
        Value::Array(a) if !a.is_empty() && rng.random_bool(0.5) => {
            let i = rng.random_range(0..a.len());
            mutate(rng, &mut a[i]);
        }
        _ => match rng.random_range(0..3) {
            0 => *value = random_json(rng, 3),
            1 => *value = nested_json(rng.random_range(100..3000)),
            _ => *value = Value::Array(vec![value.take()]),
        },
    }
}

/// A bash line from a small grammar of the constructs the analyzer walks, nested up to
/// `depth`, sometimes far past the parser's limits.
pub fn bash_line(rng: &mut StdRng, depth: usize) -> String {
    const WORDS: &[&str] = &[
        "echo", "ls", "cat", "git", "x", "\"$x\"", "'a b'", "$'\\x41'", "~/f", "*.rs", "$HOME",
        "${x:-y}", "$((1+2))", "-n", "--", "a=b", "\\;", "{a,b}", "<(ls)", "fi", "done", "}",
    ];
    const REDIRECTS: &[&str] = &[
        "> f",
        "2>&1",
        "< a.json",
        ">> out/log",
        "<<< x",
        "&> /dev/null",
    ];
    let simple = |rng: &mut StdRng| {
        let mut s = String::new();
        for _ in 0..rng.random_range(1..5) {
            s.push_str(pick::<&str>(rng, WORDS));
            s.push(' ');
        }
        if rng.random_bool(0.2) {
            s.push_str(pick::<&str>(rng, REDIRECTS));
        }
        s
    };
    if depth == 0 {
        return simple(rng);
    }
    let inner = bash_line(rng, depth - 1);
    match rng.random_range(0..16) {
        0 => format!("{{ {inner}; }}"),
        1 => format!("( {inner} )"),
        2 => format!("if {inner}; then {inner}; else {}; fi", simple(rng)),
        3 => format!("while {}; do {inner}; done", simple(rng)),
        4 => format!("case x in a) {inner};; *) true;; esac"),
        5 => format!("echo $({inner})"),
        6 => format!("echo \"$({inner})\""),
        7 => format!("{} && {inner}", simple(rng)),
        8 => format!("{} | {inner}", simple(rng)),
        9 => format!("f() {{ {inner}; }}; f"),
        10 => format!("sh -c '{}'", inner.replace('\'', "")),
        11 => format!("cat <<EOF\n{inner}\nEOF\n"),
        12 => format!("for i in 1 2; do {inner}; done"),
        13 => format!("echo ${{x:-$({inner})}}"),
        14 => format!(
            "[[ -n x && ( {} ) ]] && {inner}",
            pick(rng, &["-f a", "x == y"])
        ),
        _ => {
            // Far past the limits: one construct repeated hundreds to thousands of times.
            let n = rng.random_range(60..3000);
            let (open, close) = *pick(
                rng,
                &[
                    ("{ ", "} "),
                    ("( ", ") "),
                    ("if true; then ", "fi; "),
                    ("$(", ")"),
                    ("${a:-", "}"),
                    ("`echo \\", "`"),
                    ("$((", "))"),
                    ("while true; do ", "done; "),
                    ("case x in x) ", ";; esac "),
                ],
            );
            format!("{}{inner}{}", open.repeat(n), close.repeat(n))
        }
    }
}

/// A mutation of a line: a byte dropped, duplicated or replaced by a shell metacharacter.
pub fn mutate_line(rng: &mut StdRng, line: &str) -> String {
    const META: &[u8] = b";&|()<>{}$`'\"\\#\n *?[]!~=";
    let mut bytes = line.as_bytes().to_vec();
    for _ in 0..rng.random_range(1..4) {
        if bytes.is_empty() {
            break;
        }
        let i = rng.random_range(0..bytes.len());
        match rng.random_range(0..3) {
            0 => {
                bytes.remove(i);
            }
            1 => bytes.insert(i, bytes[i]),
            _ => bytes[i] = *pick(rng, META),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A jq filter from a grammar of jq's constructs (without unbounded recursion, which has its
/// own regression rows), nested up to `depth`.
pub fn jq_filter(rng: &mut StdRng, depth: usize) -> String {
    const ATOMS: &[&str] = &[
        ".", ".a", ".[]", ".[0]", ".a?", "..", "1", "\"s\"", "null", "$x", "keys", "length",
        "empty", "error", "input", "tostring", "tojson", "type", "not", ".[1:]", "@base64", "now",
        "$__loc__", "env", "paths", "add",
    ];
    if depth == 0 {
        return pick(rng, ATOMS).to_string();
    }
    let a = jq_filter(rng, depth - 1);
    let b = jq_filter(rng, depth - 1);
    match rng.random_range(0..18) {
        0 => format!("{a} | {b}"),
        1 => format!("{a}, {b}"),
        2 => format!("[{a}]"),
        3 => format!("{{k: {a}}}"),
        4 => format!("({a}) + ({b})"),
        5 => format!("if {a} then {b} else . end"),
        6 => format!("try {a} catch {b}"),
        7 => format!("reduce .[] as $x (0; {a})"),
        8 => format!("{a} as $x | {b}"),
        9 => format!("def g: {a}; g"),
        10 => format!("map({a})"),
        11 => format!("select({a})"),
        12 => format!("\"\\({a})\""),
        13 => format!("limit(3; {a})"),
        14 => format!("path({a})"),
        15 => format!("{a} |= {b}"),
        16 => format!("-({a})"),
        _ => {
            let n = rng.random_range(100..2000);
            let (open, close) = *pick(rng, &[("(", ")"), ("[", "]"), ("{a:", "}"), ("-", "")]);
            format!("{}{a}{}", open.repeat(n), close.repeat(n))
        }
    }
}

/// A glob pattern from the glob grammar, sometimes huge.
pub fn glob_pattern(rng: &mut StdRng) -> String {
    const PARTS: &[&str] = &[
        "*",
        "**",
        "/",
        "?",
        "[abc]",
        "[!a]",
        "[a-z]",
        "{a,b}",
        "{",
        "}",
        "[",
        "]",
        "\\",
        "src",
        ".rs",
        "a",
        ",",
        "**/",
        "{*.rs,*.md}",
        "[[:alpha:]]",
    ];
    let n = match rng.random_range(0..10) {
        0 => rng.random_range(1000..300_000),
        _ => rng.random_range(1..12),
    };
    (0..n).map(|_| *pick(rng, PARTS)).collect()
}
