package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/waybill/waybill/shipping/work"
)

// Delivery is one leased event record, with what it takes to deliver it.
type Delivery struct {
	Event
	Secret string
	// Round counts the failed attempts since the event was (re)queued; it picks the retry delay.
	Round int
	// Lease identifies this claim: a result is recorded only while the lease is still ours.
	Lease string
}

// Candidate names a due event record the worker may lease.
type Candidate struct {
	AccountID      string
	SubscriptionID string
	ID             string
}

// Result is the outcome of one delivery attempt.
type Result struct {
	Delivery
	At             time.Time
	Status         string     // StatusDelivered, StatusPending (retry) or StatusFailed
	NextAttemptAt  *time.Time // when Status is StatusPending
	ResponseStatus *int       // nil when no answer came
	ResponseBody   string     // truncated to MaxResponseBody, as storable text (storableText)
	Error          string     // why it failed (Describe), without URL or secrets
	Deactivate     bool       // 410 Gone: the subscription is switched off
}

// Store is what the worker needs from persistence (implemented by *store.DB).
type Store interface {
	// DueWebhookEvents lists PENDING records of active subscriptions that are due at now and
	// not leased: of up to accounts accounts (longest waiting first, none in exclude), up to
	// perAccount records each (oldest due first, none of a subscription in
	// excludeSubscriptions), account after account.
	DueWebhookEvents(ctx context.Context, now time.Time, exclude, excludeSubscriptions []string, perAccount, accounts int) ([]Candidate, error)
	// LeaseWebhookEvents leases the candidates that are still due and free until until under
	// a fresh lease, returning them with their subscription's current URL and secret.
	LeaseWebhookEvents(ctx context.Context, cs []Candidate, now, until time.Time) ([]Delivery, error)
	// FinishWebhookDeliveries records attempts' results, in one transaction, each only if its
	// lease is still held.
	FinishWebhookDeliveries(ctx context.Context, rs []Result) error
}

// Defaults of the Worker's tunables.
const (
	DefaultTimeout         = 10 * time.Second
	DefaultConcurrency     = 32
	DefaultPerAccount      = 8
	DefaultPerSubscription = 2
	DefaultPollInterval    = 500 * time.Millisecond
	MaxResponseBody        = 1024
	// maxRetryAfter bounds how far a receiver's Retry-After can push the next attempt.
	maxRetryAfter = 24 * time.Hour
)

// Worker delivers due event records. Set its fields, then call Run (or Drain).
type Worker struct {
	Store Store
	// Schedule is the delay before each retry, counted from the failed attempt's start (a
	// longer Retry-After wins); after len(Schedule)+1 failed attempts the record is FAILED.
	Schedule []time.Duration
	Now      func() time.Time
	Log      *slog.Logger
	// AllowPrivate lets deliveries reach loopback, private and link-local addresses.
	AllowPrivate bool

	// Zero values take the defaults above. Lease, zero, is Timeout + 10 s: a delivery
	// in flight when the process dies is retried once its lease ends.
	Timeout     time.Duration
	Concurrency int
	// PerAccount bounds one account's deliveries in flight, so its hanging receivers or its
	// fan-out leave the other slots to other accounts.
	PerAccount      int
	PerSubscription int
	PollInterval    time.Duration
	Lease           time.Duration
	// Client, nil, is built by Init: no proxy, no redirects, the dial-time address guard.
	Client *http.Client

	initOnce sync.Once
	wake     chan struct{}

	// Results wait here while a batch is being written (group commit): one transaction
	// records every attempt that finished meanwhile.
	finishMu  sync.Mutex
	finishing bool
	toFinish  []pendingResult
}

type pendingResult struct {
	r    Result
	done chan error
}

// Init fills in the defaults; Run and Drain call it.
func (w *Worker) Init() {
	w.initOnce.Do(func() {
		if w.Timeout <= 0 {
			w.Timeout = DefaultTimeout
		}
		if w.Concurrency <= 0 {
			w.Concurrency = DefaultConcurrency
		}
		if w.PerSubscription <= 0 {
			w.PerSubscription = DefaultPerSubscription
		}
		if w.PerAccount <= 0 {
			w.PerAccount = min(DefaultPerAccount, max(1, w.Concurrency/2))
		}
		if w.PollInterval <= 0 {
			w.PollInterval = DefaultPollInterval
		}
		if w.Lease <= 0 {
			w.Lease = w.Timeout + 10*time.Second
		}
		if w.Now == nil {
			w.Now = time.Now
		}
		if w.Log == nil {
			w.Log = slog.New(slog.DiscardHandler)
		}
		if w.Client == nil {
			w.Client = NewClient(w.AllowPrivate, w.Concurrency)
		}
		w.wake = make(chan struct{}, 1)
	})
}

// NewClient is the delivery HTTP client: it follows no redirects (a 3xx is a failed attempt),
// uses no proxy (a proxy would dial on our behalf, past the guard) and, unless allowPrivate,
// refuses to connect to blocked addresses.
func NewClient(allowPrivate bool, conns int) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = DialControl
	}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           d.DialContext,
			TLSHandshakeTimeout:   5 * time.Second,
			ResponseHeaderTimeout: DefaultTimeout,
			MaxIdleConns:          4 * conns,
			MaxIdleConnsPerHost:   conns,
			IdleConnTimeout:       60 * time.Second,
			ForceAttemptHTTP2:     true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Notify wakes Run to look for due records now rather than at its next poll.
func (w *Worker) Notify() {
	w.Init()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Run delivers due records until ctx ends, at most Concurrency at once, PerAccount at once
// for any one account and PerSubscription at once to any one subscription (work.Slots). Due
// records are taken round-robin across accounts (work.RoundRobin), so one account's slow or
// hostile receivers hold at most PerAccount slots (for at most Timeout) and its fan-out waits
// its turn beside the others'. It returns after the deliveries in flight have finished.
func (w *Worker) Run(ctx context.Context) error {
	w.Init()
	slots := &work.Slots{Max: w.Concurrency, PerAccount: w.PerAccount, PerKey: w.PerSubscription}
	var wg sync.WaitGroup
	defer wg.Wait()
	work.Loop{Every: w.PollInterval, Idle: work.IdleWait, Wake: w.wake, Log: w.Log, Name: "webhook worker"}.Run(ctx, func(ctx context.Context) error {
		return w.start(ctx, slots, &wg)
	})
	return nil
}

// start leases due records for the free slots and delivers each in a goroutine of its own
// (counted in wg), until no slot is free or nothing more fits.
func (w *Worker) start(ctx context.Context, slots *work.Slots, wg *sync.WaitGroup) error {
	for slots.Free() > 0 {
		skipAccounts, skipSubs := slots.Full()
		cs, err := w.due(ctx, w.Now(), skipAccounts, skipSubs, w.PerAccount, w.Concurrency)
		if err != nil {
			return err
		}
		units := make([]work.Unit, len(cs))
		for i, c := range cs {
			units[i] = work.Unit{Account: c.AccountID, Key: c.SubscriptionID}
		}
		var pick []Candidate
		for _, i := range slots.Pick(units) {
			pick = append(pick, cs[i])
		}
		if len(pick) == 0 {
			return nil
		}
		now := w.Now()
		ds, err := w.Store.LeaseWebhookEvents(ctx, pick, now, now.Add(w.Lease))
		if err != nil {
			return fmt.Errorf("leasing events: %w", err)
		}
		if len(ds) == 0 {
			return nil
		}
		for _, d := range ds {
			u := work.Unit{Account: d.AccountID, Key: d.SubscriptionID}
			slots.Hold(u)
			wg.Add(1)
			go func() {
				defer wg.Done()
				// In-flight deliveries finish even as ctx ends (the caller bounds shutdown).
				w.deliver(context.WithoutCancel(ctx), d)
				slots.Release(u)
				w.Notify() // a slot is free
			}()
		}
		// Look again while slots are free: a subscription's bound may have cut an account's
		// share short, and the next look skips that subscription.
	}
	return nil
}

// due lists the due records (Store.DueWebhookEvents) in the order they are to be served:
// round-robin across the accounts.
func (w *Worker) due(ctx context.Context, now time.Time, exclude, excludeSubscriptions []string, perAccount, accounts int) ([]Candidate, error) {
	cs, err := w.Store.DueWebhookEvents(ctx, now, exclude, excludeSubscriptions, perAccount, accounts)
	if err != nil {
		return nil, fmt.Errorf("listing due events: %w", err)
	}
	return work.RoundRobin(cs, func(c Candidate) string { return c.AccountID }), nil
}

// Drain delivers every record due now once, synchronously, Concurrency at a time. Tests use
// it instead of waiting for Run.
func (w *Worker) Drain(ctx context.Context) error {
	w.Init()
	now := w.Now()
	cs, err := w.due(ctx, now, nil, nil, 1<<30, 1<<30)
	if err != nil || len(cs) == 0 {
		return err
	}
	ds, err := w.Store.LeaseWebhookEvents(ctx, cs, now, now.Add(w.Lease))
	if err != nil {
		return err
	}
	sem := make(chan struct{}, w.Concurrency)
	var wg sync.WaitGroup
	for _, d := range ds {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			w.deliver(ctx, d)
		}()
	}
	wg.Wait()
	return nil
}

// deliver makes one attempt and records its result.
func (w *Worker) deliver(ctx context.Context, d Delivery) {
	res := w.attempt(ctx, d)
	if err := w.finish(ctx, res); err != nil {
		// The lease runs out and the record is tried again: at least once.
		w.Log.Error("webhook worker: recording a delivery", "event_id", d.ID, "webhook_subscription_id", d.SubscriptionID, "err", err)
		return
	}
	args := []any{"event_id", d.ID, "webhook_subscription_id", d.SubscriptionID, "topic", d.Topic,
		"host", hostOf(d.URL), "status", res.Status}
	if res.ResponseStatus != nil {
		args = append(args, "response_status", *res.ResponseStatus)
	}
	if res.Error != "" {
		args = append(args, "err", res.Error)
	}
	if res.Status == StatusDelivered {
		w.Log.Info("webhook delivered", args...)
	} else {
		w.Log.Warn("webhook delivery failed", args...)
	}
}

// finish records r together with whatever other results are waiting.
func (w *Worker) finish(ctx context.Context, r Result) error {
	done := make(chan error, 1)
	w.finishMu.Lock()
	w.toFinish = append(w.toFinish, pendingResult{r, done})
	lead := !w.finishing
	w.finishing = true
	w.finishMu.Unlock()
	if lead {
		// This goroutine writes batches until none is waiting.
		for {
			w.finishMu.Lock()
			batch := w.toFinish
			w.toFinish = nil
			if len(batch) == 0 {
				w.finishing = false
				w.finishMu.Unlock()
				break
			}
			w.finishMu.Unlock()
			rs := make([]Result, len(batch))
			for i, f := range batch {
				rs[i] = f.r
			}
			err := w.Store.FinishWebhookDeliveries(context.WithoutCancel(ctx), rs)
			for _, f := range batch {
				f.done <- err
			}
		}
	}
	return <-done
}

// attempt POSTs the record once and decides what happens next.
func (w *Worker) attempt(ctx context.Context, d Delivery) Result {
	res := Result{Delivery: d, At: w.Now()}
	res.Attempts++
	body := Body(d.Event)
	status, respBody, retryAfter, err := w.post(ctx, d, body, res.At)
	res.ResponseBody = respBody
	if status != 0 {
		res.ResponseStatus = &status
	}
	switch {
	case err == nil && status >= 200 && status < 300:
		res.Status = StatusDelivered
		return res
	case err != nil:
		res.Error = Describe(err)
	case status == http.StatusGone:
		res.Error = "HTTP 410"
		res.Status, res.Deactivate = StatusFailed, true
		return res
	default:
		res.Error = "HTTP " + strconv.Itoa(status)
	}
	round := d.Round + 1
	if round > len(w.Schedule) {
		res.Status = StatusFailed
		return res
	}
	delay := w.Schedule[round-1]
	if retryAfter > delay {
		delay = min(retryAfter, maxRetryAfter)
	}
	next := res.At.Add(delay)
	res.Status, res.NextAttemptAt = StatusPending, &next
	return res
}

// post sends body to d.URL and returns the answer's status, its first MaxResponseBody bytes
// and its Retry-After delay. Errors never carry the URL (it may hold credentials).
func (w *Worker) post(ctx context.Context, d Delivery, body []byte, at time.Time) (int, string, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, w.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(body))
	if err != nil {
		return 0, "", 0, errors.New("invalid URL")
	}
	ts := at.Unix()
	std, err := StandardSignature(d.Secret, d.ID, ts, body)
	if err != nil {
		return 0, "", 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "waybill-webhooks/1")
	req.Header.Set("X-Webhook-Signature", Signature(d.Secret, body))
	req.Header.Set("webhook-id", d.ID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", std)
	resp, err := w.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, "", 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBody))
	// Read a little more so a small answer's connection can be reused; a huge one is cut off.
	io.CopyN(io.Discard, resp.Body, 4<<10)
	return resp.StatusCode, storableText(b), RetryAfter(resp.Header.Get("Retry-After"), at), nil
}

// storableText is a response body as text every backend stores: NUL characters dropped, a
// character cut at the end by truncation dropped, other invalid UTF-8 replaced by U+FFFD.
// PostgreSQL refuses NUL and invalid UTF-8 in text, and a refused result would fail the whole
// batch of results recorded with it.
func storableText(b []byte) string {
	if len(b) == MaxResponseBody {
		// Drop a final character the cut left incomplete (at most utf8.UTFMax-1 bytes).
		for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
			if utf8.RuneStart(b[i]) {
				if !utf8.FullRune(b[i:]) {
					b = b[:i]
				}
				break
			}
		}
	}
	return strings.ToValidUTF8(strings.ReplaceAll(string(b), "\x00", ""), "\uFFFD")
}

// Describe names why an attempt got no answer, short and without addresses, URLs or secrets:
// "timeout", "dial: no such host", "dial: connection refused", "dial: address not allowed" (the
// guard), "dial: <reason>", "tls: <reason>", "connection closed" or "request failed".
func Describe(err error) string {
	var dnsErr *net.DNSError
	var netErr net.Error
	var opErr *net.OpError
	var certErr *tls.CertificateVerificationError
	var recErr tls.RecordHeaderError
	var sysErr syscall.Errno
	switch {
	case err == nil:
		return ""
	case errors.Is(err, errBlocked):
		return "dial: address not allowed"
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return "dial: no such host"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	case errors.As(err, &dnsErr):
		return "dial: lookup failed"
	case errors.As(err, &certErr):
		return "tls: certificate not trusted"
	case errors.As(err, &recErr):
		return "tls: not a TLS server"
	case errors.As(err, &opErr) && opErr.Op == "dial":
		if errors.As(err, &sysErr) {
			return "dial: " + sysErr.Error()
		}
		return "dial: failed"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection closed"
	case strings.HasPrefix(err.Error(), "tls: "):
		return "tls: handshake failed"
	}
	return "request failed"
}

// RetryAfter parses a Retry-After value (delay seconds or an HTTP date) relative to now; zero
// when absent or unparseable.
func RetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(min(n, int64(maxRetryAfter/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}
