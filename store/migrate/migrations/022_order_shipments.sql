-- Orders to labels: a shipment made for an imported order names it, by waybill's
-- order id; the order shows its shipments (shipment_ids) through this index. It is partial:
-- most shipments name no order, and an entry for each would be written for nothing.
ALTER TABLE shipments ADD COLUMN order_id TEXT;
CREATE INDEX shipments_account_order ON shipments (account_id, order_id, created_at, id) WHERE order_id IS NOT NULL;
