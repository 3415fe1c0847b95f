package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"unicode/utf8"
)

// ErrUnknownOrganization is what an Inbox returns for an organization id it does not know.
var ErrUnknownOrganization = errors.New("unknown organization")

// Inbox is the durable inbox the endpoint commits imports to.
type Inbox interface {
	// OrganizationSecret returns the account of an organization id and its current ingest
	// secret, or ErrUnknownOrganization.
	OrganizationSecret(ctx context.Context, organizationID string) (accountID, secret string, err error)
	// EnqueueImport commits body as a QUEUED import of the account, unless the account already
	// sent the same body (same SHA-256): then it returns that import and created is false.
	EnqueueImport(ctx context.Context, accountID string, body []byte, orderID *string) (imp Import, created bool, err error)
}

// Error is an answer of the endpoint other than success.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message }

// The endpoint's error answers. An unknown organization, a missing signature and a wrong one
// get the very same answer, so a caller learns nothing about which organizations exist.
var (
	ErrInvalidSignature = &Error{http.StatusUnauthorized, "invalid_signature", "missing or invalid organization id or signature"}
	ErrPayloadTooLarge  = &Error{http.StatusRequestEntityTooLarge, "payload_too_large", "request body exceeds 1 MiB"}
)

// ErrUnsupportedMediaType answers a body sent with a content type other than JSON.
var ErrUnsupportedMediaType = &Error{http.StatusUnsupportedMediaType, "unsupported_media_type", "request body must be application/json"}

// Handler serves POST /webhook/custom-orders: it verifies the signature, commits the raw body
// to the inbox and answers 202 (200 for a body already received) with the import.
type Handler struct {
	Inbox Inbox
	// Accepted, when set, is called after a new import is committed (to wake the worker).
	Accepted func()
	// Error, when set, writes error answers (the API passes its own, so errors look alike
	// everywhere, and logs unexpected ones); nil writes {"errors": {status, code, message}}.
	Error func(w http.ResponseWriter, r *http.Request, err error)
}

// Accepted is the endpoint's success answer.
type Accepted struct {
	ID      string  `json:"id"`
	OrderID *string `json:"order_id"`
	Status  string  `json:"status"`
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	status, answer, err := h.receive(w, r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	b, _ := json.Marshal(struct {
		Data Accepted `json:"data"`
	}{answer})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func (h *Handler) receive(w http.ResponseWriter, r *http.Request) (int, Accepted, error) {
	// The whole body is read before anything is looked up, so a request costs the same
	// whether or not its organization exists.
	if r.ContentLength > MaxBody {
		return 0, Accepted{}, ErrPayloadTooLarge // at once, not after waiting for the body
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return 0, Accepted{}, ErrPayloadTooLarge
	}
	if err != nil {
		return 0, Accepted{}, &Error{http.StatusBadRequest, "malformed_json", "could not read request body"}
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && len(bytes.TrimSpace(body)) > 0 {
		// As every JSON route: no content type is read as JSON, another is 415.
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return 0, Accepted{}, ErrUnsupportedMediaType
		}
	}
	accountID, secret, err := "", "", ErrUnknownOrganization
	// An id no account can have (too long, or not UTF-8 text, which PostgreSQL refuses to
	// compare) is unknown without a lookup.
	if org := r.Header.Get(OrganizationHeader); org != "" && len(org) <= 256 && utf8.ValidString(org) {
		accountID, secret, err = h.Inbox.OrganizationSecret(r.Context(), org)
	}
	if err != nil && !errors.Is(err, ErrUnknownOrganization) {
		return 0, Accepted{}, err
	}
	// Verify even without an account, against an empty key, to keep the timing alike.
	if !Verify(secret, body, r.Header.Get(SignatureHeader)) || err != nil {
		return 0, Accepted{}, ErrInvalidSignature
	}
	orderID, err := PeekOrderID(body)
	if err != nil {
		return 0, Accepted{}, &Error{http.StatusBadRequest, "malformed_json", err.Error()}
	}
	imp, created, err := h.Inbox.EnqueueImport(r.Context(), accountID, body, orderID)
	if err != nil {
		return 0, Accepted{}, err
	}
	status := http.StatusOK
	if created {
		status = http.StatusAccepted
		if h.Accepted != nil {
			h.Accepted()
		}
	}
	return status, Accepted{ID: imp.ID, OrderID: imp.OrderID, Status: imp.Status}, nil
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if h.Error != nil {
		h.Error(w, r, err)
		return
	}
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{http.StatusInternalServerError, "internal_error", "internal error"}
	}
	b, _ := json.Marshal(map[string]map[string]string{"errors": {
		"status": http.StatusText(e.Status), "code": e.Code, "message": e.Message}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	w.Write(append(b, '\n'))
}
