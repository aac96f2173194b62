-- Version 2: a message is posted on its own (its sender's log records the call that sent
-- it, numbered in the sender's working copy) and delivered by the recipient's
-- `message_accepted` record, whose batch marks it consumed: no sender seq, and the seq of the
-- recipient's record instead.

ALTER TABLE messages ALTER COLUMN sender_seq DROP NOT NULL;
