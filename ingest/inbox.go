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

// ErrStaleSecret is what an Inbox's EnqueueImport returns when the secret the body was
// verified with is no longer the account's: the secret was rotated meanwhile.
var ErrStaleSecret = errors.New("ingest secret rotated")

// Inbox is the durable inbox the endpoint commits imports to.
type Inbox interface {
	// OrganizationSecret returns the account of an organization id and its ingest secret, or
	// ErrUnknownOrganization. The secret may come from a cache: EnqueueImport has the last word.
	OrganizationSecret(ctx context.Context, organizationID string) (accountID, secret string, err error)
	// EnqueueImport commits body as a QUEUED import of the account, unless the account already
	// sent the same body (same SHA-256): then it returns that import and created is false.
	// Either way it first checks, in the same transaction, that secret is the account's ingest
	// secret; if it is not, nothing is stored or returned and the error is ErrStaleSecret,
	// after which OrganizationSecret reads the secret afresh.
	EnqueueImport(ctx context.Context, accountID, secret string, body []byte, orderID *string) (imp Import, created bool, err error)
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
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return 0, Accepted{}, ErrPayloadTooLarge
	}
	if err != nil {
		return 0, Accepted{}, &Error{http.StatusBadRequest, "malformed_json", "could not read request body"}
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && len(bytes.TrimSpace(body)) > 0 {
		// As every JSON route (DESIGN §3): no content type is read as JSON, another is 415.
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return 0, Accepted{}, ErrUnsupportedMediaType
		}
	}
	orderID, perr := PeekOrderID(body)
	// A secret rotated between the look-up and the commit is found by the commit; the body is
	// then verified again with the new secret, a few times at most.
	for range 3 {
		accountID, secret, err := h.account(r)
		if err != nil {
			return 0, Accepted{}, err
		}
		// Verify even without an account, against an empty key, to keep the timing alike.
		if !Verify(secret, body, r.Header.Get(SignatureHeader)) || accountID == "" {
			return 0, Accepted{}, ErrInvalidSignature
		}
		if perr != nil {
			return 0, Accepted{}, &Error{http.StatusBadRequest, "malformed_json", perr.Error()}
		}
		imp, created, err := h.Inbox.EnqueueImport(r.Context(), accountID, secret, body, orderID)
		if errors.Is(err, ErrStaleSecret) {
			continue
		}
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
	return 0, Accepted{}, ErrInvalidSignature
}

// account returns the account of the request's organization id and its ingest secret; an
// unknown organization is the empty account, with an empty secret.
func (h *Handler) account(r *http.Request) (accountID, secret string, err error) {
	// An id no account can have (too long, or not UTF-8 text, which PostgreSQL refuses to
	// compare) is unknown without a lookup.
	org := r.Header.Get(OrganizationHeader)
	if org == "" || len(org) > 256 || !utf8.ValidString(org) {
		return "", "", nil
	}
	accountID, secret, err = h.Inbox.OrganizationSecret(r.Context(), org)
	if errors.Is(err, ErrUnknownOrganization) {
		return "", "", nil
	}
	return accountID, secret, err
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
