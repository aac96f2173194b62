-- Version 2: a message is posted on its own (its sender's log records the call that sent
-- it, numbered in the sender's working copy) and delivered by the recipient's
-- `message_accepted` record, whose batch marks it consumed: no sender seq, and the seq of the
-- recipient's record instead.

ALTER TABLE messages ALTER COLUMN sender_seq DROP NOT NULL;

-- The peer registry holds what a hub's does: the variable, in a caller's environment, that
-- holds the peer's token (never the token).
ALTER TABLE peers ADD COLUMN token_env text;

-- A session's subagents are found by the parent their first record names (a tree taken on
-- another machine finds its children here).
CREATE INDEX events_parent ON events ((payload->>'parent')) WHERE seq = 1;
