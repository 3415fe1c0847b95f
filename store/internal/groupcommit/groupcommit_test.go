package groupcommit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
)

// testDB is a fresh SQLite database, opened as the store opens it for writes, and its committer.
type testDB struct {
	w     *sql.DB
	group *Committer
}

func (db *testDB) inTx(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return db.group.Run(ctx, fn)
}

// Close stops the committer, then closes the database; a second Close is harmless.
func (db *testDB) Close() {
	db.group.Close()
	db.w.Close()
}

// open opens a fresh database with the tables given, and its committer.
func open(tb testing.TB, schema string) *testDB {
	tb.Helper()
	dsn := "file:" + filepath.Join(tb.TempDir(), "w.db") + "?_journal_mode=WAL&_foreign_keys=on&_synchronous=FULL&_txlock=immediate"
	w, err := sql.Open("sqlite3", dsn)
	if err != nil {
		tb.Fatal(err)
	}
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(`PRAGMA temp_store = MEMORY; ` + schema); err != nil {
		tb.Fatal(err)
	}
	db := &testDB{w, New(w)}
	tb.Cleanup(db.Close)
	return db
}

// openGroup opens a fresh database with scratch tables for the committer's tests.
func openGroup(t *testing.T) *testDB {
	return open(t, `CREATE TABLE parent (id TEXT PRIMARY KEY);
		CREATE TABLE child (id TEXT PRIMARY KEY, parent_id TEXT REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)`)
}

// batch queues calls, in order, while the committer is paused, so they share one transaction;
// runs queued (if not nil) once they all wait; and returns each call's error.
func batch(t *testing.T, db *testDB, ctxs []context.Context, queued func(), fns ...func(ctx context.Context, tx *sql.Tx) error) []error {
	t.Helper()
	g := db.group
	g.Pause()
	paused := true
	defer func() {
		if paused {
			g.Resume()
		}
	}()
	taken := g.Arrived()
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		ctx := context.Background()
		if ctxs != nil {
			ctx = ctxs[i]
		}
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = db.inTx(ctx, fn) }()
		// Wait for this call to be queued (or taken by the paused committer) before starting the
		// next, so the batch runs the calls in the order given.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Microsecond) {
			if int(g.Arrived()-taken) == i+1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("call %d never queued", i)
			}
		}
	}
	if queued != nil {
		queued()
	}
	paused = false
	g.Resume()
	wg.Wait()
	return errs
}

func insertParent(id string) func(ctx context.Context, tx *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO parent (id) VALUES ($1)`, id)
		return err
	}
}

func parents(t *testing.T, db *testDB) map[string]bool {
	t.Helper()
	rows, err := db.w.Query(`SELECT id FROM parent`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]bool{}
	for rows.Next() {
		var id string
		rows.Scan(&id)
		got[id] = true
	}
	return got
}

func TestGroupCommitFailedCallRollsBackAlone(t *testing.T) {
	db := openGroup(t)
	if err := db.inTx(context.Background(), insertParent("z")); err != nil {
		t.Fatal(err)
	}
	refused := errors.New("refused")
	errs := batch(t, db, nil, nil,
		insertParent("a"),
		func(ctx context.Context, tx *sql.Tx) error {
			if err := insertParent("b")(ctx, tx); err != nil {
				return err
			}
			return refused // b's insert is undone with its savepoint
		},
		insertParent("z"), // a duplicate key fails only this call
		insertParent("c"),
	)
	want := []error{nil, refused, errors.New("constraint"), nil}
	for i := range errs {
		if (errs[i] == nil) != (want[i] == nil) || errors.Is(want[i], refused) && !errors.Is(errs[i], refused) {
			t.Errorf("call %d: err = %v; want %v", i, errs[i], want[i])
		}
	}
	if got := parents(t, db); fmt.Sprint(got) != fmt.Sprint(map[string]bool{"a": true, "c": true, "z": true}) {
		t.Errorf("rows = %v; want a, c and z", got)
	}
}

func TestGroupCommitFailedCommitFailsEveryCall(t *testing.T) {
	db := openGroup(t)
	calls, commits := db.group.Stats()
	errs := batch(t, db, nil, nil,
		insertParent("a"),
		func(ctx context.Context, tx *sql.Tx) error {
			// The deferred foreign key is checked only at COMMIT, which therefore fails.
			_, err := tx.ExecContext(ctx, `INSERT INTO child (id, parent_id) VALUES ('x', 'missing')`)
			return err
		},
		insertParent("b"),
	)
	for i, err := range errs {
		if err == nil {
			t.Errorf("call %d answered success in a batch whose COMMIT failed", i)
		}
	}
	if got := parents(t, db); len(got) != 0 {
		t.Errorf("rows = %v; want none", got)
	}
	if c, n := db.group.Stats(); c-calls != 3 || n-commits != 1 {
		t.Errorf("%d calls in %d transactions; want 3 in 1", c-calls, n-commits)
	}
	// The committer goes on serving.
	if err := db.inTx(context.Background(), insertParent("c")); err != nil {
		t.Fatal(err)
	}
}

func TestGroupCommitCancelledCaller(t *testing.T) {
	db := openGroup(t)
	gone, cancelGone := context.WithCancel(context.Background())
	leaving, leave := context.WithCancel(context.Background())
	errs := batch(t, db, []context.Context{context.Background(), gone, leaving, context.Background()}, cancelGone,
		insertParent("a"),
		insertParent("gone"), // cancelled before its turn: nothing of it runs
		func(ctx context.Context, tx *sql.Tx) error {
			leave() // the caller hangs up mid-call; the shared transaction must not notice
			return insertParent("leaving")(ctx, tx)
		},
		insertParent("d"),
	)
	if !errors.Is(errs[1], context.Canceled) {
		t.Errorf("cancelled call: err = %v; want context.Canceled", errs[1])
	}
	for _, i := range []int{0, 2, 3} {
		if errs[i] != nil {
			t.Errorf("call %d: err = %v; want nil", i, errs[i])
		}
	}
	if got := parents(t, db); fmt.Sprint(got) != fmt.Sprint(map[string]bool{"a": true, "d": true, "leaving": true}) {
		t.Errorf("rows = %v; want a, d and leaving", got)
	}
}

// within fails the test if f has not returned after 10 s, rather than hanging the run.
func within(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("still waiting after 10 s")
	}
}

func TestGroupCommitClose(t *testing.T) {
	db := openGroup(t)
	db.Close() // the cleanup's second Close is harmless
	within(t, func() {
		for range 100 {
			if err := db.inTx(context.Background(), insertParent("a")); !errors.Is(err, ErrClosed) {
				t.Errorf("Tx after Close: err = %v; want ErrClosed", err)
				return
			}
		}
	})
}

// Calls racing with Close are each answered: committed before it (its row is there), or
// refused (its row is not). Each round starts Close with the committer held and its queue
// full, so that some calls are still queued when it stops.
func TestGroupCommitCloseUnderLoad(t *testing.T) {
	for round := range 10 {
		db := openGroup(t)
		g := db.group
		g.Pause()
		var wg sync.WaitGroup
		errs := make([]error, 200)
		for i := range errs {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = db.inTx(context.Background(), insertParent(fmt.Sprint(i))) }()
		}
		for deadline := time.Now().Add(5 * time.Second); g.Arrived() < maxBatch+1; time.Sleep(100 * time.Microsecond) {
			if time.Now().After(deadline) {
				t.Fatal("the calls never filled the queue")
			}
		}
		closed := make(chan struct{})
		go func() { defer close(closed); g.Close() }()
		g.Resume()
		within(t, func() { <-closed; wg.Wait() })
		rows := parents(t, db)
		for i, err := range errs {
			switch {
			case err == nil && !rows[fmt.Sprint(i)]:
				t.Errorf("round %d: call %d answered nil, but its row is missing", round, i)
			case errors.Is(err, ErrClosed) && rows[fmt.Sprint(i)]:
				t.Errorf("round %d: call %d answered ErrClosed, but its row was committed", round, i)
			case err != nil && !errors.Is(err, ErrClosed):
				t.Errorf("round %d: call %d: %v", round, i, err)
			}
		}
	}
}

// A lone call whose caller left before its turn runs nothing.
func TestGroupCommitCancelledLoneCaller(t *testing.T) {
	db := openGroup(t)
	ctx, cancel := context.WithCancel(context.Background())
	errs := batch(t, db, []context.Context{ctx}, cancel, insertParent("gone"))
	if !errors.Is(errs[0], context.Canceled) {
		t.Errorf("err = %v; want context.Canceled", errs[0])
	}
	if got := parents(t, db); len(got) != 0 {
		t.Errorf("rows = %v; want none", got)
	}
}

// BenchmarkGroupCommitBatch: the committer's time per call in full batches of maxBatch calls,
// each inserting one row (one COMMIT per batch).
func BenchmarkGroupCommitBatch(b *testing.B) {
	db := open(b, `CREATE TABLE parent (id TEXT PRIMARY KEY)`)
	n := 0
	for b.Loop() {
		batch := make([]*txCall, maxBatch)
		for i := range batch {
			n++
			id := fmt.Sprint(n)
			batch[i] = &txCall{ctx: context.Background(), done: make(chan struct{}), fn: func(ctx context.Context, tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO parent (id) VALUES ($1)`, id)
				return err
			}}
		}
		db.group.commit(batch)
		for _, c := range batch {
			if c.err != nil {
				b.Fatal(c.err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/call")
}
