-- Issue 31 (DESIGN §16). A return label never qualifies for a manifest (manifest.Qualifies):
-- the close-out and the pending count select by shipments.is_return, written when the shipment
-- is created. The rows stored before are marked by the Go step of this migration
-- (markReturns), which reads their requests.
ALTER TABLE shipments ADD COLUMN is_return BOOLEAN NOT NULL DEFAULT FALSE;
