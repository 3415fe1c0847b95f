package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/waybill/waybill/httpapi/internal/txtar"
	"github.com/waybill/waybill/ingest"
)

// The contract tests hold the server to GET /openapi.json the way an outside fuzzer does,
// driven only by the served document: every operation, every query parameter, every body
// field. A route documented later is covered as soon as it is documented; one whose path
// names a resource the fixtures do not create needs a line in contract.fixtures, and one
// secured by a new scheme a case in contract.send.

// contract is a test API with one of each resource, and the served document.
type contract struct {
	t   *testing.T
	e   *testEnv
	doc map[string]any
	v   *schemaValidator
	ids map[string]string // "/collection/{param}" → the id of an existing resource

	carrierSecret string // POSTLINE's inbound secret, for carrier pushes
}

func newContract(t *testing.T) *contract {
	e := newEnv(t)
	w := e.do("GET", "/openapi.json", "", nil)
	doc, err := decodeJSONNumbers(w.Body.Bytes())
	if err != nil {
		t.Fatalf("GET /openapi.json: %v", err)
	}
	c := &contract{t: t, e: e, doc: doc.(map[string]any), ids: map[string]string{}}
	c.v = &schemaValidator{root: c.doc}
	c.fixtures()
	return c
}

// fixtures creates one resource of each kind the document's paths name, as the admin
// token's account (acme), and records their ids under the path that names them.
func (c *contract) fixtures() {
	t, e := c.t, c.e
	open := e.createShipment(t, "ALL", "PDF")
	bought := e.createShipment(t, "ALL", "PDF")
	hook := decode[struct{ Data struct{ ID string } }](t, e.do("POST", "/webhooks", "admin",
		`{"url": "https://hooks.example/waybill", "topic": "LABEL_PURCHASED"}`), http.StatusCreated)
	label := decode[shipmentAnswer](t, e.do("POST", "/shipments/"+bought.Data.ID+"/rates/"+bought.Data.ShippingRates[0].ID, "admin", nil), http.StatusOK)
	events := decode[struct{ Data []struct{ ID string } }](t, e.do("GET", "/webhooks/"+hook.Data.ID+"/events", "admin", nil), http.StatusOK)
	acme := e.accounts["acme"]
	invoice := decode[struct{ Data struct{ ID string } }](t, e.do("POST", "/admin/billing/invoices", "admin",
		`{"account_id": "`+acme.ID+`"}`), http.StatusCreated)
	item := decode[struct{ Data struct{ ID string } }](t, e.do("POST", "/admin/billing/invoices/"+invoice.Data.ID+"/line_items", "admin",
		`{"description": "Setup fee", "amount_cents": 500}`), http.StatusCreated)
	token := decode[struct{ Data struct{ ID string } }](t, e.do("POST", "/admin/accounts/"+acme.ID+"/tokens", "admin",
		`{"scopes": ["READ_SHIPMENTS"]}`), http.StatusCreated)
	order := orderBody("C-1")
	req := httptest.NewRequest("POST", "/webhook/custom-orders", strings.NewReader(order))
	c.sign(req, []byte(order))
	w := httptest.NewRecorder()
	e.api.ServeHTTP(w, req)
	imp := decode[struct{ Data struct{ ID string } }](t, w, http.StatusAccepted)
	e.drain()
	orders := decode[struct{ Data []struct{ ID string } }](t, e.do("GET", "/orders", "admin", nil), http.StatusOK)
	secret := decode[struct{ Data struct{ Secret string } }](t, e.do("POST", "/admin/carriers/POSTLINE/event_secret/rotate", "admin", nil), http.StatusOK)
	c.carrierSecret = secret.Data.Secret
	manifest := decode[struct{ Data struct{ ID string } }](t, e.do("POST", "/manifests", "admin",
		`{"carrier": "`+label.Data.ShippingLabel.Carrier+`"}`), http.StatusCreated)
	if len(events.Data) == 0 || len(orders.Data) == 0 {
		t.Fatalf("fixtures: %d webhook events, %d orders; want one of each", len(events.Data), len(orders.Data))
	}
	for path, id := range map[string]string{
		"/shipments/{id}":                       open.Data.ID,
		"/shipments/{id}/rates/{rate_id}":       open.Data.ShippingRates[0].ID,
		"/shipping_labels/{id}":                 label.Data.ShippingLabel.ID,
		"/webhooks/{id}":                        hook.Data.ID,
		"/webhooks/{id}/events/{event_id}":      events.Data[0].ID,
		"/billing/invoices/{id}":                invoice.Data.ID,
		"/admin/billing/invoices/{id}":          invoice.Data.ID,
		"/admin/billing/line_items/{id}":        item.Data.ID,
		"/admin/accounts/{id}":                  acme.ID,
		"/admin/tokens/{id}":                    token.Data.ID,
		"/orders/{id}":                          orders.Data[0].ID,
		"/order_imports/{id}":                   imp.Data.ID,
		"/rate_shopping_profiles/{profile_key}": "default",
		"/admin/rate_shopping_profiles/{key}":   "contract",
		"/admin/carriers/{code}":                "CONTRACT",
		"/carrier_events/{carrier}":             "POSTLINE",
		"/manifests/{id}":                       manifest.Data.ID,
	} {
		c.ids[path] = id
	}
}

// sign signs an order import as acme's.
func (c *contract) sign(r *http.Request, body []byte) {
	acme := c.e.accounts["acme"]
	r.Header.Set(ingest.OrganizationHeader, acme.OrganizationID)
	r.Header.Set(ingest.SignatureHeader, ingest.Sign(acme.IngestSecret, body))
}

// noFixture stands for a path parameter no fixture supplies.
const noFixture = "00000000-0000-7000-8000-0000000000ff"

var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

// target fills pattern's path parameters with the fixtures' ids; missing names the
// parameters no fixture supplies.
func (c *contract) target(pattern string) (path string, missing []string) {
	path = pattern
	for _, m := range pathParam.FindAllStringIndex(pattern, -1) {
		id, ok := c.ids[pattern[:m[1]]]
		if !ok {
			id = noFixture
			missing = append(missing, pattern[m[0]:m[1]])
		}
		path = strings.Replace(path, pattern[m[0]:m[1]], id, 1)
	}
	return path, missing
}

// answer is a decoded error answer.
type answer struct {
	status int
	body   string
	Errors answerErrors `json:"errors"`
	// Data holds a batch's items, whose errors are answered per item (itemsFailAlone).
	Data struct {
		Items []struct {
			Status string       `json:"status"`
			Errors answerErrors `json:"errors"`
		} `json:"items"`
	} `json:"data"`
}

type answerErrors struct {
	Code      string                            `json:"code"`
	Parameter string                            `json:"parameter"`
	Fields    []struct{ Field, Message string } `json:"fields"`
}

// firstItem is the answer of a body's first item, where its items are judged one by one: the
// item FAILED with its errors is answered as a 400 of its own would be, the batch accepted (202)
// around it; anything else is answered as is.
func (a answer) firstItem() answer {
	if a.status != http.StatusAccepted || len(a.Data.Items) == 0 || a.Data.Items[0].Status != "FAILED" {
		return a
	}
	item := a
	item.status, item.Errors = http.StatusBadRequest, a.Data.Items[0].Errors
	return item
}

// names reports whether the answer's fields name path ("a.b[0].c"; "a.b.0.c" counts too).
func (a answer) names(path, message string) bool {
	want := strings.NewReplacer("[", ".", "]", "").Replace(path)
	for _, f := range a.Errors.Fields {
		if strings.NewReplacer("[", ".", "]", "").Replace(f.Field) == want && (message == "" || f.Message == message) {
			return true
		}
	}
	return false
}

// send sends one request to op, authenticated as its security asks, with the headers given;
// body nil sends none.
func (c *contract) send(op map[string]any, method, target string, body []byte, headers ...string) answer {
	c.t.Helper()
	var r *http.Request
	if body == nil {
		r = httptest.NewRequest(method, target, nil)
	} else {
		r = httptest.NewRequest(method, target, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	sec, _ := op["security"].([]any)
	for _, req := range sec {
		for scheme := range req.(map[string]any) {
			switch scheme {
			case "bearer":
				r.Header.Set("Authorization", "Bearer "+c.e.tokens["admin"])
			case "organizationId", "orderImportSignature":
				c.sign(r, body)
			case "carrierSignature":
				r.Header.Set("X-Carrier-Signature", ingest.Sign(c.carrierSecret, body))
			}
		}
	}
	w := httptest.NewRecorder()
	c.e.api.ServeHTTP(w, r)
	a := answer{status: w.Code, body: w.Body.String()}
	json.Unmarshal(w.Body.Bytes(), &a)
	return a
}

// operation is one documented operation.
type operation struct {
	method, pattern string
	op              map[string]any
}

// knownSchemes are the security schemes send meets.
var knownSchemes = []string{"bearer", "organizationId", "orderImportSignature", "carrierSignature"}

// operations lists the documented operations, but for those secured by a scheme send does not
// know how to meet (each one a test error).
func (c *contract) operations() []operation {
	var ops []operation
	for route, op := range documentedRoutes(c.doc) {
		method, pattern, _ := strings.Cut(route, " ")
		sec, _ := op["security"].([]any)
		known := true
		for _, req := range sec {
			for scheme := range req.(map[string]any) {
				if !slices.Contains(knownSchemes, scheme) {
					c.t.Errorf("%s: security scheme %q: teach contract.send to meet it", route, scheme)
					known = false
				}
			}
		}
		if known {
			ops = append(ops, operation{method, pattern, op})
		}
	}
	slices.SortFunc(ops, func(a, b operation) int { return strings.Compare(a.pattern+a.method, b.pattern+b.method) })
	return ops
}

// parameters returns the operation's parameters (resolved) that are in where.
func (c *contract) parameters(op map[string]any, where string) []map[string]any {
	var out []map[string]any
	params, _ := op["parameters"].([]any)
	for _, p := range params {
		if p := c.v.resolve(p).(map[string]any); p["in"] == where {
			out = append(out, p)
		}
	}
	return out
}

// cursorParameters are answered invalid_cursor, not invalid_parameter: an empty cursor is not
// one the API issued.
var cursorParameters = []string{"after", "before"}

// TestOpenAPIQueryParameters sends every query (and header) parameter of every operation
// empty, and with a value each of its documented constraints refuses: each is 400
// invalid_parameter naming it.
func TestOpenAPIQueryParameters(t *testing.T) {
	c := newContract(t)
	checked := 0
	for _, o := range c.operations() {
		target, missing := c.target(o.pattern)
		for _, p := range append(c.parameters(o.op, "query"), c.parameters(o.op, "header")...) {
			name := p["name"].(string)
			values := map[string]string{"empty": ""}
			for what, bad := range violations(c.v.resolve(p["schema"]).(map[string]any), c.v) {
				values[what] = bad
			}
			for what, bad := range values {
				var a answer
				if p["in"] == "header" {
					a = c.send(o.op, o.method, target, nil, name, bad)
				} else {
					a = c.send(o.op, o.method, target+"?"+url.QueryEscape(name)+"="+url.QueryEscape(bad), nil)
				}
				code := "invalid_parameter"
				if slices.Contains(cursorParameters, name) {
					code = "invalid_cursor"
				}
				checked++
				if a.status != 400 || a.Errors.Code != code || a.Errors.Parameter != name {
					t.Errorf("%s %s?%s=%q (%s): %d %.300s; want 400 %s naming %s%s", o.method, o.pattern, name, bad, what,
						a.status, a.body, code, name, fixtureHint(a, missing))
				}
			}
		}
	}
	if checked < 40 {
		t.Errorf("only %d query values checked", checked)
	}
}

func fixtureHint(a answer, missing []string) string {
	if a.status == 404 && len(missing) > 0 {
		return fmt.Sprintf(" (no fixture for %v: add one in contract.fixtures)", missing)
	}
	return ""
}

// bodyField is one property of a request body schema, wherever it is nested.
type bodyField struct {
	path     []any // keys (string) and array indices (int)
	schema   map[string]any
	required bool // in its object
	nullable bool
	// item is how much of path leads to an item judged alone (itemsFailAlone), whose errors
	// name the rest of the path; 0 for a field of no such item.
	item int
}

// judged is the answer that judges the field's value: the first item's, for a field of an item
// judged alone.
func (f bodyField) judged(a answer) answer {
	if f.item > 0 {
		return a.firstItem()
	}
	return a
}

func (f bodyField) name() string { return pathName(f.path) }

// nameInItem is the field's name as its errors name it: within its item, for a field of an
// item judged alone.
func (f bodyField) nameInItem() string { return pathName(f.path[f.item:]) }

func pathName(path []any) string {
	var b strings.Builder
	for _, s := range path {
		switch s := s.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s)
		case int:
			fmt.Fprintf(&b, "[%d]", s)
		}
	}
	return b.String()
}

// body is the smallest body that holds value at the field's place.
func (f bodyField) body(value any) []byte {
	for i := len(f.path) - 1; i >= 0; i-- {
		switch s := f.path[i].(type) {
		case string:
			value = map[string]any{s: value}
		case int:
			value = []any{value}
		}
	}
	b, _ := json.Marshal(value)
	return b
}

// bodyFields lists every property of schema, nested objects and array items (one element)
// walked, oneOf alternatives that are objects walked too.
func (v *schemaValidator) bodyFields(schema any, path []any, depth int) []bodyField {
	return v.bodyFieldsIn(schema, path, depth, 0)
}

// bodyFieldsIn is bodyFields within an item judged alone whose path is path[:item] (0: none).
func (v *schemaValidator) bodyFieldsIn(schema any, path []any, depth, item int) []bodyField {
	s, _ := v.resolve(schema).(map[string]any)
	if s == nil || depth > 8 {
		return nil
	}
	var out []bodyField
	if alts, ok := s["oneOf"].([]any); ok {
		for _, alt := range alts {
			out = append(out, v.bodyFieldsIn(alt, path, depth+1, item)...)
		}
	}
	if items, ok := s["items"]; ok {
		itemPath := append(slices.Clip(path), 0)
		if s[itemsFailAlone] == true {
			item = len(itemPath)
		}
		out = append(out, v.bodyFieldsIn(items, itemPath, depth+1, item)...)
	}
	props, _ := s["properties"].(map[string]any)
	required, _ := s["required"].([]any)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		ps, _ := v.resolve(props[n]).(map[string]any)
		f := bodyField{path: append(slices.Clip(path), n), schema: ps, required: slices.Contains(required, any(n)), nullable: v.nullable(ps),
			item: item}
		out = append(out, f)
		out = append(out, v.bodyFieldsIn(ps, f.path, depth+1, item)...)
	}
	return out
}

// nullable reports whether schema takes null: no type at all, a type list with "null", or a
// oneOf alternative that is null.
func (v *schemaValidator) nullable(s map[string]any) bool {
	if s == nil {
		return true
	}
	if alts, ok := s["oneOf"].([]any); ok {
		return slices.ContainsFunc(alts, func(a any) bool { return v.nullable(v.resolve(a).(map[string]any)) })
	}
	switch t := s["type"].(type) {
	case nil:
		return true
	case string:
		return t == "null"
	case []any:
		return slices.Contains(t, any("null"))
	}
	return false
}

// jsonBody returns the operation's JSON request body schema, or nil.
func jsonBody(op map[string]any) any {
	rb, _ := op["requestBody"].(map[string]any)
	content, _ := rb["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	return media["schema"]
}

// TestOpenAPIBodyNulls sends null for every field of every request body: a field the document
// does not declare nullable is 400 validation_failed "must not be null"; one it does is not
// refused for being null.
func TestOpenAPIBodyNulls(t *testing.T) {
	c := newContract(t)
	checked := 0
	for _, o := range c.operations() {
		schema := jsonBody(o.op)
		if schema == nil {
			continue
		}
		target, missing := c.target(o.pattern)
		fields := c.v.bodyFields(schema, nil, 0)
		if !c.v.nullable(c.v.resolve(schema).(map[string]any)) {
			fields = append(fields, bodyField{path: nil, nullable: false})
		}
		for _, f := range fields {
			name := f.nameInItem()
			if name == "" {
				name = "(body)"
			}
			a := f.judged(c.send(o.op, o.method, target, f.body(nil)))
			checked++
			switch {
			case a.status >= 500:
				t.Errorf("%s %s %s: null: %d %s", o.method, o.pattern, name, a.status, a.body)
			case f.nullable && a.names(name, "must not be null"):
				t.Errorf("%s %s %s: null refused (%s); the document declares it nullable: tag the Go field nullable:\"true\"",
					o.method, o.pattern, name, a.body)
			case f.path == nil && a.status == 400 && a.Errors.Code == "malformed_json":
				// A body that is not an object at all: the lenient order import says so.
			case !f.nullable && (a.status != 400 || a.Errors.Code != "validation_failed" || !a.names(name, "must not be null")):
				t.Errorf("%s %s %s: null: %d %.300s; want 400 validation_failed, %s must not be null%s",
					o.method, o.pattern, name, a.status, a.body, name, fixtureHint(a, missing))
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d null fields checked", checked)
	}
}

// TestOpenAPIBodyConstraints sends "" for every required string of every request body, and a
// value each documented constraint (minLength, maxLength, pattern, enum, format, minimum,
// maximum, …) refuses for every field: each is 400 validation_failed naming the field. So the
// document never says a value is valid that the server refuses empty, nor claims a limit the
// server does not hold.
func TestOpenAPIBodyConstraints(t *testing.T) {
	c := newContract(t)
	baselines := c.acceptedBodies()
	checked := 0
	for _, o := range c.operations() {
		schema := jsonBody(o.op)
		if schema == nil {
			continue
		}
		target, missing := c.target(o.pattern)
		for _, f := range c.v.bodyFields(schema, nil, 0) {
			if f.schema == nil {
				continue
			}
			values := violations(f.schema, c.v)
			if f.required && jsonTypeIs("", firstType(f.schema)) {
				values["required, empty"] = ""
			}
			for what, bad := range values {
				var value any = bad
				if n, err := strconv.ParseFloat(bad, 64); err == nil && firstType(f.schema) != "string" {
					value = n
				}
				a := f.judged(c.send(o.op, o.method, target, f.body(value)))
				name := f.nameInItem()
				if base, ok := baselines[o.method+" "+o.pattern]; ok && a.status == 400 && a.Errors.Code == "validation_failed" && !a.names(name, "") {
					// A rule that judges a field only once the fields it depends on are
					// valid: the same value in a body the server accepted.
					a = f.judged(c.send(o.op, o.method, target, f.within(base, value)))
				}
				checked++
				if a.status != 400 || a.Errors.Code != "validation_failed" || !a.names(name, "") {
					t.Errorf("%s %s %s = %q (%s): %d %.300s; want 400 validation_failed naming %s%s",
						o.method, o.pattern, f.name(), bad, what, a.status, a.body, name, fixtureHint(a, missing))
				}
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d constrained values checked", checked)
	}
}

// TestOpenAPIEmptyStrings: the document itself says no empty string is valid where the server
// refuses one: every path parameter, every string query parameter (an empty query value is
// refused, TestOpenAPIQueryParameters), every required string of a request body.
func TestOpenAPIEmptyStrings(t *testing.T) {
	c := &contract{t: t, doc: openAPIDoc(t)}
	c.v = &schemaValidator{root: c.doc}
	for _, o := range c.operations() {
		for _, where := range []string{"path", "query"} {
			for _, p := range c.parameters(o.op, where) {
				s := c.v.resolve(p["schema"]).(map[string]any)
				if items, ok := s["items"]; ok {
					s = c.v.resolve(items).(map[string]any)
				}
				if len(c.v.validate(s, "", "")) == 0 && !slices.Contains(cursorParameters, p["name"].(string)) {
					t.Errorf("%s %s: %s parameter %s takes \"\"; the server refuses it (minLength: 1)", o.method, o.pattern, where, p["name"])
				}
			}
		}
		if schema := jsonBody(o.op); schema != nil {
			for _, f := range c.v.bodyFields(schema, nil, 0) {
				if f.required && f.schema != nil && firstType(f.schema) == "string" && len(c.v.validate(f.schema, "", "")) == 0 {
					t.Errorf("%s %s: required %s takes \"\"; the server refuses it (minLength: 1)", o.method, o.pattern, f.name())
				}
			}
		}
	}
}

// firstType is the schema's type, the first non-null one of a list.
func firstType(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if x != "null" {
				return x.(string)
			}
		}
	}
	return ""
}

// violations returns, for each constraint of schema (a string, number or integer, or an
// array of them), a value (as query text) that breaks it and nothing else a test can see.
func violations(s map[string]any, v *schemaValidator) map[string]string {
	out := map[string]string{}
	if items, ok := s["items"]; ok && firstType(s) == "array" {
		for what, bad := range violations(v.resolve(items).(map[string]any), v) {
			out["items "+what] = bad
		}
		return out
	}
	typ := firstType(s)
	num := func(k string) (float64, bool) {
		n, ok := s[k].(json.Number)
		f, _ := n.Float64()
		return f, ok
	}
	switch typ {
	case "integer", "number":
		out["not a number"] = "x"
		if typ == "integer" {
			out["not an integer"] = "1.5"
		}
		if m, ok := num("minimum"); ok {
			out["below minimum"] = strconv.FormatFloat(m-1, 'f', -1, 64)
		}
		if m, ok := num("exclusiveMinimum"); ok {
			out["at exclusiveMinimum"] = strconv.FormatFloat(m, 'f', -1, 64)
		}
		if m, ok := num("maximum"); ok {
			out["above maximum"] = strconv.FormatFloat(m+1, 'f', -1, 64)
		}
		if m, ok := num("multipleOf"); ok {
			out["not a multipleOf"] = strconv.FormatFloat(m/10, 'f', -1, 64)
		}
		if not, ok := s["not"].(map[string]any); ok && not["const"] != nil {
			out["what not refuses"] = fmt.Sprint(not["const"])
		}
	case "boolean":
		out["not a boolean"] = "maybe"
	case "string":
		if n, ok := num("minLength"); ok && n > 1 {
			out["below minLength"] = strings.Repeat("A", int(n)-1)
		}
		if n, ok := num("maxLength"); ok {
			out["above maxLength"] = strings.Repeat("A", int(n)+1)
		}
		if enum, ok := s["enum"].([]any); ok {
			out["not in enum"] = "NOT_" + fmt.Sprint(enum[0]) + "_X"
		}
		if p, ok := s["pattern"].(string); ok {
			re := regexp.MustCompile(p)
			for _, cand := range []string{" ", "!", "a", "A", "0", "aa", "00", "a a", "zz-zz", strings.Repeat("9", 40), "a\x01b"} {
				if !re.MatchString(cand) {
					out["not matching pattern"] = cand
					break
				}
			}
		}
		if f, ok := s["format"].(string); ok && f != "binary" {
			out["not a "+f] = "not-a-" + f
		}
	}
	return out
}

// TestOpenAPILinks: every create answer (201, and the order import's 202) declares OpenAPI
// links, so a stateful client can chain create → read → update → delete; every link names an
// operation, gives each of its path parameters, and takes each value from a place the
// document says exists.
func TestOpenAPILinks(t *testing.T) {
	c := &contract{t: t, doc: openAPIDoc(t)}
	c.v = &schemaValidator{root: c.doc}
	byID := map[string]operation{}
	for _, o := range c.operations() {
		byID[o.op["operationId"].(string)] = o
	}
	links := 0
	for _, o := range c.operations() {
		for code, r := range o.op["responses"].(map[string]any) {
			resp := c.v.resolve(r).(map[string]any)
			ls, _ := resp["links"].(map[string]any)
			if (code == "201" || code == "202") && len(ls) == 0 {
				t.Errorf("%s %s: %s answer has no links", o.method, o.pattern, code)
			}
			for name, l := range ls {
				links++
				where := fmt.Sprintf("%s %s %s link %s", o.method, o.pattern, code, name)
				l := l.(map[string]any)
				target, ok := byID[fmt.Sprint(l["operationId"])]
				if !ok {
					t.Errorf("%s: operationId %v names no operation", where, l["operationId"])
					continue
				}
				params, _ := l["parameters"].(map[string]any)
				for _, p := range c.parameters(target.op, "path") {
					if _, ok := params[p["name"].(string)]; !ok {
						t.Errorf("%s: gives no %s for %s %s", where, p["name"], target.method, target.pattern)
					}
				}
				// A body the link gives: each runtime expression in it names a string that is there.
				given, _ := l["requestBody"].(map[string]any)
				for member, expr := range given {
					if s, ok := expr.(string); ok && strings.HasPrefix(s, "$") {
						if problem := c.linkSource(o, resp, s); problem != "" {
							t.Errorf("%s: requestBody %s = %v: %s", where, member, expr, problem)
						}
					}
				}
				for pname, expr := range params {
					if !slices.ContainsFunc(append(c.parameters(target.op, "path"), c.parameters(target.op, "query")...),
						func(p map[string]any) bool { return p["name"] == pname }) {
						t.Errorf("%s: %s is not a parameter of %s %s", where, pname, target.method, target.pattern)
					}
					if problem := c.linkSource(o, resp, fmt.Sprint(expr)); problem != "" {
						t.Errorf("%s: %s = %v: %s", where, pname, expr, problem)
					}
				}
			}
		}
	}
	if links < 20 {
		t.Errorf("only %d links", links)
	}
}

// linkSource checks that a link's runtime expression names a string the document says
// is there: in the answer's body, the request's body, or the request's path or query.
func (c *contract) linkSource(o operation, resp map[string]any, expr string) string {
	var schema any
	var pointer string
	switch {
	case strings.HasPrefix(expr, "$response.body#/"):
		content, _ := resp["content"].(map[string]any)
		media, _ := content["application/json"].(map[string]any)
		schema, pointer = media["schema"], strings.TrimPrefix(expr, "$response.body#/")
	case strings.HasPrefix(expr, "$request.body#/"):
		schema, pointer = jsonBody(o.op), strings.TrimPrefix(expr, "$request.body#/")
	case strings.HasPrefix(expr, "$request.path."), strings.HasPrefix(expr, "$request.query."):
		where, name, _ := strings.Cut(strings.TrimPrefix(expr, "$request."), ".")
		for _, p := range c.parameters(o.op, where) {
			if p["name"] == name {
				return ""
			}
		}
		return "the operation has no such parameter"
	default:
		return "not a runtime expression the tests know"
	}
	for _, seg := range strings.Split(pointer, "/") {
		s := c.v.objectOf(schema)
		if s == nil {
			return "leads nowhere at " + seg
		}
		if _, err := strconv.Atoi(seg); err == nil {
			schema = s["items"]
		} else {
			props, _ := s["properties"].(map[string]any)
			schema = props[seg]
		}
		if schema == nil {
			return "the document has no " + seg + " there"
		}
	}
	if s, _ := c.v.resolve(schema).(map[string]any); s == nil || firstType(s) != "string" {
		return "does not lead to a string"
	}
	return ""
}

// objectOf is schema resolved, or its one alternative that is not null.
func (v *schemaValidator) objectOf(schema any) map[string]any {
	s, _ := v.resolve(schema).(map[string]any)
	if alts, ok := s["oneOf"].([]any); ok {
		for _, a := range alts {
			if a, _ := v.resolve(a).(map[string]any); firstType(a) != "null" {
				return a
			}
		}
	}
	return s
}

// acceptedBodies returns, by "METHOD pattern", the first JSON request body a golden file shows
// the server accepting (2xx), with the acme account's id filled in; bodies with other
// placeholders are left out.
func (c *contract) acceptedBodies() map[string]any {
	mux := http.NewServeMux()
	for route := range documentedRoutes(c.doc) {
		mux.HandleFunc(route, func(http.ResponseWriter, *http.Request) {})
	}
	files, err := filepath.Glob("../testdata/*/*.txtar")
	if err != nil {
		c.t.Fatal(err)
	}
	out := map[string]any{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			c.t.Fatal(err)
		}
		ar := txtar.Parse(data)
		for i := 0; i+1 < len(ar.Files); i++ {
			if ar.Files[i].Name != "request" || ar.Files[i+1].Name != "response" {
				continue
			}
			req := string(ar.Files[i].Data)
			method, target := goldenRequestLine(req)
			status, _, _ := splitGoldenResponse(string(ar.Files[i+1].Data))
			_, body, _ := strings.Cut(req, "\n\n")
			body = strings.ReplaceAll(strings.TrimSpace(body), "{{account.acme}}", c.e.accounts["acme"].ID)
			if status < 200 || status > 299 || !strings.HasPrefix(body, "{") || strings.Contains(body, "{{") {
				continue
			}
			_, pattern := mux.Handler(httptest.NewRequest(method, "http://waybill.test"+target, nil))
			var v any
			if _, seen := out[pattern]; pattern == "" || seen || json.Unmarshal([]byte(body), &v) != nil {
				continue
			}
			out[pattern] = v
		}
	}
	return out
}

// within is base, a decoded body, with value at the field's place (objects and a first array
// element made on the way where base has none).
func (f bodyField) within(base, value any) []byte {
	b, _ := json.Marshal(base)
	var doc any
	json.Unmarshal(b, &doc) // a copy
	var set func(node any, path []any) any
	set = func(node any, path []any) any {
		if len(path) == 0 {
			return value
		}
		switch step := path[0].(type) {
		case string:
			m, ok := node.(map[string]any)
			if !ok {
				m = map[string]any{}
			}
			m[step] = set(m[step], path[1:])
			return m
		default:
			a, ok := node.([]any)
			if !ok || len(a) == 0 {
				a = []any{nil}
			}
			a[0] = set(a[0], path[1:])
			return a
		}
	}
	b, _ = json.Marshal(set(doc, f.path))
	return b
}
