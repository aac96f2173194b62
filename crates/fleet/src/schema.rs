//! The fleet schema's versioned migrations, applied at start.
//!
//! **Key decision:** every start runs the same transaction: take a transaction-scoped advisory
//! lock (so daemons starting together migrate one at a time), read the recorded version,
//! refuse a version newer than [`SCHEMA_VERSION`], apply the missing migrations in order and
//! record each. DDL is transactional in PostgreSQL, so a failed migration leaves the schema as
//! it was. Rejected: `CREATE TABLE IF NOT EXISTS` without versions, which cannot change a table
//! that exists and cannot tell an older binary that the schema moved on.

use deadpool_postgres::Object;

use crate::FleetError;

/// One migration: the version it brings the schema to and its SQL.
#[derive(Debug)]
struct Migration {
    version: i32,
    name: &'static str,
    sql: &'static str,
}

/// In order; the last one's version is [`SCHEMA_VERSION`].
const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "sessions, events, messages, peers, artifact references",
        sql: include_str!("migrations/0001_fleet.sql"),
    },
    Migration {
        version: 2,
        name: "messages posted on their own, delivered by the recipient's record; peers' token variables; subagents by parent",
        sql: include_str!("migrations/0002_posted_messages.sql"),
    },
];

/// The schema version this binary writes and reads.
pub const SCHEMA_VERSION: i32 = 2;

/// The table recording applied migrations, in the connection's current schema.
pub const VERSION_TABLE: &str = "tackle_fleet_schema";

/// What a start-up migration found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaReport {
    /// The version found before migrating (0 for an empty database).
    pub found: i32,
    /// The versions applied now, in order (empty when the schema was current).
    pub applied: Vec<i32>,
}

/// Brings the schema of `client`'s current search path to [`SCHEMA_VERSION`].
pub(crate) async fn migrate(client: &mut Object) -> Result<SchemaReport, FleetError> {
    debug_assert_eq!(
        MIGRATIONS.last().map(|m| m.version),
        Some(SCHEMA_VERSION),
        "SCHEMA_VERSION names the last migration"
    );
    let tx = client
        .transaction()
        .await
        .map_err(FleetError::db("begin the schema migration"))?;
    // One migrator per schema at a time; the key is the schema's name, so test schemas in
    // one database do not wait for each other.
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext('tackle-fleet-schema:' || current_schema()))",
        &[],
    )
    .await
    .map_err(FleetError::db("lock the schema for migration"))?;
    tx.batch_execute(&format!(
        "CREATE TABLE IF NOT EXISTS {VERSION_TABLE} (
             version    integer PRIMARY KEY,
             name       text NOT NULL,
             applied_at timestamptz NOT NULL DEFAULT clock_timestamp()
         )"
    ))
    .await
    .map_err(FleetError::db("create the schema version table"))?;
    let found: i32 = tx
        .query_one(
            &format!("SELECT coalesce(max(version), 0) FROM {VERSION_TABLE}"),
            &[],
        )
        .await
        .map_err(FleetError::db("read the schema version"))?
        .get(0);
    if found > SCHEMA_VERSION {
        return Err(FleetError::SchemaTooNew {
            found,
            known: SCHEMA_VERSION,
        });
    }
    let mut applied = Vec::new();
    for migration in MIGRATIONS.iter().filter(|m| m.version > found) {
        tx.batch_execute(migration.sql)
            .await
            .map_err(FleetError::db("apply a schema migration"))?;
        tx.execute(
            &format!("INSERT INTO {VERSION_TABLE} (version, name) VALUES ($1, $2)"),
            &[&migration.version, &migration.name],
        )
        .await
        .map_err(FleetError::db("record a schema migration"))?;
        applied.push(migration.version);
    }
    tx.commit()
        .await
        .map_err(FleetError::db("commit the schema migration"))?;
    Ok(SchemaReport { found, applied })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_numbered_from_one_without_gaps() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version, i as i32 + 1, "{}", m.name);
        }
        assert_eq!(MIGRATIONS.last().unwrap().version, SCHEMA_VERSION);
    }
}
