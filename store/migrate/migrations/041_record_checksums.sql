-- The legible record's checksums: a shipment's request (with its messages) and each quote carry
-- a CRC-32C of their stored values, checked whenever the store reads them, so that a value
-- changed outside waybill is an error naming its shipment. The Go step (recordChecksums) fills
-- them for the rows stored before.
ALTER TABLE shipment_requests ADD COLUMN crc BIGINT;
ALTER TABLE shipment_quotes ADD COLUMN crc BIGINT;
