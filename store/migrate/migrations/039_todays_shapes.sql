-- Every stored row in the shape the running service writes today, so that it reads no other:
-- its Go step (store/migrate/today.go, todaysShapes) repacks the renderings still packed in
-- formats 3 and 4 as format 5, fills the outlines of carrier versions stored before outlines
-- were kept, and rewrites line items' rate metadata of the shape written before the real
-- product's field names were adopted.
-- An Idempotency-Key recorded without an answer was claimed by a purchase that neither recorded
-- nor released it (a process that stopped between the two, before purchases recorded their key
-- with their answer): no purchase was recorded under it, so it is forgotten, as its release would
-- have forgotten it.
DELETE FROM idempotency_keys WHERE response = '';
