-- Orders to labels (DESIGN §14): a shipment made for an imported order names it, by waybill's
-- order id; the order shows its shipments (shipment_ids) through this index.
ALTER TABLE shipments ADD COLUMN order_id TEXT;
CREATE INDEX shipments_account_order ON shipments (account_id, order_id, created_at, id);
