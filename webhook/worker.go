package webhook

import (
	"bytes"
	"context"
	"errors"
	"hash/fnv"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
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
	ResponseBody   string     // truncated to MaxResponseBody
	Error          string     // why it failed, without URL or secrets
	Deactivate     bool       // 410 Gone: the subscription is switched off
}

// Store is what the worker needs from persistence (implemented by *store.DB).
type Store interface {
	// DueWebhookEvents lists up to limit PENDING records of active subscriptions that are due
	// at now and not leased, at most perSubscription of them per subscription, oldest due first.
	DueWebhookEvents(ctx context.Context, now time.Time, perSubscription, limit int) ([]Candidate, error)
	// LeaseWebhookEvents leases the candidates that are still due and free until until under
	// a fresh lease, returning them.
	LeaseWebhookEvents(ctx context.Context, cs []Candidate, now, until time.Time) ([]Delivery, error)
	// FinishWebhookDeliveries records attempts' results, in one transaction, each only if its
	// lease is still held.
	FinishWebhookDeliveries(ctx context.Context, rs []Result) error
}

// Defaults of the Worker's tunables.
const (
	DefaultTimeout         = 10 * time.Second
	DefaultConcurrency     = 16
	DefaultPerSubscription = 4
	DefaultPollInterval    = 500 * time.Millisecond
	MaxResponseBody        = 1024
	// maxRetryAfter bounds how far a receiver's Retry-After can push the next attempt.
	maxRetryAfter = 24 * time.Hour
)

// Worker delivers due event records. Set its fields, then call Run (or Drain).
type Worker struct {
	Store Store
	// Schedule is the delay before each retry; after len(Schedule)+1 failed attempts the
	// record is FAILED.
	Schedule []time.Duration
	Now      func() time.Time
	Log      *slog.Logger
	// AllowPrivate lets deliveries reach loopback, private and link-local addresses.
	AllowPrivate bool

	// Zero values take the defaults above. Lease, zero, is Timeout + 10 s: a delivery
	// in flight when the process dies is retried once its lease ends.
	Timeout         time.Duration
	Concurrency     int
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

// Run delivers due records until ctx ends, at most Concurrency at once and at most
// PerSubscription at once to any one subscription, so a slow or hostile receiver holds a few
// slots for at most Timeout and never the whole worker. It returns after the deliveries in
// flight have finished.
func (w *Worker) Run(ctx context.Context) error {
	w.Init()
	var (
		mu       sync.Mutex
		inFlight = map[string]int{} // subscription → deliveries in flight
		total    int
		wg       sync.WaitGroup
		done     = make(chan struct{}, 1)
	)
	defer wg.Wait()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		case <-w.wake:
		case <-done:
		}
		for {
			mu.Lock()
			free := w.Concurrency - total
			mu.Unlock()
			if free <= 0 {
				break
			}
			limit := 4 * w.Concurrency
			cs, err := w.Store.DueWebhookEvents(ctx, w.Now(), w.PerSubscription, limit)
			if err != nil {
				if ctx.Err() == nil {
					w.Log.Error("webhook worker: listing due events", "err", err)
				}
				break
			}
			// Keep each subscription within its share of slots, counting those in flight.
			mu.Lock()
			pick := cs[:0:0]
			taken := map[string]int{}
			for _, c := range cs {
				if len(pick) == free {
					break
				}
				if inFlight[c.SubscriptionID]+taken[c.SubscriptionID] < w.PerSubscription {
					pick = append(pick, c)
					taken[c.SubscriptionID]++
				}
			}
			mu.Unlock()
			if len(pick) == 0 {
				break
			}
			now := w.Now()
			ds, err := w.Store.LeaseWebhookEvents(ctx, pick, now, now.Add(w.Lease))
			if err != nil {
				if ctx.Err() == nil {
					w.Log.Error("webhook worker: leasing events", "err", err)
				}
				break
			}
			if len(ds) == 0 {
				break
			}
			mu.Lock()
			for _, d := range ds {
				inFlight[d.SubscriptionID]++
				total++
			}
			mu.Unlock()
			for _, d := range ds {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// In-flight deliveries finish even as ctx ends (the caller bounds shutdown).
					w.deliver(context.WithoutCancel(ctx), d)
					mu.Lock()
					inFlight[d.SubscriptionID]--
					if inFlight[d.SubscriptionID] == 0 {
						delete(inFlight, d.SubscriptionID)
					}
					total--
					mu.Unlock()
					select {
					case done <- struct{}{}:
					default:
					}
				}()
			}
			// Look again only while there may be due records that did not fit this round.
			if len(ds) < len(pick) || len(cs) < limit && len(pick) == len(cs) {
				break
			}
		}
		timer.Reset(w.PollInterval)
	}
}

// Drain delivers every record due now once, synchronously, Concurrency at a time. Tests use
// it instead of waiting for Run.
func (w *Worker) Drain(ctx context.Context) error {
	w.Init()
	now := w.Now()
	cs, err := w.Store.DueWebhookEvents(ctx, now, 1<<30, 1<<30)
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
		res.Error = err.Error()
	case status == http.StatusGone:
		res.Error = "410 Gone: subscription deactivated"
		res.Status, res.Deactivate = StatusFailed, true
		return res
	default:
		res.Error = "answered " + strconv.Itoa(status)
	}
	round := d.Round + 1
	if round > len(w.Schedule) {
		res.Status = StatusFailed
		return res
	}
	delay := Jitter(w.Schedule[round-1], d.SubscriptionID+"/"+d.ID, res.Attempts)
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
		if errors.Is(err, context.DeadlineExceeded) {
			err = errors.New("timed out after " + w.Timeout.String())
		}
		return 0, "", 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBody))
	// Read a little more so a small answer's connection can be reused; a huge one is cut off.
	io.CopyN(io.Discard, resp.Body, 4<<10)
	return resp.StatusCode, string(b), RetryAfter(resp.Header.Get("Retry-After"), at), nil
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

// Jitter spreads d by ±10%, deterministically for a given record and attempt (seeded from
// them), so retries of many records do not arrive in lockstep and tests stay reproducible.
func Jitter(d time.Duration, key string, attempt int) time.Duration {
	h := fnv.New64a()
	io.WriteString(h, key)
	r := rand.New(rand.NewPCG(h.Sum64(), uint64(attempt)))
	return time.Duration(float64(d) * (0.9 + 0.2*r.Float64()))
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}
