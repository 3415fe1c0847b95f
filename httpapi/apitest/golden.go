package apitest

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/httpapi/internal/txtar"
)

// RunGolden replays every dir/<endpoint>/<case>.txtar, each as a parallel subtest of t
// against a fresh API over a database from open. With update, it rewrites the response
// sections that differ instead of failing.
//
// A case is a sequence of sections:
//
//	-- request --   an HTTP/1.1 request; its body is everything after the blank line
//	-- response --  the expected answer: status line, headers, body (JSON indented)
//	-- drain --     run the background workers' due work once
//	-- clock --     set the clock to the RFC 3339 time in the section
//
// Requests may use {{token.NAME}}, {{account.NAME}}, {{org.NAME}}, {{secret.NAME}} (see
// NewEnv), {{sign.NAME}} (hex HMAC-SHA256 of the body with NAME's ingest secret) and
// {{sign_with.N.a.b}} (the same under the secret at a.b of the answer to request N) and
// {{N.a.b.0.c}} (a value from the JSON answer to request N, counting from 1).
func RunGolden(t *testing.T, dir string, open Opener, update bool) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no golden files under %s", dir)
	}
	for _, file := range files {
		name := filepath.ToSlash(strings.TrimSuffix(strings.TrimPrefix(file, filepath.Clean(dir)+string(filepath.Separator)), ".txtar"))
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			RunFile(t, NewEnv(t, open(t)), file, update)
		})
	}
}

// RunFile replays one golden file on e.
func RunFile(t *testing.T, e *Env, file string, update bool) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ar := txtar.Parse(data)
	var answers []any
	changed := false
	for i := 0; i < len(ar.Files); i++ {
		f := &ar.Files[i]
		switch f.Name {
		case "drain":
			e.Drain()
		case "clock":
			at, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(f.Data)))
			if err != nil {
				t.Fatalf("clock section: %v", err)
			}
			e.SetClock(at)
		case "request":
			req := e.goldenRequest(t, string(f.Data), answers)
			w := httptest.NewRecorder()
			e.API.ServeHTTP(w, req)
			got := formatResponse(w.Result())
			var v any
			json.Unmarshal(w.Body.Bytes(), &v)
			answers = append(answers, v)
			if i+1 >= len(ar.Files) || ar.Files[i+1].Name != "response" {
				t.Fatalf("request %d has no response section", len(answers))
			}
			i++
			if want := string(ar.Files[i].Data); got != want {
				if update {
					ar.Files[i].Data, changed = []byte(got), true
					continue
				}
				t.Errorf("request %d (%s %s): response differs\n--- got\n%s\n--- want\n%s", len(answers), req.Method, req.URL, got, want)
			}
		default:
			t.Fatalf("unknown section %q", f.Name)
		}
	}
	if changed {
		if err := os.WriteFile(file, ar.Format(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var placeholder = regexp.MustCompile(`\{\{([a-z0-9_.-]+)\}\}`)

// goldenRequest builds the request of a request section, filling in its placeholders.
func (e *Env) goldenRequest(t *testing.T, text string, answers []any) *http.Request {
	t.Helper()
	head, body, _ := strings.Cut(text, "\n\n")
	body = strings.TrimSuffix(body, "\n")
	fill := func(s string) string {
		return placeholder.ReplaceAllStringFunc(s, func(m string) string {
			key := strings.Trim(m, "{}")
			kind, rest, _ := strings.Cut(key, ".")
			switch kind {
			case "token":
				return e.Tokens[rest]
			case "account":
				return e.Accounts[rest].ID
			case "org":
				return e.Accounts[rest].OrganizationID
			case "secret":
				return e.Accounts[rest].IngestSecret
			}
			n, err := strconv.Atoi(kind)
			if err != nil || n < 1 || n > len(answers) {
				t.Fatalf("bad placeholder %s", m)
			}
			return fmt.Sprint(jsonPath(t, answers[n-1], rest))
		})
	}
	body = fill(body)
	head = fill(e.signatures(t, head, body, answers))
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(head + "\n\n")))
	if err != nil {
		t.Fatalf("request section: %v", err)
	}
	req.Body, req.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
	return req
}

var (
	signPlaceholder     = regexp.MustCompile(`\{\{sign\.([a-z0-9_-]+)\}\}`)
	signWithPlaceholder = regexp.MustCompile(`\{\{sign_with\.([0-9]+)\.([a-z0-9_.]+)\}\}`)
)

// signatures replaces {{sign.NAME}} with the body's signature under NAME's ingest secret, and
// {{sign_with.N.a.b}} with its signature under the secret at a.b of the answer to request N (a
// carrier's inbound secret, say).
func (e *Env) signatures(t *testing.T, head, body string, answers []any) string {
	head = signWithPlaceholder.ReplaceAllStringFunc(head, func(m string) string {
		sm := signWithPlaceholder.FindStringSubmatch(m)
		n, _ := strconv.Atoi(sm[1])
		if n < 1 || n > len(answers) {
			t.Fatalf("bad placeholder %s", m)
		}
		mac := hmac.New(sha256.New, []byte(fmt.Sprint(jsonPath(t, answers[n-1], sm[2]))))
		mac.Write([]byte(body))
		return hex.EncodeToString(mac.Sum(nil))
	})
	return signPlaceholder.ReplaceAllStringFunc(head, func(m string) string {
		name := signPlaceholder.FindStringSubmatch(m)[1]
		mac := hmac.New(sha256.New, []byte(e.Accounts[name].IngestSecret))
		mac.Write([]byte(body))
		return hex.EncodeToString(mac.Sum(nil))
	})
}

// jsonPath follows a dotted path of keys and indexes through a decoded JSON value.
func jsonPath(t *testing.T, v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i >= len(x) {
				t.Fatalf("bad path %s at %s", path, k)
			}
			v = x[i]
		default:
			t.Fatalf("bad path %s at %s", path, k)
		}
	}
	return v
}

// formatResponse renders an answer: status line, headers but the varying ones, body.
func formatResponse(res *http.Response) string {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/1.1 %s\n", res.Status)
	var keys []string
	for k := range res.Header {
		if k != "X-Request-Id" && k != "Date" && k != "Content-Length" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(res.Header[k], ", "))
	}
	body, _ := io.ReadAll(res.Body)
	if len(body) == 0 {
		return b.String()
	}
	b.WriteString("\n")
	ct := res.Header.Get("Content-Type")
	var out bytes.Buffer
	switch {
	case strings.HasPrefix(ct, "application/json") && json.Indent(&out, body, "", "  ") == nil:
		b.Write(out.Bytes())
		b.WriteString("\n")
	case strings.HasPrefix(ct, "text/"):
		b.Write(body)
		if !bytes.HasSuffix(body, []byte("\n")) {
			b.WriteString("\n")
		}
	default:
		fmt.Fprintf(&b, "(%d bytes of %s, starting %q)\n", len(body), ct, body[:min(8, len(body))])
	}
	return b.String()
}
