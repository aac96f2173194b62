//! The fuzz targets: each prints its seed and executions, and fails on the first call that
//! does not end in a result with a stable code. Known crashers are fixed regression rows.

use rand::RngExt;
use serde_json::{Value, json};
use tackle_fuzz::{
    Rig, bash_line, execs, glob_pattern, jq_filter, mutate, mutate_line, nested_json, pick,
    random_json, rng_for, seed, valid_arguments,
};

/// How many calls go into one batch (they are prepared together, then run in parallel).
const BATCH: usize = 25;

fn report(target: &str, rig: &Rig) {
    println!(
        "fuzz target {target}: seed {:#x}, {} executions, 0 failures",
        seed(),
        rig.execs
    );
}

/// Run `calls` in batches, moving them (a deep value is never cloned: cloning recurses).
fn run_all(rig: &mut Rig, target: &str, mut calls: Vec<(String, Value)>) {
    while !calls.is_empty() {
        let rest = calls.split_off(calls.len().min(BATCH));
        rig.run(target, calls);
        calls = rest;
    }
}

#[test]
fn tool_arguments() {
    let mut rig = Rig::new();
    let mut rng = rng_for("tool_arguments");
    let schemas = rig.schemas();
    let mut calls: Vec<(String, Value)> = Vec::new();
    // Regression rows: arguments nested past serde's limit, and not objects at all.
    for (name, _) in &schemas {
        calls.push((name.clone(), nested_json(5000)));
        let mut wrapped = serde_json::Map::new();
        wrapped.insert("path".to_owned(), nested_json(3000));
        calls.push((name.clone(), Value::Object(wrapped)));
        calls.push((name.clone(), json!([1, 2])));
    }
    let n = execs(2000);
    while calls.len() < n {
        let (name, schema) = pick(&mut rng, &schemas);
        let mut args = valid_arguments(&mut rng, schema);
        if rng.random_bool(0.2) {
            args = random_json(&mut rng, 4);
        }
        for _ in 0..rng.random_range(0..3) {
            mutate(&mut rng, &mut args);
        }
        calls.push((name.clone(), args));
    }
    run_all(&mut rig, "tool_arguments", calls);
    report("tool_arguments", &rig);
}

#[test]
fn shell_analyzer() {
    let mut rig = Rig::new();
    let mut rng = rng_for("shell_analyzer");
    let mut lines: Vec<String> = vec![
        // The report's crashers.
        "{ ".repeat(1500) + "true; " + &"} ".repeat(1500),
        "if true; then ".repeat(1500) + "true; " + &"fi; ".repeat(1500),
        format!("echo {}x{}", "$(".repeat(7500), ")".repeat(7500)),
        format!("echo {}", "`echo \\".repeat(5000)),
        format!("echo {}x{}", "${a:-".repeat(5000), "}".repeat(5000)),
        format!("echo $(({}1{}))", "(".repeat(5000), ")".repeat(5000)),
        format!("( {}", "'))' ( ".repeat(3000)),
    ];
    let n = execs(2000);
    while lines.len() < n {
        let depth = rng.random_range(0..6);
        let line = bash_line(&mut rng, depth);
        lines.push(if rng.random_bool(0.3) {
            mutate_line(&mut rng, &line)
        } else {
            line
        });
    }
    let calls = lines
        .into_iter()
        .map(|command| ("bash".to_owned(), json!({ "command": command })))
        .collect();
    run_all(&mut rig, "shell_analyzer", calls);
    // The other dialect: the analyzer as it reads lines for a non-bash `sh`.
    let mut rng = rng_for("shell_analyzer_sh");
    let mut sh = 0usize;
    for _ in 0..execs(2000) {
        let depth = rng.random_range(0..6);
        let line = bash_line(&mut rng, depth);
        let line = if rng.random_bool(0.3) {
            mutate_line(&mut rng, &line)
        } else {
            line
        };
        let _ = tackle_tools::shell::analyze::analyze(&line, tackle_tools::shell::Dialect::Sh);
        sh += 1;
    }
    report("shell_analyzer (bash, through prepare)", &rig);
    println!(
        "fuzz target shell_analyzer (sh dialect): seed {:#x}, {sh} executions, 0 failures",
        seed()
    );
}

#[test]
fn jq_filters_and_inputs() {
    let mut rig = Rig::new();
    let mut rng = rng_for("jq");
    let mut calls: Vec<(String, Value)> = vec![
        (".".to_owned(), "[".repeat(2000) + &"]".repeat(2000)),
        ("(".repeat(800) + "." + &")".repeat(800), "0".into()),
        ("def f: 1 + f; f".into(), "0".into()),
        ("def f: [f]; f".into(), "0".into()),
        ("def f: 1 + f; [f] | length".into(), "null".into()),
        ("def __tackle_depth: .; def f: f + 1; f".into(), "0".into()),
    ]
    .into_iter()
    .map(|(filter, json)| {
        (
            "json_query".to_owned(),
            json!({ "expression": filter, "data": json }),
        )
    })
    .collect();
    calls.push((
        "json_query".into(),
        json!({ "expression": ".a[2].b", "path": "a.json" }),
    ));
    let n = execs(1000);
    while calls.len() < n {
        let depth = rng.random_range(0..5);
        let filter = jq_filter(&mut rng, depth);
        let filter = if rng.random_bool(0.2) {
            mutate_line(&mut rng, &filter)
        } else {
            filter
        };
        let input = if rng.random_bool(0.1) {
            nested_json(rng.random_range(100..1500)).to_string()
        } else {
            random_json(&mut rng, 4).to_string()
        };
        calls.push((
            "json_query".into(),
            json!({ "expression": filter, "data": input }),
        ));
    }
    run_all(&mut rig, "jq", calls);
    report("jq (json_query)", &rig);
}

#[test]
fn glob_patterns() {
    let mut rig = Rig::new();
    let mut rng = rng_for("glob");
    let huge = "a".repeat(1 << 20);
    let mut calls: Vec<(String, Value)> = vec![
        ("glob".into(), json!({ "pattern": huge })),
        ("grep".into(), json!({ "pattern": "x", "glob": huge })),
        ("read_many_files".into(), json!({ "pattern": huge })),
        ("glob".into(), json!({ "pattern": "{a,".repeat(20_000) })),
    ];
    let n = execs(600);
    while calls.len() < n {
        let pattern = glob_pattern(&mut rng);
        calls.push(match rng.random_range(0..3) {
            0 => ("glob".into(), json!({ "pattern": pattern })),
            1 => ("grep".into(), json!({ "pattern": "fn", "glob": pattern })),
            _ => ("read_many_files".into(), json!({ "pattern": pattern })),
        });
    }
    run_all(&mut rig, "glob", calls);
    report("glob (glob, grep, read_many_files)", &rig);
}
