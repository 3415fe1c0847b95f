-- Stored responses: each shipment and label keeps its rendered JSON, rewritten in the
-- transaction of every change to it (store.rerender), so GETs and list pages read one column.
ALTER TABLE shipments ADD COLUMN rendered TEXT;
ALTER TABLE shipping_labels ADD COLUMN rendered TEXT;
-- A list page's labels are looked up by (account_id, shipment_id), not by every label of the account.
CREATE INDEX shipping_labels_account_shipment ON shipping_labels (account_id, shipment_id);
