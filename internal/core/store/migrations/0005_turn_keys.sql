-- A message may carry a key that names it across restarts (a Telegram
-- update id, an API client's Idempotency-Key): its turn runs to its end
-- once. A second delivery of the message finds the turn its key began and
-- gets that turn's outcome; a turn a crash cut short is run again, a
-- bounded number of times. '' is a message without a key.
ALTER TABLE turns ADD COLUMN request_key TEXT NOT NULL DEFAULT '';
CREATE INDEX turns_key ON turns (chat, request_key, id) WHERE request_key != '';
-- What a turn filed for the owner, asked when its message comes again.
CREATE INDEX approvals_turn ON approvals (turn);
