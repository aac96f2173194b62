//! The peer registry of a fleet: in fleet mode a daemon started with `--name` (and no
//! `--hub`) registers in the fleet database's `peers` table, beating as it would at a hub,
//! and `call_peer` finds peers there, so no daemon has to be the hub.
//!
//! An entry holds what a hub's does (the name, the URL, the variable a caller finds the token
//! in), checked the same way ([`super::peers::check`]); the database is as trusted as the
//! user's configuration, which alone names it.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tackle_fleet::{FleetIo, Peers};

use super::peers::{Peer, Registration, check};

/// The fleet database's peer table, reached through the fleet's I/O threads.
pub struct FleetPeers {
    io: Arc<FleetIo>,
    peers: Peers,
}

impl FleetPeers {
    pub fn new(io: Arc<FleetIo>, peers: Peers) -> Self {
        Self { io, peers }
    }

    /// Registers (or renews) `registration`; an error says what is wrong with it or why the
    /// database refused.
    pub async fn beat(&self, registration: &Registration) -> Result<(), String> {
        let (url, ttl) = check(registration)?;
        let peers = self.peers.clone();
        let (name, env) = (registration.name.clone(), registration.token_env.clone());
        self.io
            .call(async move { peers.heartbeat(&name, &url, env.as_deref(), ttl).await })
            .await
            .and_then(|r| r)
            .map(drop)
            .map_err(|e| e.to_string())
    }

    /// The live peers, by name.
    pub async fn live(&self) -> Result<Vec<Peer>, String> {
        let peers = self.peers.clone();
        let live = self
            .io
            .call(async move { peers.live().await })
            .await
            .and_then(|r| r)
            .map_err(|e| format!("the fleet's peer registry could not be read: {e}"))?;
        let now = SystemTime::now();
        Ok(live
            .into_iter()
            .map(|p| Peer {
                name: p.peer_id,
                url: p.address,
                token_env: p.token_env,
                expires_in_seconds: p
                    .expires_at
                    .duration_since(now)
                    .unwrap_or(Duration::ZERO)
                    .as_secs(),
            })
            .collect())
    }

    /// Takes `name` out of the registry at once (a clean stop), waiting briefly.
    pub fn leave(&self, name: &str) {
        let peers = self.peers.clone();
        let name = name.to_owned();
        let _ = self.io.run(async move {
            let _ = tokio::time::timeout(Duration::from_secs(2), peers.leave(&name)).await;
        });
    }
}
