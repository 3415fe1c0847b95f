package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
	"github.com/waybill/waybill/webhook"
)

// webhookState is the webhooks' part of the API: the URL guard's resolver and the delivery worker.
type webhookState struct {
	// resolver resolves subscription hosts for the private-address check (tests replace it).
	resolver webhook.Resolver
	worker   *webhook.Worker
}

func (a *API) setupWebhooks() error {
	w := &webhook.Worker{
		Store:        meteredWebhookStore{a.db, a.metrics},
		Schedule:     a.cfg.WebhookRetrySchedule,
		Now:          func() time.Time { return a.db.Now() },
		Log:          a.workerLog("webhook_delivery"),
		AllowPrivate: a.cfg.WebhookAllowPrivate,
	}
	a.webhooks = &webhookState{worker: w}
	a.workers = append(a.workers, worker{name: "webhook_delivery", run: w.Run, drain: w.Drain})
	return nil
}

// subscriptionJSON is a subscription as the API shows it; the secret only on create.
type subscriptionJSON struct {
	ID        string `json:"id"`
	URL       string `json:"url"`
	Topic     string `json:"topic"`
	IsActive  bool   `json:"is_active"`
	Secret    string `json:"secret,omitempty"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

func subscriptionView(s webhook.Subscription) subscriptionJSON {
	return subscriptionJSON{ID: s.ID, URL: s.URL, Topic: s.Topic, IsActive: s.IsActive, Secret: s.Secret,
		CreatedAt: shipping.FormatTime(s.CreatedAt), UpdatedAt: shipping.FormatTime(s.UpdatedAt)}
}

// eventJSON is an event record as the API shows it.
type eventJSON struct {
	ID                    string          `json:"id"`
	Topic                 string          `json:"topic"`
	WebhookSubscriptionID string          `json:"webhook_subscription_id"`
	URL                   string          `json:"url"`
	HappenedAt            string          `json:"happened_at"`
	Status                string          `json:"status"`
	Attempts              int             `json:"attempts"`
	LastAttemptAt         *string         `json:"last_attempt_at"`
	NextAttemptAt         *string         `json:"next_attempt_at"`
	LastResponseStatus    *int            `json:"last_response_status"`
	LastError             *string         `json:"last_error"`
	Payload               json.RawMessage `json:"payload"`
}

func eventView(e webhook.Event) eventJSON {
	opt := func(t *time.Time) *string {
		if t == nil {
			return nil
		}
		s := shipping.FormatTime(*t)
		return &s
	}
	return eventJSON{ID: e.ID, Topic: e.Topic, WebhookSubscriptionID: e.SubscriptionID, URL: e.URL,
		HappenedAt: shipping.FormatTime(e.HappenedAt), Status: e.Status, Attempts: e.Attempts,
		LastAttemptAt: opt(e.LastAttemptAt), NextAttemptAt: opt(e.NextAttemptAt),
		LastResponseStatus: e.LastResponseStatus, LastError: e.LastError, Payload: e.Payload}
}

// invalidWebhook answers a webhook request body that fails validation, a refused URL included,
// 400 validation_failed with its fields; other errors pass unchanged.
func invalidWebhook(err error) error {
	var ve *shipping.ValidationError
	if errors.As(err, &ve) {
		return &Error{Status: http.StatusBadRequest, Code: "validation_failed", Message: "the request failed validation", Fields: ve.Fields}
	}
	return err
}

// checkWebhookURL validates a subscription URL, refusing private targets unless allowed; a
// refused URL is a *shipping.ValidationError.
func (a *API) checkWebhookURL(ctx context.Context, raw string) error {
	err := webhook.CheckURL(ctx, "url", raw, a.cfg.WebhookAllowPrivate, a.webhooks.resolver)
	var fe *webhook.FieldError
	if errors.As(err, &fe) {
		return &shipping.ValidationError{Fields: []shipping.FieldError{{Field: fe.Field, Code: fe.Code, Message: fe.Message}}}
	}
	return err
}

// createWebhook: POST /webhooks {url, topic, is_active?}. The secret is shown only here.
func (a *API) createWebhook(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		URL      *string `json:"url"`
		Topic    *string `json:"topic"`
		IsActive *bool   `json:"is_active"`
	}
	if err := readJSON(w, r, &body); err != nil {
		return invalidWebhook(err)
	}
	var v shipping.ValidationError
	if body.URL == nil {
		v.Add("url", "required", "is required")
	} else if err := a.checkWebhookURL(r.Context(), *body.URL); err != nil {
		v.Fields = append(v.Fields, err.(*shipping.ValidationError).Fields...)
	}
	switch {
	case body.Topic == nil || *body.Topic == "":
		v.Add("topic", "required", "is required")
	case !webhook.ValidTopic(*body.Topic):
		v.Add("topic", "invalid", "must be one of "+strings.Join(webhook.Topics, ", "))
	}
	if err := v.Err(); err != nil {
		return invalidWebhook(err)
	}
	active := body.IsActive == nil || *body.IsActive
	s, err := a.db.CreateWebhookSubscription(r.Context(), accountID(r), *body.URL, *body.Topic, active)
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, subscriptionView(s))
	return nil
}

// listWebhooks: GET /webhooks, newest first.
func (a *API) listWebhooks(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r.URL.Query())
	if err != nil {
		return err
	}
	l, err := a.db.ListWebhookSubscriptions(r.Context(), accountID(r), p)
	if err != nil {
		return err
	}
	data := make([]subscriptionJSON, len(l.Items))
	for i, s := range l.Items {
		data[i] = subscriptionView(s)
	}
	writeList(w, data, offsetMeta(p, l))
	return nil
}

// getWebhook: GET /webhooks/{id}.
func (a *API) getWebhook(w http.ResponseWriter, r *http.Request) error {
	s, err := a.db.WebhookSubscription(r.Context(), accountID(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, subscriptionView(s))
	return nil
}

// updateWebhook: PATCH /webhooks/{id} {url?, is_active?}.
func (a *API) updateWebhook(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		URL      *string `json:"url"`
		IsActive *bool   `json:"is_active"`
	}
	if err := readJSON(w, r, &body); err != nil {
		return invalidWebhook(err) // url and is_active cannot be cleared: null is refused
	}
	// An unknown id is a 404 before the body's values are judged.
	if _, err := a.db.WebhookSubscription(r.Context(), accountID(r), r.PathValue("id")); err != nil {
		return err
	}
	if body.URL != nil {
		if err := a.checkWebhookURL(r.Context(), *body.URL); err != nil {
			return invalidWebhook(err)
		}
	}
	s, err := webhook.Update(r.Context(), a.db, accountID(r), r.PathValue("id"), webhook.Change{URL: body.URL, Active: body.IsActive})
	if err != nil {
		return err
	}
	if s.IsActive {
		a.webhooks.worker.Notify() // pending records of a reactivated subscription are due
	}
	writeData(w, http.StatusOK, subscriptionView(s))
	return nil
}

// deleteWebhook: DELETE /webhooks/{id}, with its event records.
func (a *API) deleteWebhook(w http.ResponseWriter, r *http.Request) error {
	if err := readOptionalEmpty(w, r); err != nil {
		return err
	}
	if err := a.db.DeleteWebhookSubscription(r.Context(), accountID(r), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// listWebhookEvents: GET /webhooks/{id}/events[?status=PENDING|DELIVERED|FAILED], newest first.
func (a *API) listWebhookEvents(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	p, err := parsePage(q)
	if err != nil {
		return err
	}
	status := q.Get("status")
	if q.Has("status") && !webhook.ValidStatus(status) {
		return invalidParameter("status", "status must be one of PENDING, DELIVERED, FAILED")
	}
	l, err := a.db.ListWebhookEvents(r.Context(), accountID(r), r.PathValue("id"), status, p)
	if err != nil {
		return err
	}
	data := make([]eventJSON, len(l.Items))
	for i, e := range l.Items {
		data[i] = eventView(e)
	}
	writeList(w, data, offsetMeta(p, l))
	return nil
}

// redeliverWebhookEvent: POST /webhooks/{id}/events/{event_id}/redeliver. It queues the record
// again (PENDING, due now, a fresh retry schedule, the subscription's current URL) and answers
// 200 with the record (it is neither a create nor a delete); delivery happens in the
// background.
func (a *API) redeliverWebhookEvent(w http.ResponseWriter, r *http.Request) error {
	if err := readOptionalEmpty(w, r); err != nil {
		return err
	}
	e, err := webhook.Redeliver(r.Context(), a.db, accountID(r), r.PathValue("id"), r.PathValue("event_id"))
	if err != nil {
		return err
	}
	a.webhooks.worker.Notify()
	writeData(w, http.StatusOK, eventView(e))
	return nil
}

var (
	_ webhook.Store         = (*store.DB)(nil)
	_ webhook.Subscriptions = (*store.DB)(nil)
)
