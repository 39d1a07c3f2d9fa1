-- Owner approvals: a RISKY call (or, later, a promotion) waiting for the
-- owner, parked with everything needed to resume the turn in a new worker.
-- state: pending -> approved -> running -> done, or pending -> denied -> done,
-- or pending -> expired. Each step is one UPDATE that must change one row.

CREATE TABLE approvals (
	id          TEXT    PRIMARY KEY,          -- unguessable (128 random bits)
	kind        TEXT    NOT NULL,             -- 'tool_call'
	chat        TEXT    NOT NULL,
	turn        INTEGER NOT NULL,             -- the turn that parked
	tool        TEXT    NOT NULL,
	args        TEXT    NOT NULL,             -- canonical JSON, exactly what runs
	args_hash   TEXT    NOT NULL,
	summary     TEXT    NOT NULL,             -- the daemon's rendering the owner reads
	pending     TEXT    NOT NULL,             -- JSON contracts.Pending
	state       TEXT    NOT NULL DEFAULT 'pending',
	created_at  INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL,
	decided_at  INTEGER,
	decided_by  TEXT    NOT NULL DEFAULT '',
	outcome     TEXT    NOT NULL DEFAULT '',  -- what happened: executed ok/failed, denied, expired, interrupted
	resumed_turn INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX approvals_state ON approvals (state, expires_at);
CREATE INDEX approvals_chat ON approvals (chat, created_at);
