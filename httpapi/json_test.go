package httpapi

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
)

func TestDecodeStrict(t *testing.T) {
	type body struct {
		Name  string `json:"name"`
		Inner struct {
			N int `json:"n"`
		} `json:"inner"`
	}
	tests := []struct {
		in         string
		wantStatus int
		wantCode   string
	}{
		{`{"name":"a","inner":{"n":1}}`, 0, ""},
		{`{"name":"a"`, 400, "malformed_json"},
		{`{"name":"a","name":"b"}`, 400, "malformed_json"},
		{`{"inner":{"n":1,"n":2}}`, 400, "malformed_json"},
		{`{"name":"a"} x`, 400, "malformed_json"},
		{`{"name":"a"}{}`, 400, "malformed_json"},
		{"{\"name\":\"\xff\"}", 400, "malformed_json"},
		{`{"nope":1}`, 400, "unknown_field"},
		{`{"inner":{"nope":1}}`, 400, "unknown_field"},
		// A key is a field only when it is the field's name exactly (encoding/json ignores case).
		{`{"NAME":"a"}`, 400, "unknown_field"},
		{`{"inner":{"N":1}}`, 400, "unknown_field"},
		{`{"name":"a","Name":"b"}`, 400, "unknown_field"},
		// Half of a UTF-16 surrogate pair reads as U+FFFD: refused, as invalid UTF-8 is.
		{`{"name":"\ud800"}`, 400, "malformed_json"},
		{`{"name":"a\udc00b"}`, 400, "malformed_json"},
		{`{"name":"\ud83d\ude00 \u00e9 \\ud800"}`, 0, ""},
		{`{"name":1}`, 400, "validation_failed"},
		{`{"inner":{"n":"x"}}`, 400, "validation_failed"},
		{`[]`, 400, "validation_failed"},
		{strings.Repeat("[", 100) + strings.Repeat("]", 100), 400, "malformed_json"},
	}
	for _, tt := range tests {
		var v body
		err := decodeStrict([]byte(tt.in), &v)
		if tt.wantStatus == 0 {
			if err != nil {
				t.Errorf("decodeStrict(%q) = %v; want nil", tt.in, err)
			}
			continue
		}
		e := errorFor(err)
		if e.Status != tt.wantStatus || e.Code != tt.wantCode {
			t.Errorf("decodeStrict(%q) = %d %s (%v); want %d %s", tt.in, e.Status, e.Code, err, tt.wantStatus, tt.wantCode)
		}
	}
}

func TestReadJSONLimits(t *testing.T) {
	tests := []struct {
		name, contentType, body string
		wantStatus              int
	}{
		{"too large", "application/json", `{"name":"` + strings.Repeat("x", maxBody) + `"}`, 413},
		{"json with charset", "application/json; charset=utf-8", `{"name":"a"}`, 0},
		{"no content type", "", `{"name":"a"}`, 0},
		{"form", "application/x-www-form-urlencoded", `name=a`, 415},
		{"bad media type", "application/json; =", `{"name":"a"}`, 415},
		{"empty", "application/json", ``, 400},
		{"whitespace", "application/json", " \n ", 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", strings.NewReader(tt.body))
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			}
			var v struct {
				Name string `json:"name"`
			}
			err := readJSON(httptest.NewRecorder(), r, &v)
			if tt.wantStatus == 0 {
				if err != nil {
					t.Fatalf("readJSON = %v; want nil", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Status != tt.wantStatus {
				t.Fatalf("readJSON = %v; want status %d", err, tt.wantStatus)
			}
		})
	}
}

// TestOversizedBodyEndToEnd sends more than 1 MiB through the whole handler.
func TestOversizedBodyEndToEnd(t *testing.T) {
	e := newEnv(t)
	w := e.do("POST", "/admin/accounts", "admin", `{"name":"`+strings.Repeat("x", 2<<20)+`"}`)
	got := decode[map[string]map[string]any](t, w, http.StatusRequestEntityTooLarge)
	if got["errors"]["code"] != "payload_too_large" {
		t.Errorf("code = %v; want payload_too_large", got["errors"]["code"])
	}
}

// TestDeclaredOversizedBody: a request that declares more than 1 MiB is answered 413 at once,
// before its body arrives (here it never does): the server does not wait on it until its read
// timeout. The same for the order import endpoint.
func TestDeclaredOversizedBody(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.api)
	defer srv.Close()
	for _, path := range []string{"/shipments", "/webhook/custom-orders"} {
		status, body, err := func() (int, string, error) {
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				return 0, "", err
			}
			defer conn.Close() // before srv.Close, which waits for a handler still reading
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
				"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n{", path, e.tokens["all"], maxBody+1)
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				return 0, "", err
			}
			b, _ := io.ReadAll(res.Body)
			return res.StatusCode, string(b), nil
		}()
		if err != nil || status != 413 || !strings.Contains(body, "payload_too_large") {
			t.Errorf("POST %s declaring %d bytes, sending 1 = %d %s (%v); want 413 payload_too_large at once",
				path, maxBody+1, status, body, err)
		}
	}
}

// TestBadTokensNever500 sends hostile Authorization headers; each must be a plain 401.
func TestBadTokensNever500(t *testing.T) {
	e := newEnv(t)
	for _, h := range []string{"", "Bearer", "Bearer ", "bearer x", "Bearer " + strings.Repeat("a", 10000),
		"Bearer \x00\x01", "Token abc", "Bearer wb_" + strings.Repeat("%", 40), "Bearer a b c"} {
		r := httptest.NewRequest("GET", "/billing/invoices", nil)
		r.Header.Set("Authorization", h)
		w := httptest.NewRecorder()
		e.api.ServeHTTP(w, r)
		if w.Code != http.StatusUnauthorized || w.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("Authorization %.30q: %d %q; want 401 with WWW-Authenticate", h, w.Code, w.Body)
		}
	}
	// A valid token beside a second Authorization header is not taken either.
	for _, headers := range [][]string{{"Bearer " + e.tokens["all"]}, {"Bearer " + e.tokens["all"], "Bearer nope"}} {
		r := httptest.NewRequest("GET", "/billing/invoices", nil)
		for _, h := range headers {
			r.Header.Add("Authorization", h)
		}
		w := httptest.NewRecorder()
		e.api.ServeHTTP(w, r)
		if want := map[int]int{1: http.StatusOK, 2: http.StatusUnauthorized}[len(headers)]; w.Code != want {
			t.Errorf("%d Authorization headers, the first valid: %d; want %d", len(headers), w.Code, want)
		}
	}
}

func FuzzDecodeStrict(f *testing.F) {
	for _, s := range []string{`{"name":"a","tags":["x"],"n":1.5}`, `{"a":{"a":{}}}`, `[`, `{"name":"a","name":"a"}`, "\xff", `{"n":1e400}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v struct {
			Name string   `json:"name"`
			Tags []string `json:"tags"`
			N    float64  `json:"n"`
		}
		err := decodeStrict(data, &v)
		if err != nil {
			if e := errorFor(err); e.Status >= 500 {
				t.Fatalf("decodeStrict(%q) maps to %d: %v", data, e.Status, err)
			}
		}
	})
}

// A NUL in any string of a JSON body is validation_failed on that field's path, before any
// handler sees it (no database text column stores one).
func TestDecodeStrictNUL(t *testing.T) {
	tests := []struct{ body, field string }{
		{`"a\u0000"`, "(body)"},
		{`{"name": "a\u0000b"}`, "name"},
		{`{"a": [{"b": "x"}, {"b": "\u0000"}]}`, "a[1].b"},
		{`{"a": {"k\u0000": 1}}`, "a.(key)"},
	}
	for _, tt := range tests {
		var v any
		err := decodeStrict([]byte(tt.body), &v)
		e := errorFor(err)
		if e.Code != "validation_failed" || len(e.Fields) != 1 || e.Fields[0].Field != tt.field || e.Fields[0].Code != "invalid" {
			t.Errorf("decodeStrict(%s) = %+v; want validation_failed on %s", tt.body, e, tt.field)
		}
	}
}

// TestUnknownFieldPath: an unknown field is named by its path in the body, as validation
// errors name fields, however deep it sits.
func TestUnknownFieldPath(t *testing.T) {
	type item struct {
		A int `json:"a"`
	}
	type embedded struct {
		E string `json:"e"`
	}
	type body struct {
		embedded
		Name  string            `json:"name"`
		Inner *struct{ N int }  `json:"inner"`
		Items []item            `json:"items"`
		Tags  map[string]item   `json:"tags"`
		Raw   json.RawMessage   `json:"raw"`
		Any   any               `json:"any"`
		Named map[string]string `json:"named"`
	}
	tests := []struct{ in, want string }{
		{`{"nope":1}`, "nope"},
		{`{"inner":{"N":1,"nope":1}}`, "inner.nope"},
		{`{"items":[{"a":1},{"a":2,"nope":1}]}`, "items[1].nope"},
		{`{"tags":{"x":{"nope":1}}}`, "tags.x.nope"},
		{`{"raw":{"nope":1},"any":{"nope":1},"e":"x","inner":{"N":1},"nope":2}`, "nope"},
		{`{"named":{"nope":"x"},"items":[{"nope":1}]}`, "items[0].nope"},
		// Keys that differ from a field's name only in case, which encoding/json decodes.
		{`{"NAME":"a"}`, "NAME"},
		{`{"name":"a","Name":"b"}`, "Name"},
		{`{"E":"x"}`, "E"},
		{`{"inner":{"n":1}}`, "inner.n"},
		{`{"items":[{"a":1},{"A":2}]}`, "items[1].A"},
		{`{"tags":{"X":{"a":1}},"named":{"Y":"y"},"items":[{"a":1,"A":1}]}`, "items[0].A"},
	}
	for _, tt := range tests {
		var v body
		e := errorFor(decodeStrict([]byte(tt.in), &v))
		if e.Code != "unknown_field" || len(e.Fields) != 1 || e.Fields[0].Field != tt.want {
			t.Errorf("decodeStrict(%s) = %s %+v; want unknown_field on %s", tt.in, e.Code, e.Fields, tt.want)
		}
	}
	// Map keys are the map's, whatever their case.
	var v body
	if err := decodeStrict([]byte(`{"tags":{"X":{"a":1}},"named":{"Y":"y"},"raw":{"Z":1},"any":{"Q":1}}`), &v); err != nil {
		t.Errorf("map keys: %v", err)
	}
}

// TestTypeErrorPath: a value of the wrong JSON type is named by its whole path, array indices
// and map keys included, as every other field error names it (encoding/json's own Field
// leaves both out: "items.q", "m.q").
func TestTypeErrorPath(t *testing.T) {
	type item struct {
		Q int `json:"q"`
	}
	type body struct {
		Items []item          `json:"items"`
		M     map[string]item `json:"m"`
		Name  string          `json:"name"`
	}
	tests := []struct{ in, want string }{
		{`{"items":[{"q":1},{"q":"x"}]}`, "items[1].q"},
		{`{"items":[{"q":{"a":[1]}}]}`, "items[0].q"},
		{`{"m":{"k":{"q":true}}}`, "m.k.q"},
		{`{"name":[1,2]}`, "name"},
		{`{"items":{"a":1}}`, "items"},
		{`{"items":[1]}`, "items[0]"},
		{` {"name": "a", "items": [ {"q": 1} ], "m": {"k": {"q": "s"}}}`, "m.k.q"},
		{`[1]`, "(body)"},
		{`"x"`, "(body)"},
	}
	for _, tt := range tests {
		var v body
		var ve *shipping.ValidationError
		if err := decodeStrict([]byte(tt.in), &v); !errors.As(err, &ve) || len(ve.Fields) != 1 ||
			ve.Fields[0].Field != tt.want || ve.Fields[0].Code != "invalid_type" {
			t.Errorf("decodeStrict(%s) = %v; want invalid_type on %s", tt.in, err, tt.want)
		}
	}
}

// strictNumber decodes itself and refuses anything but a number, null included.
type strictNumber float64

func (n *strictNumber) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	*n = strictNumber(f)
	return err
}

// TestDecodeStrictNulls: null is refused wherever it would decode into a Go value, unless the
// field is tagged nullable; every refused null is named, and an unknown key is named first.
func TestDecodeStrictNulls(t *testing.T) {
	type inner struct {
		X string `json:"x"`
	}
	type body struct {
		Pct   strictNumber      `json:"pct"`
		A     string            `json:"a"`
		B     *bool             `json:"b"`
		Note  *string           `json:"note" nullable:"true"`
		Raw   json.RawMessage   `json:"raw"`
		Clear json.RawMessage   `json:"clear" nullable:"true"`
		Any   any               `json:"any"`
		Inner *inner            `json:"inner"`
		Items []inner           `json:"items"`
		Map   map[string]string `json:"map"`
	}
	for _, tt := range []struct {
		in   string
		code string   // "" for accepted
		want []string // the fields named
	}{
		{`{"a": "x", "note": null, "clear": null, "any": null}`, "", nil},
		{`{"any": {"k": null}, "raw": {"k": null}}`, "", nil},
		{`{"a": null}`, "validation_failed", []string{"a"}},
		{`{"b": null, "a": null}`, "validation_failed", []string{"b", "a"}},
		{`{"raw": null}`, "validation_failed", []string{"raw"}},
		{`{"inner": null}`, "validation_failed", []string{"inner"}},
		{`{"inner": {"x": null}}`, "validation_failed", []string{"inner.x"}},
		{`{"items": [{"x": "y"}, null]}`, "validation_failed", []string{"items[1]"}},
		{`{"items": [{"x": null}]}`, "validation_failed", []string{"items[0].x"}},
		{`{"map": {"k": null}}`, "validation_failed", []string{"map.k"}},
		{`null`, "validation_failed", []string{"(body)"}},
		{`{"a": null, "A": "x"}`, "unknown_field", []string{"A"}},
		{`{"pct": null}`, "validation_failed", []string{"pct"}},
		{`{"pct": 1}`, "", nil},
	} {
		var v body
		err := decodeStrict([]byte(tt.in), &v)
		var got []string
		code := ""
		var ve *shipping.ValidationError
		var e *Error
		switch {
		case errors.As(err, &ve):
			code = "validation_failed"
			for _, f := range ve.Fields {
				got = append(got, f.Field)
				if f.Message != "must not be null" {
					t.Errorf("decodeStrict(%s): %s: %q; want must not be null", tt.in, f.Field, f.Message)
				}
			}
		case errors.As(err, &e):
			code = e.Code
			for _, f := range e.Fields {
				got = append(got, f.Field)
			}
		case err != nil:
			code = err.Error()
		}
		if code != tt.code || fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("decodeStrict(%s) = %s %v; want %q %v", tt.in, code, got, tt.code, tt.want)
		}
	}
}
