package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waybill/waybill/billing"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
)

// TestErrorStatuses: as the real product documents them, a body that fails validation is 400
// and a business rule's refusal is 422; 409 is not used.
func TestErrorStatuses(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantCode   string
	}{
		{"validation", &shipping.ValidationError{Fields: []shipping.FieldError{{Field: "parcel", Code: "required"}}}, 400, "validation_failed"},
		{"rate shopping", &shipping.RateError{Code: shipping.CodeNoRates, Message: "none"}, 422, "no_rates_available"},
		{"zip not serviced", &shipping.RateError{Code: shipping.CodeZipNotServiced, Message: "none"}, 422, "zip_not_serviced"},
		{"unknown profile", &shipping.RateError{Code: shipping.CodeUnknownProfile, Message: "none"}, 422, "unknown_rate_shopping_profile"},
		{"shipment state", fmt.Errorf("%w: shipment is CANCELLED", shipping.ErrInvalidState), 422, "invalid_state"},
		{"invoice state", fmt.Errorf("%w: invoice is PAID", billing.ErrInvalidState), 422, "invalid_state"},
		{"not found", store.ErrNotFound, 404, "not_found"},
		{"unknown", errors.New("disk on fire"), 500, "internal_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := errorFor(tt.err)
			if e.Status != tt.wantStatus || e.Code != tt.wantCode {
				t.Errorf("errorFor(%v) = %d %s; want %d %s", tt.err, e.Status, e.Code, tt.wantStatus, tt.wantCode)
			}
		})
	}
	for _, body := range []string{`{"nope": 1}`, `{"name": 1}`} {
		if e := errorFor(decodeStrict([]byte(body), &struct {
			Name string `json:"name"`
		}{})); e.Status != http.StatusBadRequest {
			t.Errorf("decodeStrict(%s) answers %d; want 400", body, e.Status)
		}
	}
}

// TestRateErrorReasons: a rate shopping failure always carries reasons, an empty array when no
// carrier was asked (an unknown profile); other errors carry none.
func TestRateErrorReasons(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"unknown profile", &shipping.RateError{Code: shipping.CodeUnknownProfile, Message: "none"}, `"reasons":[]`},
		{"with reasons", &shipping.RateError{Code: shipping.CodeNoRates, Message: "none",
			Reasons: []shipping.Reason{{Carrier: "POSTLINE", Message: "too heavy"}}}, `"reasons":[{"carrier":"POSTLINE","message":"too heavy"}]`},
		{"not a rate error", fmt.Errorf("%w: shipment is CANCELLED", shipping.ErrInvalidState), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			writeError(w, errorFor(tt.err))
			body := w.Body.String()
			if tt.want == "" && strings.Contains(body, `"reasons"`) || tt.want != "" && !strings.Contains(body, tt.want) {
				t.Errorf("body %s; want reasons %q", body, tt.want)
			}
		})
	}
}

// TestNoConflictStatus: no golden answer is a 409.
func TestNoConflictStatus(t *testing.T) {
	files, err := filepath.Glob("../testdata/*/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files (%v)", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "\nHTTP/1.1 409") {
			t.Errorf("%s answers 409; the API does not use 409", f)
		}
	}
}
