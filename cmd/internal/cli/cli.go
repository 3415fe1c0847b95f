// Package cli is the waybill command line, shared by cmd/waybill (SQLite) and cmd/waybill-pg
// (PostgreSQL): the two binaries differ only in how they open the database. `waybill help`
// prints the usage of every command; commands.go lists them.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/waybill/waybill/store"
)

// Database says how a binary opens its database.
type Database struct {
	// Default is -db's value when neither the flag nor WAYBILL_DB is set; Help describes it.
	Default, Help string
	// Open opens the database named by -db and applies the migrations.
	Open func(ctx context.Context, dsn string) (*store.DB, error)
	// Missing, if set, reports why the database named by -db does not exist (an SQLite file
	// not there, a PostgreSQL database without waybill's tables), for the commands that only
	// read or revoke: they refuse rather than create an empty database and find nothing in it.
	Missing func(dsn string) error
}

// The binaries' garbage collector, unless the environment sets GOGC or GOMEMLIMIT. Their live
// heap is small (tens of MB) and most of what a request allocates is garbage at its end:
// collecting at three times the live heap instead of two took about a tenth off the CPU of a
// GET or a create, and the soft limit has the collector run sooner again as the process's Go
// memory nears 64 MiB, which keeps the peak RSS under load below 100 MB (docs/performance.md).
// A host embedding the API chooses its own.
const (
	gcPercent   = 200
	memoryLimit = 64 << 20
)

// Main runs the command line with the process's arguments and environment, and exits 1 on error.
func Main(d Database) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	if err := Run(context.Background(), d, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "waybill:", err)
		os.Exit(1)
	}
}

// limits are the server's timeouts. The tests shorten them; the binary uses defaultLimits.
type limits struct {
	// readHeader, read, write and idle are http.Server's timeouts: a client has read to send a
	// whole request (headers and a body of at most 1 MiB), a handler and the answer's write get
	// write, and a keep-alive connection waits idle for its next request.
	readHeader, read, write, idle time.Duration
	// shutdown bounds how long in-flight requests may take to finish after SIGINT/SIGTERM;
	// connections still open then are closed. workerStop then bounds how long the background
	// workers may take to stop.
	shutdown, workerStop time.Duration
	// simulateStep is the step of -simulate-tracking given without a duration.
	simulateStep time.Duration
}

var defaultLimits = limits{
	readHeader: 10 * time.Second,
	read:       30 * time.Second,
	// Long enough to render and send the largest documents (a 5,000-line invoice PDF takes a
	// few seconds) to a slow client.
	write:        2 * time.Minute,
	idle:         2 * time.Minute,
	shutdown:     15 * time.Second,
	workerStop:   5 * time.Second,
	simulateStep: 10 * time.Second,
}

// Run runs one command: args are the command line without the program name.
func Run(ctx context.Context, d Database, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	return run(ctx, &env{d: d, limits: defaultLimits, getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}, args)
}

// env is what every command runs with.
type env struct {
	d              Database
	limits         limits
	getenv         func(string) string
	stdin          io.Reader
	stdout, stderr io.Writer
}

func (e *env) envOr(name, def string) string {
	if v := e.getenv(name); v != "" {
		return v
	}
	return def
}

// command is one sub-command of waybill.
type command struct {
	name     string // "account create"
	synopsis string // its arguments, for the usage line
	summary  string // what it does, one line
	// define declares the command's flags on fs (-db is already there) and returns what the
	// command does with its positional arguments once fs is parsed.
	define func(fs *flag.FlagSet, e *env, db *string) func(ctx context.Context, args []string) error
}

func run(ctx context.Context, e *env, args []string) error {
	name, args := splitCommand(args)
	switch {
	case name == "help", name == "" && wantsHelp(args):
		return help(e, args)
	case name == "":
		name = "serve"
	}
	c, ok := findCommand(name)
	if !ok {
		if wantsHelp(args) && commandWords[name] {
			// `waybill account -h`: the usage of the account commands.
			for _, c := range commands() {
				if strings.HasPrefix(c.name, name+" ") {
					if err := run(ctx, e, append(strings.Fields(c.name), "-h")); err != nil {
						return err
					}
				}
			}
			return nil
		}
		if commandWords[name] {
			// `waybill account`: which commands follow that word.
			var subs []string
			for _, c := range commands() {
				if w, sub, ok := strings.Cut(c.name, " "); ok && w == name {
					subs = append(subs, sub)
				}
			}
			return fmt.Errorf("%q needs a command: %s; run \"waybill %s -h\"", name, strings.Join(subs, ", "), name)
		}
		return fmt.Errorf("unknown command %q; run \"waybill help\"", name)
	}
	fs := flag.NewFlagSet("waybill "+c.name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	db := fs.String("db", e.envOr("WAYBILL_DB", e.d.Default), e.d.Help+" (WAYBILL_DB)")
	action := c.define(fs, e, db)
	fs.Usage = func() { commandUsage(fs.Output(), c, fs) }
	if wantsHelp(args) {
		// Asked for: the usage goes to stdout and it is not an error.
		fs.SetOutput(e.stdout)
		fs.Usage()
		return nil
	}
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	return action(ctx, rest)
}

func findCommand(name string) (command, bool) {
	cs := commands()
	i := slices.IndexFunc(cs, func(c command) bool { return c.name == name })
	if i < 0 {
		return command{}, false
	}
	return cs[i], true
}

// commandWords are the words command names start with, each true when the name has a second
// word ("account create").
var commandWords = map[string]bool{"serve": false, "help": false, "account": true, "token": true, "carrier": true, "inspect": true, "export": true, "verify": false, "purchase": true}

// splitCommand finds the command's name among args and returns it and the other arguments, in
// order. Flags may come before the name, or between its words (`waybill -db x account create
// N`, `waybill account -db x create N`); with no name it returns "" (serve, or help with -h).
func splitCommand(args []string) (string, []string) {
	rest := slices.Clone(args)
	name := ""
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") {
			if flag := strings.TrimLeft(a, "-"); !strings.Contains(flag, "=") && takesValue(flag) {
				i++ // the flag's value
			}
			continue
		}
		rest = slices.Delete(rest, i, i+1)
		if name != "" {
			return name + " " + a, rest
		}
		if two, known := commandWords[a]; !known || !two {
			return a, rest
		}
		name = a // the first of two words: the second may follow flags
		i--
	}
	return name, rest
}

// takesValue reports whether some command has a flag of that name which is not boolean, so
// the next argument is its value.
func takesValue(name string) bool {
	for _, c := range commands() {
		if c.name == "help" {
			continue
		}
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		fs.String("db", "", "")
		c.define(fs, &env{getenv: func(string) string { return "" }}, new(string))
		if f := fs.Lookup(name); f != nil {
			b, ok := f.Value.(interface{ IsBoolFlag() bool })
			return !ok || !b.IsBoolFlag()
		}
	}
	return false
}

// wantsHelp reports whether the arguments ask for the command's usage.
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help", "-h=true", "--help=true":
			return true
		}
	}
	return false
}

// parseInterspersed parses flags that may come before or after positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional, args = append(positional, args[0]), args[1:]
	}
}

// help is `waybill help [COMMAND]`: the usage of every command, or of one.
func help(e *env, args []string) error {
	args = slices.DeleteFunc(slices.Clone(args), func(a string) bool { return strings.HasPrefix(a, "-") })
	if len(args) > 0 {
		name := strings.Join(args, " ")
		if commandWords[name] {
			// `waybill help token`: the usage of every token command, as `waybill token -h`.
			return run(context.Background(), e, []string{name, "-h"})
		}
		c, ok := findCommand(name)
		if !ok {
			return fmt.Errorf("unknown command %q; run \"waybill help\"", name)
		}
		return run(context.Background(), e, append(strings.Fields(c.name), "-h"))
	}
	w := e.stdout
	fmt.Fprint(w, `waybill serves the waybill shipping, billing and order-import API and administers its
accounts and tokens.

Usage:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-50s %s\n", strings.TrimSpace("waybill "+c.name+" "+c.synopsis), c.summary)
	}
	fmt.Fprint(w, `
With no command, waybill serves. Every command takes -db (or WAYBILL_DB), before or after the
command's name. "waybill COMMAND -h" or "waybill help COMMAND" lists a command's flags.

`)
	for _, c := range commands() {
		if c.name == "help" {
			continue
		}
		fs := flag.NewFlagSet("waybill "+c.name, flag.ContinueOnError)
		fs.SetOutput(w)
		fs.String("db", e.envOr("WAYBILL_DB", e.d.Default), e.d.Help+" (WAYBILL_DB)")
		c.define(fs, e, new(string))
		commandUsage(w, c, fs)
		fmt.Fprintln(w)
	}
	return nil
}

// commandUsage prints one command's usage line and flags.
func commandUsage(w io.Writer, c command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "%s\n  %s\n", strings.TrimSpace("waybill "+c.name+" "+c.synopsis), c.summary)
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// errUsage is a wrong command line of command c.
func errUsage(c string) error {
	cmd, _ := findCommand(c)
	return errors.New("usage: waybill " + strings.TrimSpace(cmd.name+" "+cmd.synopsis) + " (waybill " + c + " -h lists the flags)")
}
