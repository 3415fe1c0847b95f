package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/waybill/waybill/httpapi"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/carrier"
	"github.com/waybill/waybill/store"
)

// commands lists waybill's commands, in the order `waybill help` shows them.
func commands() []command {
	return []command{
		{name: "serve", synopsis: "[flags]", summary: "serve the API (the default command)", define: defineServe},
		{name: "account create", synopsis: "NAME [-brand B]", summary: "create an account; prints its id, organization_id and ingest_secret as JSON", define: defineAccountCreate},
		{name: "account list", synopsis: "", summary: "print every account as JSON, one line each, oldest first, with organization_id and ingest_secret", define: defineAccountList},
		{name: "account show", synopsis: "ID|NAME", summary: "print one account as JSON, with organization_id and ingest_secret", define: defineAccountShow},
		{name: "token create", synopsis: "-account ID -scopes S1,S2,…", summary: "create a token; prints the bearer token alone on one line", define: defineTokenCreate},
		{name: "token revoke", synopsis: "TOKEN", summary: "revoke a token (later requests with it: 401)", define: defineTokenRevoke},
		{name: "carrier list", synopsis: "", summary: "print every stored carrier as JSON, one line each: its version in force today (in_force_version; null before any is, when the first to come is shown) and its services", define: defineCarrierList},
		{name: "carrier put", synopsis: "CARD.json [-dry-run]", summary: "store a carrier's card (with its \"code\") as its new version; prints the version", define: defineCarrierPut},
		{name: "carrier prices", synopsis: "CODE SERVICE GRID.csv [-effective-from D] [-dry-run]", summary: "store a new version with one service's prices from a CSV grid (weight_oz|weight_lb,zone_1,…,zone_8)", define: defineCarrierPrices},
		{name: "inspect shipment", synopsis: "ID", summary: "print a shipment's stored record as JSON, straight from the database: request, quotes in cents, label, tracking events", define: defineInspectShipment},
		{name: "export shipments", synopsis: "[-since D]", summary: "print the stored record of every shipment (created on or after D, a date or RFC 3339 time), one JSON object per line", define: defineExportShipments},
		{name: "verify", synopsis: "[-since D]", summary: "render every shipment and label (created on or after D) afresh from its record and compare with the stored copy the API serves; one JSON line per difference, exit status 1 if any", define: defineVerify},
		{name: "purchase resolve", synopsis: "LABEL_ID -voided | -tracking CODE", summary: "end an UNRESOLVED purchase attempt with what the carrier did: sold nothing that stands (-voided), or sold the label CODE, which is recorded", define: definePurchaseResolve},
		{name: "help", synopsis: "[COMMAND]", summary: "print the usage of every command, or of one", define: defineHelp},
	}
}

func defineHelp(fs *flag.FlagSet, e *env, db *string) func(ctx context.Context, args []string) error {
	return func(ctx context.Context, args []string) error { return help(e, args) }
}

// accountJSON is an account as the command line prints it: with its organization id and ingest
// secret, which order import needs; whoever runs the command holds the database.
type accountJSON struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	Brand          string `json:"brand"`
	OrganizationID string `json:"organization_id"`
	IngestSecret   string `json:"ingest_secret"`
	CreatedAt      string `json:"created_at"`
}

func accountView(a store.Account) accountJSON {
	return accountJSON{ID: a.ID, Name: a.Name, Brand: a.Brand, OrganizationID: a.OrganizationID,
		IngestSecret: a.IngestSecret, CreatedAt: shipping.FormatTime(a.CreatedAt.Time)}
}

func defineAccountCreate(fs *flag.FlagSet, e *env, db *string) func(ctx context.Context, args []string) error {
	brand := fs.String("brand", "", "the account's brand")
	return func(ctx context.Context, args []string) error {
		if len(args) != 1 || strings.TrimSpace(args[0]) == "" {
			return errUsage("account create")
		}
		var v shipping.ValidationError
		if shipping.CheckBrand(&v, "-brand", brand); v.Err() != nil {
			return v.Err()
		}
		return e.withDB(ctx, *db, func(db *store.DB) error {
			acct, err := db.CreateAccount(ctx, args[0], *brand)
			if err != nil {
				return err
			}
			// The keys in their documented order: id, organization_id, ingest_secret.
			return json.NewEncoder(e.stdout).Encode(struct {
				ID             string `json:"id"`
				OrganizationID string `json:"organization_id"`
				IngestSecret   string `json:"ingest_secret"`
			}{acct.ID, acct.OrganizationID, acct.IngestSecret})
		})
	}
}

func defineAccountList(fs *flag.FlagSet, e *env, db *string) func(ctx context.Context, args []string) error {
	return func(ctx context.Context, args []string) error {
		if len(args) != 0 {
			return errUsage("account list")
		}
		return e.withExistingDB(ctx, *db, func(db *store.DB) error {
			accts, err := db.AllAccounts(ctx)
			if err != nil {
				return err
			}
			enc := json.NewEncoder(e.stdout)
			for _, a := range accts {
				if err := enc.Encode(accountView(a)); err != nil {
					return err
				}
			}
			return nil
		})
	}
}

func defineAccountShow(fs *flag.FlagSet, e *env, db *string) func(ctx context.Context, args []string) error {
	return func(ctx context.Context, args []string) error {
		if len(args) != 1 {
			return errUsage("account show")
		}
		return e.withExistingDB(ctx, *db, func(db *store.DB) error {
			a, err := findAccount(ctx, db, args[0])
			if err != nil {
				return err
			}
			return json.NewEncoder(e.stdout).Encode(accountView(a))
		})
	}
}

func defineInspectShipment(fs *flag.FlagSet, e *env, db *string) func(ctx context.Context, args []string) error {
	return func(ctx context.Context, args []string) error {
		if len(args) != 1 {
			return errUsage("inspect shipment")
		}
		return e.withExistingDB(ctx, *db, func(db *store.DB) error {
			r, err := db.ShipmentRecord(ctx, args[0])
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("no shipment has the id %q", args[0])
			}
			if err != nil {
				return err
			}
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(recordView(r))
		})
	}
}

func defineExportShipments(fs *flag.FlagSet, e *env, db *string) func(ctx context.Context, args []string) error {
	since := fs.String("since", "", "only shipments created on or after this date (YYYY-MM-DD, UTC) or time (RFC 3339)")
	return func(ctx context.Context, args []string) error {
		if len(args) != 0 {
			return errUsage("export shipments")
		}
		from, err := parseSince(*since)
		if err != nil {
			return err
		}
		return e.withExistingDB(ctx, *db, func(db *store.DB) error {
			enc := json.NewEncoder(e.stdout)
			return db.ExportShipments(ctx, from, func(r *store.Record) error { return enc.Encode(recordView(r)) })
		})
	}
}

// parseSince reads a -since flag: a date (YYYY-MM-DD, UTC) or an RFC 3339 time; "" is no bound.
func parseSince(since string) (time.Time, error) {
	if since == "" {
		return time.Time{}, nil
	}
	if from, err := time.Parse(time.DateOnly, since); err == nil {
		return from, nil
	}
	if from, err := time.Parse(time.RFC3339Nano, since); err == nil {
		return from, nil
	}
	return time.Time{}, fmt.Errorf("-since %q is neither a date (YYYY-MM-DD) nor an RFC 3339 time", since)
}

func defineVerify(fs *flag.FlagSet, e *env, db *string) func(ctx context.Context, args []string) error {
	since := fs.String("since", "", "only shipments, and their labels, created on or after this date (YYYY-MM-DD, UTC) or time (RFC 3339)")
	return func(ctx context.Context, args []string) error {
		if len(args) != 0 {
			return errUsage("verify")
		}
		from, err := parseSince(*since)
		if err != nil {
			return err
		}
		return e.withExistingDB(ctx, *db, func(db *store.DB) error {
			enc := json.NewEncoder(e.stdout)
			n := 0
			err := db.Verify(ctx, from, func(d store.Difference) error {
				n++
				return enc.Encode(differenceJSON(d))
			})
			if err != nil || n == 0 {
				return err
			}
			plural := "s"
			if n == 1 {
				plural = ""
			}
			// An error, so that the exit status is 1.
			return fmt.Errorf("%d difference%s between the stored copies and their records", n, plural)
		})
	}
}

// findAccount finds an account by its id or, failing that, by its name (`default` is the one
// the first start creates); a name several accounts share is refused.
func findAccount(ctx context.Context, db *store.DB, idOrName string) (store.Account, error) {
	a, err := db.Account(ctx, idOrName)
	if !errors.Is(err, store.ErrNotFound) {
		return a, err
	}
	named, err := db.AccountsNamed(ctx, idOrName)
	if err != nil {
		return store.Account{}, err
	}
	switch len(named) {
	case 0:
		return store.Account{}, fmt.Errorf("no account has the id or name %q", idOrName)
	case 1:
		return named[0], nil
	}
	ids := make([]string, len(named))
	for i, a := range named {
		ids[i] = a.ID
	}
	return store.Account{}, fmt.Errorf("%d accounts are named %q; give the id: %s", len(named), idOrName, strings.Join(ids, ", "))
}

func defineTokenCreate(fs *flag.FlagSet, e *env, db *string) func(ctx context.Context, args []string) error {
	account := fs.String("account", "", "the account's id (or its name, if no other account has it)")
	scopeList := fs.String("scopes", "", "comma-separated scopes: "+strings.Join(httpapi.AllScopes, ","))
	return func(ctx context.Context, args []string) error {
		if len(args) > 0 || *account == "" || *scopeList == "" {
			return errUsage("token create")
		}
		scopes, err := httpapi.ParseScopes(strings.Split(*scopeList, ","))
		if err != nil {
			return err
		}
		return e.withDB(ctx, *db, func(db *store.DB) error {
			a, err := findAccount(ctx, db, *account)
			if err != nil {
				return err
			}
			tok, err := db.CreateToken(ctx, a.ID, scopes)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(e.stdout, tok.Token)
			return err
		})
	}
}

func defineTokenRevoke(fs *flag.FlagSet, e *env, db *string) func(ctx context.Context, args []string) error {
	return func(ctx context.Context, args []string) error {
		if len(args) != 1 {
			return errUsage("token revoke")
		}
		return e.withExistingDB(ctx, *db, func(db *store.DB) error {
			if err := db.RevokeBearer(ctx, args[0]); errors.Is(err, store.ErrNotFound) {
				return errors.New("no such active token")
			} else if err != nil {
				return err
			}
			_, err := fmt.Fprintln(e.stdout, "revoked")
			return err
		})
	}
}

// carrierLine is a carrier as the command line prints it, as the API shows it: the version in
// force (before any is, the first to come) and the one in force's number, null before any is.
type carrierLine struct {
	Code           string   `json:"code"`
	Name           string   `json:"name"`
	Version        int64    `json:"version"`
	EffectiveFrom  string   `json:"effective_from"`
	InForceVersion *int64   `json:"in_force_version"`
	Services       []string `json:"services"`
}

func carrierLineOf(c *carrier.Stored, today time.Time) carrierLine {
	date := today.UTC().Format(time.DateOnly)
	v := carrier.Shown(c.Versions, date)
	l := carrierLine{Code: c.Code, Name: v.Card.Name, Version: v.Version, EffectiveFrom: v.Card.EffectiveFrom, Services: []string{}}
	if f := carrier.InForce(c.Versions, date); f != nil {
		l.InForceVersion = &f.Version
	}
	for _, s := range v.Card.Services {
		l.Services = append(l.Services, s.Code)
	}
	return l
}

func defineCarrierList(fs *flag.FlagSet, e *env, db *string) func(ctx context.Context, args []string) error {
	return func(ctx context.Context, args []string) error {
		if len(args) != 0 {
			return errUsage("carrier list")
		}
		return e.withExistingDB(ctx, *db, func(db *store.DB) error {
			cs, _, err := db.Carriers(ctx)
			if err != nil {
				return err
			}
			enc := json.NewEncoder(e.stdout)
			for _, c := range cs {
				if c.Deleted {
					continue
				}
				if err := enc.Encode(carrierLineOf(c, db.Now())); err != nil {
					return err
				}
			}
			return nil
		})
	}
}

// printPut prints what a carrier put stored, as the API answers it: the version stored (or
// with -dry-run, that it would store, and the changes), and the version in force today (null
// before any is).
func (e *env) printPut(put carrier.Put, dryRun bool, today time.Time) error {
	v := put.Carrier.Versions[len(put.Carrier.Versions)-1]
	out := struct {
		Code           string                `json:"code"`
		Version        int64                 `json:"version"`
		EffectiveFrom  string                `json:"effective_from"`
		InForceVersion *int64                `json:"in_force_version"`
		Created        bool                  `json:"created"`
		DryRun         bool                  `json:"dry_run,omitempty"`
		Changes        []carrier.PriceChange `json:"changes,omitzero"` // [] in a dry run that changes no price
	}{Code: put.Carrier.Code, Version: v.Version, EffectiveFrom: v.Card.EffectiveFrom, Created: put.Created, DryRun: dryRun}
	if f := carrier.InForce(put.Carrier.Versions, today.UTC().Format(time.DateOnly)); f != nil {
		out.InForceVersion = &f.Version
	}
	if dryRun {
		out.Changes = append([]carrier.PriceChange{}, put.Changes...)
	}
	return json.NewEncoder(e.stdout).Encode(out)
}

func defineCarrierPut(fs *flag.FlagSet, e *env, db *string) func(ctx context.Context, args []string) error {
	dryRun := fs.Bool("dry-run", false, "validate and print the price changes; store nothing")
	return func(ctx context.Context, args []string) error {
		if len(args) != 1 {
			return errUsage("carrier put")
		}
		body, err := os.ReadFile(args[0])
		if err != nil {
			return err
		}
		var card carrier.Card
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&card); err != nil {
			return fmt.Errorf("%s: %w", args[0], err)
		}
		if card.Code == "" {
			return fmt.Errorf("%s: the card needs its \"code\"", args[0])
		}
		return e.withDB(ctx, *db, func(db *store.DB) error {
			put, err := carrier.PutCard(ctx, db, card.Code, &card, *dryRun, db.Now())
			if err != nil {
				return err
			}
			return e.printPut(put, *dryRun, db.Now())
		})
	}
}

func defineCarrierPrices(fs *flag.FlagSet, e *env, db *string) func(ctx context.Context, args []string) error {
	from := fs.String("effective-from", "", "the date the prices take effect, YYYY-MM-DD (default today)")
	dryRun := fs.Bool("dry-run", false, "validate and print the price changes; store nothing")
	return func(ctx context.Context, args []string) error {
		if len(args) != 3 {
			return errUsage("carrier prices")
		}
		if _, err := time.Parse(time.DateOnly, *from); *from != "" && err != nil {
			return fmt.Errorf("-effective-from %q is not a date, YYYY-MM-DD", *from)
		}
		f, err := os.Open(args[2])
		if err != nil {
			return err
		}
		defer f.Close()
		breaks, prices, err := carrier.ParsePriceGrid(f)
		if err != nil {
			return fmt.Errorf("%s: %w", args[2], err)
		}
		return e.withDB(ctx, *db, func(db *store.DB) error {
			put, err := carrier.PutPriceGrid(ctx, db, args[0], args[1], *from, breaks, prices, *dryRun, db.Now())
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("no carrier %s with a service %s", args[0], args[1])
			}
			if err != nil {
				return err
			}
			return e.printPut(put, *dryRun, db.Now())
		})
	}
}

// withDB opens the database, runs f on it and closes it.
func (e *env) withDB(ctx context.Context, dsn string, f func(db *store.DB) error) error {
	return e.open(ctx, dsn, false, f)
}

// withExistingDB is withDB for a command that only reads or revokes what the database holds:
// a database that does not exist (Database.Missing) is an error, not created.
func (e *env) withExistingDB(ctx context.Context, dsn string, f func(db *store.DB) error) error {
	return e.open(ctx, dsn, true, f)
}

// open opens the database, first asking Missing whether it exists if existing says it must,
// runs f on it and closes it.
func (e *env) open(ctx context.Context, dsn string, existing bool, f func(db *store.DB) error) error {
	if existing && e.d.Missing != nil {
		if err := e.d.Missing(dsn); err != nil {
			return err
		}
	}
	db, err := e.d.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	return f(db)
}

func definePurchaseResolve(fs *flag.FlagSet, e *env, db *string) func(ctx context.Context, args []string) error {
	voided := fs.Bool("voided", false, "the carrier sold no label that stands (none, or it was voided): the shipment may be bought again")
	tracking := fs.String("tracking", "", "the carrier sold the label with this tracking code: it is recorded as the shipment's")
	return func(ctx context.Context, args []string) error {
		if len(args) != 1 || *voided == (*tracking != "") {
			return errUsage("purchase resolve")
		}
		return e.withExistingDB(ctx, *db, func(db *store.DB) error {
			b := &shipping.Buyer{Store: db, Now: time.Now}
			s, err := b.ResolveAttempt(ctx, db, args[0], *voided, *tracking)
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("no purchase attempt has the label id %q", args[0])
			}
			if err != nil {
				return err
			}
			out := struct {
				LabelID      string `json:"label_id"`
				Resolution   string `json:"resolution"`
				TrackingCode string `json:"tracking_code,omitempty"`
			}{LabelID: args[0], Resolution: "voided"}
			if s != nil {
				out.Resolution, out.TrackingCode = "recorded", s.ShippingLabel.TrackingCode
			}
			return json.NewEncoder(e.stdout).Encode(out)
		})
	}
}
