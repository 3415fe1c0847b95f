-- A shipment's quoted rates are one JSON array in shipments.rates, written with the shipment
-- (store.storedRate): one row per shipment instead of one per quote, each with two index
-- entries. shipping_rates keeps the rates bought, which labels and invoice lines refer to.
-- Shipments created before this migration keep their quotes as rows (rates NULL) and are read
-- from there (store.rowRates).
ALTER TABLE shipments ADD COLUMN rates TEXT;
