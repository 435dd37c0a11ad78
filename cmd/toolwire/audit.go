package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/audit/postgres"
	"github.com/toolwire/toolwire/gateway/audit/sqlite"
	"github.com/toolwire/toolwire/gateway/config"
	"github.com/toolwire/toolwire/gateway/daemon"
	"github.com/toolwire/toolwire/internal/units"
)

// errChainBroken is `audit verify` finding an edited, deleted or inserted
// record (exit 1, after the report).
var errChainBroken = errors.New("the audit chain is broken")

// errRecordsLost is `audit verify` finding gap records: records lost to a
// damaged journal (exit 1, after the report).
var errRecordsLost = errors.New("records of the audit trail were lost")

// auditTarget says which audit trail a command reads: the one a gateway
// config names, a data directory's SQLite file, or a PostgreSQL database;
// and the key of its chain.
type auditTarget struct {
	config   string
	dataDir  string
	postgres string
	keyFile  string
}

func (a *auditTarget) flags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&a.config, "config", "", "read the audit settings (store, data_dir, postgres, key_file) from this gateway config file")
	fl.StringVar(&a.dataDir, "data-dir", "", "the gateway's data directory, holding audit.db and audit.key (default: the one toolwire gateway without --config uses, gateway in toolwire's state directory, or "+config.DefaultDataDir+" when only it holds a trail)")
	fl.StringVar(&a.postgres, "postgres", "", "a PostgreSQL connection string (prefer --config with ${DATABASE_URL}: a password on the command line is visible to other users)")
	fl.StringVar(&a.keyFile, "key-file", "", "the key of the trail's chain (default: the config's audit.key_file, or audit.key in the data directory when there is one)")
}

// open opens the store the flags name, with the key of its chain when
// one is found.
func (a *auditTarget) open(ctx context.Context) (audit.Store, error) {
	set := 0
	for _, s := range []string{a.config, a.dataDir, a.postgres} {
		if s != "" {
			set++
		}
	}
	if set > 1 {
		return nil, usageError{"give one of --config, --data-dir and --postgres"}
	}
	var file *config.File
	if a.config != "" {
		var err error
		if file, err = config.Load(a.config); err != nil {
			return nil, err
		}
	}
	key, err := a.key(file)
	if err != nil {
		return nil, err
	}
	switch {
	case a.postgres != "":
		return postgres.Open(ctx, a.postgres, audit.WithKey(key))
	case file != nil:
		return daemon.OpenAuditStore(ctx, file, key)
	}
	path := filepath.Join(a.dir(), daemon.AuditFile)
	if _, err := os.Stat(path); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, a.noTrail(path)
	}
	return sqlite.Open(path, audit.WithKey(key))
}

// noTrail is the error for a data directory without an audit trail,
// saying which gateway writes one there and how to name another.
func (a *auditTarget) noTrail(path string) error {
	if a.dataDir != "" {
		return fmt.Errorf("no audit trail at %s: a gateway with this data_dir has not run yet (or its audit.store is off or postgres)", path)
	}
	return fmt.Errorf("no audit trail at %s, where toolwire gateway without --config keeps it: it has not run yet; "+
		"for a gateway with a config file give --config FILE (or --data-dir DIR, its data_dir; %s by default)", path, config.DefaultDataDir)
}

// dir is the data directory --data-dir names; without it the embedded
// default gateway's (defaultGatewayDataDir), or else, when only it holds
// a trail, the config file's default data_dir in the working directory.
func (a *auditTarget) dir() string {
	if a.dataDir != "" {
		return a.dataDir
	}
	def, err := defaultGatewayDataDir()
	if err != nil || !exists(filepath.Join(def, daemon.AuditFile)) && exists(filepath.Join(config.DefaultDataDir, daemon.AuditFile)) {
		return config.DefaultDataDir
	}
	return def
}

// exists says whether path names a file.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// key reads the chain's key: --key-file, the config's audit.key_file, or
// the data directory's audit.key when there is one (never made here);
// nil when there is none.
func (a *auditTarget) key(file *config.File) (*audit.Key, error) {
	path, must := a.keyFile, a.keyFile != ""
	switch {
	case path != "":
	case file != nil && file.Audit.KeyFile != "":
		path, must = file.Audit.KeyFile, true
	case file != nil && file.Audit.Store == "sqlite" && file.DataDir != "":
		path = filepath.Join(file.DataDir, daemon.AuditKeyFile)
	case file == nil && a.postgres == "":
		path = filepath.Join(a.dir(), daemon.AuditKeyFile)
	default:
		return nil, nil
	}
	k, err := audit.ReadKeyFile(path)
	if errors.Is(err, fs.ErrNotExist) && !must {
		return nil, nil
	}
	return k, err
}

// auditFilter are the flags that select records.
type auditFilter struct {
	since, until, identity, tool, outcome string
}

func (f *auditFilter) flags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.since, "since", "", "only records at or after this time: RFC 3339, a date (2026-11-23) or an age (90m, 24h, 7d)")
	fl.StringVar(&f.until, "until", "", "only records before this time (same forms as --since)")
	fl.StringVar(&f.identity, "identity", "", `only this caller, as records name it ("api_key:ci-bot", "oauth:alice", "anonymous")`)
	fl.StringVar(&f.tool, "tool", "", "only this tool, prompt or resource URI; a glob with * and ?, as in personas")
	fl.StringVar(&f.outcome, "outcome", "", "only this outcome: "+outcomeList())
}

func outcomeList() string {
	names := make([]string, len(audit.Outcomes()))
	for i, o := range audit.Outcomes() {
		names[i] = string(o)
	}
	return strings.Join(names, ", ")
}

func (f *auditFilter) build(now time.Time) (audit.Filter, error) {
	var out audit.Filter
	var err error
	if out.Since, err = parseWhen(f.since, now); err != nil {
		return out, usageError{"--since: " + err.Error()}
	}
	if out.Until, err = parseWhen(f.until, now); err != nil {
		return out, usageError{"--until: " + err.Error()}
	}
	out.Identity, out.Tool = f.identity, f.tool
	if f.outcome != "" {
		out.Outcome = audit.Outcome(f.outcome)
		if !out.Outcome.Valid() {
			return out, usageError{fmt.Sprintf("--outcome %q: want one of %s", f.outcome, outcomeList())}
		}
	}
	return out, nil
}

// parseWhen reads a point in time: RFC 3339, a date (midnight UTC), or an
// age before now ("90m", "24h", "7d"). "" is the zero time.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if d, err := units.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is not a time: want RFC 3339 (2026-11-23T10:00:00Z), a date (2026-11-23) or an age (90m, 24h, 7d, 1d12h)", s)
}

// openFiltered reads the filter flags, then opens the store.
func openFiltered(ctx context.Context, t *auditTarget, f *auditFilter) (audit.Store, audit.Filter, error) {
	filter, err := f.build(time.Now())
	if err != nil {
		return nil, filter, err
	}
	s, err := t.open(ctx)
	return s, filter, err
}

// recordsOf yields recs as a Query would.
func recordsOf(recs []*audit.Record) iter.Seq2[*audit.Record, error] {
	return func(yield func(*audit.Record, error) bool) {
		for _, r := range recs {
			if !yield(r, nil) {
				return
			}
		}
	}
}

func newAuditCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Verify, read and export the gateway's audit trail",
		Long: `audit reads the audit trail of toolwire gateway: one hash-chained record for every tools/call,
prompts/get and resources/read, and every denied or rate-limited one. The trail is the one the
gateway config names (--config), the SQLite file in a data directory (--data-dir), or a
PostgreSQL database (--postgres). With none of them it is the embedded default gateway's (toolwire
gateway without --config): audit.db in toolwire/gateway under the user's state directory
($XDG_STATE_HOME, else ~/.local/state; macOS: ~/Library/Application Support; Windows:
%LocalAppData%), or ` + config.DefaultDataDir + `/audit.db, a config file's default data_dir, when
only that one exists.`,
	}
	cmd.AddCommand(newAuditVerifyCmd(), newAuditQueryCmd(), newAuditTailCmd(), newAuditExportCmd(), newAuditKeygenCmd())
	return cmd
}

func newAuditKeygenCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "keygen FILE",
		Short: "Make a key for an audit trail's chain",
		Long: `keygen writes a new key (32 random bytes, as hex) to FILE, mode 0600; it never replaces a file.
Name it in the gateway config as audit.key_file: every replica of a PostgreSQL trail needs the
same one. (With store sqlite the gateway makes <data_dir>/audit.key itself at its first start.)
Keep a copy apart from the database: verifying the trail needs the key, and whoever has it can
forge the trail.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, err := audit.NewKeyFile(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "key %s written to %s\n", k.ID(), args[0])
			return nil
		},
	}
}

func newAuditVerifyCmd() *cobra.Command {
	var t auditTarget
	var heads []string
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check that no audit record was edited, deleted or inserted",
		Long: `verify walks the hash chain from its anchor to its head and reports the first record that is
wrong: edited (its hash does not match its content), missing, or out of place, and every run of
records lost to a damaged journal (a gap record in the chain says which). Records sealed with
the trail's key (HMAC-SHA-256) need that key: --key-file, the config's audit.key_file, or
audit.key in the data directory. --head SEQ:HASH (repeatable) also checks that the chain passes
through a head the gateway logged earlier ("audit chain head" lines, or the
toolwire_gateway_audit_head_info metric) and kept in another store: the newest records deleted,
with the stored head moved back, are found that way. Exit status 0 when the chain is whole, 1
when it is broken or records were lost.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			anchored, err := parseHeads(heads)
			if err != nil {
				return err
			}
			s, err := t.open(cmd.Context())
			if err != nil {
				return err
			}
			defer s.Close()
			var rep *audit.VerifyReport
			if a, ok := s.(audit.Anchored); ok {
				rep, err = a.VerifyAnchored(cmd.Context(), anchored...)
			} else if len(anchored) == 0 {
				rep, err = s.Verify(cmd.Context())
			} else {
				err = errors.New("this store cannot check anchored heads")
			}
			if err != nil {
				return err
			}
			return printVerify(cmd.OutOrStdout(), rep)
		},
	}
	t.flags(cmd)
	cmd.Flags().StringArrayVar(&heads, "head", nil, "SEQ:HASH: a head logged earlier that the chain must pass through (repeatable)")
	return cmd
}

// parseHeads reads --head values, SEQ:HASH.
func parseHeads(heads []string) ([]audit.Anchor, error) {
	var out []audit.Anchor
	for _, h := range heads {
		seq, hash, ok := strings.Cut(strings.TrimSpace(h), ":")
		var a audit.Anchor
		n, err := strconv.ParseInt(seq, 10, 64)
		if ok && err == nil && n >= 0 {
			a.Seq = n
			err = a.Hash.UnmarshalText([]byte(hash))
		}
		if !ok || err != nil || n < 0 {
			return nil, usageError{fmt.Sprintf("--head %q: want SEQ:HASH, as the \"audit chain head\" log line gives it (231:3f2a...)", h)}
		}
		out = append(out, a)
	}
	return out, nil
}

// printVerify prints a verify report: the gaps, the break or ok, the
// head, the anchor, the keyed part and the anchored heads checked.
func printVerify(w io.Writer, rep *audit.VerifyReport) error {
	for _, g := range rep.Gaps {
		span := fmt.Sprintf("records %d to %d", g.From, g.To)
		if g.From == g.To {
			span = fmt.Sprintf("record %d", g.From)
		}
		fmt.Fprintf(w, "gap: %s lost to a damaged journal entry (kept at %s)\n", span, g.Kept)
	}
	var err error
	switch b := rep.Break; {
	case b != nil && b.Kind == audit.BreakLost:
		fmt.Fprintf(w, "LOST: %d run(s) of records lost; the chain is otherwise unbroken: %d records, %d to %d\n", len(rep.Gaps), rep.Checked, rep.First, rep.Last)
		err = errRecordsLost
	case b != nil:
		fmt.Fprintf(w, "BROKEN at record %d (%s): %s\n", b.Seq, b.Kind, b.Reason)
		if b.Kind == audit.BreakKey {
			fmt.Fprintln(w, "give the trail's key with --key-file (or keep audit.key in the data directory)")
		}
		fmt.Fprintf(w, "checked %d records before it\n", rep.Checked)
		return errChainBroken
	case rep.Checked == 0:
		fmt.Fprintln(w, "ok: the audit trail is empty")
	default:
		fmt.Fprintf(w, "ok: %d records, %d to %d, unbroken\n", rep.Checked, rep.First, rep.Last)
	}
	fmt.Fprintf(w, "head: record %d, hash %x\n", rep.Head.Seq, rep.Head.Hash[:])
	if rep.Anchor.Seq > 0 {
		fmt.Fprintf(w, "anchor: record %d (earlier records swept for retention), hash %x\n", rep.Anchor.Seq, rep.Anchor.Hash[:])
	}
	if rep.KeyedFrom > 0 {
		fmt.Fprintf(w, "keyed: HMAC-SHA-256 from record %d on, key %s\n", rep.KeyedFrom, rep.Key)
	} else if rep.Checked > 0 {
		fmt.Fprintln(w, "keyed: no, every record is keyless (SHA-256)")
	}
	for _, c := range rep.Anchored {
		fmt.Fprintf(w, "anchored head %s: %s\n", c.Anchor.String(), c.Result)
	}
	return err
}

func newAuditQueryCmd() *cobra.Command {
	var t auditTarget
	var f auditFilter
	var format string
	var limit int
	var oldest bool
	cmd := &cobra.Command{
		Use:   "query",
		Short: "List the audit records that match filters",
		Long: `query lists the records that match the filters, in the order they were written (oldest at the
top): the newest --limit of them, or with --oldest the first --limit.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 {
				return usageError{"--limit must be 0 (no limit) or more"}
			}
			s, filter, err := openFiltered(cmd.Context(), &t, &f)
			if err != nil {
				return err
			}
			defer s.Close()
			if oldest || limit == 0 {
				filter.Limit = limit
				return writeRecords(cmd.OutOrStdout(), format, s.Query(cmd.Context(), filter))
			}
			recs, _, err := lastRecords(cmd.Context(), s, filter, limit)
			if err != nil {
				return err
			}
			return writeRecords(cmd.OutOrStdout(), format, recordsOf(recs))
		},
	}
	t.flags(cmd)
	f.flags(cmd)
	cmd.Flags().StringVar(&format, "format", "table", "output: table, jsonl or csv")
	cmd.Flags().IntVar(&limit, "limit", 1000, "at most this many records: the newest, unless --oldest (0: all)")
	cmd.Flags().BoolVar(&oldest, "oldest", false, "with --limit, the oldest records that match instead of the newest")
	return cmd
}

func newAuditExportCmd() *cobra.Command {
	var t auditTarget
	var f auditFilter
	var format, output string
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write audit records as JSON Lines or CSV, with their hashes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "jsonl" && format != "csv" {
				return usageError{fmt.Sprintf("--format %q: want jsonl or csv", format)}
			}
			s, filter, err := openFiltered(cmd.Context(), &t, &f)
			if err != nil {
				return err
			}
			defer s.Close()
			w := cmd.OutOrStdout()
			if output != "" && output != "-" {
				file, err := os.OpenFile(output, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
				if err != nil {
					return err
				}
				defer file.Close()
				w = file
			}
			return writeRecords(w, format, s.Query(cmd.Context(), filter))
		},
	}
	t.flags(cmd)
	f.flags(cmd)
	cmd.Flags().StringVar(&format, "format", "jsonl", "jsonl or csv")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to this new file (0600; never overwritten) instead of standard output")
	return cmd
}

func newAuditTailCmd() *cobra.Command {
	var t auditTarget
	var f auditFilter
	var format string
	var n int
	var follow bool
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "tail",
		Short: "Show the latest audit records, and with --follow the new ones as they come",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if n < 0 || interval <= 0 {
				return usageError{"-n must be 0 or more and --interval positive"}
			}
			if follow && format == "csv" {
				return usageError{"--follow writes table or jsonl (CSV has one header, at the top of one file: use export)"}
			}
			s, filter, err := openFiltered(cmd.Context(), &t, &f)
			if err != nil {
				return err
			}
			defer s.Close()
			return tailRecords(cmd.Context(), cmd.OutOrStdout(), format, s, filter, n, follow, interval)
		},
	}
	t.flags(cmd)
	f.flags(cmd)
	cmd.Flags().StringVar(&format, "format", "table", "output: table, jsonl or csv")
	cmd.Flags().IntVarP(&n, "lines", "n", 20, "how many of the latest records to show first")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep showing new records until interrupted")
	cmd.Flags().Var(units.Duration(&interval, time.Second), "interval", "with --follow, how often to look for new records")
	return cmd
}

// tailRecords prints the last n records matching filter, then (follow)
// those appended later, until ctx ends.
func tailRecords(ctx context.Context, w io.Writer, format string, s audit.Store, filter audit.Filter, n int, follow bool, interval time.Duration) error {
	ring, last, err := lastRecords(ctx, s, filter, n)
	if err != nil {
		return err
	}
	if err := writeRecords(w, format, recordsOf(ring)); err != nil || !follow {
		return err
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		filter.AfterSeq = last
		var batch []*audit.Record
		for r, err := range s.Query(ctx, filter) {
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			batch = append(batch, r)
			last = r.Seq
		}
		if len(batch) == 0 {
			continue
		}
		recs := recordsOf(batch)
		var err error
		if format == "table" {
			err = writeTable(w, recs, false) // the header was printed once
		} else {
			err = writeRecords(w, format, recs)
		}
		if err != nil {
			return err
		}
	}
}

// lastRecords reads the last n records matching filter, oldest first,
// and the Seq of the last record read (0 when none matched).
func lastRecords(ctx context.Context, s audit.Store, filter audit.Filter, n int) (ring []*audit.Record, last int64, err error) {
	ring = make([]*audit.Record, 0, min(n, 1024))
	start := 0 // ring[start:] then ring[:start] once it is full
	for r, err := range s.Query(ctx, filter) {
		if err != nil {
			return nil, 0, err
		}
		last = r.Seq
		switch {
		case n == 0:
		case len(ring) < n:
			ring = append(ring, r)
		default:
			ring[start] = r
			start = (start + 1) % n
		}
	}
	return slices.Concat(ring[start:], ring[:start]), last, nil
}

// writeRecords writes records in format: a table for people, or JSON Lines
// or CSV (every field, hashes included) for programs.
func writeRecords(w io.Writer, format string, recs iter.Seq2[*audit.Record, error]) error {
	switch format {
	case "table":
		return writeTable(w, recs, true)
	case "jsonl":
		_, err := audit.WriteJSONL(w, recs)
		return err
	case "csv":
		_, err := audit.WriteCSV(w, recs)
		return err
	}
	return usageError{fmt.Sprintf("--format %q: want table, jsonl or csv", format)}
}

// writeTable prints one line per record: when, who, what, how it ended.
func writeTable(w io.Writer, recs iter.Seq2[*audit.Record, error], header bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if header {
		fmt.Fprintln(tw, "SEQ\tTIME (UTC)\tIDENTITY\tPERSONA\tMETHOD\tTOOL\tOUTCOME\tDURATION\tERROR")
	}
	for r, err := range recs {
		if err != nil {
			tw.Flush()
			return err
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Seq, r.Time.UTC().Format("2006-01-02 15:04:05.000"),
			r.Identity, dash(r.Persona), r.Method, dash(r.Tool), r.Outcome, r.Duration.Round(time.Microsecond), oneLine(r.Error, 60))
	}
	return tw.Flush()
}
