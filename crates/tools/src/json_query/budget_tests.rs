//! The memory budget, against each way a filter can build large values: every constructor
//! that allocates in proportion to a number or repeatedly, and every native that multiplies
//! its input. Each must end promptly as `resource_limit` with the meter's peak within the
//! budget (plus the one operation the checks let through), and nothing may crash.

use std::time::{Duration, Instant};

use tackle_tool::protocol::ErrorCode;

use super::{FILTER_ERROR, QUERY_MAX_MEMORY_BYTES, memory, run_filter};

/// How a row must be stopped.
#[derive(Clone, Copy, PartialEq)]
enum Stop {
    /// By the memory budget (`resource_limit`): the growth comes in large steps.
    Memory,
    /// By the memory, step or time budget, whichever comes first: the growth comes an item
    /// at a time, so in a slow (debug, loaded) build the deadline can come first.
    Either,
    /// Refused before any value is built, as an error the filter sees (`filter_error`), naming
    /// the bound: text nested past the JSON depth limit.
    Refused,
}
use Stop::{Either, Memory, Refused};

/// (what, filter, stop): each must be stopped, within the memory budget and the slack.
const OVER_BUDGET: &[(&str, &str, Stop)] = &[
    (
        "string repetition, twice",
        "\"a\" * 1000000 | . * 1000000",
        Memory,
    ),
    ("string repetition by 1e18", "\"x\" * (1e18)", Memory),
    (
        "string repetition by a float",
        "\"x\" * 1e8 | length",
        Memory,
    ),
    (
        "repetition of a big string",
        "\"a\" * 30000000 | . * 3",
        Memory,
    ),
    (
        "string doubling",
        "reduce range(40) as $i (\"ab\"; . + .)",
        Memory,
    ),
    (
        "array doubling",
        "reduce range(40) as $i ([1]; . + .)",
        Memory,
    ),
    (
        "array growth by elements",
        "reduce range(40) as $i ([1]; [.[], .[]])",
        Either,
    ),
    (
        "object growth",
        "reduce range(100000) as $i ({}; . + {(\"k\\($i)\"): (\"x\" * 1000)})",
        Either,
    ),
    (
        "object merge growth",
        "reduce range(40) as $i ({a: [1]}; . * {b: ., c: .}) | tojson",
        Either,
    ),
    (
        "collected big strings",
        "[limit(100; repeat(\"x\" * 1000000))]",
        Memory,
    ),
    (
        "collected copies",
        "[\"x\" * 1000000 | range(100) as $i | . + \"\\($i)\"]",
        Memory,
    ),
    (
        "combinations",
        "[[range(100)] as $a | [$a, $a, $a, $a, $a] | combinations]",
        Either,
    ),
    (
        "integer squaring",
        "reduce range(40) as $i (3; . * .)",
        Memory,
    ),
    (
        "integer squaring by update",
        "{a: 3} | reduce range(40) as $i (.; .a *= .a) | .a",
        Memory,
    ),
    (
        "big decimal literal squared",
        "100000000000000000000000000000 | reduce range(30) as $i (.; . * .)",
        Memory,
    ),
    (
        "tostring of a shared tree",
        "reduce range(64) as $i (0; [., .]) | tostring | length",
        Memory,
    ),
    (
        "tojson of a shared tree",
        "reduce range(64) as $i (0; [., .]) | tojson | length",
        Memory,
    ),
    (
        "interpolation of a shared tree",
        "\"\\(reduce range(64) as $i (0; [., .]))\" | length",
        Memory,
    ),
    (
        "@text of a shared tree",
        "reduce range(64) as $i (0; [., .]) | @text | length",
        Memory,
    ),
    (
        "@json of a shared tree",
        "reduce range(64) as $i (0; {a: ., b: .}) | @json | length",
        Memory,
    ),
    (
        "output of a shared tree",
        "reduce range(64) as $i (0; [., .])",
        Memory,
    ),
    (
        "tojson of a deep value",
        "reduce range(1000) as $i (0; [.]) | tojson",
        Memory,
    ),
    (
        "output of a deep value",
        "reduce range(1000) as $i (0; {a: .})",
        Memory,
    ),
    ("explode", "\"abc\" * 1000000 | explode | length", Memory),
    ("split by empty", "\"a\" * 10000000 / \"\" | length", Memory),
    (
        "split(\"\")",
        "\"a\" * 10000000 | split(\"\") | length",
        Memory,
    ),
    (
        "splits",
        "\"a\" * 10000000 | [splits(\"\")] | length",
        Memory,
    ),
    (
        "gsub",
        "\"a\" * 10000000 | gsub(\"a\"; \"bb\") | length",
        Memory,
    ),
    ("scan", "\"a\" * 10000000 | [scan(\"a\")] | length", Memory),
    (
        "match all",
        "\"a\" * 10000000 | [match(\".\"; \"g\")] | length",
        Memory,
    ),
    (
        "indices",
        "\"a\" * 10000000 | indices(\"a\") | length",
        Memory,
    ),
    ("fromjson deep", "\"[\" * 100000 | fromjson", Refused),
    (
        "fromjson big",
        "\"[[],\" * 10000000 + \"[]]\" | fromjson | length",
        Memory,
    ),
    ("@html", "\"<\" * 20000000 | @html | length", Memory),
    ("@sh", "\"'\" * 20000000 | @sh | length", Memory),
    ("@uri", "\" \" * 30000000 | @uri | length", Memory),
    ("@base64", "\"a\" * 40000000 | @base64 | length", Memory),
    (
        "strftime format",
        "0 | strftime(\"%c\" * 3000000) | length",
        Memory,
    ),
    (
        "join",
        "[range(100000) | \"x\" * 1000] | join(\",\") | length",
        Either,
    ),
    (
        "add strings",
        "[limit(100; repeat(\"x\" * 1000000))] | add | length",
        Memory,
    ),
    (
        "to_entries growth",
        "reduce range(30) as $i ({a: 1}; with_entries(.) + {\"\\($i)\": .}) | tojson | length",
        Either,
    ),
    (
        "walk of a shared tree",
        "reduce range(40) as $i (0; [., .]) | walk(.) | length",
        Either,
    ),
    (
        "paths of a shared tree",
        "reduce range(40) as $i (0; [., .]) | [paths] | length",
        Either,
    ),
    (
        "flatten of a shared tree",
        "reduce range(40) as $i (0; [., .]) | flatten | length",
        Either,
    ),
    (
        "limit and until",
        "[limit(1e18; 1 | until(false; .))]",
        Either,
    ),
    ("repeat", "[repeat(\"x\" * 1000)]", Either),
    ("range", "[range(1e9)]", Either),
    (
        "implode",
        "[limit(900000; repeat(65))] | [., ., ., ., ., ., ., .] | add | implode | length",
        Either,
    ),
];

/// (what, filter, output): large but within the budget, so they still work.
const WITHIN_BUDGET: &[(&str, &str, &str)] = &[
    ("a 10 MB string", "\"a\" * 10000000 | length", "10000000"),
    (
        "ltrimstr of it",
        "\"a\" * 10000000 | ltrimstr(\"a\") | length",
        "9999999",
    ),
    ("a 100k array", "[range(100000)] | length", "100000"),
    (
        "a 10k object",
        "reduce range(10000) as $i ({}; .[\"\\($i)\"] = $i) | length",
        "10000",
    ),
    (
        "shared tree, counted",
        "reduce range(64) as $i (0; [., .]) | length",
        "2",
    ),
    ("big integers", "pow(2; 64) | . * . | . > 1e38", "true"),
    (
        "integer product",
        "4294967296 * 4294967296 * 4294967296",
        "79228162514264337593543950336",
    ),
    (
        "@base64d",
        "\"YWJj\" * 100000 | @base64d | length",
        "300000",
    ),
    ("regex without g", "\"a\" * 1000000 | test(\"b\")", "false"),
    (
        "a 500-deep value",
        "reduce range(500) as $i (0; [.]) | flatten",
        "[0]",
    ),
];

fn run(filter: &str) -> (Result<String, tackle_tool::ToolError>, usize) {
    // On a thread of its own with the filter stack, as run_bounded runs it, measuring the
    // meter's peak from inside (the meter is per thread).
    let owned = filter.to_owned();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .stack_size(super::FILTER_STACK_BYTES)
        .spawn(move || {
            super::nesting::mark_stack_base();
            let r =
                run_filter(&owned, b"null", None, Duration::from_secs(5)).map(|c| match c.output {
                    tackle_tool::CompletionOutput::Single(s) => s,
                    other => panic!("{other:?}"),
                });
            let _ = tx.send((r, memory::last_peak()));
        })
        .unwrap();
    // A filter its budgets do not stop runs on: it fails its row instead of hanging the test.
    rx.recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("`{filter}` still runs after 20 s"))
}

/// The slack over the budget: one operation the checks allow (a value of up to the budget
/// copied or doubled) before the next check sees the meter over.
const SLACK: usize = 2 * QUERY_MAX_MEMORY_BYTES;

#[test]
fn filters_over_the_memory_budget_stop_with_resource_limit() {
    assert!(
        memory::installed(),
        "the tests run with the metered allocator"
    );
    let mut wrong = Vec::new();
    for (what, filter, stop) in OVER_BUDGET {
        let started = Instant::now();
        let (got, peak) = run(filter);
        let took = started.elapsed();
        let stopped = match (&got, stop) {
            (Err(e), Memory) => e.code == ErrorCode::RESOURCE_LIMIT,
            (Err(e), Either) => [ErrorCode::RESOURCE_LIMIT, ErrorCode::TIMEOUT].contains(&e.code),
            (Err(e), Refused) => e.code == FILTER_ERROR && e.message.contains("512 deep"),
            (Ok(_), _) => false,
        };
        let ok = stopped
            && (*stop == Either || took < Duration::from_secs(5))
            && peak <= QUERY_MAX_MEMORY_BYTES + SLACK;
        if !ok {
            let got = got.map(|s| s.chars().take(80).collect::<String>());
            wrong.push(format!(
                "{what}: `{filter}`: {got:?} in {took:?}, peak {peak} bytes"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} filters:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn large_filters_within_the_budget_still_work() {
    for (what, filter, want) in WITHIN_BUDGET {
        let (got, _) = run(filter);
        let got = got.map_err(|e| e.message);
        assert_eq!(got, Ok(format!("{want}\n")), "{what}: {filter}");
    }
}

/// Indexing far past an array's end is an error in jaq, not an allocation.
#[test]
fn huge_indices_fail_without_allocating() {
    for filter in [
        "setpath([1e9]; 1)",
        ".[1e9] = 1",
        "[] | .[1e9] = 1",
        "[] | setpath([1e9]; 1)",
    ] {
        let (got, _) = run(filter);
        match got {
            Ok(out) => assert!(out.len() < 100, "{filter}: {out:.80}"),
            Err(e) => assert_eq!(e.code, FILTER_ERROR, "{filter}: {e}"),
        }
    }
}

/// Values nested as deep as the budgets allow are built, compared and dropped (all
/// recursive in jaq) without exhausting the filter thread's stack.
#[test]
fn the_deepest_values_the_budgets_allow_do_not_crash() {
    for filter in [
        "reduce range(999999) as $i (0; [.]) | 1",
        "reduce range(999999) as $i (0; {a: .}) | 1",
        "reduce range(999999) as $i (0; [.]) | . == .",
        "[limit(999999; repeat(0))] | reduce .[] as $x (0; [.]) | 1",
    ] {
        let (got, _) = run(filter);
        match got {
            Ok(out) => assert!(out.len() < 100, "{filter}: {out:.80}"),
            Err(e) => assert!(
                [ErrorCode::RESOURCE_LIMIT, ErrorCode::TIMEOUT].contains(&e.code),
                "{filter}: {e}"
            ),
        }
    }
}
