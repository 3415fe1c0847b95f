-- Fair, cheap webhook delivery. due_at is when a record may next be leased: set while it is
-- PENDING on an active subscription (next_attempt_at, or the end of the lease while a worker
-- holds it), NULL once DELIVERED or FAILED and while its subscription is inactive. The
-- delivery loop reads only the partial index below, so events parked on inactive
-- subscriptions cost it nothing, and it walks that index account by account.
ALTER TABLE webhook_events ADD COLUMN due_at BIGINT;
UPDATE webhook_events SET due_at = next_attempt_at
    WHERE status = 'PENDING'
      AND subscription_id IN (SELECT id FROM webhook_subscriptions WHERE is_active = TRUE);
CREATE INDEX webhook_events_due_account ON webhook_events (account_id, due_at, subscription_id, id)
    WHERE due_at IS NOT NULL;
DROP INDEX webhook_events_due;
