package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/results"

	// The stores' drivers: both pure Go, so the binary stays static (CGO_ENABLED=0).
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"
)

// Store is a history: an SQLite file or a PostgreSQL database.
type Store struct {
	db *sql.DB
	// postgres: the statements' placeholders are $n, not ?.
	postgres bool
	// Where it is, as given (a URL's password is not kept).
	Where string
}

// IsURL tells a PostgreSQL URL from an SQLite file's path.
func IsURL(where string) bool {
	return strings.HasPrefix(where, "postgres://") || strings.HasPrefix(where, "postgresql://")
}

// Open opens the store at where (a file path, created if absent, or a postgres:// URL) and
// migrates its schema to this version's.
func Open(ctx context.Context, where string) (*Store, error) {
	s := &Store{Where: where, postgres: IsURL(where)}
	var err error
	if s.postgres {
		s.db, err = sql.Open("pgx", where)
		s.Where = redact(where)
	} else {
		// One writer at a time; a busy file is waited for, not failed. The default journal keeps
		// the store one file, as a CI cache carries it.
		path := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(where)
		s.db, err = sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)")
		if err == nil {
			s.db.SetMaxOpenConns(1)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", s.Where, err)
	}
	if err := s.migrate(ctx); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("history %s: %w", s.Where, err)
	}
	return s, nil
}

// redact is a URL without its password.
func redact(url string) string {
	scheme, rest, _ := strings.Cut(url, "://")
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		if user, _, ok := strings.Cut(rest[:at], ":"); ok {
			rest = user + ":xxx" + rest[at:]
		}
	}
	return scheme + "://" + rest
}

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

// SchemaVersion is the store's schema version this iotbench writes; migrations[i] takes a
// store from version i to i+1.
var SchemaVersion = len(migrations)

var migrations = [][]string{
	{
		`CREATE TABLE series (
			id TEXT PRIMARY KEY,
			testbed TEXT NOT NULL, scenario TEXT NOT NULL, target TEXT NOT NULL, variant TEXT NOT NULL,
			settings TEXT NOT NULL)`,
		`CREATE TABLE points (
			series TEXT NOT NULL REFERENCES series(id),
			row_key TEXT NOT NULL,
			branch TEXT NOT NULL, commit_sha TEXT NOT NULL,
			started_at BIGINT NOT NULL, trial INTEGER NOT NULL,
			verdict TEXT NOT NULL, reason TEXT NOT NULL,
			iotbench_version TEXT NOT NULL, image_id TEXT NOT NULL, db_image_id TEXT NOT NULL,
			metrics TEXT NOT NULL, source TEXT NOT NULL,
			PRIMARY KEY (series, row_key))`,
		`CREATE INDEX points_by_branch ON points (branch, series, started_at)`,
	},
}

// migrate brings the schema to SchemaVersion, in one transaction; a store written by a newer
// iotbench is refused rather than misread.
func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if s.postgres {
		// Two processes opening a new store at once: one migrates, the other waits.
		if _, err := tx.ExecContext(ctx, `LOCK TABLE schema_version IN EXCLUSIVE MODE`); err != nil {
			return err
		}
	}
	version := 0
	err = tx.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&version)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (0)`); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	if version > SchemaVersion {
		return fmt.Errorf("schema version %d is newer than this iotbench's (%d): use a newer iotbench", version, SchemaVersion)
	}
	for v := version; v < SchemaVersion; v++ {
		for _, stmt := range migrations[v] {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migrating to schema version %d: %w", v+1, err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = `+strconv.Itoa(SchemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

// q is a statement in the store's placeholders.
func (s *Store) q(stmt string) string {
	if !s.postgres {
		return stmt
	}
	var b strings.Builder
	n := 0
	for _, c := range stmt {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Added counts what an Add did.
type Added struct {
	// New points, and rows that were stored already (a file added again).
	New, Known int
	// Unusable of the new are stored and marked, not points (invalid, disturbed, not loaded).
	Unusable int
}

// Add stores rows as points of branch (empty: DefaultBranch) at commit (empty: each row's
// own git_commit), from source (a file's path, or empty), in one transaction. A row stored
// already is left as it was.
func (s *Store) Add(ctx context.Context, rows []results.Row, branch, commit, source string) (Added, error) {
	var a Added
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return a, err
	}
	defer tx.Rollback()
	series, err := tx.PrepareContext(ctx, s.q(`INSERT INTO series (id, testbed, scenario, target, variant, settings) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`))
	if err != nil {
		return a, err
	}
	point, err := tx.PrepareContext(ctx, s.q(`INSERT INTO points (series, row_key, branch, commit_sha, started_at, trial, verdict, reason,
		iotbench_version, image_id, db_image_id, metrics, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (series, row_key) DO NOTHING`))
	if err != nil {
		return a, err
	}
	seen := map[string]bool{}
	for _, r := range rows {
		k := KeyOf(r)
		id := k.ID()
		if !seen[id] {
			seen[id] = true
			if _, err := series.ExecContext(ctx, id, k.Testbed, k.Scenario, k.Target, k.Variant, k.Settings); err != nil {
				return a, err
			}
		}
		p := pointOf(r, branch, commit, source)
		values, err := json.Marshal(p.Values)
		if err != nil {
			return a, err
		}
		res, err := point.ExecContext(ctx, id, rowKey(r), p.Branch, p.Commit, p.StartedAt.UnixNano(), p.Trial, p.Verdict, p.Reason,
			p.Version, p.ImageID, p.DBImageID, string(values), p.Source)
		if err != nil {
			return a, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			a.Known++
			continue
		}
		a.New++
		if !p.Usable() {
			a.Unusable++
		}
	}
	return a, tx.Commit()
}

// Load reads every series with points on branch (empty: DefaultBranch), their points oldest
// first, the series in a stable order (scenario, target, variant, testbed, settings).
func (s *Store) Load(ctx context.Context, branch string) ([]Series, error) {
	if branch == "" {
		branch = DefaultBranch
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT s.id, s.testbed, s.scenario, s.target, s.variant, s.settings,
		p.commit_sha, p.started_at, p.trial, p.verdict, p.reason, p.iotbench_version, p.image_id, p.db_image_id, p.metrics, p.source
		FROM points p JOIN series s ON s.id = p.series WHERE p.branch = ?
		ORDER BY s.scenario, s.target, s.variant, s.testbed, s.settings, s.id, p.started_at, p.trial`), branch)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Series
	lastID := ""
	for rows.Next() {
		var id, values string
		var k Key
		var p Point
		var started int64
		if err := rows.Scan(&id, &k.Testbed, &k.Scenario, &k.Target, &k.Variant, &k.Settings,
			&p.Commit, &started, &p.Trial, &p.Verdict, &p.Reason, &p.Version, &p.ImageID, &p.DBImageID, &values, &p.Source); err != nil {
			return nil, err
		}
		p.Branch, p.StartedAt = branch, time.Unix(0, started).UTC()
		if err := json.Unmarshal([]byte(values), &p.Values); err != nil {
			return nil, fmt.Errorf("series %s, point of %s: %w", id, p.StartedAt.Format(time.RFC3339), err)
		}
		if id != lastID {
			out = append(out, Series{Key: k})
			lastID = id
		}
		out[len(out)-1].Points = append(out[len(out)-1].Points, p)
	}
	return out, rows.Err()
}

// Recorder adds a run's rows to a store as each is recorded (run.Setup's History).
type Recorder struct {
	Store          *Store
	Branch, Commit string
}

// Add stores rows.
func (r *Recorder) Add(ctx context.Context, rows []results.Row) error {
	_, err := r.Store.Add(ctx, rows, r.Branch, r.Commit, "")
	return err
}
