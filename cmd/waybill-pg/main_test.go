package main

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waybill/waybill/cmd/internal/cli"
	"github.com/waybill/waybill/cmd/internal/clitest"
)

// TestMigrateConcurrently opens one fresh database from many connections at once, as
// processes starting together do: every open succeeds and each migration is applied once.
func TestMigrateConcurrently(t *testing.T) {
	url := freshSchema(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := open(ctx, url)
			if err != nil {
				t.Errorf("open: %v", err)
				return
			}
			db.Close()
		}()
	}
	wg.Wait()
	db, err := open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var versions, distinct int
	if err := plainPG(t, url).QueryRow(`SELECT COUNT(*), COUNT(DISTINCT version) FROM schema_migrations`).Scan(&versions, &distinct); err != nil || versions != distinct || versions == 0 {
		t.Errorf("schema_migrations: %d rows, %d versions (%v)", versions, distinct, err)
	}
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines and the test.
type syncBuffer = clitest.SyncBuffer

// TestServeTogetherBootstrapsOnce starts several servers together on one empty, migrated
// database, as several waybill-pg processes would: all of them come up, and exactly one
// prints the first start's token.
func TestServeTogetherBootstrapsOnce(t *testing.T) {
	url := freshSchema(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, err := open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	const servers = 8
	outs, errs := make([]syncBuffer, servers), make([]syncBuffer, servers)
	done := make(chan error, servers)
	for i := range servers {
		go func() {
			done <- cli.Run(ctx, postgres, []string{"serve", "-addr", "127.0.0.1:0", "-db", url},
				func(string) string { return "" }, strings.NewReader(""), &outs[i], &errs[i])
		}()
	}
	deadline := time.Now().Add(30 * time.Second)
	for up := 0; up < servers; {
		up = 0
		for i := range errs {
			if strings.Contains(errs[i].String(), `"msg":"listening"`) {
				up++
			}
		}
		select {
		case err := <-done:
			t.Fatalf("a server stopped: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d servers came up", up, servers)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	for range servers {
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}
	tokens := 0
	for i := range outs {
		tokens += strings.Count(outs[i].String(), "token: ")
	}
	if tokens != 1 {
		t.Errorf("%d servers printed a token; want exactly 1", tokens)
	}
}

// TestReadCommandsNeedTheDatabase: a command that only reads or revokes refuses a database
// without waybill's tables, and writes none into it (a reviewer's account list migrated an
// empty database); a command that creates migrates it.
func TestReadCommandsNeedTheDatabase(t *testing.T) {
	url := freshSchema(t)
	ctx := context.Background()
	run := func(args ...string) error {
		return cli.Run(ctx, postgres, append(args, "-db", url), func(string) string { return "" }, nil, io.Discard, io.Discard)
	}
	for _, args := range [][]string{{"account", "list"}, {"verify"}} {
		if err := run(args...); err == nil || !strings.Contains(err.Error(), "no waybill database at") {
			t.Errorf("%s on an empty schema = %v; want no waybill database", strings.Join(args, " "), err)
		}
	}
	if err := missing(url); err == nil {
		t.Fatal("a read command migrated the empty schema")
	}
	if err := run("account", "create", "acme"); err != nil {
		t.Fatal(err)
	}
	if err := run("account", "list"); err != nil {
		t.Errorf("account list after a create = %v", err)
	}
}
