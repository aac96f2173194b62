//! Where the fleet's test servers are: `scripts/start-fleet-services` is run once per binary
//! (it is idempotent and reuses servers a previous binary started) and its `KEY=value` lines
//! say where PostgreSQL and the S3 server are. A failure of the script fails the caller with
//! its output; nothing is skipped. Shared by the fleet crate's tests, the end-to-end harness
//! and the fleet benchmark (each includes this file).

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

/// Starts (or finds) the servers, once per process.
pub fn services() -> &'static Services {
    static SERVICES: OnceLock<Services> = OnceLock::new();
    SERVICES.get_or_init(|| {
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/start-fleet-services");
        let out = Command::new(&script)
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

/// A name no other caller (in this run or an earlier one on the same servers) uses.
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

/// A plain connection (no pool, no TLS) for what a caller does behind the library's back.
pub async fn raw_client_at(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}
