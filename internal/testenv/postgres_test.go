package testenv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolwire/toolwire/internal/testwait"
)

// pgConnect connects to dsn, closing the connection when the test ends.
func pgConnect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(testwait.Context(t), dsn)
	if err != nil {
		t.Fatalf("connecting to %s: %v", dsn, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// pgCount returns the number of rows of table and their largest id.
func pgCount(t *testing.T, dsn, table string) (n, maxID int) {
	t.Helper()
	ctx := testwait.Context(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connecting to %s: %v", dsn, err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(ctx, "SELECT count(*), coalesce(max(id), 0) FROM "+table).Scan(&n, &maxID); err != nil {
		t.Fatal(err)
	}
	return n, maxID
}

// procUID returns the real uid of process pid, from /proc.
func procUID(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			f := strings.Fields(rest)
			uid, _ := strconv.Atoi(f[0])
			return uid
		}
	}
	t.Fatalf("no Uid in /proc/%d/status", pid)
	return -1
}

// Two servers run at once, each answers on its own DSN with the settings the
// audit store relies on, runs as an unprivileged user when the test is root,
// and after the test's cleanup neither postmaster nor any backend is left.
func TestPostgres(t *testing.T) {
	var pids []int
	t.Run("two servers", func(t *testing.T) {
		a := Postgres(t)
		b := Postgres(t)
		pids = append(pids, a.PID(), b.PID())
		if a.Port() == b.Port() || a.PID() == b.PID() {
			t.Fatalf("two servers share port %d or pid %d", a.Port(), a.PID())
		}
		want := fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", PostgresUser, a.Port(), PostgresDB)
		if a.DSN() != want {
			t.Errorf("DSN = %s, want %s", a.DSN(), want)
		}
		if os.Geteuid() == 0 {
			for _, pid := range pids {
				if uid := procUID(t, pid); uid == 0 {
					t.Errorf("postmaster %d runs as root", pid)
				}
			}
		}
		ctx := context.Background()
		for i, s := range []*PostgresServer{a, b} {
			conn := pgConnect(t, s.DSN())
			for setting, want := range map[string]string{
				"fsync": "on", "synchronous_commit": "on", "server_encoding": "UTF8",
				"lc_collate": "C", "listen_addresses": "127.0.0.1", "data_directory": s.DataDir(),
			} {
				var got string
				if err := conn.QueryRow(ctx, "SHOW "+setting).Scan(&got); err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("server %d: %s = %q, want %q", i, setting, got, want)
				}
			}
			if _, err := conn.Exec(ctx, "CREATE TABLE t (id int PRIMARY KEY, v text NOT NULL)"); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Exec(ctx, "INSERT INTO t VALUES (1, $1), (2, $2)", fmt.Sprintf("server %d", i), "ü✓"); err != nil {
				t.Fatal(err)
			}
		}
		for i, s := range []*PostgresServer{a, b} {
			conn := pgConnect(t, s.DSN())
			var v1, v2 string
			if err := conn.QueryRow(ctx, "SELECT (SELECT v FROM t WHERE id = 1), (SELECT v FROM t WHERE id = 2)").Scan(&v1, &v2); err != nil {
				t.Fatal(err)
			}
			if v1 != fmt.Sprintf("server %d", i) || v2 != "ü✓" {
				t.Errorf("server %d: read back %q, %q", i, v1, v2)
			}
		}
		// A second database on the same server is empty.
		other := pgConnect(t, a.CreateDatabase("other"))
		var n int
		if err := other.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 't'").Scan(&n); err != nil || n != 0 {
			t.Errorf("fresh database has table t: n=%d err=%v", n, err)
		}
	})
	if len(pids) == 0 {
		t.Skip("no server started")
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("postmaster %d still exists after cleanup (kill 0: %v)", pid, err)
		}
		if left := groupAlive(pid); len(left) > 0 {
			t.Errorf("processes %v of postmaster %d's group still alive after cleanup", left, pid)
		}
	}
}

const pgClientEnv = "TW_TESTENV_PG_CLIENT"

// TestPostgresClientHelper is the client process of TestPostgresDurability:
// with pgClientEnv set to "DSN N" it commits rows 1..N one transaction each,
// prints "committed", inserts rows N+1..N+10 in an open transaction, prints
// "in transaction", and waits (bounded) to be killed.
func TestPostgresClientHelper(t *testing.T) {
	spec := os.Getenv(pgClientEnv)
	if spec == "" {
		return // run as a child process by TestPostgresDurability, with pgClientEnv set
	}
	dsn, nStr, _ := strings.Cut(spec, " ")
	n, _ := strconv.Atoi(nStr)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if _, err := conn.Exec(ctx, "INSERT INTO audit VALUES ($1, 'committed')", i); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Println("committed")
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := n + 1; i <= n+10; i++ {
		if _, err := tx.Exec(ctx, "INSERT INTO audit VALUES ($1, 'uncommitted')", i); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Println("in transaction")
	// Held open until the parent kills this process; its stdin, a pipe
	// from the parent, ends only if the parent ended first.
	io.Copy(io.Discard, os.Stdin)
	t.Fatal("helper was not killed")
}

// A client SIGKILLed mid-transaction leaves exactly its committed rows, and
// they survive both a crash of the server (SIGKILL, then crash recovery from
// the WAL) and a clean restart on the same data directory: the durability
// the audit store relies on.
func TestPostgresDurability(t *testing.T) {
	s := Postgres(t)
	conn := pgConnect(t, s.DSN())
	if _, err := conn.Exec(context.Background(), "CREATE TABLE audit (id int PRIMARY KEY, v text NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	conn.Close(context.Background())

	const n = 200
	client := exec.Command(os.Args[0], "-test.run=^TestPostgresClientHelper$", "-test.count=1")
	client.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d", pgClientEnv, s.DSN(), n))
	stdout, err := client.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := client.StdinPipe() // open while the client is to live
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var stderr SyncBuffer
	client.Stderr = &stderr
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	timeout := time.After(testwait.Limit) // a hang bound
wait:
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				client.Wait()
				t.Fatalf("client ended before its open transaction:\n%s", stderr.String())
			}
			if line == "in transaction" {
				break wait
			}
		case <-timeout:
			client.Process.Kill()
			client.Wait()
			t.Fatalf("client did not reach its open transaction:\n%s", stderr.String())
		}
	}
	if got, maxID := pgCount(t, s.DSN(), "audit"); got != n || maxID != n {
		t.Fatalf("with the client's transaction open: %d rows up to id %d, want %d", got, maxID, n)
	}
	if err := client.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	client.Wait()
	for range lines {
	}
	if got, maxID := pgCount(t, s.DSN(), "audit"); got != n || maxID != n {
		t.Fatalf("after SIGKILL of the client: %d rows up to id %d, want %d", got, maxID, n)
	}

	pid := s.PID()
	s.Kill()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("postmaster %d still exists after Kill (kill 0: %v)", pid, err)
	}
	s.Start()
	if got, maxID := pgCount(t, s.DSN(), "audit"); got != n || maxID != n {
		t.Fatalf("after a crash of the server and recovery: %d rows up to id %d, want %d", got, maxID, n)
	}
	if !strings.Contains(s.Log(), "database system was interrupted") && !strings.Contains(s.Log(), "not properly shut down") {
		t.Errorf("the server log shows no crash recovery after Kill")
	}

	s.Restart()
	if got, maxID := pgCount(t, s.DSN(), "audit"); got != n || maxID != n {
		t.Fatalf("after a clean restart: %d rows up to id %d, want %d", got, maxID, n)
	}

	// Another process takes the port while the server is down: Start moves
	// to a free one, and DSN follows.
	old := s.Port()
	s.Stop()
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", old))
	if err != nil {
		t.Fatalf("taking the server's port %d: %v", old, err)
	}
	defer l.Close()
	s.Start()
	if s.Port() == old || !strings.Contains(s.DSN(), fmt.Sprintf(":%d/", s.Port())) {
		t.Fatalf("restarted on port %d (DSN %s) with %d taken", s.Port(), s.DSN(), old)
	}
	if got, maxID := pgCount(t, s.DSN(), "audit"); got != n || maxID != n {
		t.Fatalf("after a restart on another port: %d rows up to id %d, want %d", got, maxID, n)
	}
	if !strings.Contains(s.Log(), "could not bind") {
		t.Errorf("the server log shows no failed bind of port %d", old)
	}
}
