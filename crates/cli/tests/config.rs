//! `tackle config`, the layering of user config, project config and flags, and how the catalog
//! follows `tools.disable`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::Project;

#[test]
fn every_value_names_its_origin() {
    let p = Project::new();
    p.config("[permissions]\nmode = \"accept-edits\"\ndeny = [\"write:.git/**\"]\n[tool_output]\nlines = 12\n");
    let user = p.outside("xdg");
    std::fs::create_dir_all(user.join("tackle")).unwrap();
    std::fs::write(
        user.join("tackle/config.toml"),
        "[permissions]\nallow = [\"read:**\"]\n[tool_output]\nlines = 5\nbytes = 777\n",
    )
    .unwrap();
    // Untrusted, the project's laxer mode is left out and said to be.
    let untrusted = p.tackle(["config", "--json"]).run();
    untrusted.success();
    let v = untrusted.json();
    assert_eq!(v["mode"]["value"], "ask", "{v:#}");
    assert_eq!(v["trust"]["ignored"][0]["key"], "permissions.mode", "{v:#}");
    assert_eq!(v["trust"]["how_to_trust"], "tackle trust");
    p.trust();
    let out = p
        .tackle(["--deny", "read:secrets/**", "config", "--json"])
        .env("XDG_CONFIG_HOME", &user)
        .run();
    out.success();
    let v = out.json();
    let project_file = p.join(".agents/config.toml").display().to_string();
    let user_file = user.join("tackle/config.toml").display().to_string();
    assert_eq!(v["mode"]["value"], "accept-edits");
    assert_eq!(v["mode"]["from"], format!("{project_file}:2"));
    // The project overrides the user's lines; bytes stay the user's.
    assert_eq!(v["tool_output"]["lines"]["value"], 12);
    assert_eq!(v["tool_output"]["bytes"]["from"], format!("{user_file}:5"));
    let rules: Vec<(String, String, String)> = v["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["effect"].as_str().unwrap().into(),
                r["pattern"].as_str().unwrap().into(),
                r["from"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        rules,
        vec![
            ("allow".into(), "read:**".into(), format!("{user_file}:2")),
            (
                "deny".into(),
                "write:.git/**".into(),
                format!("{project_file}:3")
            ),
            ("deny".into(), "read:secrets/**".into(), "--deny".into()),
        ]
    );
    assert!(
        v["posture"]
            .as_str()
            .unwrap()
            .starts_with("posture: mode accept-edits"),
        "{v}"
    );

    // The text form says the same, one value a line, with its origin.
    let text = p.tackle(["config"]).env("XDG_CONFIG_HOME", &user).run();
    text.success()
        .stdout_contains("accept-edits")
        .stdout_contains(&format!("# {project_file}:2"))
        .stdout_contains("posture: ");
}

#[test]
fn config_typos_and_tool_typos_fail_loudly() {
    let p = Project::new();
    p.config("[permissions]\nmood = \"ask\"\n");
    p.tackle(["config"])
        .run()
        .code(3)
        .stderr_contains("`mood`")
        .stderr_contains("`mode`")
        .stderr_contains("config.toml:2");
    let p = Project::new();
    p.tackle(["--disable-tools", "lst_dir", "tools"])
        .run()
        .code(3)
        .stderr_contains("`list_dir`");
}

/// A flag's value outside its list is a command-line error (exit 2) that lists the values; the
/// same value in a file is a configuration error (exit 3) naming the file.
#[test]
fn a_bad_flag_value_is_a_usage_error_listing_the_values() {
    let p = Project::new();
    let flags = [
        ("--mode", "ask, accept-edits, plan, yolo"),
        ("--bash-search-gate", "enforce, warn, allow"),
        ("--plan-mode", "off, advisory, required"),
        ("--checkpoint", "model, operator"),
        ("--watchdog", "off, warn, enforce"),
    ];
    for (flag, values) in flags {
        p.tackle([flag, "frob", "config"])
            .run()
            .code(2)
            .stderr_contains(flag)
            .stderr_contains(values);
    }
    p.config("[watchdog]\nmode = \"frob\"\n");
    p.tackle(["config"])
        .run()
        .code(3)
        .stderr_contains("off, warn or enforce");
}

#[test]
fn disabled_tools_leave_the_catalog_and_cannot_be_called() {
    let p = Project::new();
    p.config("[tools]\ndisable = [\"stat\"]\n");
    let names: Vec<String> = p
        .tackle(["tools", "--json"])
        .run()
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(!names.iter().any(|n| n == "stat"), "{names:?}");
    assert!(names.iter().any(|n| n == "list_dir"), "{names:?}");
    p.tackle(["call", "stat", r#"{"path":"."}"#])
        .run()
        .code(1)
        .stdout_contains("unknown_tool");
    // A later layer puts it back.
    let names = p
        .tackle(["--enable-tools", "stat", "tools", "--json"])
        .run()
        .json();
    assert!(
        names
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "stat"),
        "{names}"
    );
}

#[test]
fn descriptions_never_name_a_built_in_that_is_not_registered() {
    let p = Project::new();
    p.config("[tools]\ndisable = [\"grep\", \"glob\", \"write_file\", \"edit_file\"]\n");
    let tools = p.tackle(["tools", "--json"]).run().json();
    let registered: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let absent: Vec<&str> = ["bash", "grep", "glob", "write_file", "edit_file"]
        .into_iter()
        .filter(|t| !registered.contains(t))
        .collect();
    for t in tools.as_array().unwrap() {
        let d = t["description"].as_str().unwrap();
        for &absent in &absent {
            let named = d
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(|w| w == absent);
            assert!(!named, "{} mentions absent `{absent}`: {d}", t["name"]);
        }
    }
}

/// `[delegation]`: each limit with its origin; untrusted, a project may lower one, not raise it.
#[test]
fn delegation_limits_name_their_origin_and_a_project_only_lowers_them() {
    let p = Project::new();
    p.config("[delegation]\nmax_depth = 1\nmax_running = 9\n");
    let out = p.tackle(["config", "--json"]).run();
    out.success();
    let v = out.json();
    let project_file = p.join(".agents/config.toml").display().to_string();
    assert_eq!(v["delegation"]["max_depth"]["value"], 1, "{v:#}");
    assert_eq!(
        v["delegation"]["max_depth"]["from"],
        format!("{project_file}:2")
    );
    assert_eq!(v["delegation"]["max_running"]["value"], 4, "{v:#}");
    assert_eq!(v["delegation"]["max_running"]["from"], "built-in default");
    assert_eq!(
        v["trust"]["ignored"][0]["key"], "delegation.max_running",
        "{v:#}"
    );
    p.trust();
    let text = p.tackle(["config"]).run();
    text.success()
        .stdout_contains("delegation.max_running 9")
        .stdout_contains(&format!("# {project_file}:3"));
    p.config("[delegation]\nmax_running = 0\n");
    p.tackle(["config"])
        .run()
        .code(3)
        .stderr_contains("[delegation] max_running = 0")
        .stderr_contains("set at least 1");
}
