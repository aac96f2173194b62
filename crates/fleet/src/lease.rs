//! Leases: which daemon runs a session, until when, and the fencing epoch its writes carry.
//!
//! **Key decision:** a claim is one conditional `UPDATE` that succeeds only on a session with no
//! owner or an expired lease, and increments `lease_epoch` every time it succeeds. Every write
//! a daemon makes for the session names the epoch it was granted ([`crate::PgEventLog::append`]
//! checks it in the same statement that assigns the seq), so a daemon that was paused or cut
//! off past its expiry and comes back cannot write after another took over: its epoch is stale.
//! Expiry is measured by the database's clock alone, so daemons' clocks may disagree. Rejected:
//! advisory locks held on a connection, which vanish with the connection and give a write that
//! was already under way no way to tell it lost them.

use std::time::{Duration, SystemTime};

use deadpool_postgres::GenericClient;

use crate::{FleetDb, FleetError};

/// A granted lease: the session, its owner, the fencing epoch and the expiry it was granted
/// with. Hold it to write; a later renewal returns a new one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    session: String,
    owner: String,
    epoch: i64,
    until: SystemTime,
}

impl Lease {
    /// The leased session.
    pub fn session(&self) -> &str {
        &self.session
    }

    /// Who holds it.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// The fencing epoch every write under this lease carries.
    pub fn epoch(&self) -> i64 {
        self.epoch
    }

    /// When it expires by the database's clock, unless renewed.
    pub fn until(&self) -> SystemTime {
        self.until
    }
}

/// What a claim got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The session is the claimant's, under a new epoch.
    Granted(Lease),
    /// Another owner's lease is live; claim again after `until`.
    Held { owner: String, until: SystemTime },
}

/// Claims, renews and releases session leases.
#[derive(Debug, Clone)]
pub struct Leases {
    db: FleetDb,
}

impl Leases {
    /// Leases in the fleet database `db`.
    pub fn new(db: &FleetDb) -> Self {
        Self { db: db.clone() }
    }

    /// Claims `session` for `owner` for `ttl`, if it has no owner or its lease has expired.
    /// Each grant increments the epoch, so the previous holder's writes are fenced from now
    /// on. A live lease, even `owner`'s own, is [`Claim::Held`]: an owner id names one daemon
    /// incarnation, and a restarted daemon waits out its predecessor's lease.
    pub async fn claim(
        &self,
        session: &str,
        owner: &str,
        ttl: Duration,
    ) -> Result<Claim, FleetError> {
        let client = self.db.client().await?;
        let claim = client
            .prepare_cached(
                "UPDATE sessions
                    SET owner = $2, lease_epoch = lease_epoch + 1,
                        lease_until = clock_timestamp() + make_interval(secs => $3)
                  WHERE id = $1 AND (owner IS NULL OR lease_until <= clock_timestamp())
              RETURNING lease_epoch, lease_until",
            )
            .await
            .map_err(FleetError::db("prepare a lease claim"))?;
        let held = client
            .prepare_cached("SELECT owner, lease_until FROM sessions WHERE id = $1")
            .await
            .map_err(FleetError::db("prepare a lease lookup"))?;
        // A release between the refused claim and the lookup leaves no owner to report:
        // claim again.
        loop {
            if let Some(row) = client
                .query_opt(&claim, &[&session, &owner, &ttl.as_secs_f64()])
                .await
                .map_err(FleetError::db("claim a session lease"))?
            {
                return Ok(Claim::Granted(Lease {
                    session: session.to_owned(),
                    owner: owner.to_owned(),
                    epoch: row.get(0),
                    until: row.get(1),
                }));
            }
            let row = client
                .query_opt(&held, &[&session])
                .await
                .map_err(FleetError::db("look up a session lease"))?
                .ok_or_else(|| FleetError::UnknownSession {
                    session: session.to_owned(),
                })?;
            if let Some(owner) = row.get::<_, Option<String>>(0) {
                return Ok(Claim::Held {
                    owner,
                    until: row.get(1),
                });
            }
        }
    }

    /// Extends `lease` to `ttl` from now and returns the renewed lease (same epoch).
    /// [`FleetError::Fenced`] when another claim took the session since.
    pub async fn renew(&self, lease: &Lease, ttl: Duration) -> Result<Lease, FleetError> {
        let client = self.db.client().await?;
        let renew = client
            .prepare_cached(
                "UPDATE sessions
                    SET lease_until = clock_timestamp() + make_interval(secs => $4)
                  WHERE id = $1 AND owner = $2 AND lease_epoch = $3
              RETURNING lease_until",
            )
            .await
            .map_err(FleetError::db("prepare a lease renewal"))?;
        match client
            .query_opt(
                &renew,
                &[
                    &lease.session,
                    &lease.owner,
                    &lease.epoch,
                    &ttl.as_secs_f64(),
                ],
            )
            .await
            .map_err(FleetError::db("renew a session lease"))?
        {
            Some(row) => Ok(Lease {
                until: row.get(0),
                ..lease.clone()
            }),
            None => Err(refusal(&client, lease).await),
        }
    }

    /// Who holds `session`'s live lease, by the database's clock; `None` when nobody does.
    /// [`FleetError::UnknownSession`] when the database has no such session.
    pub async fn holder(&self, session: &str) -> Result<Option<String>, FleetError> {
        let client = self.db.client().await?;
        let row = client
            .query_opt(
                "SELECT CASE WHEN lease_until > clock_timestamp() THEN owner END
                   FROM sessions WHERE id = $1",
                &[&session],
            )
            .await
            .map_err(FleetError::db("look up a session's lease"))?;
        match row {
            Some(row) => Ok(row.get(0)),
            None => Err(FleetError::UnknownSession {
                session: session.to_owned(),
            }),
        }
    }

    /// Gives the session up, so the next claim need not wait for expiry.
    /// [`FleetError::Fenced`] when another claim took it already.
    pub async fn release(&self, lease: Lease) -> Result<(), FleetError> {
        let client = self.db.client().await?;
        let released = client
            .execute(
                "UPDATE sessions SET owner = NULL, lease_until = '-infinity'
                  WHERE id = $1 AND owner = $2 AND lease_epoch = $3",
                &[&lease.session, &lease.owner, &lease.epoch],
            )
            .await
            .map_err(FleetError::db("release a session lease"))?;
        if released == 1 {
            Ok(())
        } else {
            Err(refusal(&client, &lease).await)
        }
    }
}

/// Why a write under `lease` matched no row: the session is unknown, or fenced.
pub(crate) async fn refusal(client: &impl GenericClient, lease: &Lease) -> FleetError {
    match client
        .query_opt(
            "SELECT lease_epoch, owner FROM sessions WHERE id = $1",
            &[&lease.session],
        )
        .await
    {
        Ok(Some(row)) => FleetError::Fenced {
            session: lease.session.clone(),
            held: lease.epoch,
            current: row.get(0),
            owner: row
                .get::<_, Option<String>>(1)
                .unwrap_or_else(|| "none".to_owned()),
        },
        Ok(None) => FleetError::UnknownSession {
            session: lease.session.clone(),
        },
        Err(e) => FleetError::db("look up a fenced session")(e),
    }
}
