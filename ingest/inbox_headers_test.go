package ingest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

// strictInbox refuses, as PostgreSQL does, an organization id that is not valid UTF-8 or holds
// a NUL: the lookup itself fails, which the endpoint would answer 500.
type strictInbox struct{ lookups int }

func (s *strictInbox) OrganizationSecret(ctx context.Context, org string) (string, string, error) {
	s.lookups++
	if !utf8.ValidString(org) || strings.ContainsRune(org, 0) {
		return "", "", errors.New("invalid byte sequence for encoding UTF8")
	}
	return "", "", ErrUnknownOrganization
}

func (s *strictInbox) EnqueueImport(ctx context.Context, accountID string, body []byte, orderID *string) (Import, bool, error) {
	return Import{}, false, errors.New("not reached")
}

// TestOrganizationHeaderNotText: an organization id the database cannot hold as text is an
// unknown organization (401 invalid_signature, like any other), never looked up, never a 500.
func TestOrganizationHeaderNotText(t *testing.T) {
	for _, org := range []string{"\xff", "org-\xc3", strings.Repeat("x", 300)} {
		inbox := &strictInbox{}
		h := &Handler{Inbox: inbox}
		r := httptest.NewRequest("POST", "/webhook/custom-orders", strings.NewReader(`{"id":"1"}`))
		r.Header.Set(OrganizationHeader, org)
		r.Header.Set(SignatureHeader, "00")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "invalid_signature") || inbox.lookups != 0 {
			t.Errorf("organization %.10q: %d %s after %d lookups; want 401 invalid_signature without a lookup", org, w.Code, w.Body, inbox.lookups)
		}
	}
}

// TestContentType: a body sent with a content type other than JSON is 415, before
// the organization is looked up; no content type, or JSON with parameters, is read as JSON.
func TestContentType(t *testing.T) {
	for _, tt := range []struct {
		contentType string
		want        int
	}{
		{"text/plain", http.StatusUnsupportedMediaType},
		{"application/x-www-form-urlencoded", http.StatusUnsupportedMediaType},
		{"nonsense;;", http.StatusUnsupportedMediaType},
		{"", http.StatusUnauthorized},
		{"application/json", http.StatusUnauthorized},
		{"Application/JSON; charset=utf-8", http.StatusUnauthorized},
	} {
		inbox := &strictInbox{}
		h := &Handler{Inbox: inbox}
		r := httptest.NewRequest("POST", "/webhook/custom-orders", strings.NewReader(`{"id":"1"}`))
		if tt.contentType != "" {
			r.Header.Set("Content-Type", tt.contentType)
		}
		r.Header.Set(OrganizationHeader, "org")
		r.Header.Set(SignatureHeader, "00")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tt.want || tt.want == http.StatusUnsupportedMediaType && (inbox.lookups != 0 || !strings.Contains(w.Body.String(), "unsupported_media_type")) {
			t.Errorf("Content-Type %q: %d %s after %d lookups; want %d", tt.contentType, w.Code, w.Body, inbox.lookups, tt.want)
		}
	}
}
