//! The real servers for the fleet tests: `scripts/start-fleet-services` is run once per test
//! binary (it is idempotent and reuses servers a previous binary started), and its
//! `KEY=value` lines say where PostgreSQL and the S3 server are. A failure of the script fails
//! the test with its output; nothing is skipped.
//!
//! Every test gets a schema of its own (a fresh name, set as the connection's `search_path`),
//! so tests in parallel never see each other's rows; S3 tests get a prefix of their own.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use tackle_fleet::{DatabaseUrl, FleetDb};

pub struct Services {
    pub pg_url: String,
    pub s3_endpoint: String,
    pub s3_bucket: String,
}

pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn services() -> &'static Services {
    static SERVICES: OnceLock<Services> = OnceLock::new();
    SERVICES.get_or_init(|| {
        let out = Command::new(workspace().join("scripts/start-fleet-services"))
            .output()
            .expect("run scripts/start-fleet-services");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "scripts/start-fleet-services failed ({}):\n{stdout}\n{stderr}",
            out.status
        );
        let vars: HashMap<&str, &str> = stdout
            .lines()
            .filter_map(|line| line.split_once('='))
            .collect();
        let get = |key: &str| {
            vars.get(key)
                .unwrap_or_else(|| {
                    panic!("start-fleet-services printed no {key}:\n{stdout}\n{stderr}")
                })
                .to_string()
        };
        Services {
            pg_url: get("TACKLE_TEST_PG_URL"),
            s3_endpoint: get("TACKLE_TEST_S3_ENDPOINT"),
            s3_bucket: get("TACKLE_TEST_S3_BUCKET"),
        }
    })
}

/// A name no other test (in this run or an earlier one on the same servers) uses.
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

/// A fresh, empty schema; returns the URL whose connections use it.
pub async fn fresh_schema_url() -> String {
    let base = &services().pg_url;
    let schema = unique("t");
    let client = raw_client_at(base).await;
    client
        .batch_execute(&format!("CREATE SCHEMA {schema}"))
        .await
        .unwrap();
    format!("{base}?options=-c%20search_path%3D{schema}")
}

/// A fleet database in a fresh schema, migrated.
pub async fn fresh_db(pool_size: usize) -> (FleetDb, String) {
    let url = fresh_schema_url().await;
    let db = FleetDb::connect_url(DatabaseUrl::new(url.clone()), pool_size)
        .await
        .unwrap();
    (db, url)
}

/// A plain connection (no pool, no TLS) for what a test does behind the library's back.
pub async fn raw_client_at(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}
