package webhook

import (
	"context"
)

// Subscriptions is what the subscription use cases need from persistence (implemented by
// *store.DB). Each method runs in one transaction with the subscription locked, so the
// decision it is given sees the subscription as it is stored.
type Subscriptions interface {
	// UpdateWebhookSubscription passes the account's subscription id to edit and stores the
	// subscription edit returns, applying the Retarget to its PENDING event records.
	UpdateWebhookSubscription(ctx context.Context, accountID, id string, edit func(Subscription) (Subscription, Retarget)) (Subscription, error)
	// RedeliverWebhookEvent queues the subscription's event record again — PENDING, due now,
	// a fresh retry schedule, the subscription's current URL, no lease — and commits only if
	// allow accepts the subscription.
	RedeliverWebhookEvent(ctx context.Context, accountID, subscriptionID, eventID string, allow func(Subscription) error) (Event, error)
}

// Change is an edit of a subscription (PATCH /webhooks/{id}); nil leaves a field as it is.
type Change struct {
	URL    *string
	Active *bool
}

// Retarget is what an edit of a subscription does to its PENDING event records.
type Retarget struct {
	// URL, when not nil, is where the pending records go now: a new URL applies to the
	// records not yet delivered, not only to events to come.
	URL *string
	// Due says whether the pending records are due. They are exactly while the subscription is
	// active: an inactive subscription's records are parked, off the delivery loop, and due
	// again (at their next attempt) once it is reactivated.
	Due bool
}

// Apply returns s changed, and what the change does to its pending records.
func (c Change) Apply(s Subscription) (Subscription, Retarget) {
	var r Retarget
	if c.URL != nil {
		s.URL = *c.URL
		r.URL = &s.URL
	}
	if c.Active != nil {
		s.IsActive = *c.Active
	}
	r.Due = s.IsActive
	return s, r
}

// Update edits the account's subscription id and retargets its pending records.
func Update(ctx context.Context, st Subscriptions, accountID, id string, c Change) (Subscription, error) {
	return st.UpdateWebhookSubscription(ctx, accountID, id, c.Apply)
}

// Redeliver queues an event record of the account's subscription again, to be delivered
// afresh to the subscription's current URL. The subscription must be active: an inactive
// one's records are parked, and a redelivery would never be made.
func Redeliver(ctx context.Context, st Subscriptions, accountID, subscriptionID, eventID string) (Event, error) {
	return st.RedeliverWebhookEvent(ctx, accountID, subscriptionID, eventID, redeliverable)
}

// redeliverable refuses to queue again the records of an inactive subscription.
func redeliverable(s Subscription) error {
	if !s.IsActive {
		return ErrInactive
	}
	return nil
}
