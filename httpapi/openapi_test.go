package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/httpapi/internal/strictjson"
	"github.com/waybill/waybill/httpapi/internal/txtar"
)

// openAPIDoc decodes the embedded document, numbers kept as json.Number.
func openAPIDoc(t *testing.T) map[string]any {
	t.Helper()
	v, err := decodeJSONNumbers(openAPIDocument)
	if err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	return v.(map[string]any)
}

func decodeJSONNumbers(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data")
	}
	return v, nil
}

// routeDecl is one route registered in routes.go: its pattern and the scopes it needs (none for
// the routes registered without bearer authentication).
type routeDecl struct {
	pattern string
	scopes  []string
}

// parseRoutes reads the patterns routes.go registers, from its source: every call whose first
// argument is a string "METHOD /path"; a scope constant as its second argument is the scope
// the route needs (a.handle), anything else registers it without bearer authentication.
func parseRoutes(t *testing.T) []routeDecl {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "routes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok {
			for i, name := range vs.Names {
				if i < len(vs.Values) {
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						consts[name.Name], _ = strconv.Unquote(lit.Value)
					}
				}
			}
		}
		return true
	})
	var routes []routeDecl
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) < 2 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		lit, ok := call.Args[0].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		pattern, _ := strconv.Unquote(lit.Value)
		if !routePattern.MatchString(pattern) {
			return true
		}
		var scopes []string
		if id, ok := call.Args[1].(*ast.Ident); ok && slices.Contains(AllScopes, consts[id.Name]) {
			scopes = []string{consts[id.Name]}
		} else if lit, ok := call.Args[1].(*ast.CompositeLit); ok && sel.Sel.Name == "handleScopes" {
			// a.handleScopes(pattern, []string{ScopeA, ScopeB}, h): every scope is needed.
			for _, e := range lit.Elts {
				if id, ok := e.(*ast.Ident); ok && slices.Contains(AllScopes, consts[id.Name]) {
					scopes = append(scopes, consts[id.Name])
				} else {
					t.Fatalf("routes.go: %s: a.handleScopes with a scope that is not a constant", pattern)
				}
			}
		} else if sel.Sel.Name == "handle" || sel.Sel.Name == "handleScopes" {
			t.Fatalf("routes.go: %s: a.handle without a scope constant", pattern)
		}
		routes = append(routes, routeDecl{pattern, scopes})
		return true
	})
	if len(routes) < 10 {
		t.Fatalf("routes.go: found only %d routes; the parser is out of step with it", len(routes))
	}
	return routes
}

var routePattern = regexp.MustCompile(`^[A-Z]+ /`)

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// documentedRoutes lists the document's operations as "METHOD /path" patterns.
func documentedRoutes(doc map[string]any) map[string]map[string]any {
	ops := map[string]map[string]any{}
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			if slices.Contains(httpMethods, method) {
				ops[strings.ToUpper(method)+" "+path] = op.(map[string]any)
			}
		}
	}
	return ops
}

// TestOpenAPIRoutes fails when routes.go and openapi.json disagree about which routes exist or
// which scope each needs.
func TestOpenAPIRoutes(t *testing.T) {
	doc := openAPIDoc(t)
	ops := documentedRoutes(doc)
	seen := map[string]bool{}
	for _, r := range parseRoutes(t) {
		seen[r.pattern] = true
		op, ok := ops[r.pattern]
		if !ok {
			t.Errorf("route %s (routes.go) is missing from openapi.json", r.pattern)
			continue
		}
		// Path parameters: the document declares exactly the pattern's wildcards.
		var want, got []string
		for _, m := range regexp.MustCompile(`\{([a-z_]+)\}`).FindAllStringSubmatch(r.pattern, -1) {
			want = append(want, m[1])
		}
		params, _ := op["parameters"].([]any)
		for _, p := range params {
			if p := p.(map[string]any); p["in"] == "path" {
				got = append(got, p["name"].(string))
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: path parameters %v; want %v", r.pattern, got, want)
		}
		sec, ok := op["security"].([]any)
		if !ok {
			t.Errorf("%s: no security of its own", r.pattern)
			continue
		}
		if len(r.scopes) > 0 {
			var scopes []any
			for _, s := range r.scopes {
				scopes = append(scopes, s)
			}
			want := []any{map[string]any{"bearer": scopes}}
			if !jsonEqual(sec, want) {
				t.Errorf("%s: security %v; want bearer with scopes %v", r.pattern, sec, r.scopes)
			}
		} else if len(sec) > 0 && r.pattern != "POST /webhook/custom-orders" && r.pattern != "POST /carrier_events/{carrier}" {
			t.Errorf("%s: documented with security %v; routes.go registers it without authentication", r.pattern, sec)
		}
	}
	for pattern := range ops {
		if !seen[pattern] {
			t.Errorf("openapi.json documents %s, which routes.go does not register", pattern)
		}
	}
	// The order import's signature scheme.
	op := ops["POST /webhook/custom-orders"]
	if want := []any{map[string]any{"organizationId": []any{}, "orderImportSignature": []any{}}}; op == nil || !jsonEqual(op["security"], want) {
		t.Errorf("POST /webhook/custom-orders: security %v; want %v", op["security"], want)
	}
	// The carrier push's signature scheme.
	op = ops["POST /carrier_events/{carrier}"]
	if want := []any{map[string]any{"carrierSignature": []any{}}}; op == nil || !jsonEqual(op["security"], want) {
		t.Errorf("POST /carrier_events/{carrier}: security %v; want %v", op["security"], want)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestOpenAPIServed(t *testing.T) {
	// A key given twice (two edits merged into one object) is read as the last by most tools
	// and silently drops the other.
	if err := strictjson.Check(openAPIDocument); err != nil {
		t.Errorf("openapi.json: %v", err)
	}
	e := newEnv(t)
	w := e.do("GET", "/openapi.json", "", nil)
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET /openapi.json = %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	var doc struct {
		OpenAPI string         `json:"openapi"`
		Paths   map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil || doc.OpenAPI != "3.1.0" || len(doc.Paths) == 0 {
		t.Errorf("GET /openapi.json: openapi %q, %d paths, %v", doc.OpenAPI, len(doc.Paths), err)
	}
}

// TestOpenAPIGoldens checks every JSON answer of every golden file against the schema the
// document gives its route and status; a status the document does not list for the route fails.
func TestOpenAPIGoldens(t *testing.T) {
	doc := openAPIDoc(t)
	v := &schemaValidator{root: doc}
	ops := documentedRoutes(doc)
	mux := http.NewServeMux()
	for pattern := range ops {
		mux.HandleFunc(pattern, func(http.ResponseWriter, *http.Request) {})
	}
	files, err := filepath.Glob("../testdata/*/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files (%v)", err)
	}
	checked := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(filepath.ToSlash(file), "../testdata/")
		ar := txtar.Parse(data)
		n := 0
		for i := 0; i+1 < len(ar.Files); i++ {
			if ar.Files[i].Name != "request" || ar.Files[i+1].Name != "response" {
				continue
			}
			n++
			method, target := goldenRequestLine(string(ar.Files[i].Data))
			where := fmt.Sprintf("%s request %d (%s %.80s)", name, n, method, target)
			if !strings.HasPrefix(target, "/") {
				// A URL taken whole from an earlier answer (a capability URL): its route is
				// known only by replaying the file, which TestGolden does.
				continue
			}
			status, contentType, body := splitGoldenResponse(string(ar.Files[i+1].Data))
			req := httptest.NewRequest(method, "http://waybill.test"+target, nil)
			_, pattern := mux.Handler(req)
			if p := req.URL.EscapedPath(); p != cleanPath(p) {
				pattern = "" // the mux would route the clean path; the API routes none
			}
			var schema any
			if pattern == "" {
				// No route: 404 or 405, or 414 for a request line too long to route at all.
				if status != 404 && status != 405 && status != 414 {
					t.Errorf("%s: matches no documented route, yet answered %d", where, status)
					continue
				}
				schema = map[string]any{"$ref": "#/components/schemas/Error"}
			} else {
				if status < 300 {
					// An accepted request's body is one the document allows.
					for _, problem := range v.validateRequestBody(ops[pattern], string(ar.Files[i].Data)) {
						t.Errorf("%s: %s request body: %s", where, pattern, problem)
					}
				}
				resp, ok := v.resolve(ops[pattern]["responses"].(map[string]any)[strconv.Itoa(status)]).(map[string]any)
				if !ok {
					t.Errorf("%s: %s: status %d is not documented", where, pattern, status)
					continue
				}
				content, _ := resp["content"].(map[string]any)
				if body == "" {
					if len(content) > 0 {
						t.Errorf("%s: %s %d: empty body; the document gives it content", where, pattern, status)
					}
					continue
				}
				mt, _, _ := strings.Cut(contentType, ";")
				media, ok := content[mt].(map[string]any)
				if !ok {
					t.Errorf("%s: %s %d: content type %q is not documented", where, pattern, status, contentType)
					continue
				}
				schema = media["schema"]
			}
			if !strings.HasPrefix(contentType, "application/json") {
				continue
			}
			value, err := decodeJSONNumbers([]byte(body))
			if err != nil {
				t.Errorf("%s: body is not JSON: %v", where, err)
				continue
			}
			checked++
			for _, problem := range v.validate(schema, value, "") {
				t.Errorf("%s → %d: %s", where, status, problem)
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d JSON answers checked", checked)
	}
}

// validateRequestBody checks a golden request's JSON body against the operation's request
// body schema; placeholders stand for IDs.
func (v *schemaValidator) validateRequestBody(op map[string]any, request string) []string {
	head, body, _ := strings.Cut(request, "\n\n")
	body = strings.TrimSpace(body)
	if body == "" {
		if rb, ok := op["requestBody"].(map[string]any); ok && rb["required"] == true {
			return []string{"no body; the document requires one"}
		}
		return nil
	}
	if strings.Contains(strings.ToLower(head), "content-type:") && !strings.Contains(strings.ToLower(head), "application/json") {
		return nil
	}
	rb, ok := op["requestBody"].(map[string]any)
	if !ok {
		return []string{"the document takes no body"}
	}
	media, ok := rb["content"].(map[string]any)["application/json"].(map[string]any)
	if !ok {
		return []string{"the document takes no JSON body"}
	}
	value, err := decodeJSONNumbers([]byte(goldenPlaceholder.ReplaceAllString(body, "00000000-0000-7000-8000-000000000000")))
	if err != nil {
		return nil // a deliberately malformed body the server tolerates (order import is lenient)
	}
	return v.validate(media["schema"], value, "")
}

var goldenPlaceholder = regexp.MustCompile(`\{\{[^}]*\}\}`)

// goldenRequestLine returns the method and target of a golden request, placeholders filled
// with a stand-in segment.
func goldenRequestLine(text string) (method, target string) {
	line, _, _ := strings.Cut(text, "\n")
	parts := strings.Fields(line)
	if len(parts) < 2 {
		return "", ""
	}
	return parts[0], goldenPlaceholder.ReplaceAllString(parts[1], "x")
}

func splitGoldenResponse(text string) (status int, contentType, body string) {
	head, body, _ := strings.Cut(text, "\n\n")
	lines := strings.Split(head, "\n")
	if f := strings.Fields(lines[0]); len(f) > 1 {
		status, _ = strconv.Atoi(f[1])
	}
	for _, l := range lines[1:] {
		if k, v, ok := strings.Cut(l, ": "); ok && strings.EqualFold(k, "Content-Type") {
			contentType = v
		}
	}
	return status, contentType, strings.TrimSpace(body)
}

// schemaValidator checks JSON values against the JSON Schema subset openapi.json uses. A
// keyword it does not know is reported, never ignored.
type schemaValidator struct{ root map[string]any }

// itemsFailAlone marks an array whose items the server judges one by one (a batch's shipments):
// an item the schema refuses does not refuse the body; it is answered FAILED, with its errors at
// paths within the item.
const itemsFailAlone = "x-items-fail-alone"

// annotations are keywords that do not constrain a value.
var annotations = []string{"description", "default", "contentEncoding", "title", "example", "examples"}

func (v *schemaValidator) resolve(s any) any {
	for i := 0; i < 32; i++ {
		m, ok := s.(map[string]any)
		if !ok {
			return s
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return s
		}
		s = any(v.root)
		for _, k := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			mm, _ := s.(map[string]any)
			s = mm[k]
		}
		if s == nil {
			return nil
		}
	}
	return s
}

// validate returns the problems of value against schema; path names where they are.
func (v *schemaValidator) validate(schema, value any, path string) []string {
	if path == "" {
		path = "$"
	}
	s, ok := v.resolve(schema).(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s: schema %v does not resolve", path, schema)}
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, path+": "+fmt.Sprintf(format, args...)) }
	for k := range s {
		switch k {
		case "type", "properties", "required", "additionalProperties", "items", "enum", "oneOf", "format",
			"minimum", "maximum", "exclusiveMinimum", "minItems", "maxItems", "minLength", "maxLength", "pattern",
			"not", "const", "multipleOf", "propertyNames", "uniqueItems", itemsFailAlone:
		default:
			if !slices.Contains(annotations, k) {
				bad("schema keyword %q is not supported by the validator", k)
			}
		}
	}
	if types, ok := s["type"]; ok {
		var allowed []string
		switch tt := types.(type) {
		case string:
			allowed = []string{tt}
		case []any:
			for _, x := range tt {
				allowed = append(allowed, x.(string))
			}
		}
		if !slices.ContainsFunc(allowed, func(t string) bool { return jsonTypeIs(value, t) }) {
			bad("%s is not of type %v", describe(value), allowed)
			return problems
		}
	}
	if enum, ok := s["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return jsonEqual(e, value) }) {
		bad("%s is not one of %v", describe(value), enum)
	}
	if c, ok := s["const"]; ok && !jsonEqual(c, value) {
		bad("%s is not %s", describe(value), describe(c))
	}
	if not, ok := s["not"]; ok && len(v.validate(not, value, path)) == 0 {
		bad("%s is what \"not\" refuses", describe(value))
	}
	if alts, ok := s["oneOf"].([]any); ok {
		matched := 0
		for _, alt := range alts {
			if len(v.validate(alt, value, path)) == 0 {
				matched++
			}
		}
		if matched != 1 {
			bad("%s matches %d of the oneOf alternatives; want exactly 1", describe(value), matched)
		}
	}
	switch x := value.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if _, ok := x[r.(string)]; !ok {
					bad("required property %q is missing", r)
				}
			}
		}
		if names, ok := s["propertyNames"]; ok {
			for k := range x {
				for _, problem := range v.validate(names, k, path) {
					bad("property name %q: %s", k, problem)
				}
			}
		}
		for k, val := range x {
			if ps, ok := props[k]; ok {
				problems = append(problems, v.validate(ps, val, path+"."+k)...)
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					bad("property %q is not allowed", k)
				}
			case map[string]any:
				problems = append(problems, v.validate(ap, val, path+"."+k)...)
			}
		}
	case []any:
		if n, ok := s["minItems"].(json.Number); ok && int64(len(x)) < mustInt(n) {
			bad("%d items; want at least %s", len(x), n)
		}
		if n, ok := s["maxItems"].(json.Number); ok && int64(len(x)) > mustInt(n) {
			bad("%d items; want at most %s", len(x), n)
		}
		if s["uniqueItems"] == true {
			for i := range x {
				if slices.ContainsFunc(x[:i], func(y any) bool { return jsonEqual(x[i], y) }) {
					bad("item %d repeats an earlier one", i)
				}
			}
		}
		if items, ok := s["items"]; ok && s[itemsFailAlone] != true {
			for i, it := range x {
				problems = append(problems, v.validate(items, it, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	case json.Number:
		f, _ := x.Float64()
		if m, ok := s["minimum"].(json.Number); ok && f < mustFloat(m) {
			bad("%s is below the minimum %s", x, m)
		}
		if m, ok := s["maximum"].(json.Number); ok && f > mustFloat(m) {
			bad("%s is above the maximum %s", x, m)
		}
		if m, ok := s["exclusiveMinimum"].(json.Number); ok && f <= mustFloat(m) {
			bad("%s is not above %s", x, m)
		}
		if m, ok := s["multipleOf"].(json.Number); ok && !multipleOf(f, mustFloat(m)) {
			bad("%s is not a multiple of %s", x, m)
		}
	case string:
		if n, ok := s["maxLength"].(json.Number); ok && int64(len([]rune(x))) > mustInt(n) {
			bad("string longer than %s", n)
		}
		if n, ok := s["minLength"].(json.Number); ok && int64(len([]rune(x))) < mustInt(n) {
			bad("string shorter than %s", n)
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(x) {
			bad("%q does not match %s", x, p)
		}
		if f, ok := s["format"].(string); ok && !formatOK(f, x) {
			bad("%q is not a valid %s", x, f)
		}
	}
	return problems
}

// multipleOf reports whether f is a whole multiple of m, within the rounding error of binary
// floating point (99.95 is a multiple of 0.01, though 99.95/0.01 is 9994.999999999998), as the
// server checks whole cents.
func multipleOf(f, m float64) bool {
	q := f / m
	return math.Abs(q-math.Round(q)) <= 1e-6
}

func mustInt(n json.Number) int64     { i, _ := n.Int64(); return i }
func mustFloat(n json.Number) float64 { f, _ := n.Float64(); return f }

func jsonTypeIs(value any, t string) bool {
	switch x := value.(type) {
	case nil:
		return t == "null"
	case bool:
		return t == "boolean"
	case string:
		return t == "string"
	case []any:
		return t == "array"
	case map[string]any:
		return t == "object"
	case json.Number:
		if t == "number" {
			return true
		}
		f, err := x.Float64()
		return t == "integer" && err == nil && f == math.Trunc(f)
	}
	return false
}

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// formatOK checks the formats the document uses. (The answers' timestamps also carry a
// pattern: UTC with exactly six fractional digits.)
func formatOK(format, s string) bool {
	switch format {
	case "date-time":
		_, err := time.Parse(time.RFC3339Nano, s)
		return err == nil
	case "date":
		_, err := time.Parse("2006-01-02", s)
		return err == nil
	case "uuid":
		return uuidPattern.MatchString(s)
	case "uri":
		return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
	case "binary":
		return true
	}
	return false
}

func describe(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 60 {
		return string(b[:60]) + "…"
	}
	return string(b)
}

// TestSchemaValidator shows the validator refuses what it should.
func TestSchemaValidator(t *testing.T) {
	root := map[string]any{"components": map[string]any{"schemas": map[string]any{
		"Thing": map[string]any{"type": "object", "required": []any{"id"}, "additionalProperties": false,
			"properties": map[string]any{
				"id":    map[string]any{"type": "string", "format": "uuid"},
				"n":     map[string]any{"type": "integer", "minimum": json.Number("1"), "maximum": json.Number("8")},
				"at":    map[string]any{"type": []any{"string", "null"}, "format": "date-time", "pattern": `^[0-9-]{10}T[0-9:]{8}[.][0-9]{6}Z$`},
				"kind":  map[string]any{"type": "string", "enum": []any{"A", "B"}},
				"name":  map[string]any{"type": "string", "minLength": json.Number("1")},
				"tags":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": json.Number("2")},
				"maybe": map[string]any{"oneOf": []any{map[string]any{"$ref": "#/components/schemas/Thing"}, map[string]any{"type": "null"}}},
				"fee":   map[string]any{"type": "integer", "not": map[string]any{"const": json.Number("0")}},
				"usd":   map[string]any{"type": "number", "multipleOf": json.Number("0.01")},
				"zones": map[string]any{"type": "object", "propertyNames": map[string]any{"pattern": "^[A-Z]{2}$", "not": map[string]any{"const": "US"}}},
				"zips":  map[string]any{"type": "array", "uniqueItems": true},
			}},
	}}}
	v := &schemaValidator{root: root}
	ref := map[string]any{"$ref": "#/components/schemas/Thing"}
	for _, tc := range []struct {
		doc  string
		want int // problems
	}{
		{`{"id": "00000000-0000-7000-8000-000000000001"}`, 0},
		{`{"id": "00000000-0000-7000-8000-000000000001", "n": 8, "at": null, "kind": "B", "tags": ["x"], "maybe": null}`, 0},
		{`{"id": "00000000-0000-7000-8000-000000000001", "at": "2026-11-22T03:42:03.123456Z", "maybe": {"id": "00000000-0000-7000-8000-000000000002"}}`, 0},
		{`{}`, 1},
		{`{"id": "nope"}`, 1},
		{`{"id": "00000000-0000-7000-8000-000000000001", "extra": 1}`, 1},
		{`{"id": "00000000-0000-7000-8000-000000000001", "n": 1.5}`, 1},
		{`{"id": "00000000-0000-7000-8000-000000000001", "n": 9}`, 1},
		{`{"id": "00000000-0000-7000-8000-000000000001", "at": "2026-11-22T03:42:03Z"}`, 1},
		{`{"id": "00000000-0000-7000-8000-000000000001", "at": "2026-11-22 03:42:03.123456Z"}`, 2},
		{`{"id": "00000000-0000-7000-8000-000000000001", "kind": "C"}`, 1},
		{`{"id": "00000000-0000-7000-8000-000000000001", "name": ""}`, 1},
		{`{"id": "00000000-0000-7000-8000-000000000001", "name": "x"}`, 0},
		{`{"id": "00000000-0000-7000-8000-000000000001", "tags": ["a", 1, "c"]}`, 2},
		{`{"id": "00000000-0000-7000-8000-000000000001", "maybe": {}}`, 1},
		{`{"id": "00000000-0000-7000-8000-000000000001", "fee": -5, "usd": 99.95}`, 0},
		{`{"id": "00000000-0000-7000-8000-000000000001", "fee": 0}`, 1},
		{`{"id": "00000000-0000-7000-8000-000000000001", "usd": 0.015}`, 1},
		{`{"id": "00000000-0000-7000-8000-000000000001", "zones": {"CA": 1}, "zips": ["1", "2"]}`, 0},
		{`{"id": "00000000-0000-7000-8000-000000000001", "zones": {"US": 1, "ca": 2}}`, 2},
		{`{"id": "00000000-0000-7000-8000-000000000001", "zips": ["1", "2", "1"]}`, 1},
		{`[]`, 1},
	} {
		value, err := decodeJSONNumbers([]byte(tc.doc))
		if err != nil {
			t.Fatal(err)
		}
		if got := v.validate(ref, value, ""); len(got) != tc.want {
			t.Errorf("validate(%s) = %q; want %d problems", tc.doc, got, tc.want)
		}
	}
	if got := v.validate(map[string]any{"patternProperties": map[string]any{}}, "x", ""); len(got) != 1 {
		t.Errorf("an unsupported keyword gave %q; want one problem", got)
	}
}

// TestOpenAPILint lints the document with Redocly CLI (testdata/openapi_lint, npm ci there).
func TestOpenAPILint(t *testing.T) {
	dir := filepath.Join("..", "testdata", "openapi_lint")
	bin := filepath.Join(dir, "node_modules", ".bin", "redocly")
	if _, err := os.Stat(bin); err != nil {
		msg := "testdata/openapi_lint/node_modules missing (run npm ci there)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if testing.Short() {
		t.Skip("-short")
	}
	cmd := exec.Command("node_modules/.bin/redocly", "lint")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("redocly lint: %v\n%s", err, out)
	}
}
