// Package webhook holds waybill's outgoing webhooks: subscriptions, event records, the
// delivery worker, outgoing signatures and the guard that keeps callbacks off private networks.
//
// Events are recorded by the store in the same transaction as the change that causes them
// (an outbox); the Worker delivers them at least once, signed twice: the compat
// X-Webhook-Signature (hex HMAC-SHA256 keyed by the secret text) and Standard Webhooks
// (webhook-id, webhook-timestamp, webhook-signature keyed by the base64-decoded secret).
package webhook

import (
	"encoding/json"
	"errors"
	"slices"
	"time"
)

// Topics a subscription can name.
const (
	TopicLabelPurchased       = "LABEL_PURCHASED"
	TopicLabelInTransit       = "LABEL_IN_TRANSIT"
	TopicLabelVoided          = "LABEL_VOIDED"
	TopicLabelTrackingUpdated = "LABEL_TRACKING_UPDATED"
	TopicZIPCoverageUpdated   = "ZIP_COVERAGE_UPDATED"
	// TopicManifestCreated: a close-out created a manifest; the payload is the manifest as
	// GET /manifests/{id} answers it.
	TopicManifestCreated = "MANIFEST_CREATED"
	// TopicBatchCompleted: a batch finished its items; the payload is the batch as GET
	// /batches/{id} answers it.
	TopicBatchCompleted = "BATCH_COMPLETED"
)

// Topics lists every topic.
var Topics = []string{TopicLabelPurchased, TopicLabelInTransit, TopicLabelVoided,
	TopicLabelTrackingUpdated, TopicZIPCoverageUpdated, TopicManifestCreated, TopicBatchCompleted}

// ValidTopic reports whether topic is one of Topics.
func ValidTopic(topic string) bool { return slices.Contains(Topics, topic) }

// Event record statuses.
const (
	StatusPending   = "PENDING"
	StatusDelivered = "DELIVERED"
	StatusFailed    = "FAILED"
)

// ValidStatus reports whether s is an event record status.
func ValidStatus(s string) bool {
	return s == StatusPending || s == StatusDelivered || s == StatusFailed
}

// Subscription is one callback URL subscribed to one topic. Secret is shown only on create.
type Subscription struct {
	ID        string
	AccountID string
	URL       string
	Topic     string
	IsActive  bool
	Secret    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Event is one event record: an event as queued for, and delivered to, one subscription. The
// same event id is shared by the records of every subscription the change reached (it is the
// Standard Webhooks message id), so a record is identified by (SubscriptionID, ID).
type Event struct {
	ID                 string
	AccountID          string
	SubscriptionID     string
	Topic              string
	URL                string // the subscription's URL when the event was recorded
	HappenedAt         time.Time
	Status             string
	Attempts           int
	LastAttemptAt      *time.Time
	NextAttemptAt      *time.Time
	LastResponseStatus *int
	LastError          *string // why the last attempt failed (see Describe); nil when none
	Payload            json.RawMessage
}

// Body is the exact JSON body POSTed to a subscription: compact, fields in this order. Its
// status is the record's status as sent: PENDING for every attempt, since a record is
// DELIVERED or FAILED only once the attempt's outcome is known.
func Body(e Event) []byte {
	payload := e.Payload
	if len(payload) == 0 {
		payload = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		ID                    string          `json:"id"`
		Topic                 string          `json:"topic"`
		WebhookSubscriptionID string          `json:"webhook_subscription_id"`
		HappenedAt            string          `json:"happened_at"`
		Status                string          `json:"status"`
		Payload               json.RawMessage `json:"payload"`
	}{e.ID, e.Topic, e.SubscriptionID, e.HappenedAt.UTC().Format(timeLayout), e.Status, payload})
	return b
}

// timeLayout is how the API writes timestamps: RFC 3339 in UTC with exactly six fractional
// digits.
const timeLayout = "2006-01-02T15:04:05.000000Z07:00"

// ErrInactive is a redelivery asked of an inactive subscription, whose records are parked.
var ErrInactive = errors.New("invalid state: the webhook subscription is not active")

// FieldError is a subscription field that fails validation: the field, a stable code and a
// message, as a validation error's fields show it.
type FieldError struct {
	Field, Code, Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }
