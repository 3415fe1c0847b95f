-- A version's outline beside its card: JSON of its name, tracking scheme
-- and services' codes and names (store.cardOutline). Choosing a version, checking tracking
-- ranges, buying, voiding and listing read these few hundred bytes, not a card of megabytes.
-- Versions stored before get theirs when a process first opens the database (fillOutlines);
-- until then they are read from their card.
ALTER TABLE carrier_versions ADD COLUMN outline TEXT;
