// Package httpapi serves waybill's HTTP API as an http.Handler: routes, bearer authentication
// and scopes, JSON envelopes, pagination and the mapping of domain errors to responses.
package httpapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/waybill/waybill/billing"
	"github.com/waybill/waybill/httpapi/internal/metrics"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
)

// Config holds the API's dependencies.
type Config struct {
	// DB is the opened store (store.OpenSQLite, or store.Open over PostgreSQL). Its Now,
	// NewID and Rand fields are the API's clock, ID and randomness sources.
	DB *store.DB
	// BaseURL is the externally visible root of the API, without a trailing slash; label_url,
	// pdf_url and csv_url start with it.
	BaseURL string
	// Logger receives request logs and worker errors; nil discards them.
	Logger *slog.Logger
	// WebhookAllowPrivate lets webhook URLs point at loopback, private and link-local hosts.
	WebhookAllowPrivate bool
	// WebhookRetrySchedule is the delay before each retry of a failed delivery; nil uses
	// DefaultRetrySchedule.
	WebhookRetrySchedule []time.Duration
	// Carriers are the host's own carriers (implementations of shipping.Carrier), quoted and
	// bought from beside the carriers stored in the database; a name used by both
	// is an error. A carrier that also implements shipping.Tracker is polled for tracking.
	Carriers []shipping.Carrier
	// Issuer is the letterhead of invoice PDFs; the zero value prints billing.DefaultIssuer.
	Issuer billing.Issuer
	// SimulateTracking, when positive, runs the tracking simulator: every purchased label moves
	// on one step (PRE_TRANSIT → IN_TRANSIT → OUT_FOR_DELIVERY → DELIVERED) this long after its
	// last event, through the operator feed's code path. For trying waybill out; 0 is off.
	SimulateTracking time.Duration
	// TrackingPollInterval is how long after its purchase, and then how often, a label of a
	// carrier that implements shipping.Tracker is polled for tracking events; 0 uses
	// DefaultTrackingPollInterval (1h).
	TrackingPollInterval time.Duration
	// CarrierTimeout bounds each call to a carrier to buy or void a label; 0 uses
	// shipping.DefaultCarrierTimeout (30s). A carrier that answers later is not waited for: a
	// label it then sold is voided.
	CarrierTimeout time.Duration
}

// DefaultRetrySchedule is the webhook retry schedule unless one is configured.
var DefaultRetrySchedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute,
	2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}

// API is waybill's HTTP API. Serve it with ServeHTTP and start its background workers with Run.
type API struct {
	db      *store.DB
	baseURL string
	log     *slog.Logger
	mux     *http.ServeMux
	cfg     Config
	metrics *metrics.Registry

	// workers run in the background from Run; each can also do one pass of its due work
	// synchronously (drain), which the tests use instead of waiting.
	workers []worker

	// Each domain's handlers keep their state in their own file's type.
	ship     *shippingState
	labels   *labelState
	orders   *ingestState
	billing  *billingState
	webhooks *webhookState
	docs     *documentState
	poll     *shipping.Poller
	batches  *batchState
}

// worker is one background loop of the API.
type worker struct {
	name  string
	run   func(ctx context.Context) error
	drain func(ctx context.Context) error
}

// New builds the API.
func New(cfg Config) (*API, error) {
	if cfg.DB == nil {
		return nil, errors.New("httpapi: Config.DB is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.WebhookRetrySchedule == nil {
		cfg.WebhookRetrySchedule = DefaultRetrySchedule
	}
	a := &API{db: cfg.DB, baseURL: strings.TrimSuffix(cfg.BaseURL, "/"), log: cfg.Logger, mux: http.NewServeMux(), cfg: cfg, metrics: metrics.New()}
	if err := a.setup(); err != nil {
		return nil, err
	}
	a.metrics.Workers(a.Workers()...)
	a.routes()
	return a, nil
}

// Run runs the background workers (Workers names them) until ctx ends, and returns once they
// all have stopped.
func (a *API) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, len(a.workers))
	for i, w := range a.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.run(ctx); err != nil && ctx.Err() == nil {
				a.workerLog(w.name).Error("worker stopped", "err", err)
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Workers names the background workers Run runs.
func (a *API) Workers() []string {
	names := make([]string, len(a.workers))
	for i, w := range a.workers {
		names[i] = w.name
	}
	return names
}

// setup builds each domain's state and registers its workers.
func (a *API) setup() error {
	for _, f := range []func() error{a.setupDocuments, a.setupShipping, a.setupLabels, a.setupIngest, a.setupBilling, a.setupWebhooks, a.setupSimulator, a.setupPolling, a.setupBatches} {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// Drain runs the background workers' due work once and returns: a deterministic step for
// tests (the golden files' drain sections), where Run would keep polling.
func (a *API) Drain(ctx context.Context) error { return a.drain(ctx) }

// drain does each worker's due work once, synchronously.
func (a *API) drain(ctx context.Context) error {
	for _, w := range a.workers {
		if err := w.drain(ctx); err != nil {
			return err
		}
	}
	return nil
}

// ServeHTTP serves the API.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The store's clock times requests (time.Now in production, monotonic), so the tests'
	// fixed clock makes metrics deterministic too.
	start := a.db.Now()
	id := r.Header.Get("X-Request-Id")
	if id == "" || len(id) > 64 || !printableASCII(id) {
		id = store.NewUUIDv7()
	}
	w.Header().Set("X-Request-Id", id)
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	h, pattern := a.mux.Handler(r)
	if requestLineLength(r) > maxRequestLine {
		// Checked here rather than left to http.Server's MaxHeaderBytes, so that a host
		// embedding the API behind its own server gets the same bound and the same answer.
		writeError(rec, &Error{Status: http.StatusRequestURITooLong, Code: "uri_too_long",
			Message: "the request line must be at most 8 KiB"})
	} else if e := refuseUnstorable(r); e != nil {
		pattern = ""
		writeError(rec, e)
	} else if p := r.URL.EscapedPath(); p != cleanPath(p) {
		// ServeMux would redirect "//shipments" or "/a/../healthz" to the clean path, with an
		// HTML body; no route of the API is written that way.
		pattern = ""
		writeError(rec, &Error{Status: http.StatusNotFound, Code: "not_found", Message: "no such path"})
	} else if pattern == "" {
		// The mux's own 404 and 405 answers, re-said in the API's error shape.
		probe := &statusRecorder{ResponseWriter: discardWriter{h: http.Header{}}}
		h.ServeHTTP(probe, r)
		if probe.status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", probe.Header().Get("Allow"))
			writeError(rec, &Error{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed",
				Message: "method " + r.Method + " is not allowed here"})
		} else {
			writeError(rec, &Error{Status: http.StatusNotFound, Code: "not_found", Message: "no such path"})
		}
	} else {
		// mux.Handler does not set the path values; ServeHTTP routes again and does.
		a.mux.ServeHTTP(rec, r)
	}
	if rec.status >= 400 {
		finishBody(rec, r)
	}
	elapsed := max(0, a.db.Now().Sub(start))
	a.metrics.Request(pattern, r.Method, rec.status, elapsed)
	path := loggedPath(r)
	if len(path) > 200 {
		path = path[:200] + "…"
	}
	// LogAttrs with typed attributes: no boxing of each value into an interface per request.
	// The duration is whole microseconds: slog's JSON handler writes a float through
	// json.Marshal (reflection and allocations on every line).
	a.log.LogAttrs(r.Context(), slog.LevelInfo, "request", slog.String("id", id), slog.String("method", r.Method),
		slog.String("path", path), slog.String("pattern", pattern), slog.Int("status", rec.status),
		slog.Int("bytes", rec.bytes), slog.Int64("duration_us", elapsed.Microseconds()))
}

// maxDrain bounds how much of a refused request's body finishBody reads and discards.
const maxDrain = 8 << 20

// finishBody sends a refusal (413, 400, 401, …) at once, then reads and discards what is
// left of the request body, up to maxDrain beyond the route's limit. Most clients send their whole body before they
// read the answer; a server that closes the connection with body bytes still arriving makes
// the kernel reset it, and the reset throws away the answer the client had not yet read
// ("connection reset by peer"). Once the body is read the connection closes cleanly (or
// stays open); beyond maxDrain it is closed anyway, and the server's read timeout bounds a
// client that sends slowly.
func finishBody(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 || r.ContentLength > bodyLimit(r)+maxDrain ||
		strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		// No body; or one too large to wait for; or one the client sends only once told to
		// (net/http tells it only when the handler reads the body).
		return
	}
	rc := http.NewResponseController(w)
	rc.EnableFullDuplex() // the body stays readable once the answer is sent
	rc.Flush()
	io.CopyN(io.Discard, r.Body, bodyLimit(r)-maxBody+maxDrain) // a card's route takes more, and drains more
}

// maxRequestLine bounds the request line (method, target with its query, protocol): 8 KiB.
// Every query parameter is read from within it, so it also bounds every filter.
const maxRequestLine = 8 << 10

// requestLineLength is the length of r's request line as the client sent it.
func requestLineLength(r *http.Request) int {
	target := r.RequestURI
	if target == "" {
		target = r.URL.RequestURI()
	}
	return len(r.Method) + 1 + len(target) + 1 + len(r.Proto)
}

// refuseUnstorable answers a request whose path, query or Idempotency-Key hold a NUL
// character or invalid UTF-8 (no database text column stores either; PostgreSQL refuses
// both), or whose query does not decode, repeats a single-valued parameter or gives one an
// empty value, before routing and authentication: a path is 404, like any path that names
// nothing; a query parameter or the key is 400 invalid_parameter. Cursors (after, before) are
// left to their own decoding (invalid_cursor), and the Authorization header to authentication
// (it is only hashed). NULs and invalid UTF-8 in JSON bodies are decodeStrict's.
func refuseUnstorable(r *http.Request) *Error {
	if strings.ContainsRune(r.URL.Path, 0) || !utf8.ValidString(r.URL.Path) {
		return &Error{Status: http.StatusNotFound, Code: "not_found", Message: "no such path"}
	}
	if r.URL.RawQuery != "" {
		if e := malformedQuery(r.URL.RawQuery); e != nil {
			return e
		}
		for name, values := range r.URL.Query() {
			if len(values) > 1 && !listFilters[strings.TrimSuffix(name, "[]")] {
				// Which of two values the caller meant is not ours to pick (the first, silently).
				name = strings.ToValidUTF8(name, "\uFFFD")
				return invalidParameter(name, name+" may be given once")
			}
			if name == "after" || name == "before" {
				continue
			}
			if slices.Contains(values, "") {
				// Every handler reads an empty value as "not given", so page= would answer page
				// 1; no parameter of the API takes an empty value (openapi.json says so).
				name = strings.ToValidUTF8(name, "\uFFFD")
				return invalidParameter(name, name+" must not be empty")
			}
			for _, v := range append(values, name) {
				if e := unstorable(strings.ToValidUTF8(strings.ReplaceAll(name, "\x00", ""), ""), v); e != nil {
					return e
				}
			}
		}
	}
	return unstorable("Idempotency-Key", r.Header.Get("Idempotency-Key"))
}

// listFilters are the query parameters that take several values, repeated or comma-separated
// (GET /shipments; listValues); every other parameter may be given once.
var listFilters = map[string]bool{"statuses": true, "brands": true, "carriers": true}

// malformedQuery is the 400 invalid_parameter for the first parameter of a query that does not
// decode: a bad %-escape, or a ';' (no longer a separator). url.Values drops such a parameter
// silently, so a broken filter would widen a list instead of failing.
func malformedQuery(raw string) *Error {
	for pair := range strings.SplitSeq(raw, "&") {
		key, value, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(key)
		if err != nil {
			name = key
		}
		if _, verr := url.QueryUnescape(value); err != nil || verr != nil || strings.Contains(pair, ";") {
			name = strings.ToValidUTF8(name, "\uFFFD")
			return invalidParameter(name, name+" is not URL-encoded correctly")
		}
	}
	return nil
}

// cleanPath is the path ServeMux routes p by: p with "//", "." and ".." elements resolved, its
// trailing slash kept.
func cleanPath(p string) string {
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// unstorable is the 400 invalid_parameter for a parameter value holding a NUL character or
// invalid UTF-8; nil for a storable one.
func unstorable(name, v string) *Error {
	switch {
	case strings.ContainsRune(v, 0):
		return invalidParameter(name, "must not contain a NUL character")
	case !utf8.ValidString(v):
		return invalidParameter(name, "must be valid UTF-8")
	}
	return nil
}

// printableASCII reports whether s holds only printable ASCII (a caller's X-Request-Id is
// echoed and logged only then).
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

type statusRecorder struct {
	http.ResponseWriter
	status      int
	bytes       int
	wroteHeader bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wroteHeader {
		s.status, s.wroteHeader = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if !s.wroteHeader {
		s.WriteHeader(http.StatusOK)
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += n
	return n, err
}

// WriteString passes strings (stored responses) through without converting them to bytes.
func (s *statusRecorder) WriteString(str string) (int, error) {
	if !s.wroteHeader {
		s.WriteHeader(http.StatusOK)
	}
	n, err := io.WriteString(s.ResponseWriter, str)
	s.bytes += n
	return n, err
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

type discardWriter struct{ h http.Header }

func (d discardWriter) Header() http.Header         { return d.h }
func (d discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d discardWriter) WriteHeader(int)             {}

// healthz answers once the database does.
func (a *API) healthz(w http.ResponseWriter, r *http.Request) {
	if err := a.db.Ping(r.Context()); err != nil {
		a.log.Error("healthz", "err", err)
		writeError(w, errDatabaseUnavailable)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// now and newID are the store's clock and ID source as they are when called (tests set them).
func (a *API) now() time.Time { return a.db.Now() }
func (a *API) newID() string  { return a.db.NewID() }
