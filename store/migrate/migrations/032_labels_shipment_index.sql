-- A label is found by its shipment through shipping_labels' UNIQUE (shipment_id), whose index
-- holds at most one row per shipment; the index on (account_id, shipment_id) added by migration
-- 015 found the same row with a longer key, and cost every buy a write and every bought
-- shipment about 90 bytes. The account_id the queries also give is checked on the row.
DROP INDEX shipping_labels_account_shipment;
