-- Strikes against a self-coded tool version: a call that failed (error,
-- timeout, limit). At the threshold the version is quarantined.
CREATE TABLE strikes (
	id      INTEGER PRIMARY KEY AUTOINCREMENT,
	tool    TEXT    NOT NULL,
	version INTEGER NOT NULL,
	at      INTEGER NOT NULL,
	reason  TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX strikes_tool ON strikes (tool, version);
