-- Budgets (issue 17): who began a turn, what each model call cost in
-- tokens, and which spent budgets the owner was told about.
--
-- A turn's origin is 'owner' (a message, a decision) or the kind of
-- self-driven turn that began it ('schedule'); weight is its cost weight
-- against the daily budget of self-driven turns (0 for the owner's).
ALTER TABLE turns ADD COLUMN origin TEXT NOT NULL DEFAULT 'owner';
ALTER TABLE turns ADD COLUMN weight INTEGER NOT NULL DEFAULT 0;
CREATE INDEX turns_self ON turns (started_at) WHERE origin != 'owner';

-- The usage ledger: one row per model call the daemon served, with the
-- model that answered it, written when the answer came (a turn that later
-- fails still spent it). Times are UTC unix nanoseconds.
CREATE TABLE usage (
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	at            INTEGER NOT NULL,
	chat          TEXT    NOT NULL DEFAULT '',
	turn          INTEGER NOT NULL DEFAULT 0,
	origin        TEXT    NOT NULL DEFAULT 'owner',
	provider      TEXT    NOT NULL DEFAULT '',
	model         TEXT    NOT NULL DEFAULT '',
	input_tokens  INTEGER NOT NULL DEFAULT 0,
	output_tokens INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX usage_at ON usage (at);
-- The turns before the ledger, one row each, with the model they recorded.
INSERT INTO usage (at, chat, turn, origin, provider, model, input_tokens, output_tokens)
	SELECT COALESCE(ended_at, started_at), chat, id, 'owner', provider, model, input_tokens, output_tokens
	FROM turns WHERE input_tokens > 0 OR output_tokens > 0 ORDER BY id;

-- A spent budget the owner was told about, once per budget and period
-- ('daily_turns', '2026-03-14').
CREATE TABLE budget_notices (
	budget TEXT    NOT NULL,
	period TEXT    NOT NULL,
	at     INTEGER NOT NULL,
	PRIMARY KEY (budget, period)
);
