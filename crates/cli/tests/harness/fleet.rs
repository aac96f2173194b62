//! The fleet's real servers for end-to-end tests: `scripts/start-fleet-services` (idempotent,
//! shared by every test binary of a run) says where PostgreSQL and the S3 server are; each
//! test gets a schema and a key prefix of its own.

use std::path::Path;
use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use super::Project;
use super::daemon::{self, Daemon, until};
use super::replay::{model, script};

#[path = "../../../fleet/tests/common/services.rs"]
mod shared;
pub use shared::{services, unique};

/// A fresh, empty schema on the test cluster; the URL whose connections use it.
pub fn fresh_schema_url() -> String {
    let base = services().pg_url.clone();
    let schema = unique("e2e");
    query(&base, &format!("CREATE SCHEMA {schema}"));
    format!("{base}?options=-c%20search_path%3D{schema}")
}

/// Runs `sql` on the schema of `url` and returns the first column of every row as text.
pub fn query(url: &str, sql: &str) -> Vec<String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        shared::raw_client_at(url)
            .await
            .simple_query(sql)
            .await
            .unwrap()
            .into_iter()
            .filter_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).map(str::to_owned),
                _ => None,
            })
            .collect()
    })
}

/// The user config of a daemon on `url`'s database (through `$TACKLE_TEST_DB`) and the test
/// bucket under `prefix`, with leases of `lease_seconds`.
pub fn user_config(prefix: &str, lease_seconds: f64) -> String {
    let s = services();
    format!(
        "[store]\nbackend = \"postgres\"\ndatabase_url_env = \"TACKLE_TEST_DB\"\nlease_seconds = {lease_seconds}\n\n\
         [artifacts]\nbackend = \"s3\"\nendpoint = \"{}\"\nbucket = \"{}\"\nprefix = \"{prefix}\"\n",
        s.s3_endpoint, s.s3_bucket
    )
}

/// The environment a fleet daemon needs: the database URL and the S3 server's keys.
pub fn env(url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("TACKLE_TEST_DB", url.to_owned()),
        ("AWS_ACCESS_KEY_ID", "tackle-test".to_owned()),
        ("AWS_SECRET_ACCESS_KEY", "tackle-test-secret".to_owned()),
        ("AWS_REGION", "us-east-1".to_owned()),
    ]
}

/// Sets [`env`] on `cmd`: a tackle command that reaches the fleet on `url`.
pub fn set_env(cmd: &mut super::TestCommand, url: &str) {
    for (k, v) in env(url) {
        cmd.env(k, v);
    }
}

/// A loopback TCP proxy to the test cluster that can be cut (every connection dropped, new
/// ones refused) and restored: the database going away and coming back, for one daemon only.
pub struct Proxy {
    pub addr: std::net::SocketAddr,
    cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
    open: std::sync::Arc<std::sync::Mutex<Vec<std::net::TcpStream>>>,
}

impl Proxy {
    /// Starts a proxy to the cluster of `services().pg_url`.
    pub fn start() -> Proxy {
        use std::net::{TcpListener, TcpStream};
        let target = pg_addr();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let cut = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let open = std::sync::Arc::new(std::sync::Mutex::new(Vec::<TcpStream>::new()));
        let (cut2, open2) = (cut.clone(), open.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().map_while(Result::ok) {
                if cut2.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let Ok(server) = TcpStream::connect(&target) else {
                    continue;
                };
                let mut held = open2.lock().unwrap();
                held.push(client.try_clone().unwrap());
                held.push(server.try_clone().unwrap());
                drop(held);
                for (mut from, mut to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        });
        Proxy { addr, cut, open }
    }

    /// Drops every connection and refuses new ones.
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        for s in self.open.lock().unwrap().drain(..) {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }

    /// Accepts connections again.
    pub fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }

    /// `url` (a URL of the test cluster) through this proxy.
    pub fn url(&self, url: &str) -> String {
        url.replacen(&pg_addr(), &self.addr.to_string(), 1)
    }
}

/// `host:port` of the test cluster.
fn pg_addr() -> String {
    let url = &services().pg_url;
    let rest = url.split_once('@').map_or(url.as_str(), |(_, r)| r);
    rest.split('/').next().unwrap().to_owned()
}

/// A scripted model turn that calls `name` with `arguments`.
pub fn call(name: &str, arguments: Value) -> Value {
    json!({"turn": {"tool_calls": [{"name": name, "arguments": arguments}]}})
}

/// A scripted model turn that says `text`.
pub fn say(text: &str) -> Value {
    json!({"turn": {"text": text}})
}

/// A fleet daemon for `project` (state in `<temp>/state`, so a restart resumes what it
/// hosted) playing `turns`, recording what its model is sent in `record`, running bash
/// without asking, with `extra` arguments.
pub fn daemon(
    project: &Project,
    url: &str,
    turns: &[Value],
    record: &Path,
    extra: &[&str],
) -> Daemon {
    daemon_with_env(project, url, turns, record, extra, &[])
}

/// [`daemon`], with `extra_env` set too.
pub fn daemon_with_env(
    project: &Project,
    url: &str,
    turns: &[Value],
    record: &Path,
    extra: &[&str],
    extra_env: &[(&str, &str)],
) -> Daemon {
    let file = script(project, "model.jsonl", turns);
    let mut env = env(url);
    env.push(("TACKLE_REPLAY_RECORD", record.display().to_string()));
    let mut env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    env.extend_from_slice(extra_env);
    let model = model(&file);
    let mut args = vec![
        "--model",
        &model,
        "--mode",
        "yolo",
        "--allow",
        "tool.bash.cmd:*",
    ];
    args.extend_from_slice(extra);
    daemon::start(project, &project.outside("state"), &args, &env)
}

/// Sends `text` to `session` and waits for its turn to end.
pub fn prompt(d: &Daemon, session: &str, text: &str) {
    let watcher = d.stream("_tackle/session/attach", json!({"sessionId": session}));
    until(&watcher, "the attach", |m| {
        m["method"] == "_tackle/attached"
    });
    drop(d.stream(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
    ));
    until(&watcher, "the end of the turn", |m| {
        m["method"] == "_tackle/turn_ended"
    });
}

/// Stops `d` as an operator would (SIGTERM) and waits for it to exit.
pub fn stop(mut d: Daemon) {
    let pid = d.child.0.id().to_string();
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(sent.success());
    d.child.0.wait().unwrap();
}
