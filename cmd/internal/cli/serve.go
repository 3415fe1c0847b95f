package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/waybill/waybill/httpapi"
	"github.com/waybill/waybill/store"
)

func defineServe(fs *flag.FlagSet, e *env, db *string) func(ctx context.Context, args []string) error {
	addr := fs.String("addr", e.envOr("WAYBILL_ADDR", "127.0.0.1:8080"), "listen address (WAYBILL_ADDR)")
	baseURL := fs.String("base-url", e.getenv("WAYBILL_BASE_URL"), "external base URL, default http://<addr> (WAYBILL_BASE_URL)")
	var allowPrivate bool
	var allowPrivateErr error
	if v := e.getenv("WAYBILL_WEBHOOK_ALLOW_PRIVATE"); v != "" {
		// A bad value is an error unless -webhook-allow-private is given (it wins).
		if allowPrivate, allowPrivateErr = strconv.ParseBool(v); allowPrivateErr != nil {
			allowPrivateErr = fmt.Errorf("WAYBILL_WEBHOOK_ALLOW_PRIVATE: %q is neither true nor false", v)
		}
	}
	fs.BoolVar(&allowPrivate, "webhook-allow-private", allowPrivate, "allow webhook URLs on loopback, private and link-local hosts (WAYBILL_WEBHOOK_ALLOW_PRIVATE)")
	schedule := fs.String("webhook-retry-schedule", e.envOr("WAYBILL_WEBHOOK_RETRY_SCHEDULE", "5s,5m,30m,2h,5h,10h,10h"), "webhook retry delays (WAYBILL_WEBHOOK_RETRY_SCHEDULE)")
	metricsAddr := fs.String("metrics-addr", e.getenv("WAYBILL_METRICS_ADDR"), "also serve /metrics, without a token, on this address (WAYBILL_METRICS_ADDR); off by default")
	simulate := &simulateFlag{on: e.limits.simulateStep}
	if v := e.getenv("WAYBILL_SIMULATE_TRACKING"); v != "" {
		// A bad value is reported by the flag's own parsing below, as if given as -simulate-tracking.
		simulate.env = v
	}
	fs.Var(simulate, "simulate-tracking", fmt.Sprintf("move purchased labels PRE_TRANSIT → IN_TRANSIT → OUT_FOR_DELIVERY → DELIVERED on their own, one step every %s, or every given duration (-simulate-tracking=2s); for trying waybill out, off by default (WAYBILL_SIMULATE_TRACKING)", e.limits.simulateStep))
	pollInterval := fs.String("tracking-poll-interval", e.envOr("WAYBILL_TRACKING_POLL_INTERVAL", "1h"),
		"how long after purchase, and then how often, labels of carriers that implement shipping.Tracker are polled for tracking (WAYBILL_TRACKING_POLL_INTERVAL)")
	return func(ctx context.Context, args []string) error {
		if len(args) > 0 {
			return fmt.Errorf("serve: unexpected argument %q", args[0])
		}
		poll, err := time.ParseDuration(*pollInterval)
		if err != nil || poll <= 0 {
			return fmt.Errorf("-tracking-poll-interval (WAYBILL_TRACKING_POLL_INTERVAL): %q is not a positive duration", *pollInterval)
		}
		if allowPrivateErr != nil && !flagGiven(fs, "webhook-allow-private") {
			return allowPrivateErr
		}
		if err := simulate.applyEnv(); err != nil {
			return fmt.Errorf("WAYBILL_SIMULATE_TRACKING: %w", err)
		}
		retry, err := parseSchedule(*schedule)
		if err != nil {
			return err
		}
		if u, err := url.Parse(*baseURL); *baseURL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
			return fmt.Errorf("-base-url: %q is not an http or https URL with a host", *baseURL)
		}
		return e.serve(ctx, serveConfig{addr: *addr, db: *db, baseURL: *baseURL, allowPrivate: allowPrivate,
			retry: retry, simulate: simulate.step, metricsAddr: *metricsAddr, pollInterval: poll})
	}
}

// flagGiven reports whether the flag name was set on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// serveConfig is what serve's flags say.
type serveConfig struct {
	addr, db, baseURL string
	metricsAddr       string
	allowPrivate      bool
	retry             []time.Duration
	simulate          time.Duration
	pollInterval      time.Duration
}

// serve opens the database, serves the API and runs its workers until serving fails or a
// signal (or ctx) says stop, then shuts down gracefully.
func (e *env) serve(ctx context.Context, c serveConfig) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Request lines are gathered for at most 50 ms and written together (logWriter).
	logOut := newLogWriter(e.stderr, 50*time.Millisecond)
	defer logOut.Flush()
	log := slog.New(slog.NewJSONHandler(logOut, nil))

	db, err := e.d.Open(ctx, c.db)
	if err != nil && ctx.Err() != nil {
		// Stopped while opening (a first start's migrations, say): each migration is a
		// transaction, so the next start goes on from there. A stop is not a failure.
		log.Info("stopped before serving", "err", err)
		return nil
	}
	if err != nil {
		return err
	}
	defer db.Close()
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	if c.baseURL == "" {
		c.baseURL = defaultBaseURL(ln.Addr())
	}
	api, err := e.newAPI(ctx, db, c, log)
	if err != nil {
		ln.Close()
		return err
	}
	return e.serveAPI(ctx, c, log, ln, api)
}

// newAPI builds the API on db and, on the database's first start, prints its token. The token
// is printed only once the server can serve: a start that fails before (a busy address) leaves
// the database's first start to the next one.
func (e *env) newAPI(ctx context.Context, db *store.DB, c serveConfig, log *slog.Logger) (*httpapi.API, error) {
	api, err := httpapi.New(httpapi.Config{DB: db, BaseURL: c.baseURL, Logger: log,
		WebhookAllowPrivate: c.allowPrivate, WebhookRetrySchedule: c.retry, SimulateTracking: c.simulate,
		TrackingPollInterval: c.pollInterval})
	if err != nil {
		return nil, err
	}
	if err := firstStart(ctx, db, e.stdout); err != nil {
		return nil, err
	}
	return api, nil
}

// serveAPI serves api on ln (and its metrics on c.metricsAddr, if given) and runs its workers
// until serving fails or ctx ends; then it shuts down.
func (e *env) serveAPI(ctx context.Context, c serveConfig, log *slog.Logger, ln net.Listener, api *httpapi.API) error {
	l := e.limits
	srv := &http.Server{Handler: api, ReadHeaderTimeout: l.readHeader, ReadTimeout: l.read, WriteTimeout: l.write,
		IdleTimeout: l.idle, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}

	// Workers outlive the signal by the shutdown grace period, so deliveries in flight finish.
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	workersDone := make(chan error, 1)
	go func() { workersDone <- api.Run(workCtx) }()
	serveErr := make(chan error, 2)
	go func() { serveErr <- srv.Serve(ln) }()
	if c.metricsAddr != "" {
		msrv, err := e.serveMetrics(c.metricsAddr, api, serveErr, log)
		if err != nil {
			srv.Close()
			stopWork()
			<-workersDone
			return err
		}
		defer msrv.Close()
	}
	simulate := "off"
	if c.simulate > 0 {
		simulate = "one step every " + c.simulate.String()
	}
	log.Info("listening", "addr", ln.Addr().String(), "base_url", c.baseURL, "db", redactDSN(c.db),
		"workers", api.Workers(), "simulate_tracking", simulate, "webhook_allow_private", c.allowPrivate,
		"webhook_retry_schedule", formatSchedule(c.retry))

	select {
	case err := <-serveErr:
		stopWork()
		<-workersDone
		return err
	case <-ctx.Done():
	}
	e.shutdown(log, srv, stopWork, workersDone)
	return nil
}

// serveMetrics serves api's /metrics alone on addr, sending Serve's error to serveErr. The
// metrics listener is for a scraper on a private network: no token, only /metrics.
func (e *env) serveMetrics(addr string, api *httpapi.API, serveErr chan<- error, log *slog.Logger) (*http.Server, error) {
	mln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	l := e.limits
	msrv := &http.Server{Handler: api.MetricsHandler(), ReadHeaderTimeout: l.readHeader, ReadTimeout: l.read, WriteTimeout: l.write, IdleTimeout: l.idle}
	go func() { serveErr <- msrv.Serve(mln) }()
	log.Info("metrics listening", "addr", mln.Addr().String())
	return msrv, nil
}

// shutdown gives the requests in flight the grace period to finish, then stops the workers
// and waits for them, at most workerStop.
func (e *env) shutdown(log *slog.Logger, srv *http.Server, stopWork context.CancelFunc, workersDone <-chan error) {
	l := e.limits
	log.Info("shutting down", "grace", l.shutdown.String())
	shutCtx, cancel := context.WithTimeout(context.Background(), l.shutdown)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		// The grace period is the bound: requests still running are cut off, and that is not
		// an error of the process (nothing they had not answered was acknowledged).
		log.Warn("shutdown: closing connections still busy after the grace period", "err", err)
		srv.Close()
	}
	stopWork()
	select {
	case err := <-workersDone:
		if err != nil {
			log.Error("workers", "err", err)
		}
	case <-time.After(l.workerStop):
		log.Warn("shutdown: workers did not stop in time", "waited", l.workerStop.String())
	}
	log.Info("stopped")
}

// redactDSN hides a password in a database URL or key=value DSN, for the log.
func redactDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		return u.Redacted()
	}
	return passwordField.ReplaceAllString(dsn, "${1}xxxxx")
}

var passwordField = regexp.MustCompile(`(?i)(password\s*=\s*)('[^']*'|\S+)`)

// simulateFlag is -simulate-tracking: off, on (one step every `on`) or the step itself
// (-simulate-tracking=2s). It is a boolean flag, so a bare -simulate-tracking turns it on.
type simulateFlag struct {
	on, step time.Duration
	env      string // WAYBILL_SIMULATE_TRACKING, applied unless the flag is given
	set      bool
}

func (f *simulateFlag) IsBoolFlag() bool { return true }

func (f *simulateFlag) String() string {
	if f == nil || f.step == 0 {
		return "false"
	}
	return f.step.String()
}

func (f *simulateFlag) Set(s string) error {
	f.set = true
	if on, err := strconv.ParseBool(s); err == nil {
		f.step = 0
		if on {
			f.step = f.on
		}
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("%q is neither true, false nor a positive Go duration", s)
	}
	f.step = d
	return nil
}

// applyEnv applies WAYBILL_SIMULATE_TRACKING when the flag was not given.
func (f *simulateFlag) applyEnv() error {
	if f.set || f.env == "" {
		return nil
	}
	return f.Set(f.env)
}

// firstStart creates the default account and an all-scopes token on an empty database, and
// prints the token, exactly once in the database's life (store.Bootstrap), however many
// processes start together.
func firstStart(ctx context.Context, db *store.DB, stdout io.Writer) error {
	tok, created, err := db.Bootstrap(ctx, httpapi.AllScopes)
	if err != nil || !created {
		return err
	}
	_, err = fmt.Fprintf(stdout, "token: %s\n", tok.Token)
	return err
}

func formatSchedule(ds []time.Duration) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.String()
	}
	return strings.Join(s, ",")
}

func parseSchedule(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, part := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("-webhook-retry-schedule: %q is not a positive Go duration", part)
		}
		out = append(out, d)
	}
	return out, nil
}

// defaultBaseURL is http://<addr> of the listener, with localhost for an address that names
// every interface (-addr :8080 listens on [::]:8080, which no client can use in a URL).
func defaultBaseURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}
