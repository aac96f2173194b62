//! The peer registry: daemons announce themselves with a heartbeat and drop out when it stops.
//!
//! **Key decision:** a row per peer with `last_heartbeat` and `expires_at`, upserted on every
//! beat; a peer is live while `expires_at` is ahead of the database's clock. A daemon that
//! dies simply stops beating. Rejected: LISTEN/NOTIFY presence, which is lost with a
//! connection and says nothing to a daemon that starts later.

use std::time::{Duration, SystemTime};

use crate::{FleetDb, FleetError};

/// A live peer as registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    /// The daemon's id in the fleet.
    pub peer_id: String,
    /// Where peers reach it (as it announced it).
    pub address: String,
    /// The variable, in a caller's environment, holding its bearer token.
    pub token_env: Option<String>,
    /// Its last heartbeat, by the database's clock.
    pub last_heartbeat: SystemTime,
    /// When it drops out unless it beats again.
    pub expires_at: SystemTime,
}

/// The registry of daemons in a fleet database.
#[derive(Debug, Clone)]
pub struct Peers {
    db: FleetDb,
}

impl Peers {
    /// The registry in the fleet database `db`.
    pub fn new(db: &FleetDb) -> Self {
        Self { db: db.clone() }
    }

    /// Registers or refreshes `peer_id` at `address` (its token in a caller's `token_env`),
    /// live for `ttl` from now.
    pub async fn heartbeat(
        &self,
        peer_id: &str,
        address: &str,
        token_env: Option<&str>,
        ttl: Duration,
    ) -> Result<Peer, FleetError> {
        let client = self.db.client().await?;
        let row = client
            .query_one(
                "INSERT INTO peers (peer_id, address, token_env, last_heartbeat, expires_at)
                 VALUES ($1, $2, $3, clock_timestamp(),
                         clock_timestamp() + make_interval(secs => $4))
                 ON CONFLICT (peer_id) DO UPDATE
                    SET address = EXCLUDED.address,
                        token_env = EXCLUDED.token_env,
                        last_heartbeat = EXCLUDED.last_heartbeat,
                        expires_at = EXCLUDED.expires_at
              RETURNING last_heartbeat, expires_at",
                &[&peer_id, &address, &token_env, &ttl.as_secs_f64()],
            )
            .await
            .map_err(FleetError::db("record a heartbeat"))?;
        Ok(Peer {
            peer_id: peer_id.to_owned(),
            address: address.to_owned(),
            token_env: token_env.map(str::to_owned),
            last_heartbeat: row.get(0),
            expires_at: row.get(1),
        })
    }

    /// Every peer whose heartbeat has not expired, by id.
    pub async fn live(&self) -> Result<Vec<Peer>, FleetError> {
        let client = self.db.client().await?;
        let rows = client
            .query(
                "SELECT peer_id, address, token_env, last_heartbeat, expires_at FROM peers
                  WHERE expires_at > clock_timestamp() ORDER BY peer_id",
                &[],
            )
            .await
            .map_err(FleetError::db("list live peers"))?;
        Ok(rows
            .into_iter()
            .map(|row| Peer {
                peer_id: row.get(0),
                address: row.get(1),
                token_env: row.get(2),
                last_heartbeat: row.get(3),
                expires_at: row.get(4),
            })
            .collect())
    }

    /// Removes `peer_id` at once (a clean shutdown); `false` when it was not registered.
    pub async fn leave(&self, peer_id: &str) -> Result<bool, FleetError> {
        let client = self.db.client().await?;
        let removed = client
            .execute("DELETE FROM peers WHERE peer_id = $1", &[&peer_id])
            .await
            .map_err(FleetError::db("remove a peer"))?;
        Ok(removed == 1)
    }

    /// Deletes the rows of expired peers; returns how many.
    pub async fn forget_expired(&self) -> Result<u64, FleetError> {
        let client = self.db.client().await?;
        client
            .execute(
                "DELETE FROM peers WHERE expires_at <= clock_timestamp()",
                &[],
            )
            .await
            .map_err(FleetError::db("forget expired peers"))
    }
}
