//! The fleet's real servers for end-to-end tests: `scripts/start-fleet-services` (idempotent,
//! shared by every test binary of a run) says where PostgreSQL and the S3 server are; each
//! test gets a schema and a key prefix of its own.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// Where the servers are.
pub struct Services {
    pub pg_url: String,
    pub s3_endpoint: String,
    pub s3_bucket: String,
}

/// Starts the servers once per test binary (nothing is skipped: a failure fails the test).
pub fn services() -> &'static Services {
    static SERVICES: OnceLock<Services> = OnceLock::new();
    SERVICES.get_or_init(|| {
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/start-fleet-services");
        let out = Command::new(script)
            .output()
            .expect("run scripts/start-fleet-services");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "scripts/start-fleet-services failed ({}):\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let vars: HashMap<&str, &str> = stdout.lines().filter_map(|l| l.split_once('=')).collect();
        let get = |key: &str| {
            vars.get(key)
                .unwrap_or_else(|| panic!("no {key}:\n{stdout}"))
                .to_string()
        };
        Services {
            pg_url: get("TACKLE_TEST_PG_URL"),
            s3_endpoint: get("TACKLE_TEST_S3_ENDPOINT"),
            s3_bucket: get("TACKLE_TEST_S3_BUCKET"),
        }
    })
}

/// A name no other test uses.
pub fn unique(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "{prefix}_{}_{nanos:x}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// A fresh, empty schema on the test cluster; the URL whose connections use it.
pub fn fresh_schema_url() -> String {
    let base = services().pg_url.clone();
    let schema = unique("e2e");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (client, connection) = tokio_postgres::connect(&base, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(async move {
            let _ = connection.await;
        });
        client
            .batch_execute(&format!("CREATE SCHEMA {schema}"))
            .await
            .unwrap();
    });
    format!("{base}?options=-c%20search_path%3D{schema}")
}

/// Runs `sql` on the schema of `url` and returns the first column of every row as text.
pub fn query(url: &str, sql: &str) -> Vec<String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(async move {
            let _ = connection.await;
        });
        client
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
