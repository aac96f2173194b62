-- Version 1: sessions with their lease, the per-session event log, the mailbox, the peer
-- registry, and the artifact references with the collector's candidates.

CREATE TABLE sessions (
    id          text PRIMARY KEY,
    -- The seq the next appended event receives; advanced in the appending transaction, so a
    -- rolled-back append leaves no gap.
    next_seq    bigint NOT NULL DEFAULT 1 CHECK (next_seq >= 1),
    owner       text,
    -- Incremented on every claim: a write carrying an older epoch is fenced.
    lease_epoch bigint NOT NULL DEFAULT 0,
    lease_until timestamptz NOT NULL DEFAULT '-infinity'
);

CREATE TABLE events (
    session_id text NOT NULL REFERENCES sessions (id),
    seq        bigint NOT NULL CHECK (seq >= 1),
    idem_key   text,
    payload    jsonb NOT NULL,
    -- CRC-32C of the payload's canonical JSON, checked on every read.
    crc        bigint NOT NULL,
    PRIMARY KEY (session_id, seq),
    UNIQUE (session_id, idem_key)
);

CREATE TABLE messages (
    message_id   text PRIMARY KEY,
    sender       text NOT NULL REFERENCES sessions (id),
    sender_seq   bigint NOT NULL,
    recipient    text NOT NULL REFERENCES sessions (id),
    body         jsonb NOT NULL,
    sent_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    consumed_at  timestamptz,
    consumed_seq bigint
);
CREATE INDEX messages_pending ON messages (recipient, sent_at, message_id)
    WHERE consumed_at IS NULL;

CREATE TABLE peers (
    peer_id        text PRIMARY KEY,
    address        text NOT NULL,
    last_heartbeat timestamptz NOT NULL,
    expires_at     timestamptz NOT NULL
);

CREATE TABLE artifact_refs (
    sha256     text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    session_id text NOT NULL,
    seq        bigint NOT NULL,
    PRIMARY KEY (sha256, session_id, seq)
);

CREATE TABLE gc_candidates (
    sha256    text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    marked_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
