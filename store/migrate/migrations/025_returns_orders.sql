-- A return label never qualifies for a manifest (manifest.Qualifies):
-- the close-out and the pending count select by shipments.is_return, written when the shipment
-- is created. The rows stored before are marked by the Go step of this migration
-- (markReturns), which reads their requests.
ALTER TABLE shipments ADD COLUMN is_return BOOLEAN NOT NULL DEFAULT FALSE;
-- An order ships once unless asked (shipping.ShipOrder): a shipment made for an order with
-- "additional": true is another parcel shipped on purpose, and its buy does not check the
-- order's other labels.
ALTER TABLE shipments ADD COLUMN order_additional BOOLEAN NOT NULL DEFAULT FALSE;
