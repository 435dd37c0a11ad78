package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolwire/toolwire/internal/testwait"
)

// PostgresUser is the superuser of every test server; the DSNs name it and
// authentication is trust (the server listens on 127.0.0.1 only).
const PostgresUser = "toolwire"

// PostgresDB is the database Postgres creates fresh on every test server.
const PostgresDB = "toolwire"

// Bounds for starting and stopping a server on a loaded 2-core machine.
const (
	pgReadyTimeout = 60 * time.Second // from exec to accepting connections
	pgSmartTimeout = 10 * time.Second // SIGTERM (smart shutdown) before SIGINT
	pgFastTimeout  = 20 * time.Second // SIGINT (fast shutdown) before SIGKILL
	pgPortAttempts = 5                // tries when another process takes the port
)

// PostgresServer is a throwaway PostgreSQL server owned by one test: its own
// cluster in t.TempDir(), listening on a free port of 127.0.0.1 only, with
// trust authentication, fsync on. Stop, Start, Restart and Kill must be
// called from the test's goroutine (they call t.Fatal).
type PostgresServer struct {
	t       testing.TB
	binDir  string
	dir     string              // the temporary directory: data/, sock/, server.log
	dataDir string              // the cluster
	sockDir string              // unix socket directory ("" = TCP only)
	logPath string              // the server's stdout and stderr, every start appended
	cred    *syscall.Credential // the unprivileged user to run as, when we are root
	d       daemon              // the postmaster

	mu   sync.Mutex
	port int
}

// errPortTaken reports that the server could not bind its port.
var errPortTaken = errors.New("port taken")

// Postgres starts a PostgreSQL server for the test and returns it once it
// accepts connections, with a fresh database PostgresDB (see DSN). The server
// is stopped by PID when the test ends, and its log is printed if the test
// failed. Without the server binaries it skips the test, or fails it in CI
// (CI set), where ./scripts/test should have installed Debian's postgresql.
// As root it runs the server as the user postgres (or nobody), since
// PostgreSQL refuses to run as root.
func Postgres(t testing.TB) *PostgresServer {
	t.Helper()
	binDir, err := PostgresBinDir()
	if err != nil {
		missingDebian(t, "the PostgreSQL server binaries", "postgresql", err)
	}
	s := &PostgresServer{t: t, binDir: binDir, dir: t.TempDir()}
	s.dataDir = filepath.Join(s.dir, "data")
	s.logPath = filepath.Join(s.dir, "server.log")
	s.d = daemon{name: "postgres", logPath: s.logPath}
	// A unix socket path is limited to 107 bytes; past that, TCP only.
	if sock := filepath.Join(s.dir, "sock"); len(sock)+len("/.s.PGSQL.65535") < 100 {
		s.sockDir = sock
		if err := os.Mkdir(sock, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	s.d.own(t, "PostgreSQL", s.stop)
	if os.Geteuid() == 0 {
		if err := s.dropRoot(); err != nil {
			t.Fatalf("testenv.Postgres as root: %v", err)
		}
	}

	// initdb --no-sync skips only the flush of the fresh cluster's files; the
	// server itself runs with fsync on, so every commit is durable (the audit
	// store relies on that). --no-locale and UTF8: no locale surprises.
	initdb := s.command(filepath.Join(binDir, "initdb"), "-D", s.dataDir, "-U", PostgresUser,
		"--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync", "--no-instructions")
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	// Trust on loopback TCP and this cluster's own socket only.
	hba := "local all all trust\nhost all all 127.0.0.1/32 trust\n"
	if err := os.WriteFile(filepath.Join(s.dataDir, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		t.Fatal(err)
	}
	if s.cred != nil {
		if err := os.Chown(filepath.Join(s.dataDir, "pg_hba.conf"), int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	s.Start()
	s.CreateDatabase(PostgresDB)
	return s
}

// PostgresBinDir returns the directory holding initdb and postgres: the one
// initdb is found in on PATH, else the newest /usr/lib/postgresql/<N>/bin
// (where Debian's postgresql package puts them, off PATH).
func PostgresBinDir() (string, error) {
	has := func(dir string) bool {
		for _, name := range []string{"initdb", "postgres"} {
			if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.IsDir() {
				return false
			}
		}
		return true
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil && has(filepath.Dir(real)) {
			return filepath.Dir(real), nil
		}
		if has(filepath.Dir(p)) {
			return filepath.Dir(p), nil
		}
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(matches, func(i, j int) bool { return pgVersion(matches[i]) > pgVersion(matches[j]) })
	for _, dir := range matches {
		if has(dir) {
			return dir, nil
		}
	}
	return "", errors.New("initdb and postgres not found on PATH nor in /usr/lib/postgresql/*/bin")
}

// pgVersion reads N from /usr/lib/postgresql/N/bin (0 if not a number).
func pgVersion(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

// dropRoot picks the user the server runs as (postgres, else nobody), gives
// it the temporary directory, and makes sure it can reach it.
func (s *PostgresServer) dropRoot() error {
	var u *user.User
	var err error
	for _, name := range []string{"postgres", "nobody"} {
		if u, err = user.Lookup(name); err == nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("PostgreSQL refuses to run as root and neither user postgres nor nobody exists: %v", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil || uid == 0 {
		return fmt.Errorf("user %s has unusable ids %s:%s", u.Username, u.Uid, u.Gid)
	}
	s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	for _, p := range []string{s.dir, s.sockDir, s.logPath} {
		if p == "" {
			continue
		}
		if err := os.Chown(p, int(uid), int(gid)); err != nil {
			return err
		}
	}
	// t.TempDir's parent is the test's own 0700 directory: open it for
	// traversal. Any other ancestor must already be reachable.
	parent := filepath.Dir(s.dir)
	if fi, err := os.Stat(parent); err == nil && fi.Mode().Perm()&0o001 == 0 {
		if err := os.Chmod(parent, fi.Mode().Perm()|0o111); err != nil {
			return err
		}
	}
	for d := filepath.Dir(parent); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("user %s cannot reach %s (mode %v); point GOTMPDIR at a directory it can reach, such as /tmp",
				u.Username, d, fi.Mode().Perm())
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	return nil
}

// command prepares one of the server's programs: as the unprivileged user
// when we are root, in its own process group (so that Kill reaches the
// backends too), with no PG* or locale variables from the caller.
func (s *PostgresServer) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = s.dir
	env := []string{"LANG=C", "LC_ALL=C", "TZ=UTC", "HOME=" + s.dir}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PG") || strings.HasPrefix(k, "LC_") || k == "LANG" || k == "TZ" || k == "HOME" {
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: s.cred}
	return cmd
}

// DSN returns the URL of the fresh database PostgresDB. The port can change
// when Start has to move off a port another process took, so read it again
// after Start or Restart.
func (s *PostgresServer) DSN() string { return s.DSNFor(PostgresDB) }

// DSNFor returns the URL of database db on this server.
func (s *PostgresServer) DSNFor(db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", PostgresUser, s.Port(), db)
}

// Port returns the TCP port the server listens on.
func (s *PostgresServer) Port() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.port
}

// PID returns the postmaster's process id, or 0 when the server is stopped.
func (s *PostgresServer) PID() int { return s.d.pid() }

// DataDir returns the cluster's data directory.
func (s *PostgresServer) DataDir() string { return s.dataDir }

// Log returns everything the server has logged, over all its starts.
func (s *PostgresServer) Log() string { return s.d.log() }

// CreateDatabase creates database name and returns its DSN.
func (s *PostgresServer) CreateDatabase(name string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.DSNFor("postgres"))
	if err != nil {
		s.t.Fatalf("connecting to PostgreSQL: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		s.t.Fatalf("creating database %s: %v", name, err)
	}
	return s.DSNFor(name)
}

// Start starts the server on its data directory (again, after Stop or Kill)
// and waits until it accepts connections. It keeps its port when it can and
// moves to another free one if that one was taken.
func (s *PostgresServer) Start() {
	s.t.Helper()
	if s.PID() != 0 {
		s.t.Fatal("testenv: PostgreSQL server already running")
	}
	var err error
	for attempt := 0; attempt < pgPortAttempts; attempt++ {
		port := s.Port()
		if port == 0 || attempt > 0 {
			if port, err = freePort(); err != nil {
				break
			}
		}
		if err = s.launch(port); !errors.Is(err, errPortTaken) {
			break
		}
	}
	if err != nil {
		s.t.Fatalf("starting PostgreSQL: %v (the server log follows at cleanup)", err)
	}
}

// freePort asks the kernel for a free loopback port. Another process may
// take it before the server binds it: launch reports that, and Start retries.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// launch starts the postmaster on port and polls, within pgReadyTimeout,
// until it answers as this cluster.
func (s *PostgresServer) launch(port int) error {
	cmd := s.command(filepath.Join(s.binDir, "postgres"), "-D", s.dataDir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "port="+strconv.Itoa(port),
		"-c", "unix_socket_directories="+s.sockDir,
		// Durable commits: the audit store's guarantee rests on these
		// (they are PostgreSQL's defaults, stated so no one turns them off).
		"-c", "fsync=on",
		"-c", "synchronous_commit=on",
		"-c", "full_page_writes=on",
		// Small: many servers may run at once on a 2-core machine.
		"-c", "shared_buffers=16MB",
		"-c", "max_connections=50",
		"-c", "dynamic_shared_memory_type=posix",
		"-c", "TimeZone=UTC",
		"-c", "logging_collector=off",
	)
	s.mu.Lock()
	s.port = port
	s.mu.Unlock()
	return s.d.start(cmd, port, pgReadyTimeout, 20*time.Millisecond, []string{"could not bind", "Address already in use"},
		func(ctx context.Context) error { return s.ping(ctx, port) })
}

// ping connects to port and checks that the server there is this cluster,
// not another process that took the port.
func (s *PostgresServer) ping(ctx context.Context, port int) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=5", PostgresUser, port))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var dir string
	if err := conn.QueryRow(ctx, "SHOW data_directory").Scan(&dir); err != nil {
		return err
	}
	if dir != s.dataDir {
		return fmt.Errorf("port %d answers for data directory %s, not %s", port, dir, s.dataDir)
	}
	return nil
}

// Stop shuts the server down: SIGTERM (smart shutdown: waits for clients),
// then SIGINT (fast: disconnects them), then SIGKILL, each after a bound.
// Committed data survives; Start brings the server back.
func (s *PostgresServer) Stop() {
	s.t.Helper()
	if err := s.stop(); err != nil {
		s.t.Fatalf("stopping PostgreSQL: %v", err)
	}
}

// Restart stops the server and starts it again on the same data directory.
func (s *PostgresServer) Restart() {
	s.t.Helper()
	s.Stop()
	s.Start()
}

// Kill ends the postmaster and all its backends with SIGKILL, as a crash
// would; the next Start runs crash recovery from the WAL. It returns once
// no process of the server is left: backends run in groups of their own
// and outlive the postmaster briefly, during which one may still commit
// what a client sends, and a Start would find their shared memory in use.
func (s *PostgresServer) Kill() {
	s.t.Helper()
	s.d.kill()
	testwait.WaitFor(s.t, "every process of the killed PostgreSQL server to exit", func() bool {
		return !processRunsIn(s.dataDir)
	})
}

// processRunsIn says whether a live (not zombie) process has its working
// directory in dir, as every process of a PostgreSQL server has in its
// data directory.
func processRunsIn(dir string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err != nil || cwd != dir {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && zombie(st) {
			continue
		}
		return true
	}
	return false
}

// zombie reads the state of a /proc/PID/stat line.
func zombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

func (s *PostgresServer) stop() error {
	return s.d.stop([]stopStep{{syscall.SIGTERM, pgSmartTimeout}, {syscall.SIGINT, pgFastTimeout}}, func(pid int, after stopStep) {
		s.t.Logf("PostgreSQL (pid %d) still had clients after %v of smart shutdown; sending SIGINT (fast shutdown)", pid, after.bound)
	})
}

// waitGroupGone waits, within bound, until no live process is left in group
// pgid (backends orphaned by a SIGKILLed postmaster).
func waitGroupGone(pgid int, bound time.Duration) {
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) && len(groupAlive(pgid)) > 0 {
		time.Sleep(10 * time.Millisecond)
	}
}

// groupAlive lists the live (not zombie) processes of group pgid, from /proc:
// an orphaned zombie is not ours to reap and holds nothing.
func groupAlive(pgid int) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			pids = append(pids, pid)
		}
	}
	return pids
}
