package httpapi

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/waybill/waybill/store"
)

// handlerFunc is an authenticated API handler; a returned error is answered by errorFor.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

type principalKey struct{}

// handle registers h behind bearer authentication and the scope it needs.
func (a *API) handle(pattern, scope string, h handlerFunc) {
	a.handleScopes(pattern, []string{scope}, h)
}

// handleScopes is handle for a route that needs several scopes: a token lacking any is 403,
// naming the first it lacks in the order given.
func (a *API) handleScopes(pattern string, scopes []string, h handlerFunc) {
	a.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		p, err := a.authenticate(r)
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) {
				a.fail(w, r, err)
				return
			}
			w.Header().Set("WWW-Authenticate", "Bearer") // the challenge a 401 must carry
			writeError(w, &Error{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "missing, malformed, unknown or revoked bearer token"})
			return
		}
		for _, scope := range scopes {
			if !slices.Contains(p.Scopes, scope) {
				writeError(w, &Error{Status: http.StatusForbidden, Code: "insufficient_scope",
					Message: "token lacks scope " + scope, RequiredScope: scope})
				return
			}
		}
		if err := h(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p))); err != nil {
			a.fail(w, r, err)
		}
	})
}

// authenticate resolves the request's bearer token; any missing or bad token is ErrNotFound,
// and so are two Authorization headers (which one a proxy or client meant is not ours to pick).
func (a *API) authenticate(r *http.Request) (store.Principal, error) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || len(token) > 256 ||
		len(r.Header.Values("Authorization")) > 1 {
		return store.Principal{}, store.ErrNotFound
	}
	return a.db.Authenticate(r.Context(), token)
}

// accountID is the account the authenticated request acts for.
func accountID(r *http.Request) string {
	p, _ := r.Context().Value(principalKey{}).(store.Principal)
	return p.AccountID
}

// ParseScopes checks a list of scope names.
func ParseScopes(names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, errors.New("at least one scope is required")
	}
	// There are only a few scopes: a longer list is refused before it is read.
	if len(names) > 100 {
		return nil, errors.New("at most 100 scopes may be listed")
	}
	var out []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		if !slices.Contains(AllScopes, n) {
			return nil, errors.New("unknown scope " + n)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}
