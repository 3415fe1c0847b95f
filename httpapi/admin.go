package httpapi

import (
	"net/http"
	"strings"

	"github.com/waybill/waybill/shipping"
)

// createAccount: POST /admin/accounts {name, brand?}.
func (a *API) createAccount(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Name  string `json:"name"`
		Brand string `json:"brand"`
	}
	if err := readJSON(w, r, &body); err != nil {
		return err
	}
	var v shipping.ValidationError
	if strings.TrimSpace(body.Name) == "" {
		v.Add("name", "required", "is required")
	} else if len(body.Name) > 200 {
		v.Add("name", "too_long", "must be at most 200 characters")
	}
	shipping.CheckBrand(&v, "brand", &body.Brand)
	if err := v.Err(); err != nil {
		return err
	}
	acct, err := a.db.CreateAccount(r.Context(), strings.TrimSpace(body.Name), body.Brand)
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, accountView(acct, true))
	return nil
}

// tokenJSON is a token as POST /admin/accounts/{id}/tokens answers it, the one answer that
// shows the bearer string.
type tokenJSON struct {
	ID        string             `json:"id"`
	AccountID string             `json:"account_id"`
	Scopes    []string           `json:"scopes"`
	Token     string             `json:"token,omitempty"`
	CreatedAt shipping.Timestamp `json:"created_at"`
}

// createToken: POST /admin/accounts/{id}/tokens {scopes}. The token string is shown only here.
func (a *API) createToken(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Scopes []string `json:"scopes"`
	}
	if err := readJSON(w, r, &body); err != nil {
		return err
	}
	scopes, err := ParseScopes(body.Scopes)
	if err != nil {
		return &shipping.ValidationError{Fields: []shipping.FieldError{{Field: "scopes", Code: "invalid", Message: err.Error()}}}
	}
	t, err := a.db.CreateToken(r.Context(), r.PathValue("id"), scopes)
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, tokenJSON(t))
	return nil
}

// revokeToken: DELETE /admin/tokens/{id}.
func (a *API) revokeToken(w http.ResponseWriter, r *http.Request) error {
	if err := readOptionalEmpty(w, r); err != nil {
		return err
	}
	if err := a.db.RevokeToken(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// rotateIngestSecret: POST /admin/accounts/{id}/ingest_secret/rotate. The old secret stops
// working at once.
func (a *API) rotateIngestSecret(w http.ResponseWriter, r *http.Request) error {
	if err := readOptionalEmpty(w, r); err != nil {
		return err
	}
	acct, err := a.db.RotateIngestSecret(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, struct {
		AccountID      string `json:"account_id"`
		OrganizationID string `json:"organization_id"`
		IngestSecret   string `json:"ingest_secret"`
	}{acct.ID, acct.OrganizationID, acct.IngestSecret})
	return nil
}
