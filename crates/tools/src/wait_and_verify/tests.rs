use super::*;

fn tool() -> WaitAndVerify {
    WaitAndVerify::new(WaitSettings {
        max_timeout_seconds: 30.0,
        max_attempts: 10,
        poll_allow: Vec::new(),
    })
}

fn args(v: Value) -> WaitAndVerifyArgs {
    tackle_tool::DynTool::input_schema(&tool()).expect("schema");
    serde_json::from_value(v).expect("arguments parse")
}

/// One row per request: what it asks, and the code it is refused with (`None`: planned).
#[test]
fn requests_are_planned_or_refused_as_the_table_says() {
    let rows: &[(Value, Option<&str>)] = &[
        (json!({"tool": "stat", "expect_contains": "x"}), None),
        (
            json!({"tool": "stat", "expect_jq": ".exists", "timeout_seconds": 30, "max_attempts": 10}),
            None,
        ),
        // Past a ceiling is refused, never clamped.
        (
            json!({"tool": "stat", "expect_contains": "x", "timeout_seconds": 31}),
            Some("past_ceiling"),
        ),
        (
            json!({"tool": "stat", "expect_contains": "x", "max_attempts": 11}),
            Some("past_ceiling"),
        ),
        // Itself and ask_user, unconditionally.
        (
            json!({"tool": "wait_and_verify", "expect_contains": "x"}),
            Some("not_pollable"),
        ),
        (
            json!({"tool": "ask_user", "expect_contains": "x"}),
            Some("not_pollable"),
        ),
        // Exactly one condition.
        (json!({"tool": "stat"}), Some("invalid_arguments")),
        (
            json!({"tool": "stat", "expect_contains": "a", "expect_not_contains": "b"}),
            Some("invalid_arguments"),
        ),
        // A malformed filter ends the wait before any poll.
        (
            json!({"tool": "stat", "expect_jq": ".a |"}),
            Some("invalid_filter"),
        ),
        (
            json!({"tool": "stat", "expect_jq": "nosuchfn(1)"}),
            Some("invalid_filter"),
        ),
        // Arguments must be a JSON object in a string.
        (
            json!({"tool": "stat", "expect_contains": "x", "args_json": "[1]"}),
            Some("invalid_arguments"),
        ),
        (
            json!({"tool": "stat", "expect_contains": "x", "args_json": "{"}),
            Some("invalid_arguments"),
        ),
        (
            json!({"tool": "stat", "expect_contains": "x", "interval_seconds": 0}),
            Some("invalid_arguments"),
        ),
        (
            json!({"tool": "stat", "expect_contains": "x", "interval_seconds": 20, "timeout_seconds": 10}),
            Some("invalid_arguments"),
        ),
        (
            json!({"tool": "stat", "expect_contains": "x", "timeout_seconds": -1}),
            Some("invalid_arguments"),
        ),
        (
            json!({"tool": "stat", "expect_contains": "x", "max_attempts": 0}),
            Some("invalid_arguments"),
        ),
    ];
    for (request, want) in rows {
        let got = tool().plan(args(request.clone()));
        match (got, want) {
            (Ok(_), None) => {}
            (Err(e), Some(code)) => assert_eq!(e.code.as_str(), *code, "{request}: {}", e.message),
            (Ok(_), Some(code)) => panic!("{request}: planned, want {code}"),
            (Err(e), None) => panic!("{request}: refused {}: {}", e.code, e.message),
        }
    }
}

#[test]
fn defaults_stay_inside_the_ceilings() {
    let low = WaitAndVerify::new(WaitSettings {
        max_timeout_seconds: 2.0,
        max_attempts: 3,
        poll_allow: Vec::new(),
    });
    let plan = low
        .plan(args(json!({"tool": "stat", "expect_contains": "x"})))
        .expect("planned");
    assert_eq!(
        (plan.timeout, plan.interval, plan.max_attempts),
        (2.0, 2.0, 3)
    );
    let plan = tool()
        .plan(args(json!({"tool": "stat", "expect_contains": "x"})))
        .expect("planned");
    assert_eq!(
        (plan.timeout, plan.interval, plan.max_attempts),
        (30.0, DEFAULT_INTERVAL_SECONDS, 10)
    );
    assert_eq!(plan.arguments, json!({}));
}

#[test]
fn a_past_ceiling_refusal_names_the_ceiling_and_its_key() {
    let e = tool()
        .plan(args(
            json!({"tool": "stat", "expect_contains": "x", "timeout_seconds": 900}),
        ))
        .err()
        .expect("refused");
    assert!(e.message.contains("30"), "{}", e.message);
    assert!(e.message.contains("max_timeout_seconds"), "{}", e.message);
    assert_eq!(e.metadata["path"], "$.timeout_seconds");
}

/// expect_jq runs on json_query's engine: a builtin it does not offer is refused before any
/// poll, with the refusal naming it, and a condition over the memory budget is stopped with
/// `resource_limit` (which ends the wait: polling again cannot succeed).
#[test]
fn expect_jq_offers_only_what_json_query_offers() {
    for (filter, name) in [
        ("env.HOME != null", "env"),
        ("$ENV | length > 0", "$ENV"),
        ("halt", "halt"),
        ("halt_error(5)", "halt_error"),
        ("debug | true", "debug"),
        ("stderr | true", "stderr"),
        ("[inputs] | length > 0", "inputs"),
        ("0 | localtime | length > 0", "localtime"),
        ("$__loc__ != null", "$__loc__"),
    ] {
        let e = tool()
            .plan(args(json!({"tool": "stat", "expect_jq": filter})))
            .err()
            .unwrap_or_else(|| panic!("{filter}: planned"));
        assert_eq!(e.code.as_str(), "invalid_filter", "{filter}: {}", e.message);
        assert!(
            e.message.contains(&format!("`{name}` is not offered")),
            "{filter}: {}",
            e.message
        );
        assert_eq!(e.metadata["path"], "$.expect_jq");
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let over = rt.block_on(json_query::query_outputs(
        "\"a\" * 1000000 | . * 1000000 | length > 0".to_owned(),
        b"{}".to_vec(),
    ));
    assert_eq!(
        over.err().map(|e| e.code),
        Some(tackle_tool::protocol::ErrorCode::RESOURCE_LIMIT)
    );
}
