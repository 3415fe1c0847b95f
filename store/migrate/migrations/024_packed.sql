-- A shipment's rendering, its request and the cents of its quotes are stored as one
-- packed value (store/packed.go), and a label's rendering too; shipments.rendered, .rates and
-- .request and shipping_labels.rendered are no longer written (rows stored before keep them
-- until their next change, and are read from them).
ALTER TABLE shipments ADD COLUMN packed BYTEA;
ALTER TABLE shipping_labels ADD COLUMN packed BYTEA;
