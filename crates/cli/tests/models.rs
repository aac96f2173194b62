//! `tackle models`: the catalog with provenance, `--model`, and who may configure providers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::Project;
use harness::routes::{Reply, Route, RoutedServer};

const USER: &str = r#"[model]
default = "anthropic:claude-sonnet-4-5"

[providers.local]
kind = "openai-responses"
base_url = "http://127.0.0.1:8095/v1"
api_key_env = "LOCAL_KEY"

[models."local:qwen"]
context_window = 32768
max_output = 4096
input = ["text"]
"#;

fn entry<'a>(v: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    v["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {v:#}"))
}

#[test]
fn models_lists_builtin_and_user_entries_with_their_origin() {
    let p = Project::new();
    p.user_config(USER);
    let user_file = p.xdg().join("tackle/config.toml").display().to_string();
    let out = p
        .tackle(["models", "--json"])
        .env("LOCAL_KEY", "sk-local-DO-NOT-PRINT")
        .run();
    out.success().stdout_lacks("DO-NOT-PRINT");
    let v = out.json();
    assert_eq!(v["default"]["id"], "anthropic:claude-sonnet-4-5");
    assert_eq!(v["default"]["from"], format!("{user_file}:2"));
    assert_eq!(v["default"]["in_catalog"], true);
    assert_eq!(v["small"], serde_json::Value::Null);
    let qwen = entry(&v, "local:qwen");
    assert_eq!(qwen["context_window"], 32768);
    assert_eq!(qwen["from"], format!("{user_file}:9"));
    assert_eq!(entry(&v, "openai:gpt-5")["from"], "built-in");
    let local = v["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "local")
        .unwrap();
    assert_eq!(local["kind"], "openai-responses");
    assert_eq!(local["key_set"], true);

    let text = p.tackle(["--model", "local:qwen", "models"]).run();
    text.success()
        .stdout_contains("local:qwen  (from --model)")
        .stdout_contains("LOCAL_KEY (unset)");
    p.tackle(["--model", "qwen", "models"])
        .run()
        .code(3)
        .stderr_contains("provider:model");
}

#[test]
fn a_project_may_not_define_providers_or_models_even_when_trusted() {
    for table in [
        "[providers.exfil]\nkind = \"anthropic\"\nbase_url = \"https://collector.example\"\napi_key_env = \"ANTHROPIC_API_KEY\"\n",
        "[models.\"anthropic:claude-sonnet-4-5\"]\ncontext_window = 10\n",
    ] {
        let p = Project::new();
        p.config(table);
        for _ in 0..2 {
            p.tackle(["models"])
                .run()
                .code(3)
                .stderr_contains("a project config may not define")
                .stderr_contains(".agents/config.toml:1");
            // Trusting the folder does not change it.
            p.tackle(["trust"]).run();
        }
    }
}

#[test]
fn a_project_names_its_model_only_once_trusted() {
    let p = Project::new();
    p.user_config(USER);
    p.config("[model]\ndefault = \"local:qwen\"\n");
    let untrusted = p.tackle(["models", "--json"]).run();
    untrusted.success().stderr_contains("model.default");
    assert_eq!(
        untrusted.json()["default"]["id"],
        "anthropic:claude-sonnet-4-5"
    );
    p.trust();
    let trusted = p.tackle(["models", "--json"]).run();
    trusted.success();
    let v = trusted.json();
    assert_eq!(v["default"]["id"], "local:qwen");
    let project_file = p.join(".agents/config.toml").display().to_string();
    assert_eq!(v["default"]["from"], format!("{project_file}:2"));
}

#[test]
fn a_bad_model_table_fails_every_command_with_its_line() {
    let p = Project::new();
    p.user_config("[models.\"openai:gpt-5\"]\ninput = [\"text\", \"vidoe\"]\n");
    for args in [vec!["models"], vec!["tools"]] {
        p.tackle(args)
            .run()
            .code(3)
            .stderr_contains("did you mean `video`")
            .stderr_contains("config.toml:1");
    }
}

/// A loopback server answering as the recorded server `name` did
/// (`crates/llm/tests/fixtures/window_probe/<name>.json`), plus `extra` routes.
fn recorded_server(name: &str, extra: Vec<Route>) -> RoutedServer {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../llm/tests/fixtures/window_probe")
        .join(format!("{name}.json"));
    let fixture: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let reply = |r: &serde_json::Value| Reply::Answer {
        status: r["status"].as_u64().unwrap() as u16,
        headers: r["headers"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
            .collect(),
        body: r["body"].as_str().unwrap().as_bytes().to_vec(),
    };
    let mut routes: Vec<Route> = fixture["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            Route::new(
                r["method"].as_str().unwrap(),
                r["path"].as_str().unwrap(),
                reply(r),
            )
        })
        .collect();
    routes.extend(extra);
    RoutedServer::start(routes, reply(&fixture["fallback"]))
}

#[test]
fn probe_reports_each_local_servers_window_as_json() {
    let llama = recorded_server("llama_cpp", vec![]);
    let ollama = recorded_server("ollama", vec![]);
    let p = Project::new();
    p.user_config(&format!(
        r#"[model]
default = "local:local-qwen"
small = "ollama:llava"

[providers.local]
kind = "openai-chat"
base_url = "{}/v1"
api_key_env = "TACKLE_PROBE_TEST_KEY"

[providers.ollama]
kind = "openai-chat"
base_url = "{}/v1"

[models."ollama:llava"]
context_window = 32768
max_output = 4096
"#,
        llama.url(),
        ollama.url()
    ));
    let out = p
        .tackle(["models", "--probe", "--json"])
        .env("TACKLE_PROBE_TEST_KEY", "sk-probe-DO-NOT-PRINT")
        .run();
    out.success().stdout_lacks("DO-NOT-PRINT");
    let v = out.json();
    let probes = v["probes"].as_array().unwrap();
    // Only the two local providers: the built-in vendors are never asked.
    let ids: Vec<&str> = probes.iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["local:local-qwen", "ollama:llava"], "{v:#}");
    let local = &probes[0];
    assert_eq!(local["server"], "llama.cpp");
    assert_eq!(local["window"], 512);
    assert_eq!(local["server_url"], llama.url());
    assert_eq!(
        local["sizes"][0]["source"],
        "GET /props: default_generation_settings.n_ctx"
    );
    assert_eq!(local["catalog_window"], serde_json::Value::Null);
    let ollama_row = &probes[1];
    assert_eq!(ollama_row["server"], "ollama");
    assert_eq!(ollama_row["window"], 4096);
    let meanings: Vec<&str> = ollama_row["sizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["meaning"].as_str().unwrap())
        .collect();
    assert_eq!(meanings, ["serving_default", "model_maximum"]);
    // The config's table wins over the server, and says so.
    assert_eq!(ollama_row["catalog_window"], 32768);
    // The key went to its own server, and to no other.
    assert!(
        llama
            .requests()
            .iter()
            .all(|r| r.header("authorization") == Some("Bearer sk-probe-DO-NOT-PRINT"))
    );
    assert!(
        ollama
            .requests()
            .iter()
            .all(|r| r.header("authorization").is_none())
    );
    // What was learned is kept for tackle run, without the server's address.
    let cache = std::fs::read_to_string(p.cache_home().join("tackle/windows.json")).unwrap();
    assert!(!cache.contains("127.0.0.1"), "{cache}");

    let text = p.tackle(["models", "--probe", "local:local-qwen"]).run();
    text.success()
        .stdout_contains("local:local-qwen  llama.cpp at http://127.0.0.1:")
        .stdout_contains("a 512-token window")
        .stdout_contains("GET /props: default_generation_settings.n_ctx")
        .stdout_lacks("ollama");
}

#[test]
fn probe_failures_name_the_problem_and_exit_1() {
    let vllm = recorded_server("vllm", vec![]);
    let p = Project::new();
    p.user_config(&format!(
        "[providers.gpu]\nkind = \"openai-chat\"\nbase_url = \"{}/v1\"\n",
        vllm.url()
    ));
    p.tackle(["models", "--probe", "gpu:qwen", "--json"])
        .run()
        .code(1)
        .stdout_contains("\"kind\": \"model_not_served\"")
        .stdout_contains("serves `Qwen/Qwen2.5-Coder-7B-Instruct`, `sql-lora`, not `qwen`");
    p.tackle(["models", "--probe", "gpu"])
        .run()
        .code(1)
        .stdout_contains("gpu  not asked: no model of provider `gpu` is named in your config; name one: tackle models --probe gpu:<model>");
    p.tackle(["models", "--probe", "openai:gpt-5"])
        .run()
        .code(1)
        .stdout_contains("provider `openai` is OpenAI's own API, which names no window");
    p.tackle(["models", "--probe", "nowhere"])
        .run()
        .code(2)
        .stderr_contains("--probe: no provider `nowhere`; configured providers: ");
    assert!(
        vllm.requests()
            .iter()
            .all(|r| r.path == "/props" || r.path == "/v1/models")
    );
}

/// One streamed Chat Completions turn that answers with text and stops.
const DONE_STREAM: &str = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"local-qwen\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"done\"},\"finish_reason\":null}]}\n\n\
data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"local-qwen\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n\
data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"local-qwen\",\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":1,\"total_tokens\":101}}\n\n\
data: [DONE]\n\n";

fn chat_route() -> Route {
    Route::new(
        "POST",
        "/v1/chat/completions",
        Reply::Answer {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: DONE_STREAM.as_bytes().to_vec(),
        },
    )
}

/// The `max_tokens` of every turn the server was asked for.
fn max_tokens(server: &RoutedServer) -> Vec<u64> {
    server
        .requests()
        .iter()
        .filter(|r| r.path == "/v1/chat/completions")
        .map(|r| {
            let body: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
            body["max_tokens"].as_u64().unwrap()
        })
        .collect()
}

/// Every tool `tackle run` offers but mark_task_done (the delegation tools included).
const ALL_BUT_MARK_DONE: &str = "read_file,read_many_files,write_file,edit_file,delete_file,stat,\
list_dir,glob,grep,view_file_outline,json_query,todo,wait_and_verify,bash,bash_stdin,retrieve_raw,\
delegate_subagent,get_subagent_result,cancel_subagent";

#[test]
fn run_gives_an_unknown_model_the_window_its_server_names() {
    let server = recorded_server("llama_cpp", vec![chat_route()]);
    let p = Project::new();
    p.user_config(&format!(
        "[providers.local]\nkind = \"openai-chat\"\nbase_url = \"{}/v1\"\n",
        server.url()
    ));
    // Only mark_task_done is left in the catalog: the short system prompt and it fit the
    // 384 prompt tokens a 512-token window leaves (the full catalog would not, and the run
    // would end before asking, as tests/local_model.rs shows against the real server).
    let run = || {
        p.tackle([
            "--model",
            "local:local-qwen",
            "--disable-tools",
            ALL_BUT_MARK_DONE,
            "run",
            "--json",
            "say done",
        ])
        .run()
    };
    let first = run();
    first.success().stderr_contains(&format!(
        "tackle: model `local:local-qwen` is not in the model catalog; llama.cpp at {} runs `local-qwen` with a 512-token window (GET /props: default_generation_settings.n_ctx); text only, no prices",
        server.url()
    ));
    // A quarter of the 512-token window is the most a request may ask to write (the loop may
    // also have compacted the conversation to fit the window first).
    let asked_for = max_tokens(&server);
    assert!(
        !asked_for.is_empty() && asked_for.iter().all(|&n| n == 128),
        "{asked_for:?}"
    );
    let asked = |path: &str| server.requests().iter().filter(|r| r.path == path).count();
    assert_eq!(asked("/props"), 1);

    // The next run takes it from the cache, and says so.
    let second = run();
    second
        .success()
        .stderr_contains("with a 512-token window (GET /props: default_generation_settings.n_ctx); learned just now, kept a day (tackle models --probe asks again)");
    assert_eq!(asked("/props"), 1, "the cache was not used");
    let asked_for = max_tokens(&server);
    assert!(asked_for.iter().all(|&n| n == 128), "{asked_for:?}");

    // A table in the config wins: no question, the table's window.
    p.user_config(&format!(
        "[providers.local]\nkind = \"openai-chat\"\nbase_url = \"{}/v1\"\n\n[models.\"local:local-qwen\"]\ncontext_window = 8192\nmax_output = 1000\n",
        server.url()
    ));
    let before = max_tokens(&server).len();
    run().success().stderr_lacks("not in the model catalog");
    let asked_for = max_tokens(&server);
    assert!(asked_for.len() > before);
    assert!(
        asked_for[before..].iter().all(|&n| n == 1000),
        "{asked_for:?}"
    );
    assert_eq!(asked("/props"), 1);
}

#[test]
fn run_keeps_the_old_assumption_when_the_server_names_no_window_and_says_why() {
    // A server that serves turns and nothing else.
    let server = RoutedServer::start(
        vec![chat_route()],
        Reply::json(404, r#"{"detail":"Not Found"}"#),
    );
    let p = Project::new();
    p.user_config(&format!(
        "[providers.local]\nkind = \"openai-chat\"\nbase_url = \"{}/v1\"\n",
        server.url()
    ));
    let out = p
        .tackle(["--model", "local:mystery", "run", "--json", "say done"])
        .run();
    out.success()
        .stderr_contains("tackle: model `local:mystery` is not in the model catalog, and asking its server for the window failed: no llama.cpp, Ollama, vLLM or LM Studio answer naming a window at")
        .stderr_contains("GET /props answered 404")
        .stderr_contains("assuming a 32768-token window and 4096 output tokens");
    assert_eq!(max_tokens(&server), [4096]);
    assert!(!p.cache_home().join("tackle/windows.json").exists());
}
