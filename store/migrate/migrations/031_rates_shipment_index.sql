-- Since migration 017 shipping_rates holds only the rates bought, found by their id (a label's
-- shipping_rate_id); only migration 028 still read them by shipment, once. The index on
-- (shipment_id, position) cost every buy a write and every bought shipment about 50 bytes.
DROP INDEX shipping_rates_shipment;
