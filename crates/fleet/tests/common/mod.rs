//! The real servers for the fleet tests (`services.rs`). Every test gets a schema of its own (a fresh name, set as the connection's `search_path`),
//! so tests in parallel never see each other's rows; S3 tests get a prefix of their own.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use tackle_fleet::{DatabaseUrl, FleetDb};

mod services;
pub use services::{raw_client_at, services, unique};

pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
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
