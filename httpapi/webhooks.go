package httpapi

import "net/http"

type webhookState struct{}

func (a *API) setupWebhooks() error { return nil }

func (a *API) createWebhook(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) listWebhooks(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) getWebhook(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) updateWebhook(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) deleteWebhook(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) listWebhookEvents(w http.ResponseWriter, r *http.Request) error {
	return errNotImplemented
}

func (a *API) redeliverWebhookEvent(w http.ResponseWriter, r *http.Request) error {
	return errNotImplemented
}
