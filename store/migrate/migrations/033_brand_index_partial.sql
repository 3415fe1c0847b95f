-- A shipment list filters by brand only with brands given, never by the empty brand (the
-- filter drops empty values), so the index of shipments by brand keeps only the shipments that
-- have one; a shipment without a brand cost every create an index write and about 100 bytes.
-- The list's WHERE repeats the index's condition (brand <> ''), so SQLite and PostgreSQL can
-- use it.
DROP INDEX shipments_account_brand;
CREATE INDEX shipments_account_brand ON shipments (account_id, brand, created_at, id) WHERE brand <> '';
