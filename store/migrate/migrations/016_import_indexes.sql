-- The import claim reads order_imports_claim (status, received_at, id) for the queue and for
-- expired leases alike: PROCESSING rows are only the imports in flight, so filtering them by
-- claimed_until is cheap. The older (status, claimed_until, received_at) index only cost every
-- enqueue, claim and completion one more index write.
DROP INDEX order_imports_due;
