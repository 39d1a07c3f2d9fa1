-- Schedules (issue 17): turns the owner approved to run at set times, and
-- the inbox where their results wait when no Telegram chat takes them.
--
-- spec is the `when` in canonical form (package schedule), read in
-- timezone (an IANA name, or 'Local': the daemon's own). chat is where
-- the schedule was asked for; each run is a turn of chat 'sched:<id>'.
-- next_due is the run the schedule waits for, UTC unix nanoseconds (NULL
-- when paused or removed); a run in the past when the daemon starts runs
-- once, late. approval is the request the owner approved: one schedule
-- per approved call. Times are UTC unix nanoseconds.
CREATE TABLE schedules (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	spec         TEXT    NOT NULL,
	timezone     TEXT    NOT NULL,
	prompt       TEXT    NOT NULL,
	chat         TEXT    NOT NULL DEFAULT '',
	created_at   INTEGER NOT NULL,
	approval     TEXT    NOT NULL DEFAULT '',
	approved_by  TEXT    NOT NULL DEFAULT '',
	state        TEXT    NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused', 'removed')),
	next_due     INTEGER,
	last_run_at  INTEGER,
	last_outcome TEXT    NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX schedules_approval ON schedules (approval) WHERE approval != '';
CREATE INDEX schedules_due ON schedules (next_due) WHERE state = 'active';

-- What a scheduled run said, for the owner to read in the terminal or
-- through the API (GET /api/inbox) when no Telegram chat took it.
CREATE TABLE inbox (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	schedule_id INTEGER NOT NULL DEFAULT 0,
	turn        INTEGER NOT NULL DEFAULT 0,
	text        TEXT    NOT NULL,
	created_at  INTEGER NOT NULL,
	read_at     INTEGER
);
CREATE INDEX inbox_unread ON inbox (id) WHERE read_at IS NULL;
