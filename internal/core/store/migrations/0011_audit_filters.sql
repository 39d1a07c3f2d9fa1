-- The audit trail's kind and outcome filters (issue 16): a page of one
-- kind, or of the failures, is a range search however rare they are,
-- never a walk back through the whole trail. Failures are few, so their
-- index is partial; a query selects it by writing "ok = 0" as such.
CREATE INDEX audit_kind ON audit (kind, id);
CREATE INDEX audit_failed ON audit (id) WHERE ok = 0;
