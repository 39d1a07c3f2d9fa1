-- Work in flight has an owner. Whoever decides a request, and whoever then
-- carries it out, holds its lease: the store handle (a random token), the
-- process id and the process's start time (so a reused pid is not taken for
-- the holder). Recovery takes over only a request whose holder is gone.
ALTER TABLE approvals ADD COLUMN lease_owner TEXT    NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN lease_pid   INTEGER NOT NULL DEFAULT 0;
ALTER TABLE approvals ADD COLUMN lease_start INTEGER NOT NULL DEFAULT 0;
-- When the decided call started, as the worker reported it (0: not known
-- to have started): an interrupted call that started may have run.
ALTER TABLE approvals ADD COLUMN started_at  INTEGER NOT NULL DEFAULT 0;
