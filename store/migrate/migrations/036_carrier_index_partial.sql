-- A shipment has a carrier only once bought; a list filters by carrier only with carriers given,
-- never by none. So the index of shipments by carrier keeps only the shipments that have one:
-- a create no longer writes an entry that its buy then moves, and a shipment never bought costs
-- no entry. The list's WHERE names the index's condition (carrier IS NOT NULL) so that SQLite
-- and PostgreSQL use it. Its Go step writes the index's planner statistics again on SQLite
-- (migration 035), which dropping the index removed.
DROP INDEX shipments_account_carrier;
CREATE INDEX shipments_account_carrier ON shipments (account_id, carrier, created_at, id) WHERE carrier IS NOT NULL;
