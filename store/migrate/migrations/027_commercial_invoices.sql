-- An international label has a commercial invoice (commercial_invoice_url), which a
-- label read from its columns (a label list, a cancelled shipment) must know of without its
-- shipment: written by the buy, from the shipment's route. The labels bought before are marked
-- by the Go step of this migration (markCommercialInvoices), which reads their shipments'
-- requests.
ALTER TABLE shipping_labels ADD COLUMN commercial_invoice BOOLEAN NOT NULL DEFAULT FALSE;
